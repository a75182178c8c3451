package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/store"
)

func projectTests() []storeTest {
	return []storeTest{
		{"ProjectRoundTrip", testProjectRoundTrip},
		{"PutProjectKeepsUUIDAndReplacesGrants", testPutProjectUpdates},
		{"ProjectUUIDTaken", testProjectUUIDTaken},
		{"ProjectRefusals", testProjectRefusals},
		{"DeleteProject", testDeleteProject},
		{"RolledBackProjectIsNotThere", testRolledBackProject},
		{"ReserveDaily", testReserveDaily},
		{"ReserveDailyRefusals", testReserveDailyRefusals},
		{"ReserveDailyUnderConcurrency", testReserveDailyUnderConcurrency},
		{"ReserveSpend", testReserveSpend},
		{"ReserveSpendUnderConcurrency", testReserveSpendUnderConcurrency},
	}
}

// NewProject returns a project for tests, granted to the agents given.
func NewProject(owner, name, uuid string, agents ...string) store.Project {
	return store.Project{
		Owner: owner, Name: name, UUID: uuid, Connector: "probe",
		Policy:     []byte(`{"confirm":["guess_start"]}`),
		CredsKeyID: 1, Creds: []byte("sealed-creds-" + name),
		Agents:    agents,
		CreatedAt: t0, UpdatedAt: t0,
		Version: 1, // as a new project reads back (PutProject does not take it)
	}
}

func putProject(t *testing.T, s store.Store, p store.Project) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error { return tx.PutProject(ctx, p) })
}

// projectByName reads a project through both of its keys, which must agree.
func projectByName(t *testing.T, s store.Store, owner, name string) store.Project {
	t.Helper()
	var p, q store.Project
	inTx(t, s, func(tx store.Tx) (err error) {
		if p, err = tx.Project(ctx, owner, name); err != nil {
			return err
		}
		q, err = tx.ProjectByUUID(ctx, p.UUID)
		return err
	})
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("Project and ProjectByUUID disagree:\n%+v\n%+v", p, q)
	}
	return p
}

func testProjectRoundTrip(t *testing.T, s store.Store) {
	gh := NewProject("alice.near", "github", "uuid-github", "zed.near", "bot.near", "zed.near", "abc.near")
	gh.PolicyWidens = []string{strings.Repeat("a", 64), strings.Repeat("b", 64)}
	probe := NewProject("alice.near", "probe", "uuid-probe")
	probe.Creds, probe.CredsKeyID = nil, 0
	probe.CreatedAt = time.Time{} // a new project without a creation time is created at its update time
	probe.UpdatedAt = t0.Add(time.Hour)
	putProject(t, s, probe)
	putProject(t, s, gh)
	putProject(t, s, NewProject("bob.near", "github", "uuid-bob", "bot.near"))

	got := projectByName(t, s, "alice.near", "github")
	want := gh
	want.Agents = []string{"abc.near", "bot.near", "zed.near"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("project read back\n got %+v\nwant %+v", got, want)
	}
	got = projectByName(t, s, "alice.near", "probe")
	want = probe
	want.CreatedAt = probe.UpdatedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("project without credentials or grants read back\n got %+v\nwant %+v", got, want)
	}

	inTx(t, s, func(tx store.Tx) error {
		list, err := tx.Projects(ctx, "alice.near")
		if err != nil {
			return err
		}
		var names []string
		for _, p := range list {
			names = append(names, fmt.Sprintf("%s%v", p.Name, p.Agents))
		}
		if fmt.Sprint(names) != "[github[abc.near bot.near zed.near] probe[]]" {
			t.Errorf("Projects(alice.near) = %v", names)
		}
		granted, err := tx.GrantedProjects(ctx, "bot.near")
		if err != nil {
			return err
		}
		names = nil
		for _, p := range granted {
			names = append(names, p.Owner+"/"+p.Name+":"+p.Connector+fmt.Sprint(p.Agents))
		}
		if fmt.Sprint(names) != "[alice.near/github:probe[] bob.near/github:probe[]]" {
			t.Errorf("GrantedProjects(bot.near) = %v", names)
		}
		if list, err := tx.GrantedProjects(ctx, "nobody.near"); len(list) != 0 || err != nil {
			t.Errorf("GrantedProjects of an agent granted none: %+v, %v", list, err)
		}
		if list, err := tx.Projects(ctx, "carol.near"); len(list) != 0 || err != nil {
			t.Errorf("Projects of an owner with none: %+v, %v", list, err)
		}
		if _, err := tx.Project(ctx, "alice.near", "gmail"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Project of an unknown name: %v, want ErrNotFound", err)
		}
		if _, err := tx.Project(ctx, "carol.near", "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Project of another owner's name: %v, want ErrNotFound", err)
		}
		if _, err := tx.ProjectByUUID(ctx, "uuid-none"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ProjectByUUID of an unknown uuid: %v, want ErrNotFound", err)
		}
		return nil
	})
}

func testPutProjectUpdates(t *testing.T, s store.Store) {
	putProject(t, s, NewProject("alice.near", "github", "uuid-first", "bot.near", "old.near"))
	update := NewProject("alice.near", "github", "uuid-second", "new.near", "bot.near")
	update.Connector = "github"
	update.Policy = []byte(`{"confirm":["pr_merge"]}`)
	update.CredsKeyID, update.Creds = 2, []byte("sealed-creds-v2")
	update.CreatedAt = t0.Add(24 * time.Hour)
	update.UpdatedAt = t0.Add(24 * time.Hour)
	putProject(t, s, update)

	got := projectByName(t, s, "alice.near", "github")
	want := update
	want.UUID, want.CreatedAt, want.Version = "uuid-first", t0, 2
	want.Agents = []string{"bot.near", "new.near"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("updated project\n got %+v\nwant %+v", got, want)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.ProjectByUUID(ctx, "uuid-second"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the uuid an update carried was taken: %v", err)
		}
		return nil
	})

	// Nil credentials and no agents clear both.
	bare := NewProject("alice.near", "github", "uuid-third")
	bare.Creds = nil
	bare.UpdatedAt = t0.Add(48 * time.Hour)
	putProject(t, s, bare)
	got = projectByName(t, s, "alice.near", "github")
	if got.Creds != nil || got.CredsKeyID != 0 || got.Agents != nil || got.UUID != "uuid-first" ||
		!got.UpdatedAt.Equal(t0.Add(48*time.Hour)) || !got.CreatedAt.Equal(t0) {
		t.Errorf("after a put without credentials or grants: %+v", got)
	}
}

func testProjectUUIDTaken(t *testing.T, s store.Store) {
	putProject(t, s, NewProject("alice.near", "github", "uuid-1", "bot.near"))
	err := s.Tx(ctx, func(tx store.Tx) error {
		return tx.PutProject(ctx, NewProject("bob.near", "github", "uuid-1", "evil.near"))
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a new project with a taken uuid: %v, want ErrConflict", err)
	}
	if got := projectByName(t, s, "alice.near", "github"); fmt.Sprint(got.Agents) != "[bot.near]" {
		t.Errorf("a refused project changed another's grants: %v", got.Agents)
	}
}

func testProjectRefusals(t *testing.T, s store.Store) {
	for _, tc := range []struct {
		name   string
		change func(p *store.Project)
	}{
		{"no owner", func(p *store.Project) { p.Owner = "" }},
		{"no name", func(p *store.Project) { p.Name = "" }},
		{"no uuid", func(p *store.Project) { p.UUID = "" }},
		{"no connector", func(p *store.Project) { p.Connector = "" }},
		{"no policy", func(p *store.Project) { p.Policy = nil }},
		{"empty policy", func(p *store.Project) { p.Policy = []byte{} }},
		{"no update time", func(p *store.Project) { p.UpdatedAt = time.Time{} }},
		{"an agent without a name", func(p *store.Project) { p.Agents = []string{"bot.near", ""} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProject("alice.near", "github", "uuid-1", "bot.near")
			tc.change(&p)
			err := s.Tx(ctx, func(tx store.Tx) error { return tx.PutProject(ctx, p) })
			if err == nil || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("PutProject = %v, want a refusal", err)
			}
		})
	}
	inTx(t, s, func(tx store.Tx) error {
		if list, err := tx.Projects(ctx, "alice.near"); len(list) != 0 || err != nil {
			t.Errorf("refused projects were stored: %+v, %v", list, err)
		}
		return nil
	})
}

func testDeleteProject(t *testing.T, s store.Store) {
	putProject(t, s, NewProject("alice.near", "github", "uuid-1", "bot.near"))
	putProject(t, s, NewProject("alice.near", "probe", "uuid-2", "bot.near"))
	var deleted, again, other bool
	inTx(t, s, func(tx store.Tx) (err error) {
		if deleted, err = tx.DeleteProject(ctx, "alice.near", "github"); err != nil {
			return err
		}
		if again, err = tx.DeleteProject(ctx, "alice.near", "github"); err != nil {
			return err
		}
		other, err = tx.DeleteProject(ctx, "bob.near", "probe")
		return err
	})
	if !deleted || again || other {
		t.Fatalf("DeleteProject reported %v, then %v, and %v for another owner's name; want true, false, false", deleted, again, other)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.Project(ctx, "alice.near", "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted project is there: %v", err)
		}
		if _, err := tx.ProjectByUUID(ctx, "uuid-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted project is there by uuid: %v", err)
		}
		list, err := tx.Projects(ctx, "alice.near")
		if err != nil || len(list) != 1 || list[0].Name != "probe" || fmt.Sprint(list[0].Agents) != "[bot.near]" {
			t.Errorf("the other project after a delete: %+v, %v", list, err)
		}
		return nil
	})
	// The grants went with it: a project made again under the same uuid
	// (which only a restore would do) is granted to no one.
	putProject(t, s, NewProject("alice.near", "github", "uuid-1"))
	if got := projectByName(t, s, "alice.near", "github"); got.Agents != nil {
		t.Errorf("a deleted project's grants outlived it: %v", got.Agents)
	}
}

func testRolledBackProject(t *testing.T, s store.Store) {
	putProject(t, s, NewProject("alice.near", "probe", "uuid-2", "bot.near"))
	boom := errors.New("the confirmation was refused later in the transaction")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.PutProject(ctx, NewProject("alice.near", "github", "uuid-1", "bot.near")); err != nil {
			return err
		}
		changed := NewProject("alice.near", "probe", "uuid-2", "evil.near")
		changed.Policy = []byte(`{}`)
		if err := tx.PutProject(ctx, changed); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.Project(ctx, "alice.near", "github"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rolled back project is there: %v", err)
		}
		return nil
	})
	if got := projectByName(t, s, "alice.near", "probe"); !reflect.DeepEqual(got, NewProject("alice.near", "probe", "uuid-2", "bot.near")) {
		t.Errorf("a rolled back update changed the project: %+v", got)
	}
}

func reserve(t *testing.T, s store.Store, k store.DailyKey, limit int) bool {
	t.Helper()
	var ok bool
	inTx(t, s, func(tx store.Tx) (err error) {
		ok, err = tx.ReserveDaily(ctx, k, limit)
		return err
	})
	return ok
}

func dailyKey() store.DailyKey {
	return store.DailyKey{Owner: "alice.near", ProjectUUID: "uuid-1", Agent: "bot.near", Day: "2026-11-29", Kind: "direct"}
}

func testReserveDaily(t *testing.T, s store.Store) {
	k := dailyKey()
	// A limit of zero or less admits nothing, and counts nothing.
	for _, limit := range []int{0, -1} {
		if reserve(t, s, k, limit) {
			t.Fatalf("a limit of %d admitted a write", limit)
		}
	}
	for i := range 3 {
		if !reserve(t, s, k, 3) {
			t.Fatalf("write %d of 3 was refused", i+1)
		}
	}
	if reserve(t, s, k, 3) {
		t.Fatal("a fourth write under a limit of 3 was admitted")
	}
	if reserve(t, s, k, 2) {
		t.Fatal("a lowered limit admitted a write")
	}
	if !reserve(t, s, k, 4) {
		t.Fatal("a raised limit refused the write it makes room for")
	}
	if reserve(t, s, k, 4) {
		t.Fatal("a raised limit admitted more than it makes room for")
	}
	// Every member of the key counts on its own.
	others := map[string]func(k *store.DailyKey){
		"owner":   func(k *store.DailyKey) { k.Owner = "bob.near" },
		"project": func(k *store.DailyKey) { k.ProjectUUID = "uuid-2" },
		"agent":   func(k *store.DailyKey) { k.Agent = "other.near" },
		"day":     func(k *store.DailyKey) { k.Day = "2026-11-30" },
		"kind":    func(k *store.DailyKey) { k.Kind = "confirmed" },
	}
	for member, change := range others {
		o := dailyKey()
		change(&o)
		if !reserve(t, s, o, 1) {
			t.Errorf("another %s's first write was refused", member)
		}
		if reserve(t, s, o, 1) {
			t.Errorf("another %s's second write under a limit of 1 was admitted", member)
		}
	}
	// A rolled back reservation is given back.
	o := dailyKey()
	o.Day = "2026-12-01"
	boom := errors.New("refused later in the transaction")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if ok, err := tx.ReserveDaily(ctx, o, 1); !ok || err != nil {
			return fmt.Errorf("reserve in the transaction: %v, %w", ok, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if !reserve(t, s, o, 1) {
		t.Error("a rolled back reservation stayed counted")
	}
}

func testReserveDailyRefusals(t *testing.T, s store.Store) {
	for _, tc := range []struct {
		name   string
		change func(k *store.DailyKey)
	}{
		{"no owner", func(k *store.DailyKey) { k.Owner = "" }},
		{"no project", func(k *store.DailyKey) { k.ProjectUUID = "" }},
		{"no agent", func(k *store.DailyKey) { k.Agent = "" }},
		{"no day", func(k *store.DailyKey) { k.Day = "" }},
		{"no kind", func(k *store.DailyKey) { k.Kind = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := dailyKey()
			tc.change(&k)
			var ok bool
			err := s.Tx(ctx, func(tx store.Tx) (err error) {
				ok, err = tx.ReserveDaily(ctx, k, 5)
				return err
			})
			if ok || err == nil || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("ReserveDaily(%+v) = %v, %v; want a refusal", k, ok, err)
			}
		})
	}
}

func testReserveDailyUnderConcurrency(t *testing.T, s store.Store) {
	const limit, tries = 7, 30
	keys := []store.DailyKey{dailyKey(), dailyKey()}
	keys[1].Agent = "other.near"
	var admitted [2]atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		for j, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Tx(ctx, func(tx store.Tx) error {
					ok, err := tx.ReserveDaily(ctx, k, limit)
					if ok {
						admitted[j].Add(1)
					}
					return err
				})
				if err != nil {
					t.Errorf("reservation %d of key %d: %v", i, j, err)
				}
			}()
		}
	}
	wg.Wait()
	for j := range keys {
		if n := admitted[j].Load(); n != limit {
			t.Errorf("key %d: %d of %d concurrent reservations admitted under a limit of %d", j, n, tries, limit)
		}
		if reserve(t, s, keys[j], limit) {
			t.Errorf("key %d: a reservation after the limit was reached was admitted", j)
		}
	}
}

func spendTx(t *testing.T, s store.Store, sp store.Spend, limit int64) bool {
	t.Helper()
	var ok bool
	if err := s.Tx(ctx, func(tx store.Tx) (err error) {
		ok, err = tx.ReserveSpend(ctx, sp, limit)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func testReserveSpend(t *testing.T, s store.Store) {
	at := t0.Add(40 * 24 * time.Hour)
	since := at.Add(-30 * 24 * time.Hour)
	sp := func(key string, cents int64, when time.Time) store.Spend {
		return store.Spend{Owner: "alice.near", ProjectUUID: "uuid-1", Key: key, Cents: cents, At: when, Since: since}
	}
	// Older than the window: not counted.
	if !spendTx(t, s, sp("old", 90_000, since.Add(-time.Hour)), -1) {
		t.Fatal("an unbounded spend was refused")
	}
	if !spendTx(t, s, sp("a", 60_000, at), 100_000) {
		t.Fatal("a spend within the bound was refused")
	}
	if spendTx(t, s, sp("b", 40_001, at), 100_000) {
		t.Fatal("a spend passing the bound was admitted")
	}
	// The same key counts once, whatever the bound says now.
	if !spendTx(t, s, sp("a", 60_000, at), 0) {
		t.Fatal("a spend already counted was refused")
	}
	if !spendTx(t, s, sp("b", 40_000, at), 100_000) {
		t.Fatal("a spend reaching the bound exactly was refused")
	}
	if err := s.Tx(ctx, func(tx store.Tx) error { return tx.ReleaseSpend(ctx, "uuid-1", "b") }); err != nil {
		t.Fatal(err)
	}
	if !spendTx(t, s, sp("c", 40_000, at), 100_000) {
		t.Fatal("a released spend still counts")
	}
	// Another project has its own sum.
	other := sp("a", 100_000, at)
	other.ProjectUUID = "uuid-2"
	if !spendTx(t, s, other, 100_000) {
		t.Fatal("another project's spend was refused")
	}
	for _, bad := range []store.Spend{sp("", 1, at), sp("k", 0, at), sp("k", -5, at), {ProjectUUID: "uuid-1", Key: "k", Cents: 1}} {
		err := s.Tx(ctx, func(tx store.Tx) error {
			_, err := tx.ReserveSpend(ctx, bad, -1)
			return err
		})
		if err == nil {
			t.Errorf("ReserveSpend(%+v) was not refused", bad)
		}
	}
}

func testReserveSpendUnderConcurrency(t *testing.T, s store.Store) {
	const tries, cents, limit = 20, 1_000, 7_500
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				ok, err := tx.ReserveSpend(ctx, store.Spend{Owner: "alice.near", ProjectUUID: "uuid-1", Key: fmt.Sprintf("k%d", i),
					Cents: cents, At: t0, Since: t0.Add(-time.Hour)}, limit)
				if ok {
					admitted.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("spend %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != limit/cents {
		t.Fatalf("%d spends admitted; want %d", n, limit/cents)
	}
}
