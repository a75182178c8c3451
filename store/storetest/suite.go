package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

// Run is the conformance suite: every store implementation passes it. open
// returns a fresh, migrated store for one test.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	var tests []storeTest
	for _, group := range [][]storeTest{taskTests(), identityTests(), agentTests(), projectTests(), runTests(), inboxTests(), sweepTests(), webhookTests(), rewrapTests()} {
		tests = append(tests, group...)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); tc.f(t, open(t)) })
	}
}

type storeTest struct {
	name string
	f    func(t *testing.T, s store.Store)
}

func taskTests() []storeTest {
	return []storeTest{
		{"SchemaCurrent", testSchemaCurrent},
		{"TaskRoundTrip", testTaskRoundTrip},
		{"TaskIDTaken", testTaskIDTaken},
		{"MoveIsCompareAndSet", testMoveIsCompareAndSet},
		{"LeavingOpenDropsWhatItShowed", testLeavingOpenDrops},
		{"ApprovedKeepsFilesUntilTheEnd", testApprovedKeepsFiles},
		{"MoveOnceUnderConcurrency", testMoveOnceUnderConcurrency},
		{"OwnerLockHoldsLimits", testOwnerLockHoldsLimits},
		{"OwnerLoad", testOwnerLoad},
		{"RollbackWritesNothing", testRollbackWritesNothing},
		{"OutcomeAndReason", testOutcomeAndReason},
		{"PreparerTasksOfOneProject", testPreparerTasksOfOneProject},
		{"ReadSeesCommitted", testReadSeesCommitted},
	}
}

func testOutcomeAndReason(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		result, reason, err := tx.Outcome(ctx, k.ID)
		if err != nil || result != nil || reason != nil {
			t.Errorf("a new task's outcome: %q %q %v", result, reason, err)
		}
		if err := tx.SetReason(ctx, k.ID, []byte("sealed reason")); err != nil {
			t.Fatal(err)
		}
		if _, reason, _ = tx.Outcome(ctx, k.ID); string(reason) != "sealed reason" {
			t.Errorf("reason = %q", reason)
		}
		if err := tx.SetReason(ctx, "nosuch-1", []byte("x")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetReason of no task: %v", err)
		}
		if _, _, err := tx.Outcome(ctx, "nosuch-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Outcome of no task: %v", err)
		}
		return nil
	})
}

func testPreparerTasksOfOneProject(t *testing.T, s store.Store) {
	a, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, a, c)
	b, c2 := NewTask("run2-1", "alice.near", "bot.near")
	b.ProjectUUID = "00000000-0000-4000-8000-000000000002"
	insert(t, s, b, c2)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		got, err := tx.PreparerTasks(ctx, "alice.near", b.ProjectUUID, "bot.near", "", 10)
		if err != nil || len(got) != 1 || got[0].ID != b.ID {
			t.Errorf("tasks of one project: %v %v", got, err)
		}
		all, _ := tx.PreparerTasks(ctx, "alice.near", "", "bot.near", "", 10)
		if len(all) != 2 {
			t.Errorf("tasks of every project: %d", len(all))
		}
		return nil
	})
}

var ctx = context.Background()

// t0 is a fixed time: stores keep whole seconds.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// NewTask returns a task row for tests, with made-up ciphertext.
func NewTask(id, owner, preparer string) (store.Task, store.TaskCiphertext) {
	k := store.Task{
		ID: id, Owner: owner, Preparer: preparer, Project: "probe",
		ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", Connector: "probe",
		Kind: "input", State: countersign.StateOpen, Thread: id, Run: "run1", Operation: "guess",
		Supplies: "text", ReplyPubkey: "p256:x", TaskHash: "ab", KeyID: 1,
		ContentSize: 100, CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), StateAt: t0,
	}
	c := store.TaskCiphertext{
		Sealed:       []byte("sealed-" + id),
		Content:      []byte("content-" + id),
		Files:        [][]byte{[]byte("file0"), []byte("file-one")},
		DeviceCopies: map[string][]byte{"dev1": []byte("copy1"), "dev2": []byte("copy2")},
	}
	return k, c
}

func insert(t *testing.T, s store.Store, k store.Task, c store.TaskCiphertext) {
	t.Helper()
	if err := s.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
		t.Fatalf("insert %s: %v", k.ID, err)
	}
}

func move(t *testing.T, s store.Store, m store.Move) bool {
	t.Helper()
	var moved bool
	if err := s.Tx(ctx, func(tx store.Tx) (err error) {
		moved, err = tx.MoveTask(ctx, m)
		return err
	}); err != nil {
		t.Fatalf("move %s %s→%s: %v", m.ID, m.From, m.To, err)
	}
	return moved
}

func testSchemaCurrent(t *testing.T, s store.Store) {
	st, err := s.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Behind() || st.Ahead() || st.Current == 0 {
		t.Fatalf("a migrated store reports %+v", st)
	}
}

func testTaskRoundTrip(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		got, err := tx.Task(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(k) {
			t.Errorf("task read back\n got %+v\nwant %+v", got, k)
		}
		sealed, keyID, err := tx.Sealed(ctx, k.ID)
		if err != nil || !bytes.Equal(sealed, c.Sealed) || keyID != 1 {
			t.Errorf("Sealed = %q, %d, %v", sealed, keyID, err)
		}
		content, err := tx.Content(ctx, k.ID)
		if err != nil || !bytes.Equal(content, c.Content) {
			t.Errorf("Content = %q, %v", content, err)
		}
		sizes, err := tx.Files(ctx, k.ID)
		if err != nil || fmt.Sprint(sizes) != "[5 8]" {
			t.Errorf("Files = %v, %v", sizes, err)
		}
		f1, err := tx.File(ctx, k.ID, 1)
		if err != nil || string(f1) != "file-one" {
			t.Errorf("File 1 = %q, %v", f1, err)
		}
		if _, err := tx.File(ctx, k.ID, 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("File 2: %v, want ErrNotFound", err)
		}
		d2, err := tx.DeviceCopy(ctx, k.ID, "dev2")
		if err != nil || string(d2) != "copy2" {
			t.Errorf("DeviceCopy dev2 = %q, %v", d2, err)
		}
		if _, err := tx.DeviceCopy(ctx, k.ID, "dev3"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeviceCopy dev3: %v, want ErrNotFound", err)
		}
		if err := tx.PutDeviceCopy(ctx, k.ID, "dev3", []byte("copy3")); err != nil {
			t.Fatal(err)
		}
		if err := tx.PutDeviceCopy(ctx, k.ID, "dev2", []byte("copy2b")); err != nil {
			t.Fatal(err)
		}
		d2, _ = tx.DeviceCopy(ctx, k.ID, "dev2")
		d3, _ := tx.DeviceCopy(ctx, k.ID, "dev3")
		if string(d2) != "copy2b" || string(d3) != "copy3" {
			t.Errorf("after PutDeviceCopy: dev2 %q dev3 %q", d2, d3)
		}
		if _, err := tx.Task(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Task(nope): %v, want ErrNotFound", err)
		}
		return nil
	})
}

func testTaskIDTaken(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	err := s.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
}

func testMoveIsCompareAndSet(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	if move(t, s, store.Move{ID: k.ID, From: countersign.StateApproved, To: countersign.StateAnswering, At: t0, Actor: "platform"}) {
		t.Fatal("a move from a state the task is not in happened")
	}
	if move(t, s, store.Move{ID: "other", From: countersign.StateOpen, To: countersign.StateApproved, At: t0, Actor: "owner"}) {
		t.Fatal("a move of a missing task happened")
	}
	if !move(t, s, store.Move{ID: k.ID, From: countersign.StateOpen, To: countersign.StateApproved, At: t0, Actor: "owner", Run: "run2", AnswerRun: "run2"}) {
		t.Fatal("open → approved did not happen")
	}
	if !move(t, s, store.Move{ID: k.ID, From: countersign.StateApproved, To: countersign.StateAnswering, At: t0.Add(time.Second), Actor: "platform", Run: "run2"}) {
		t.Fatal("approved → answering did not happen")
	}
	if !move(t, s, store.Move{ID: k.ID, From: countersign.StateAnswering, To: countersign.StateDone, At: t0.Add(2 * time.Second),
		Actor: "platform", Run: "run2", OutcomeClass: "claimed"}) {
		t.Fatal("answering → done did not happen")
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		got, err := tx.Task(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != countersign.StateDone || got.AnswerRun != "run2" || got.OutcomeClass != "claimed" || !got.ClosedAt.Equal(t0.Add(2*time.Second)) {
			t.Errorf("after done: %+v", got)
		}
		if _, _, err := tx.Sealed(ctx, k.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a done task still has its sealed copy: %v", err)
		}
		events, err := tx.Events(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := "[open→approved owner run2 approved→answering platform run2 answering→done platform run2]"
		var got2 []string
		for _, e := range events {
			got2 = append(got2, string(e.From)+"→"+string(e.To)+" "+e.Actor+" "+e.Run)
		}
		if fmt.Sprint(got2) != want || !events[2].At.Equal(t0.Add(2*time.Second)) {
			t.Errorf("events = %v, want %v", got2, want)
		}
		return nil
	})
}

func testLeavingOpenDrops(t *testing.T, s store.Store) {
	for _, to := range []countersign.State{countersign.StateRejected, countersign.StateCancelled, countersign.StateExpired, countersign.StateVoid} {
		k, c := NewTask("run1-"+string(to), "alice.near", "bot.near")
		insert(t, s, k, c)
		if !move(t, s, store.Move{ID: k.ID, From: countersign.StateOpen, To: to, At: t0, Actor: "owner", OutcomeClass: "observed"}) {
			t.Fatalf("open → %s did not happen", to)
		}
		_ = s.Tx(ctx, func(tx store.Tx) error {
			if _, err := tx.Content(ctx, k.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: content kept (%v)", to, err)
			}
			if sizes, _ := tx.Files(ctx, k.ID); len(sizes) != 0 {
				t.Errorf("%s: files kept", to)
			}
			if _, err := tx.DeviceCopy(ctx, k.ID, "dev1"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: device copy kept (%v)", to, err)
			}
			if _, _, err := tx.Sealed(ctx, k.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: sealed copy kept (%v)", to, err)
			}
			return nil
		})
	}
}

func testApprovedKeepsFiles(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	move(t, s, store.Move{ID: k.ID, From: countersign.StateOpen, To: countersign.StateApproved, At: t0, Actor: "owner"})
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.Content(ctx, k.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("approved: content kept (%v)", err)
		}
		if _, err := tx.DeviceCopy(ctx, k.ID, "dev1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("approved: device copy kept (%v)", err)
		}
		if f, err := tx.File(ctx, k.ID, 0); err != nil || string(f) != "file0" {
			t.Errorf("approved: file 0 = %q, %v; the answer run needs it", f, err)
		}
		if _, _, err := tx.Sealed(ctx, k.ID); err != nil {
			t.Errorf("approved: sealed copy gone (%v); the answer run needs it", err)
		}
		return nil
	})
	move(t, s, store.Move{ID: k.ID, From: countersign.StateApproved, To: countersign.StateFailed, At: t0, Actor: "platform",
		OutcomeClass: "observed", FailureReason: "run_not_started"})
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if sizes, _ := tx.Files(ctx, k.ID); len(sizes) != 0 {
			t.Errorf("failed: files kept")
		}
		got, _ := tx.Task(ctx, k.ID)
		if got.FailureReason != "run_not_started" {
			t.Errorf("failure reason = %q", got.FailureReason)
		}
		return nil
	})
}

func testMoveOnceUnderConcurrency(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				moved, err := tx.MoveTask(ctx, store.Move{ID: k.ID, From: countersign.StateOpen, To: countersign.StateApproved, At: t0, Actor: "owner"})
				if moved {
					wins.Add(1)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 20 concurrent moves happened, want exactly 1", wins.Load())
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		events, _ := tx.Events(ctx, k.ID)
		if len(events) != 1 {
			t.Errorf("%d events for one move", len(events))
		}
		return nil
	})
}

func testOwnerLockHoldsLimits(t *testing.T, s store.Store) {
	const limit, tries = 5, 16
	var wg sync.WaitGroup
	var inserted atomic.Int32
	for i := 0; i < tries; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				if err := tx.LockOwner(ctx, "alice.near"); err != nil {
					return err
				}
				l, err := tx.OwnerLoad(ctx, "alice.near", "bot.near")
				if err != nil || l.OwnerOpen >= limit {
					return err
				}
				k, c := NewTask(fmt.Sprintf("run%d-1", i), "alice.near", "bot.near")
				inserted.Add(1)
				return tx.InsertTask(ctx, k, c)
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	_ = s.Tx(ctx, func(tx store.Tx) error {
		l, err := tx.OwnerLoad(ctx, "alice.near", "bot.near")
		if err != nil || l.OwnerOpen != limit {
			t.Errorf("%d tasks open under a limit of %d (%v)", l.OwnerOpen, limit, err)
		}
		return nil
	})
}

func testOwnerLoad(t *testing.T, s store.Store) {
	for i, p := range []string{"bot.near", "bot.near", "bot.near", "other.near"} {
		k, c := NewTask(fmt.Sprintf("run%d-1", i), "alice.near", p)
		k.ContentSize = int64(1000 * (i + 1))
		insert(t, s, k, c)
	}
	k, c := NewTask("runx-1", "bob.near", "bot.near")
	insert(t, s, k, c)
	move(t, s, store.Move{ID: "run0-1", From: countersign.StateOpen, To: countersign.StateApproved, At: t0, Actor: "owner"})
	move(t, s, store.Move{ID: "run1-1", From: countersign.StateOpen, To: countersign.StateRejected, At: t0, Actor: "owner"})
	_ = s.Tx(ctx, func(tx store.Tx) error {
		l, err := tx.OwnerLoad(ctx, "alice.near", "bot.near")
		if err != nil {
			t.Fatal(err)
		}
		want := store.Load{OwnerOpen: 2, PreparerActive: 2, WaitingContent: 3000 + 4000}
		if l != want {
			t.Errorf("OwnerLoad = %+v, want %+v", l, want)
		}
		l, _ = tx.OwnerLoad(ctx, "carol.near", "bot.near")
		if l != (store.Load{}) {
			t.Errorf("OwnerLoad of an owner with no tasks = %+v", l)
		}
		return nil
	})
}

func testRollbackWritesNothing(t *testing.T, s store.Store) {
	boom := errors.New("boom")
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.InsertTask(ctx, k, c); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.Task(ctx, k.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rolled back task is there: %v", err)
		}
		if sizes, _ := tx.Files(ctx, k.ID); len(sizes) != 0 {
			t.Errorf("a rolled back task's files are there")
		}
		return nil
	})
}

// Read's lookups see what committed, and say when a row is not there.
func testReadSeesCommitted(t *testing.T, s store.Store) {
	k, c := NewTask("read1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	var got store.Task
	if err := s.Read(ctx, func(tx store.Tx) (err error) { got, err = tx.Task(ctx, k.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.Owner != k.Owner || got.State != countersign.StateOpen {
		t.Fatalf("read %+v", got)
	}
	err := s.Read(ctx, func(tx store.Tx) error { _, err := tx.Task(ctx, "absent-1"); return err })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reading an absent task: %v, want ErrNotFound", err)
	}
}
