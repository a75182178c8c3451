package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// heard collects one owner's task events from a store handle.
type heard struct {
	mu  sync.Mutex
	evs []store.TaskEvent
}

func listen(db *sqlstore.DB, owner string) (*heard, func()) {
	h := &heard{}
	stop := db.SubscribeFunc(owner, func(ev store.TaskEvent) {
		h.mu.Lock()
		h.evs = append(h.evs, ev)
		h.mu.Unlock()
	})
	return h, stop
}

func (h *heard) events() []store.TaskEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]store.TaskEvent(nil), h.evs...)
}

// settled waits up to 5 s for n events, then a while longer, so that a
// duplicate or a straggler shows, and returns what was heard.
func (h *heard) settled(n int) []store.TaskEvent {
	deadline := time.Now().Add(5 * time.Second)
	for len(h.events()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	return h.events()
}

// twoProcesses is a store on the test PostgreSQL, another handle on the
// same schema (another process), and a bare LISTEN on the store's channel,
// to see what is sent on it.
func twoProcesses(t *testing.T) (db, other *sqlstore.DB, channel *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	db = storetest.Postgres(t)
	other, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	channel, err = pgx.Connect(ctx, storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { channel.Close(ctx) })
	if _, err := channel.Exec(ctx, "LISTEN "+pgx.Identifier{"countersign_tasks_" + db.SchemaName()}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return db, other, channel
}

// payloads reads what the channel carried until it is quiet.
func payloads(channel *pgx.Conn) []string {
	ctx := context.Background()
	var ps []string
	for {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		note, err := channel.WaitForNotification(wctx)
		cancel()
		if err != nil {
			return ps
		}
		ps = append(ps, note.Payload)
	}
}

// TestEventsReachEveryProcessOnce: events committed through one handle (one
// process) reach that handle's subscribers and another handle's on the same
// database, each exactly once and in commit order, also when many commit at
// once from many goroutines; a rolled back change reaches nobody, and the
// channel carries one notification for each event.
func TestEventsReachEveryProcessOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, other, raw := twoProcesses(t)
	const owners, moves = 8, 3
	here, stopHere := make([]*heard, owners), make([]func(), owners)
	there, stopThere := make([]*heard, owners), make([]func(), owners)
	for i := range owners {
		owner := fmt.Sprintf("owner%d.near", i)
		here[i], stopHere[i] = listen(db, owner)
		there[i], stopThere[i] = listen(other, owner)
		defer stopHere[i]()
		defer stopThere[i]()
	}
	_ = db.Tx(ctx, func(tx store.Tx) error {
		k, c := storetest.NewTask("gone-1", "owner0.near", "bot.near")
		_ = tx.InsertTask(ctx, k, c)
		return errors.New("refused")
	})
	path := []countersign.State{countersign.StateOpen, countersign.StateApproved, countersign.StateAnswering, countersign.StateDone}
	var wg sync.WaitGroup
	for i := range owners {
		wg.Go(func() {
			owner := fmt.Sprintf("owner%d.near", i)
			k, c := storetest.NewTask(fmt.Sprintf("r%d-1", i), owner, "bot.near")
			err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) })
			if err != nil {
				t.Error(err)
				return
			}
			actors := []countersign.Actor{countersign.ActorOwner, countersign.ActorPlatform, countersign.ActorPlatform}
			for j := range moves {
				mv, err := countersign.Transition(k.Kind, path[j], path[j+1], actors[j], "")
				if err != nil {
					t.Error(err)
					return
				}
				err = db.Tx(ctx, func(tx store.Tx) error {
					moved, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: mv, At: time.Now(), Run: "run1"})
					if err == nil && !moved {
						err = errors.New("not moved")
					}
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	for i := range owners {
		id := fmt.Sprintf("r%d-1", i)
		var want []store.TaskEvent
		for _, s := range path {
			want = append(want, store.TaskEvent{Owner: fmt.Sprintf("owner%d.near", i), TaskID: id, State: s})
		}
		for name, h := range map[string]*heard{"the writing process": here[i], "the other process": there[i]} {
			if got := h.settled(len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s heard %v, want %v", name, got, want)
			}
		}
	}

	ps := payloads(raw)
	for _, p := range ps {
		if _, ok := sqlstore.ParseEvent(p); !ok {
			t.Fatalf("%q on the channel", p)
		}
	}
	if len(ps) != owners*len(path) {
		t.Fatalf("%d notifications on the channel, want %d", len(ps), owners*len(path))
	}
}

// TestEventsOfATransactionInOneNotification: the events of one
// transaction (a move made through another, and a task opened beside it)
// reach the writing process and another one in order, in one NOTIFY; a
// transaction of more events than one NOTIFY's payload holds sends them in
// as few as hold them, each under PostgreSQL's limit, and none is lost.
func TestEventsOfATransactionInOneNotification(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, other, raw := twoProcesses(t)
	owner := strings.Repeat("o", 58) + ".near" // a long account, a long payload
	here, stopHere := listen(db, owner)
	defer stopHere()
	there, stopThere := listen(other, owner)
	defer stopThere()

	k, c := storetest.NewTask("r1-1", owner, "bot.near")
	if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
		t.Fatal(err)
	}
	approve, _ := countersign.Transition(k.Kind, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, "")
	if err := db.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: approve, At: time.Now()})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	payloads(raw)
	claim, _ := countersign.Transition(k.Kind, countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, "")
	done, _ := countersign.Transition(k.Kind, countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, "")
	next, nc := storetest.NewTask("r1-2", owner, "bot.near")
	err := db.Tx(ctx, func(tx store.Tx) error {
		now := time.Now()
		moved, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: done, At: now, Run: "run2",
			Through: &store.Step{Move: claim, At: now, Run: "run2"}})
		if err == nil && !moved {
			err = errors.New("not moved")
		}
		if err != nil {
			return err
		}
		return tx.InsertTask(ctx, next, nc)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TaskEvent{
		{Owner: owner, TaskID: "r1-1", State: countersign.StateOpen},
		{Owner: owner, TaskID: "r1-1", State: countersign.StateApproved},
		{Owner: owner, TaskID: "r1-1", State: countersign.StateAnswering},
		{Owner: owner, TaskID: "r1-1", State: countersign.StateDone},
		{Owner: owner, TaskID: "r1-2", State: countersign.StateOpen},
	}
	for name, h := range map[string]*heard{"the writing process": here, "the other process": there} {
		if got := h.settled(len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s heard %v, want %v", name, got, want)
		}
	}
	if ps := payloads(raw); len(ps) != 1 || fmt.Sprint(sqlstore.ParseEvents(ps[0])) != fmt.Sprint(want[2:]) {
		t.Errorf("the transaction's NOTIFYs: %q, want one of %v", ps, want[2:])
	}

	// Two hundred tasks opened in one transaction: about 15 KB of events.
	const many = 200
	var opened []store.TaskEvent
	err = db.Tx(ctx, func(tx store.Tx) error {
		for i := range many {
			k, c := storetest.NewTask(fmt.Sprintf("m1-%d", i), owner, "bot.near")
			if err := tx.InsertTask(ctx, k, c); err != nil {
				return err
			}
			opened = append(opened, store.TaskEvent{Owner: owner, TaskID: k.ID, State: countersign.StateOpen})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, opened...)
	for name, h := range map[string]*heard{"the writing process": here, "the other process": there} {
		if got := h.settled(len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s heard %d events, want %d in order", name, len(got), len(want))
		}
	}
	ps := payloads(raw)
	var carried []store.TaskEvent
	size := 0
	for _, p := range ps {
		if len(p) >= 8000 {
			t.Errorf("a NOTIFY of %d bytes", len(p))
		}
		size += len(p) + 1
		carried = append(carried, sqlstore.ParseEvents(p)...)
	}
	if fmt.Sprint(carried) != fmt.Sprint(opened) {
		t.Errorf("the NOTIFYs carried %d events, want the %d opened, in order", len(carried), len(opened))
	}
	if fewest := (size + 7998) / 7999; len(ps) < 2 || len(ps) > fewest+1 {
		t.Errorf("%d events in %d NOTIFYs (%d bytes)", len(carried), len(ps), size)
	}
}
