package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDay(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), "2026-11-29"},
		{time.Date(2026, 11, 29, 23, 59, 59, 999999999, time.UTC), "2026-11-29"},
		{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), "2026-11-30"},
		// 08:59 in Tokyo on the 30th is still the 29th in UTC.
		{time.Date(2026, 11, 30, 8, 59, 0, 0, tokyo), "2026-11-29"},
		{time.Date(2026, 11, 30, 9, 0, 0, 0, tokyo), "2026-11-30"},
		{time.Date(2028, 2, 29, 1, 0, 0, 0, time.UTC), "2028-02-29"},
	} {
		if got := Day(tc.t); got != tc.want {
			t.Errorf("Day(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}

var day = Key{Owner: "alice.near", Project: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", Agent: "bot.near", Day: "2026-11-29"}

func TestReserveUpToTheLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var c MemoryCounter
	for i := 1; i <= 3; i++ {
		if ok, err := c.Reserve(ctx, day, Direct, 3); !ok || err != nil {
			t.Fatalf("reservation %d of 3: %v, %v", i, ok, err)
		}
	}
	if ok, err := c.Reserve(ctx, day, Direct, 3); ok || err != nil {
		t.Fatalf("reservation 4 of 3: %v, %v", ok, err)
	}
	// A raised limit admits more; a lowered one admits none.
	if ok, _ := c.Reserve(ctx, day, Direct, 4); !ok {
		t.Fatal("a raised limit admits no more")
	}
	if ok, _ := c.Reserve(ctx, day, Direct, 2); ok {
		t.Fatal("a lowered limit admits more")
	}
	if got := c.Count(day, Direct); got != 4 {
		t.Fatalf("Count = %d, want 4", got)
	}
	// A limit of 0 admits nothing.
	if ok, _ := c.Reserve(ctx, day, Confirmed, 0); ok || c.Count(day, Confirmed) != 0 {
		t.Fatal("a limit of 0 admitted a write")
	}
}

func TestCountsAreSeparate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var c MemoryCounter
	if ok, _ := c.Reserve(ctx, day, Direct, 1); !ok {
		t.Fatal("first reservation refused")
	}
	others := map[string]Key{
		"another owner":   {Owner: "bob.near", Project: day.Project, Agent: day.Agent, Day: day.Day},
		"another project": {Owner: day.Owner, Project: "other", Agent: day.Agent, Day: day.Day},
		"another agent":   {Owner: day.Owner, Project: day.Project, Agent: "other.near", Day: day.Day},
		"the next day":    {Owner: day.Owner, Project: day.Project, Agent: day.Agent, Day: "2026-11-30"},
	}
	for name, k := range others {
		if ok, _ := c.Reserve(ctx, k, Direct, 1); !ok {
			t.Errorf("%s shares the count", name)
		}
	}
	// Confirmed writes have their own number beside direct ones.
	if ok, _ := c.Reserve(ctx, day, Confirmed, 1); !ok {
		t.Error("confirmed writes share the direct count")
	}
	if ok, _ := c.Reserve(ctx, day, Direct, 1); ok {
		t.Error("the full direct count admitted another")
	}
	if ok, _ := c.Reserve(ctx, day, Confirmed, 1); ok {
		t.Error("the full confirmed count admitted another")
	}
}

func TestReserveRefusals(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		key   Key
		kind  Kind
		limit int
		want  string
	}{
		{"no owner", context.Background(), Key{Project: "p", Agent: "a", Day: day.Day}, Direct, 1, "daily count key is incomplete"},
		{"no project", context.Background(), Key{Owner: "o", Agent: "a", Day: day.Day}, Direct, 1, "daily count key is incomplete"},
		{"no agent", context.Background(), Key{Owner: "o", Project: "p", Day: day.Day}, Direct, 1, "daily count key is incomplete"},
		{"no day", context.Background(), Key{Owner: "o", Project: "p", Agent: "a"}, Direct, 1, "daily count key is incomplete"},
		{"day in another format", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "29/11/2026"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day with a time", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-11-29T00:00:00Z"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day without padding", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-1-2"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day that does not exist", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-02-30"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day 2026-13-01", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-13-01"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day 2026-00-10", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-00-10"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day 02026-11-29", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "02026-11-29"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day 2026-11-29 ", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2026-11-29 "}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day +2026-11-29", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "+2026-11-29"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day -0001-11-29", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "-0001-11-29"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"day 2027-02-29", context.Background(), Key{Owner: "o", Project: "p", Agent: "a", Day: "2027-02-29"}, Direct, 1, "day is not YYYY-MM-DD"},
		{"no kind", context.Background(), day, 0, 1, "unknown count kind 0"},
		{"unknown kind", context.Background(), day, Confirmed + 1, 1, "unknown count kind 3"},
		{"negative limit", context.Background(), day, Direct, -1, "negative daily limit -1"},
		{"cancelled", cancelled, day, Direct, 1, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c MemoryCounter
			ok, err := c.Reserve(tc.ctx, tc.key, tc.kind, tc.limit)
			if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reserve = %v, %v; want an error containing %q", ok, err, tc.want)
			}
			if c.Count(tc.key, tc.kind) != 0 {
				t.Fatal("a refused reservation counted")
			}
		})
	}
	var c MemoryCounter
	if _, err := c.Reserve(cancelled, day, Direct, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context's error is not wrapped: %v", err)
	}
}

func TestReserveConcurrently(t *testing.T) {
	t.Parallel()
	const limit, callers = 37, 400
	var c MemoryCounter
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range callers {
		wg.Go(func() {
			<-start
			ok, err := c.Reserve(context.Background(), day, Confirmed, limit)
			if err != nil {
				t.Error(err)
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := admitted.Load(); got != limit {
		t.Fatalf("%d of %d parallel reservations admitted, want exactly %d", got, callers, limit)
	}
	if got := c.Count(day, Confirmed); got != limit {
		t.Fatalf("Count = %d, want %d", got, limit)
	}
}

func TestCheckReservationAcceptsEveryDayOfTheYear(t *testing.T) {
	t.Parallel()
	d := time.Date(2028, 1, 1, 12, 0, 0, 0, time.UTC) // a leap year
	for d.Year() == 2028 {
		k := Key{Owner: "o", Project: "p", Agent: "a", Day: Day(d)}
		if err := CheckReservation(k, Direct, 0); err != nil {
			t.Fatalf("%s: %v", k.Day, err)
		}
		d = d.AddDate(0, 0, 1)
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[Kind]string{Direct: "direct", Confirmed: "confirmed", 0: "Kind(0)"} {
		if k.String() != want {
			t.Errorf("%d: %q", uint8(k), k.String())
		}
	}
}
