package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

func activityTests() []storeTest {
	return []storeTest{
		{"ActivityRoundTrip", testActivityRoundTrip},
		{"ActivityRefusals", testActivityRefusals},
		{"ActivityListsEndedEntriesNewestFirst", testOwnerActivity},
		{"ActivityEndsWithItsTask", testActivityEndsWithItsTask},
		{"ActivityEndsOnceUnderConcurrency", testActivityEndsOnce},
		{"ActivityToWrap", testActivityToWrap},
		{"ActivityCopiesEndWithTheirDevice", testActivityCopiesEndWithTheirDevice},
		{"ActivityPurged", testActivityPurged},
	}
}

// NewEntry returns a history entry for tests, with made-up ciphertext.
func NewEntry(id, owner string, via string, state countersign.State, at time.Time) store.Activity {
	return store.Activity{ID: id, Owner: owner, Project: "ledger", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
		Connector: "ledger", Operation: "pay", Preparer: "bot.near", Via: via, State: state, At: at, KeyID: 1,
		Sealed: []byte("sealed-" + id)}
}

func insertEntry(t *testing.T, s store.Store, a store.Activity, copies map[string][]byte) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error { return tx.InsertActivity(ctx, a, copies) })
}

func listActivity(t *testing.T, s store.Store, q store.ActivityQuery) []store.Activity {
	t.Helper()
	var out []store.Activity
	inTx(t, s, func(tx store.Tx) (err error) {
		out, err = tx.OwnerActivity(ctx, q)
		return err
	})
	return out
}

func entryIDs(list []store.Activity) []string {
	ids := []string{}
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

func testActivityRoundTrip(t *testing.T, s store.Store) {
	a := NewEntry("run1", "alice.near", store.ViaDirect, countersign.StateDone, t0)
	a.FailureReason = "run_refused:conflict"
	insertEntry(t, s, a, map[string][]byte{"dev1": []byte("copy1")})
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.ActivityEntry(ctx, "run1")
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(a) {
			t.Errorf("read back %+v, want %+v", got, a)
		}
		if got.TaskID() != "" {
			t.Errorf("a direct entry names a task: %q", got.TaskID())
		}
		if _, err := tx.ActivityEntry(ctx, "nosuch"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("no such entry: %v", err)
		}
		return nil
	})
	// An entry of a task is that task's.
	if e := NewEntry("run2-1", "alice.near", store.ViaTask, countersign.StateOpen, t0); e.TaskID() != "run2-1" {
		t.Errorf("a task's entry names task %q", e.TaskID())
	}
	// A second entry of one id is refused, and nothing of it is kept.
	err := s.Tx(ctx, func(tx store.Tx) error {
		again := NewEntry("run1", "alice.near", store.ViaDirect, countersign.StateDone, t0.Add(time.Hour))
		again.Sealed = []byte("another")
		return tx.InsertActivity(ctx, again, map[string][]byte{"dev2": []byte("copy2")})
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken entry id: %v", err)
	}
	list := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: "dev2", Limit: 10})
	if len(list) != 1 || string(list[0].Sealed) != "sealed-run1" || list[0].DeviceCopy != nil {
		t.Errorf("after a refused second entry: %+v", list)
	}
}

func testActivityRefusals(t *testing.T, s store.Store) {
	good := NewEntry("run1", "alice.near", store.ViaDirect, countersign.StateDone, t0)
	for name, edit := range map[string]func(*store.Activity){
		"no id":          func(a *store.Activity) { a.ID = "" },
		"no owner":       func(a *store.Activity) { a.Owner = "" },
		"no project":     func(a *store.Activity) { a.ProjectUUID = "" },
		"no state":       func(a *store.Activity) { a.State = "" },
		"another via":    func(a *store.Activity) { a.Via = "asked" },
		"nothing sealed": func(a *store.Activity) { a.Sealed = nil },
		"no key id":      func(a *store.Activity) { a.KeyID = 0 },
		"no time":        func(a *store.Activity) { a.At = time.Time{} },
	} {
		a := good
		edit(&a)
		if err := s.Tx(ctx, func(tx store.Tx) error { return tx.InsertActivity(ctx, a, nil) }); err == nil {
			t.Errorf("an entry with %s was taken", name)
		}
	}
	if got := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Limit: 10}); len(got) != 0 {
		t.Errorf("refused entries were kept: %v", entryIDs(got))
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.OwnerActivity(ctx, store.ActivityQuery{Owner: "alice.near"}); err == nil {
			t.Error("a page without a limit was listed")
		}
		return nil
	})
}

func testOwnerActivity(t *testing.T, s store.Store) {
	// e1..e5 ended one minute apart (e4 and e5 at the same second), e0 is
	// a task still open, x1 is bob's.
	entries := []store.Activity{
		NewEntry("e1", "alice.near", store.ViaDirect, countersign.StateDone, t0.Add(1*time.Minute)),
		NewEntry("e2", "alice.near", store.ViaTask, countersign.StateRejected, t0.Add(2*time.Minute)),
		NewEntry("e3", "alice.near", store.ViaTask, countersign.StateFailed, t0.Add(3*time.Minute)),
		NewEntry("e4", "alice.near", store.ViaTask, countersign.StateExpired, t0.Add(4*time.Minute)),
		NewEntry("e5", "alice.near", store.ViaDirect, countersign.StateDone, t0.Add(4*time.Minute)),
		NewEntry("e0", "alice.near", store.ViaTask, countersign.StateOpen, t0.Add(5*time.Minute)),
		NewEntry("e6", "alice.near", store.ViaTask, countersign.StateApproved, t0.Add(5*time.Minute)),
		NewEntry("e7", "alice.near", store.ViaTask, countersign.StateAnswering, t0.Add(5*time.Minute)),
		NewEntry("x1", "bob.near", store.ViaDirect, countersign.StateDone, t0.Add(6*time.Minute)),
	}
	entries[1].Project, entries[1].Preparer = "probe", "other.near"
	entries[2].Preparer = "other.near"
	for _, a := range entries {
		insertEntry(t, s, a, map[string][]byte{"dev-" + a.Owner: []byte("copy-" + a.ID)})
	}
	all := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: "dev-alice.near", Limit: 10})
	if got, want := entryIDs(all), []string{"e5", "e4", "e3", "e2", "e1"}; !slices.Equal(got, want) {
		t.Errorf("alice's history is %v, want %v (ended only, newest first)", got, want)
	}
	for _, a := range all {
		if string(a.DeviceCopy) != "copy-"+a.ID || string(a.Sealed) != "sealed-"+a.ID {
			t.Errorf("entry %s carries %q and copy %q", a.ID, a.Sealed, a.DeviceCopy)
		}
	}
	if other := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: "dev-bob.near", Limit: 10}); len(other) != 5 || other[0].DeviceCopy != nil {
		t.Errorf("another device's listing carries copies: %+v", other)
	}
	// Pages, from an entry on: ties in time are ordered by id.
	var pages [][]string
	var before *store.Activity
	for range 4 {
		page := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Before: before, Limit: 2})
		if len(page) == 0 {
			break
		}
		pages = append(pages, entryIDs(page))
		before = &page[len(page)-1]
	}
	if fmt.Sprint(pages) != "[[e5 e4] [e3 e2] [e1]]" {
		t.Errorf("pages of 2: %v", pages)
	}
	if got := entryIDs(listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Project: "probe", Limit: 10})); !slices.Equal(got, []string{"e2"}) {
		t.Errorf("project probe: %v", got)
	}
	if got := entryIDs(listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Preparer: "other.near", Limit: 10})); !slices.Equal(got, []string{"e3", "e2"}) {
		t.Errorf("agent other.near: %v", got)
	}
	if got := entryIDs(listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Project: "probe", Preparer: "bot.near", Limit: 10})); len(got) != 0 {
		t.Errorf("project probe by bot.near: %v", got)
	}
	if got := entryIDs(listActivity(t, s, store.ActivityQuery{Owner: "bob.near", Device: "dev-alice.near", Limit: 10})); !slices.Equal(got, []string{"x1"}) {
		t.Errorf("bob's history: %v", got)
	}
}

func testActivityEndsWithItsTask(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	insertEntry(t, s, NewEntry(k.ID, "alice.near", store.ViaTask, countersign.StateOpen, t0), map[string][]byte{"dev1": []byte("copy")})
	// A direct entry whose id a task's move names is not the task's.
	direct := NewEntry("run1", "alice.near", store.ViaDirect, countersign.StateDone, t0)
	insertEntry(t, s, direct, nil)
	listed := func() []store.Activity {
		return listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: "dev1", Limit: 10})
	}
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0.Add(time.Minute), Approval: []byte("a")})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0.Add(2 * time.Minute)})
	if got := entryIDs(listed()); !slices.Equal(got, []string{"run1"}) {
		t.Fatalf("a task not ended is listed: %v", got)
	}
	// A move that is rolled back leaves the entry as it was.
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, ""),
			At: t0.Add(3 * time.Minute), Entry: []byte("rolled back")}); err != nil {
			t.Fatal(err)
		}
		return errors.New("roll back")
	})
	if got := entryIDs(listed()); !slices.Equal(got, []string{"run1"}) {
		t.Fatalf("a rolled-back end lists the entry: %v", got)
	}
	if !move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateAnswering, countersign.StateFailed, countersign.ActorPlatform, "run_refused:conflict"), At: t0.Add(4 * time.Minute), Entry: []byte("with its result")}) {
		t.Fatal("the task did not end")
	}
	got := listed()
	if len(got) != 2 || got[0].ID != k.ID {
		t.Fatalf("after the end: %v", entryIDs(got))
	}
	e := got[0]
	if e.State != countersign.StateFailed || e.FailureReason != "run_refused:conflict" || !e.At.Equal(t0.Add(4*time.Minute)) ||
		string(e.Sealed) != "with its result" || string(e.DeviceCopy) != "copy" || e.TaskID() != k.ID {
		t.Errorf("the ended entry: %+v", e)
	}
	if d := got[1]; d.State != countersign.StateDone || string(d.Sealed) != "sealed-run1" || !d.At.Equal(t0) {
		t.Errorf("the direct entry changed: %+v", d)
	}

	// A move without a body keeps the one sealed at opening.
	k2, c2 := NewTask("run2-1", "alice.near", "bot.near")
	insert(t, s, k2, c2)
	insertEntry(t, s, NewEntry(k2.ID, "alice.near", store.ViaTask, countersign.StateOpen, t0), nil)
	move(t, s, store.Move{ID: k2.ID, Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0.Add(5 * time.Minute)})
	inTx(t, s, func(tx store.Tx) error {
		e, err := tx.ActivityEntry(ctx, k2.ID)
		if err != nil {
			return err
		}
		if e.State != countersign.StateRejected || e.FailureReason != "" || string(e.Sealed) != "sealed-"+k2.ID || !e.At.Equal(t0.Add(5*time.Minute)) {
			t.Errorf("the rejected task's entry: %+v", e)
		}
		return nil
	})
}

// testActivityEndsOnce: of concurrent ends of one task (the owner's no,
// a cancel, the sweep's expiry, each carrying its own body), one wins, and
// the task's entry says exactly that one.
func testActivityEndsOnce(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	insertEntry(t, s, NewEntry(k.ID, "alice.near", store.ViaTask, countersign.StateOpen, t0), nil)
	ends := []countersign.State{countersign.StateRejected, countersign.StateCancelled, countersign.StateExpired}
	var mu sync.Mutex
	var won []string
	var wg sync.WaitGroup
	for i := range 18 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := ends[i%len(ends)]
			body := fmt.Sprintf("body-%d", i)
			err := s.Tx(ctx, func(tx store.Tx) error {
				moved, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateOpen, to, ender(to), ""),
					At: t0.Add(time.Duration(i) * time.Second), Entry: []byte(body)})
				if moved {
					mu.Lock()
					won = append(won, string(to)+" "+body)
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d concurrent ends happened: %v", len(won), won)
	}
	inTx(t, s, func(tx store.Tx) error {
		task, err := tx.Task(ctx, k.ID)
		if err != nil {
			return err
		}
		e, err := tx.ActivityEntry(ctx, k.ID)
		if err != nil {
			return err
		}
		if got := string(e.State) + " " + string(e.Sealed); got != won[0] || e.State != task.State || !e.At.Equal(task.ClosedAt) {
			t.Errorf("the entry says %s at %v, the task %s at %v; the winner was %s", got, e.At, task.State, task.ClosedAt, won[0])
		}
		return nil
	})
}

func testActivityToWrap(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		for _, id := range []string{"d1", "d2"} {
			if err := tx.InsertDevice(ctx, device(id, "alice.near", t0)); err != nil {
				return err
			}
		}
		return tx.InsertDevice(ctx, device("b1", "bob.near", t0))
	})
	old := NewEntry("old", "alice.near", store.ViaDirect, countersign.StateDone, t0.Add(-31*24*time.Hour))
	insertEntry(t, s, old, nil)
	insertEntry(t, s, NewEntry("e1", "alice.near", store.ViaDirect, countersign.StateDone, t0), map[string][]byte{"d1": []byte("c")})
	insertEntry(t, s, NewEntry("e2", "alice.near", store.ViaTask, countersign.StateOpen, t0.Add(time.Minute)), nil)
	insertEntry(t, s, NewEntry("x1", "bob.near", store.ViaDirect, countersign.StateDone, t0), nil)
	since := t0.Add(-30 * 24 * time.Hour)
	wrap := func(devices []string, limit int) []string {
		var out []string
		inTx(t, s, func(tx store.Tx) error {
			got, err := tx.ActivityToWrap(ctx, "alice.near", devices, since, limit)
			for _, e := range got {
				if e.ProjectUUID != old.ProjectUUID || e.KeyID != 1 {
					t.Errorf("to wrap %+v", e)
				}
				out = append(out, e.ID+"/"+e.Device)
			}
			return err
		})
		return out
	}
	if got := wrap([]string{"d1", "d2", "b1"}, 10); fmt.Sprint(got) != "[e2/d1 e2/d2 e1/d2]" {
		t.Errorf("to wrap: %v (newest first, none older than since, none of bob's devices)", got)
	}
	if got := wrap([]string{"d1", "d2"}, 2); fmt.Sprint(got) != "[e2/d1 e2/d2]" {
		t.Errorf("to wrap, 2 at most: %v", got)
	}
	if got := wrap(nil, 10); len(got) != 0 {
		t.Errorf("to wrap for no device: %v", got)
	}
	inTx(t, s, func(tx store.Tx) error {
		return tx.PutActivityCopies(ctx, []store.ActivityCopy{{EntryID: "e2", Device: "d1", Blob: []byte("e2d1")},
			{EntryID: "e2", Device: "d2", Blob: []byte("e2d2")}, {EntryID: "e1", Device: "d1", Blob: []byte("replaced?")}})
	})
	if got := wrap([]string{"d1", "d2"}, 10); fmt.Sprint(got) != "[e1/d2]" {
		t.Errorf("to wrap after copies: %v", got)
	}
	list := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: "d1", Limit: 10})
	if len(list) != 2 || list[0].ID != "e1" || string(list[0].DeviceCopy) != "c" || list[1].DeviceCopy != nil {
		t.Errorf("a copy a device had was replaced: %+v", list)
	}
}

func testActivityCopiesEndWithTheirDevice(t *testing.T, s store.Store) {
	insertEntry(t, s, NewEntry("e1", "alice.near", store.ViaDirect, countersign.StateDone, t0),
		map[string][]byte{"gone": []byte("copy-gone"), "kept": []byte("copy-kept")})
	inTx(t, s, func(tx store.Tx) error {
		for _, id := range []string{"gone", "kept"} {
			if err := tx.InsertDevice(ctx, device(id, "alice.near", t0)); err != nil {
				return err
			}
		}
		_, err := tx.EndDevice(ctx, "gone", "withdrawn", t0)
		return err
	})
	for device, want := range map[string]string{"gone": "", "kept": "copy-kept"} {
		list := listActivity(t, s, store.ActivityQuery{Owner: "alice.near", Device: device, Limit: 10})
		if len(list) != 1 || string(list[0].DeviceCopy) != want {
			t.Errorf("device %s's copy: %+v", device, list)
		}
	}
}

func testActivityPurged(t *testing.T, s store.Store) {
	bound := t0.Add(-30 * 24 * time.Hour)
	inTx(t, s, func(tx store.Tx) error {
		for _, id := range []string{"live", "ended"} {
			if err := tx.InsertDevice(ctx, device(id, "alice.near", t0)); err != nil {
				return err
			}
		}
		return nil
	})
	copies := map[string][]byte{"live": []byte("l"), "ended": []byte("e")}
	insertEntry(t, s, NewEntry("gone", "alice.near", store.ViaDirect, countersign.StateDone, bound.Add(-time.Second)), copies)
	insertEntry(t, s, NewEntry("kept", "alice.near", store.ViaDirect, countersign.StateDone, bound), copies)
	// A task's entry is purged only once it ended, as the task is.
	insertEntry(t, s, NewEntry("open-1", "alice.near", store.ViaTask, countersign.StateOpen, bound.Add(-time.Hour)), copies)
	// The device ends in a transaction that commits before a copy for it
	// is written (an unlock racing the end).
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.EndDevice(ctx, "ended", "withdrawn", t0)
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		return tx.PutActivityCopies(ctx, []store.ActivityCopy{{EntryID: "kept", Device: "ended", Blob: []byte("late")}})
	})
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.Purge(ctx, t0, bound, t0, t0.Add(-3*24*time.Hour))
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.ActivityEntry(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an entry ended 30 days ago is kept: %v", err)
		}
		for _, id := range []string{"kept", "open-1"} {
			if _, err := tx.ActivityEntry(ctx, id); err != nil {
				t.Errorf("entry %s was purged: %v", id, err)
			}
		}
		got, err := tx.ActivityToWrap(ctx, "alice.near", []string{"live", "ended"}, bound.Add(-2*time.Hour), 10)
		if fmt.Sprint(toWrapIDs(got)) != "[kept/ended open-1/ended]" {
			t.Errorf("after the purge, missing copies are %v (the ended device's copies go)", toWrapIDs(got))
		}
		return err
	})
}

func toWrapIDs(list []store.EntryToWrap) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.ID+"/"+e.Device)
	}
	return out
}
