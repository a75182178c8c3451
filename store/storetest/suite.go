package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
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
	for _, group := range [][]storeTest{taskTests(), identityTests(), agentTests(), projectTests(), runTests(), inboxTests(), sweepTests(), webhookTests(), rewrapTests(), activityTests(), pushTests(), approverTests()} {
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
		{"EveryMoveTheDomainMakes", testEveryMove},
		{"OnlyTheDomainsMoves", testOnlyDomainMoves},
		{"LeavingOpenDropsWhatItShowed", testLeavingOpenDrops},
		{"ApprovedKeepsFilesUntilTheEnd", testApprovedKeepsFiles},
		{"MoveOnceUnderConcurrency", testMoveOnceUnderConcurrency},
		{"OwnerLockHoldsLimits", testOwnerLockHoldsLimits},
		{"OwnerLoad", testOwnerLoad},
		{"OwnerGateReadsAsItsParts", testOwnerGate},
		{"LockedTaskMovesOnce", testLockedTaskMovesOnce},
		{"MoveFromWhatWasSeen", testMoveFromWhatWasSeen},
		{"HeldTaskMovesThroughOnce", testHeldTaskMovesThroughOnce},
		{"TasksSeenInOrder", testTasksSeenInOrder},
		{"MoveKeepsApprovalAndAnswer", testMoveKeepsApprovalAndAnswer},
		{"RunInputsReadAsTheirParts", testRunInputs},
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
		t.Fatalf("move %s %v: %v", m.ID, m.Move, err)
	}
	return moved
}

// step is the domain's move of an input task (the kind NewTask makes).
func step(from, to countersign.State, by countersign.Actor, r countersign.FailureReason) countersign.Move {
	return stepOf(countersign.KindInput, from, to, by, r)
}

// ender is who ends an open task with state to: the owner rejects or
// cancels it, the platform expires or voids it.
func ender(to countersign.State) countersign.Actor {
	if to == countersign.StateRejected || to == countersign.StateCancelled {
		return countersign.ActorOwner
	}
	return countersign.ActorPlatform
}

// stepOf is the domain's move of a task of kind k; a move the domain
// refuses is a mistake in the test.
func stepOf(k countersign.Kind, from, to countersign.State, by countersign.Actor, r countersign.FailureReason) countersign.Move {
	m, err := countersign.Transition(k, from, to, by, r)
	if err != nil {
		panic(fmt.Sprintf("storetest: %s %s → %s by %s (%q): %v", k, from, to, by, r, err))
	}
	return m
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
	if move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0}) {
		t.Fatal("a move from a state the task is not in happened")
	}
	if move(t, s, store.Move{ID: "other", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0}) {
		t.Fatal("a move of a missing task happened")
	}
	if !move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0, Run: "run2", AnswerRun: "run2"}) {
		t.Fatal("open → approved did not happen")
	}
	if !move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0.Add(time.Second), Run: "run2"}) {
		t.Fatal("approved → answering did not happen")
	}
	if !move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, ""), At: t0.Add(2 * time.Second), Run: "run2"}) {
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
			got2 = append(got2, string(e.From)+"→"+string(e.To)+" "+string(e.Actor)+" "+e.Run)
		}
		if fmt.Sprint(got2) != want || !events[2].At.Equal(t0.Add(2*time.Second)) {
			t.Errorf("events = %v, want %v", got2, want)
		}
		return nil
	})
}

// testEveryMove applies every move the domain makes (each kind, pair of
// states and actor, and a failure reason of each sort) to a task in the
// state it leaves, reached by the domain's own moves, and reads the task
// back as the move says it is left: its state, outcome class, failure
// reason and times, what is dropped and what is kept, the event with who
// moved it. The same move again does nothing.
func testEveryMove(t *testing.T, s store.Store) {
	reasons := []countersign.FailureReason{"", countersign.FailRunNotStarted, countersign.FailRunUnfinished, "run_refused:conflict"}
	to := map[countersign.State][]countersign.Move{
		countersign.StateApproved: {step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, "")},
		countersign.StateAnswering: {step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""),
			step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, "")},
	}
	n := 0
	for _, k := range []countersign.Kind{countersign.KindConfirm, countersign.KindInput, countersign.KindNotice} {
		for _, from := range countersign.States() {
			for _, dest := range countersign.States() {
				for _, by := range countersign.Actors() {
					for _, r := range reasons {
						m, err := countersign.Transition(k, from, dest, by, r)
						if err != nil {
							continue
						}
						n++
						id := fmt.Sprintf("every%d-1", n)
						task, c := NewTask(id, "alice.near", "bot.near")
						switch k {
						case countersign.KindConfirm:
							task.Kind, task.Operation, task.Supplies = k, "confirm", countersign.SuppliesNone
						case countersign.KindNotice:
							task.Kind, task.Operation, task.Supplies, task.ReplyPubkey = k, "", "", ""
						}
						insert(t, s, task, c)
						for _, p := range to[from] {
							if !move(t, s, store.Move{ID: id, Move: stepOf(k, p.From(), p.To(), p.By(), ""), At: t0}) {
								t.Fatalf("%s: %v did not happen", id, p)
							}
						}
						at := t0.Add(time.Minute)
						if !move(t, s, store.Move{ID: id, Move: m, At: at, Run: "run9"}) {
							t.Errorf("%v did not happen", m)
							continue
						}
						if move(t, s, store.Move{ID: id, Move: m, At: at.Add(time.Minute), Run: "run9"}) {
							t.Errorf("%v happened twice", m)
						}
						checkMoved(t, s, id, m, at)
					}
				}
			}
		}
	}
	// 15 moves of a confirm or input task (approved → failed and
	// answering → failed for two reasons each), 4 of a notice.
	if n != 2*15+4 {
		t.Errorf("made %d moves, want 34", n)
	}
}

func checkMoved(t *testing.T, s store.Store, id string, m countersign.Move, at time.Time) {
	t.Helper()
	_ = s.Tx(ctx, func(tx store.Tx) error {
		got, err := tx.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		closed := time.Time{}
		if m.Ends() {
			closed = at
		}
		if got.State != m.To() || got.OutcomeClass != m.Outcome() || got.FailureReason != m.Reason() ||
			!got.StateAt.Equal(at) || !got.ClosedAt.Equal(closed) {
			t.Errorf("%v: left %s (%q, %q) at %v, closed %v", m, got.State, got.OutcomeClass, got.FailureReason, got.StateAt, got.ClosedAt)
		}
		// Every move here has left open: the content and device copies
		// are gone; the files and the sealed copy go with the move that
		// drops them.
		d := m.Drops()
		_, err = tx.Content(ctx, id)
		_, err2 := tx.DeviceCopy(ctx, id, "dev1")
		files, _ := tx.Files(ctx, id)
		_, _, err3 := tx.Sealed(ctx, id)
		if !errors.Is(err, store.ErrNotFound) || !errors.Is(err2, store.ErrNotFound) ||
			(len(files) == 0) != d.Files || errors.Is(err3, store.ErrNotFound) != d.Sealed {
			t.Errorf("%v: content %v, device copy %v, %d files, sealed %v", m, err, err2, len(files), err3)
		}
		events, err := tx.Events(ctx, id)
		if err != nil || len(events) == 0 {
			t.Fatalf("%v: events %v %v", m, events, err)
		}
		if e := events[len(events)-1]; e.From != m.From() || e.To != m.To() || e.Actor != m.By() || e.Run != "run9" || !e.At.Equal(at) {
			t.Errorf("%v: event %+v", m, e)
		}
		return nil
	})
}

// testOnlyDomainsMoves: a move not made by the domain is refused, and a
// move made for a task of another kind does not happen.
func testOnlyDomainMoves(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	err := s.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.MoveTask(ctx, store.Move{ID: k.ID, At: t0})
		return err
	})
	if !errors.Is(err, store.ErrNoMove) {
		t.Errorf("a zero move: %v, want ErrNoMove", err)
	}
	if move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindNotice, countersign.StateOpen, countersign.StateDone, countersign.ActorOwner, ""), At: t0}) {
		t.Error("a notice's Got it moved an input task")
	}
	if move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0}) {
		t.Error("a confirm task's approval moved an input task")
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		got, err := tx.Task(ctx, k.ID)
		if err != nil || got.State != countersign.StateOpen {
			t.Errorf("after moves refused: %+v %v", got, err)
		}
		if _, err := tx.Content(ctx, k.ID); err != nil {
			t.Errorf("a refused move dropped the content: %v", err)
		}
		if events, _ := tx.Events(ctx, k.ID); len(events) != 0 {
			t.Errorf("a refused move left events %+v", events)
		}
		return nil
	})
}

func testLeavingOpenDrops(t *testing.T, s store.Store) {
	for _, to := range []countersign.State{countersign.StateRejected, countersign.StateCancelled, countersign.StateExpired, countersign.StateVoid} {
		k, c := NewTask("run1-"+string(to), "alice.near", "bot.near")
		insert(t, s, k, c)
		if !move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, to, ender(to), ""), At: t0}) {
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
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
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
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateFailed, countersign.ActorPlatform, "run_not_started"), At: t0})
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

// concurrentWins runs fn in n transactions at once (i is each one's number) and
// counts those that committed with fn reporting a win; a transaction that
// fails is an error of the test.
func concurrentWins(t *testing.T, s store.Store, n int, fn func(tx store.Tx, i int) (bool, error)) int {
	t.Helper()
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var win bool
			err := s.Tx(ctx, func(tx store.Tx) (err error) {
				win, err = fn(tx, i)
				return err
			})
			switch {
			case err != nil:
				t.Error(err)
			case win:
				won.Add(1)
			}
		})
	}
	wg.Wait()
	return int(won.Load())
}

func testMoveOnceUnderConcurrency(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	won := concurrentWins(t, s, 20, func(tx store.Tx, _ int) (bool, error) {
		return tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	})
	if won != 1 {
		t.Fatalf("%d of 20 concurrent moves happened, want exactly 1", won)
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
	move(t, s, store.Move{ID: "run0-1", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "run1-1", Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
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

// OwnerGate reads under the owner's lock what Muted, OwnerLoad,
// ActiveDevices and Task (the thread's) read one at a time.
func testOwnerGate(t *testing.T, s store.Store) {
	for i, p := range []string{"bot.near", "bot.near", "other.near"} {
		k, c := NewTask(fmt.Sprintf("gate%d-1", i), "alice.near", p)
		k.ContentSize = int64(100 * (i + 1))
		insert(t, s, k, c)
	}
	inTx(t, s, func(tx store.Tx) error {
		for _, d := range []store.Device{device("gd1", "alice.near", t0), device("gd2", "alice.near", t0.Add(time.Minute)), device("gb1", "bob.near", t0)} {
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		return tx.PutMute(ctx, store.Mute{Owner: "alice.near", SubjectIs: "project", Subject: "muted", CreatedAt: t0})
	})
	for _, c := range []struct{ preparer, project, thread string }{
		{"bot.near", "probe", "gate1-1"}, {"other.near", "muted", ""}, {"new.near", "probe", "absent-1"},
	} {
		inTx(t, s, func(tx store.Tx) error {
			g, err := tx.OwnerGate(ctx, "alice.near", c.preparer, c.project, t0.Add(time.Hour), c.thread)
			if err != nil {
				return err
			}
			muted, err := tx.Muted(ctx, "alice.near", c.preparer, c.project)
			if err != nil {
				return err
			}
			load, err := tx.OwnerLoad(ctx, "alice.near", c.preparer)
			if err != nil {
				return err
			}
			devices, err := tx.ActiveDevices(ctx, "alice.near", t0.Add(time.Hour))
			if err != nil {
				return err
			}
			if g.Muted != muted || g.Load != load || len(g.Devices) != 2 || fmt.Sprint(g.Devices) != fmt.Sprint(devices) {
				t.Errorf("OwnerGate(%s, %s) = %+v, want muted %v, load %+v, devices %v", c.preparer, c.project, g, muted, load, devices)
			}
			thread, err := tx.Task(ctx, c.thread)
			switch {
			case c.thread == "gate1-1" && (err != nil || g.Thread == nil || !reflect.DeepEqual(*g.Thread, thread)):
				t.Errorf("OwnerGate's thread %s = %+v, want %+v (%v)", c.thread, g.Thread, thread, err)
			case c.thread != "gate1-1" && g.Thread != nil:
				t.Errorf("OwnerGate's thread %q = %+v, want none", c.thread, g.Thread)
			}
			return nil
		})
	}
	inTx(t, s, func(tx store.Tx) error {
		g, err := tx.OwnerGate(ctx, "alice.near", "other.near", "muted", t0, "")
		if err == nil && (!g.Muted || g.Load.OwnerOpen != 3 || g.Load.PreparerActive != 1) {
			t.Errorf("OwnerGate of a muted project = %+v", g)
		}
		return err
	})
}

// A task read with LockTask moves as any other, with its event, and only
// from the state it is in; of transactions that lock and move one task at
// once, one moves it and the others find it moved.
func testLockedTaskMovesOnce(t *testing.T, s store.Store) {
	err := s.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.LockTask(ctx, "absent-1")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("locking an absent task: %v, want ErrNotFound", err)
	}
	k, c := NewTask("lock1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.LockTask(ctx, k.ID)
		if err != nil || got.State != countersign.StateOpen || got.ID != k.ID {
			t.Errorf("LockTask = %+v, %v", got, err)
		}
		// From a state it is not in: no move.
		moved, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0})
		if err != nil || moved {
			t.Errorf("a move from approved of an open task: %v, %v", moved, err)
		}
		// Expired by the move's clock: no move.
		moved, err = tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateCancelled, countersign.ActorAgent, ""), At: t0, Unexpired: k.ExpiresAt})
		if err != nil || moved {
			t.Errorf("a move of a task expired by its clock: %v, %v", moved, err)
		}
		return nil
	})
	won := concurrentWins(t, s, 8, func(tx store.Tx, _ int) (bool, error) {
		if _, err := tx.LockTask(ctx, k.ID); err != nil {
			return false, err
		}
		// Long enough for the others to read the task open, were it not
		// locked.
		time.Sleep(20 * time.Millisecond)
		return tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateCancelled, countersign.ActorAgent, ""), At: t0, Unexpired: t0})
	})
	if won != 1 {
		t.Fatalf("the task moved %d times", won)
	}
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.Task(ctx, k.ID)
		if err != nil || got.State != countersign.StateCancelled {
			t.Errorf("the task is %+v (%v)", got, err)
		}
		ev, err := tx.Events(ctx, k.ID)
		if err != nil || len(ev) != 1 || ev[0].To != countersign.StateCancelled {
			t.Errorf("events %+v (%v), want the one move", ev, err)
		}
		return nil
	})
}

// A move told what a read before its transaction saw of the task
// (Move.Seen) asks nothing and is made, or, if the task or its owner's
// webhook changed since, fails its transaction with ErrStale, keeping
// nothing of it.
func testMoveFromWhatWasSeen(t *testing.T, s store.Store) {
	if err := s.Read(ctx, func(tx store.Tx) error {
		_, _, err := tx.TaskSeen(ctx, "absent-1")
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TaskSeen of an absent task: %v, want ErrNotFound", err)
	}
	approve := step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, "")
	hook := func(owner, id string) store.Webhook {
		return store.Webhook{Owner: owner, ID: id, SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")}
	}
	for i, tc := range []struct {
		name    string
		webhook string                                // the owner's webhook when the task is read ("" none)
		then    func(tx store.Tx, k store.Task) error // between the read and the move
		move    func(k store.Task) store.Move
		stale   bool
	}{
		{name: "nothing changed", webhook: "wh-a"},
		{name: "nothing changed, no webhook"},
		{name: "moved meanwhile", stale: true, then: func(tx store.Tx, k store.Task) error {
			_, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateCancelled, countersign.ActorOwner, ""), At: t0})
			return err
		}},
		{name: "webhook renamed", webhook: "wh-a", stale: true, then: func(tx store.Tx, k store.Task) error {
			return tx.PutWebhook(ctx, hook(k.Owner, "wh-b"))
		}},
		{name: "webhook removed", webhook: "wh-a", stale: true, then: func(tx store.Tx, k store.Task) error {
			_, err := tx.DeleteWebhook(ctx, k.Owner)
			return err
		}},
		{name: "webhook set", stale: true, then: func(tx store.Tx, k store.Task) error {
			return tx.PutWebhook(ctx, hook(k.Owner, "wh-b"))
		}},
		{name: "expired by the move's clock", stale: true, move: func(k store.Task) store.Move {
			return store.Move{ID: k.ID, Move: approve, At: t0, Unexpired: k.ExpiresAt}
		}},
		{name: "of another kind", stale: true, move: func(k store.Task) store.Move {
			return store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := fmt.Sprintf("seen%d.near", i)
			k, c := NewTask(fmt.Sprintf("seen%d-1", i), owner, "bot.near")
			insert(t, s, k, c)
			if tc.webhook != "" {
				inTx(t, s, func(tx store.Tx) error { return tx.PutWebhook(ctx, hook(owner, tc.webhook)) })
			}
			var seen store.Seen
			if err := s.Read(ctx, func(tx store.Tx) (err error) {
				_, seen, err = tx.TaskSeen(ctx, k.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if want := (store.Seen{Owner: owner, Webhook: tc.webhook}); seen != want {
				t.Fatalf("TaskSeen saw %+v, want %+v", seen, want)
			}
			if tc.then != nil {
				inTx(t, s, func(tx store.Tx) error { return tc.then(tx, k) })
			}
			m := store.Move{ID: k.ID, Move: approve, At: t0, AnswerRun: "run2"}
			if tc.move != nil {
				m = tc.move(k)
			}
			m.Seen = &seen
			nonce := []byte(fmt.Sprintf("seen-nonce-%02d-0123456789abcdefg", i))
			var moved bool
			err := s.Tx(ctx, func(tx store.Tx) (err error) {
				if moved, err = tx.MoveTask(ctx, m); err != nil {
					return err
				}
				return tx.SpendNonce(ctx, owner, nonce, t0.Add(time.Hour))
			})
			var events []store.Event
			var now store.Task
			inTx(t, s, func(tx store.Tx) (err error) {
				if now, err = tx.Task(ctx, k.ID); err != nil {
					return err
				}
				events, err = tx.Events(ctx, k.ID)
				return err
			})
			if !tc.stale {
				if err != nil || !moved || now.State != countersign.StateApproved || now.AnswerRun != "run2" || len(events) != 1 {
					t.Fatalf("a move from what was seen: %v, %v; the task is %s (answer run %q), %d events", moved, err, now.State, now.AnswerRun, len(events))
				}
				if spend(t, s, owner, nonce) {
					t.Error("the move's transaction did not keep its nonce")
				}
				return
			}
			if !errors.Is(err, store.ErrStale) {
				t.Fatalf("a move from what was seen, after the task changed: %v, want ErrStale", err)
			}
			if tc.then == nil && (now.State != countersign.StateOpen || len(events) != 0) {
				t.Errorf("the failed move was kept: the task is %s, %d events", now.State, len(events))
			}
			if tc.then != nil && now.State == countersign.StateApproved {
				t.Error("the failed move was kept")
			}
			if !spend(t, s, owner, nonce) {
				t.Error("the failed move's transaction kept its nonce")
			}
		})
	}
}

// A task held as seen (HoldTask) and moved through a state (Move.Through)
// is written once, from the state Through leaves, with both moves'
// events in order; if it changed since it was seen, the transaction fails
// with ErrStale and keeps nothing. Of transactions that hold and move it
// at once, one moves it. A Through that does not lead to the move is
// refused.
func testHeldTaskMovesThroughOnce(t *testing.T, s store.Store) {
	claim := step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, "")
	end := step(countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, "")
	approved := func(t *testing.T, id, owner string) (store.Task, store.Seen) {
		t.Helper()
		k, c := NewTask(id, owner, "bot.near")
		insert(t, s, k, c)
		if !move(t, s, store.Move{ID: id, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0, AnswerRun: "run-h"}) {
			t.Fatal("the task was not approved")
		}
		var seen store.Seen
		if err := s.Read(ctx, func(tx store.Tx) (err error) {
			k, seen, err = tx.TaskSeen(ctx, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return k, seen
	}
	through := func(k store.Task) store.Move {
		return store.Move{ID: k.ID, Move: end, At: t0.Add(2 * time.Second), Run: "run-h",
			Through: &store.Step{Move: claim, At: t0.Add(time.Second), Run: "run-h"},
			Answer:  &store.Answer{Result: []byte("sealed result"), NextTaskID: "next-1"}}
	}
	for i, tc := range []struct {
		name  string
		then  func(tx store.Tx, k store.Task) error // between the read and the hold
		stale bool
	}{
		{name: "nothing changed"},
		{name: "ended meanwhile", stale: true, then: func(tx store.Tx, k store.Task) error {
			_, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateVoid, countersign.ActorPlatform, ""), At: t0})
			return err
		}},
		{name: "webhook set meanwhile", stale: true, then: func(tx store.Tx, k store.Task) error {
			return tx.PutWebhook(ctx, store.Webhook{Owner: k.Owner, ID: "wh-h", SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := fmt.Sprintf("held%d.near", i)
			k, seen := approved(t, fmt.Sprintf("held%d-1", i), owner)
			if tc.then != nil {
				inTx(t, s, func(tx store.Tx) error { return tc.then(tx, k) })
			}
			nonce := []byte(fmt.Sprintf("held-nonce-%02d-0123456789abcdefg", i))
			var moved bool
			err := s.Tx(ctx, func(tx store.Tx) (err error) {
				if err := tx.HoldTask(ctx, k, seen); err != nil {
					return err
				}
				if err := tx.SpendNonce(ctx, owner, nonce, t0.Add(time.Hour)); err != nil {
					return err
				}
				moved, err = tx.MoveTask(ctx, through(k))
				return err
			})
			var now store.Task
			var events []store.Event
			var result []byte
			inTx(t, s, func(tx store.Tx) (err error) {
				if now, err = tx.Task(ctx, k.ID); err != nil {
					return err
				}
				if result, _, err = tx.Outcome(ctx, k.ID); err != nil {
					return err
				}
				events, err = tx.Events(ctx, k.ID)
				return err
			})
			if tc.stale {
				if !errors.Is(err, store.ErrStale) {
					t.Fatalf("a held task that changed: %v, want ErrStale", err)
				}
				if now.State == countersign.StateDone || !spend(t, s, owner, nonce) {
					t.Errorf("the failed transaction kept something: the task is %s", now.State)
				}
				return
			}
			if err != nil || !moved || now.State != countersign.StateDone || now.NextTaskID != "next-1" || string(result) != "sealed result" {
				t.Fatalf("moved through: %v, %v; the task is %s, next %q, result %q", moved, err, now.State, now.NextTaskID, result)
			}
			var trail []string
			for _, e := range events {
				trail = append(trail, fmt.Sprintf("%s→%s by %s at %d", e.From, e.To, e.Actor, e.At.Unix()-t0.Unix()))
			}
			if want := []string{"open→approved by owner at 0", "approved→answering by platform at 1", "answering→done by platform at 2"}; fmt.Sprint(trail) != fmt.Sprint(want) {
				t.Errorf("events %q, want %q", trail, want)
			}
			if spend(t, s, owner, nonce) {
				t.Error("the move's transaction did not keep its nonce")
			}
		})
	}
	t.Run("at once", func(t *testing.T) {
		k, seen := approved(t, "heldrace-1", "heldrace.near")
		var stale atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				err := s.Tx(ctx, func(tx store.Tx) error {
					if err := tx.HoldTask(ctx, k, seen); err != nil {
						return err
					}
					// Long enough for the others to hold it too, were it
					// not held.
					if _, _, err := tx.Outcome(ctx, k.ID); err != nil {
						return err
					}
					time.Sleep(20 * time.Millisecond)
					_, err := tx.MoveTask(ctx, through(k))
					return err
				})
				if errors.Is(err, store.ErrStale) {
					stale.Add(1)
				} else if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		var events []store.Event
		inTx(t, s, func(tx store.Tx) (err error) {
			events, err = tx.Events(ctx, k.ID)
			return err
		})
		if stale.Load() != 7 || len(events) != 3 {
			t.Errorf("%d of 8 found the task changed (want 7); %d events (want 3)", stale.Load(), len(events))
		}
	})
	t.Run("a task never read", func(t *testing.T) {
		if err := s.Tx(ctx, func(tx store.Tx) error { return tx.HoldTask(ctx, store.Task{}, store.Seen{}) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("holding a task never read: %v, want ErrNotFound", err)
		}
	})
	t.Run("a Through that does not lead to the move", func(t *testing.T) {
		k, _ := approved(t, "heldwrong-1", "heldwrong.near")
		err := s.Tx(ctx, func(tx store.Tx) error {
			_, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: end, At: t0,
				Through: &store.Step{Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0}})
			return err
		})
		if !errors.Is(err, store.ErrNoMove) {
			t.Errorf("a Through ending where the move does not begin: %v, want ErrNoMove", err)
		}
	})
}

// TasksSeen reads each task asked for, in the order asked, with its
// owner's webhook; a task that does not exist reads as a zero Task.
func testTasksSeenInOrder(t *testing.T, s store.Store) {
	a, ca := NewTask("many1-1", "manya.near", "bot.near")
	b, cb := NewTask("many2-1", "manyb.near", "bot.near")
	insert(t, s, a, ca)
	insert(t, s, b, cb)
	inTx(t, s, func(tx store.Tx) error {
		return tx.PutWebhook(ctx, store.Webhook{Owner: a.Owner, ID: "wh-many", SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")})
	})
	var tasks []store.Task
	var seen []store.Seen
	if err := s.Read(ctx, func(tx store.Tx) (err error) {
		tasks, seen, err = tx.TasksSeen(ctx, []string{b.ID, "absent-1", a.ID, ""})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 4 || len(seen) != 4 {
		t.Fatalf("TasksSeen of 4 ids gave %d tasks and %d seen", len(tasks), len(seen))
	}
	want := []store.Seen{{Owner: b.Owner}, {}, {Owner: a.Owner, Webhook: "wh-many"}, {}}
	for i, id := range []string{b.ID, "", a.ID, ""} {
		if tasks[i].ID != id || seen[i] != want[i] {
			t.Errorf("TasksSeen's %d: task %q, seen %+v; want %q, %+v", i, tasks[i].ID, seen[i], id, want[i])
		}
	}
	if tasks[0].State != countersign.StateOpen || tasks[2].Owner != a.Owner {
		t.Errorf("the tasks read: %+v", tasks)
	}
}

// A move can keep the owner's approval (open → approved) and an answer
// run's result and next tasks (answering → done), as RecordAnswer would; a move without them leaves them as they were.
func testMoveKeepsApprovalAndAnswer(t *testing.T, s store.Store) {
	k, c := NewTask("keep1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0,
		AnswerRun: "run2", Approval: []byte(`{"signed":1}`)})
	inTx(t, s, func(tx store.Tx) error {
		in, err := tx.RunInputs(ctx, k.ID)
		if err == nil && string(in.Approval) != `{"signed":1}` {
			t.Errorf("approval kept by the move: %q", in.Approval)
		}
		return err
	})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0})
	inTx(t, s, func(tx store.Tx) error {
		result, _, err := tx.Outcome(ctx, k.ID)
		if err == nil && result != nil {
			t.Errorf("a move without an answer left a result: %q", result)
		}
		return err
	})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, ""), At: t0,
		Answer: &store.Answer{Result: []byte("sealed result"), NextTaskID: "next-1"}})
	var got store.Task
	inTx(t, s, func(tx store.Tx) (err error) {
		got, err = tx.Task(ctx, k.ID)
		if err != nil {
			return err
		}
		result, _, err := tx.Outcome(ctx, k.ID)
		if err == nil && string(result) != "sealed result" {
			t.Errorf("result kept by the move: %q", result)
		}
		return err
	})
	if got.NextTaskID != "next-1" || got.NoticeTaskID != "" || got.State != countersign.StateDone {
		t.Errorf("after the answering move: %+v", got)
	}
}

// RunInputs reads what Task, ProjectByUUID, Sealed and Agent read, and
// the approval a move kept; a project or preparer not there is nil, a closed task's sealed copy
// nil, a task not there ErrNotFound.
func testRunInputs(t *testing.T, s store.Store) {
	k, c := NewTask("in1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	lone, lc := NewTask("in2-1", "alice.near", "nobody.near")
	lone.ProjectUUID = "0e2b6c1a-9d3f-4b7e-8a15-6c2d9f0b4e71"
	insert(t, s, lone, lc)
	putProject(t, s, NewProject("alice.near", "probe", k.ProjectUUID, "zed.near", "bot.near"))
	addKey(t, s, "bot.near", "ak_runinputs", t0)
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0,
		AnswerRun: "run2", Approval: []byte("approved")})
	inTx(t, s, func(tx store.Tx) error {
		in, err := tx.RunInputs(ctx, k.ID)
		if err != nil {
			return err
		}
		task, err := tx.Task(ctx, k.ID)
		if err != nil {
			return err
		}
		p, err := tx.ProjectByUUID(ctx, k.ProjectUUID)
		if err != nil {
			return err
		}
		a, err := tx.Agent(ctx, "bot.near")
		if err != nil {
			return err
		}
		if fmt.Sprint(in.Task) != fmt.Sprint(task) || in.Project == nil || fmt.Sprint(*in.Project) != fmt.Sprint(p) ||
			in.Preparer == nil || *in.Preparer != a ||
			string(in.Sealed) != "sealed-in1-1" || in.KeyID != k.KeyID || string(in.Approval) != "approved" {
			t.Errorf("RunInputs = %+v", in)
		}
		in, err = tx.RunInputs(ctx, lone.ID)
		if err != nil || in.Task.ID != lone.ID || in.Project != nil || in.Preparer != nil || in.Approval != nil {
			t.Errorf("RunInputs of a task whose project and preparer are not there = %+v, %v", in, err)
		}
		if _, err := tx.RunInputs(ctx, "absent-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunInputs of no task: %v, want ErrNotFound", err)
		}
		return nil
	})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateVoid, countersign.ActorPlatform, ""), At: t0})
	inTx(t, s, func(tx store.Tx) error {
		in, err := tx.RunInputs(ctx, k.ID)
		if err == nil && (in.Sealed != nil || in.Task.State != countersign.StateVoid) {
			t.Errorf("RunInputs of a closed task = %+v", in)
		}
		return err
	})
}
