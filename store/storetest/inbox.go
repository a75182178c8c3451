package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

func inboxTests() []storeTest {
	return []storeTest{
		{"OwnerTasks", testOwnerTasks},
		{"DeviceCopiesAndApproval", testDeviceCopiesAndApproval},
		{"Mutes", testMutes},
		{"EventsAfterCommit", testEventsAfterCommit},
		{"SlowSubscriberDropped", testSlowSubscriberDropped},
		{"Gauges", testGauges},
		{"StrandedApprovals", testStrandedApprovals},
	}
}

func testOwnerTasks(t *testing.T, s store.Store) {
	// Six tasks, two in the same second, one closed, one of another owner.
	for i, id := range []string{"a-1", "b-1", "c-1", "d-1", "e-1"} {
		k, c := NewTask(id, "alice.near", "bot.near")
		k.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		if id == "e-1" {
			k.CreatedAt = t0.Add(3 * time.Second) // same second as d-1
		}
		insert(t, s, k, c)
	}
	k, c := NewTask("z-1", "bob.near", "bot.near")
	insert(t, s, k, c)
	move(t, s, store.Move{ID: "b-1", Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	ids := func(ts []store.Task) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return fmt.Sprint(out)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		waiting, err := tx.OwnerTasks(ctx, "alice.near", true, nil, 10)
		if err != nil || ids(waiting) != "[e-1 d-1 c-1 a-1]" {
			t.Errorf("waiting: %s %v", ids(waiting), err)
		}
		closed, _ := tx.OwnerTasks(ctx, "alice.near", false, nil, 10)
		if ids(closed) != "[b-1]" {
			t.Errorf("closed: %s", ids(closed))
		}
		page, _ := tx.OwnerTasks(ctx, "alice.near", true, nil, 2)
		next, _ := tx.OwnerTasks(ctx, "alice.near", true, &page[1], 2)
		if ids(page) != "[e-1 d-1]" || ids(next) != "[c-1 a-1]" {
			t.Errorf("pages: %s then %s", ids(page), ids(next))
		}
		if _, err := tx.OwnerTasks(ctx, "alice.near", true, nil, 0); err == nil {
			t.Error("a list without a limit was accepted")
		}
		return nil
	})
}

func testDeviceCopiesAndApproval(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		devs, err := tx.DeviceCopies(ctx, k.ID)
		if err != nil || fmt.Sprint(devs) != "[dev1 dev2]" {
			t.Errorf("DeviceCopies = %v %v", devs, err)
		}
		if in, err := tx.RunInputs(ctx, k.ID); err != nil || in.Approval != nil {
			t.Errorf("approval of a new task: %q %v", in.Approval, err)
		}
		return nil
	})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0,
		Approval: []byte(`{"at":1}`)})
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if in, err := tx.RunInputs(ctx, k.ID); err != nil || string(in.Approval) != `{"at":1}` {
			t.Errorf("approval kept by the move = %q %v", in.Approval, err)
		}
		return nil
	})
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateApproved, countersign.StateFailed, countersign.ActorPlatform, countersign.FailRunNotStarted), At: t0})
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if in, err := tx.RunInputs(ctx, k.ID); err != nil || in.Approval != nil {
			t.Errorf("a closed task keeps its approval: %q %v", in.Approval, err)
		}
		return nil
	})
}

func testMutes(t *testing.T, s store.Store) {
	err := s.Tx(ctx, func(tx store.Tx) error {
		for _, m := range []store.Mute{
			{Owner: "alice.near", SubjectIs: "agent", Subject: "spam.near", CreatedAt: t0},
			{Owner: "alice.near", SubjectIs: "agent", Subject: "spam.near", CreatedAt: t0.Add(time.Hour)},
			{Owner: "alice.near", SubjectIs: "project", Subject: "noisy", CreatedAt: t0},
			{Owner: "bob.near", SubjectIs: "agent", Subject: "bot.near", CreatedAt: t0},
		} {
			if err := tx.PutMute(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		mutes, _ := tx.Mutes(ctx, "alice.near")
		if len(mutes) != 2 || mutes[0].SubjectIs != "agent" || !mutes[0].CreatedAt.Equal(t0) {
			t.Errorf("mutes %+v", mutes)
		}
		for _, c := range []struct {
			agent, project string
			want           bool
		}{{"spam.near", "probe", true}, {"bot.near", "noisy", true}, {"bot.near", "probe", false}, {"noisy", "spam.near", false}} {
			if got, err := tx.Muted(ctx, "alice.near", c.agent, c.project); err != nil || got != c.want {
				t.Errorf("Muted(%s, %s) = %v %v", c.agent, c.project, got, err)
			}
		}
		if ok, _ := tx.Muted(ctx, "carol.near", "bot.near", "probe"); ok {
			t.Error("bob's mute applies to carol")
		}
		if ok, _ := tx.DeleteMute(ctx, "alice.near", "agent", "spam.near"); !ok {
			t.Error("lifting a mute did nothing")
		}
		if ok, _ := tx.DeleteMute(ctx, "alice.near", "agent", "spam.near"); ok {
			t.Error("a mute was lifted twice")
		}
		if ok, _ := tx.Muted(ctx, "alice.near", "spam.near", "probe"); ok {
			t.Error("a lifted mute still mutes")
		}
		return nil
	})
}

func subscriber(t *testing.T, s store.Store) store.Subscriber {
	sub, ok := s.(store.Subscriber)
	if !ok {
		t.Fatal("the store gives no task events")
	}
	return sub
}

func next(t *testing.T, ch <-chan store.TaskEvent) store.TaskEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the subscription ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return store.TaskEvent{}
}

func testEventsAfterCommit(t *testing.T, s store.Store) {
	sub := subscriber(t, s)
	alice, stopA := sub.Subscribe("alice.near")
	defer stopA()
	bob, stopB := sub.Subscribe("bob.near")
	defer stopB()
	// A rolled back change says nothing.
	k0, c0 := NewTask("gone-1", "alice.near", "bot.near")
	_ = s.Tx(ctx, func(tx store.Tx) error {
		_ = tx.InsertTask(ctx, k0, c0)
		return errors.New("refused")
	})
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	if ev := next(t, alice); ev != (store.TaskEvent{Owner: "alice.near", TaskID: "run1-1", State: countersign.StateOpen}) {
		t.Fatalf("first event %+v", ev)
	}
	move(t, s, store.Move{ID: k.ID, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	if ev := next(t, alice); ev.TaskID != "run1-1" || ev.State != countersign.StateApproved {
		t.Fatalf("second event %+v", ev)
	}
	select {
	case ev := <-bob:
		t.Fatalf("bob got alice's event %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

func testSlowSubscriberDropped(t *testing.T, s store.Store) {
	sub := subscriber(t, s)
	slow, stopSlow := sub.Subscribe("alice.near")
	defer stopSlow()
	fast, stopFast := sub.Subscribe("alice.near")
	defer stopFast()
	done := make(chan int)
	go func() {
		n := 0
		for range fast {
			n++
			if n == 100 {
				break
			}
		}
		done <- n
	}()
	for i := 0; i < 100; i++ {
		k, c := NewTask(fmt.Sprintf("r%d-1", i), "alice.near", fmt.Sprintf("bot%d.near", i))
		insert(t, s, k, c)
	}
	select {
	case n := <-done:
		if n != 100 {
			t.Fatalf("the reading subscriber got %d of 100 events", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reading subscriber was held up")
	}
	// The one that never read was dropped: its channel is closed after
	// what it had room for.
	n := 0
	for range slow {
		n++
	}
	if n == 0 || n >= 100 {
		t.Fatalf("the slow subscriber got %d events before it was dropped", n)
	}
}

// Gauges count the tasks by state and the answer runs waiting in the queue,
// committed or not yet seen by a worker.
func testGauges(t *testing.T, s store.Store) {
	for _, id := range []string{"g1-1", "g2-1", "g3-1"} {
		k, c := NewTask(id, "alice.near", "bot.near")
		insert(t, s, k, c)
	}
	move(t, s, store.Move{ID: "g2-1", Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	if err := s.Tx(ctx, func(tx store.Tx) error {
		return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "g3-1", Run: countersign.NewRunID()})
	}); err != nil {
		t.Fatal(err)
	}
	var g store.Gauges
	if err := s.Tx(ctx, func(tx store.Tx) (err error) { g, err = tx.Gauges(ctx); return err }); err != nil {
		t.Fatal(err)
	}
	if g.Tasks[countersign.StateOpen] != 2 || g.Tasks[countersign.StateRejected] != 1 || len(g.Tasks) != 2 {
		t.Errorf("tasks by state: %v, want 2 open and 1 rejected", g.Tasks)
	}
	if g.Queued[store.AnswerJob{}.Kind()] != 1 {
		t.Errorf("queued: %v, want one answer run", g.Queued)
	}
}

// An approved task is stranded when it has waited past the cut-off with no
// answer job waiting in the queue; one whose job waits, one approved since,
// and one no longer approved are not.
func testStrandedApprovals(t *testing.T, s store.Store) {
	for _, id := range []string{"s1-1", "s2-1", "s3-1", "s4-1"} {
		k, c := NewTask(id, "alice.near", "bot.near")
		insert(t, s, k, c)
	}
	approve := func(id string, at time.Time) {
		t.Helper()
		if !move(t, s, store.Move{ID: id, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: at, AnswerRun: "run-" + id}) {
			t.Fatalf("%s was not approved", id)
		}
	}
	approve("s1-1", t0)
	approve("s2-1", t0)
	approve("s3-1", t0.Add(time.Hour))
	approve("s4-1", t0)
	move(t, s, store.Move{ID: "s4-1", Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0, Run: "run-s4-1"})
	inTx(t, s, func(tx store.Tx) error {
		return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "s1-1", Run: "run-s1-1"})
	})
	var got []store.AnswerJob
	inTx(t, s, func(tx store.Tx) (err error) {
		got, err = tx.StrandedApprovals(ctx, t0.Add(time.Minute), 10)
		return err
	})
	if len(got) != 1 || got[0] != (store.AnswerJob{TaskID: "s2-1", Run: "run-s2-1"}) {
		t.Fatalf("stranded: %+v, want only s2-1 with its run", got)
	}
	inTx(t, s, func(tx store.Tx) (err error) {
		got, err = tx.StrandedApprovals(ctx, t0.Add(-time.Second), 10)
		return err
	})
	if len(got) != 0 {
		t.Fatalf("stranded before every approval: %+v", got)
	}
}
