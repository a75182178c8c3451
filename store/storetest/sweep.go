package storetest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

func sweepTests() []storeTest {
	return []storeTest{
		{"RecordAnswerAndReceipt", testRecordAnswerAndReceipt},
		{"StaleTasks", testStaleTasks},
		{"Purge", testPurge},
		{"PurgeRuns", testPurgeRuns},
	}
}

func testRecordAnswerAndReceipt(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.RecordAnswer(ctx, k.ID, []byte("sealed result"), "run2-1", ""); err != nil {
			t.Fatal(err)
		}
		got, _ := tx.Task(ctx, k.ID)
		result, _, _ := tx.Outcome(ctx, k.ID)
		if got.NextTaskID != "run2-1" || got.NoticeTaskID != "" || string(result) != "sealed result" {
			t.Errorf("after RecordAnswer: %+v %q", got, result)
		}
		if r, err := tx.TaskReceipt(ctx, k.ID); err != nil || r != "" {
			t.Errorf("a new task's receipt: %q %v", r, err)
		}
		if err := tx.SetTaskReceipt(ctx, k.ID, `{"run":"run1"}`); err != nil {
			t.Fatal(err)
		}
		if r, _ := tx.TaskReceipt(ctx, k.ID); r != `{"run":"run1"}` {
			t.Errorf("receipt %q", r)
		}
		if err := tx.RecordAnswer(ctx, "nosuch-1", nil, "", ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RecordAnswer of no task: %v", err)
		}
		if err := tx.SetTaskReceipt(ctx, "nosuch-1", "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetTaskReceipt of no task: %v", err)
		}
		return nil
	})
}

func testStaleTasks(t *testing.T, s store.Store) {
	// expired: open past expires_at; fresh: open; late: approved 31 min ago;
	// recent: approved 1 min ago; slow: answering 31 min on a live runner;
	// orphan: answering 1 min on a dead runner; live: answering 1 min on a
	// live runner.
	now := t0.Add(2 * time.Hour)
	for _, id := range []string{"expired-1", "fresh-1", "late-1", "recent-1", "slow-1", "orphan-1", "live-1"} {
		k, c := NewTask(id, "alice.near", "bot"+id[:3]+".near")
		if id == "expired-1" {
			k.ExpiresAt = t0.Add(time.Hour)
		}
		insert(t, s, k, c)
	}
	at := map[string]time.Duration{"late-1": -31 * time.Minute, "recent-1": -time.Minute, "slow-1": -31 * time.Minute, "orphan-1": -time.Minute, "live-1": -time.Minute}
	for id, d := range at {
		move(t, s, store.Move{ID: id, Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: now.Add(d), AnswerRun: "ans-" + id})
	}
	runner := map[string]string{"slow-1": "alive", "orphan-1": "dead", "live-1": "alive"}
	err := s.Tx(ctx, func(tx store.Tx) error {
		for id, r := range runner {
			if err := tx.InsertRun(ctx, store.Run{ID: "ans-" + id, Agent: "bot.near", Owner: "alice.near", ProjectUUID: "p",
				Operation: "guess", ComputeLimit: time.Second, TaskID: id, InputSHA256: "x", StartedAt: now, Runner: r}); err != nil {
				return err
			}
			if _, err := tx.MoveTask(ctx, store.Move{ID: id, Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: now.Add(at[id])}); err != nil {
				return err
			}
		}
		if err := tx.Heartbeat(ctx, "alive", now.Add(-10*time.Second)); err != nil {
			return err
		}
		return tx.Heartbeat(ctx, "dead", now.Add(-5*time.Minute))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		stale, err := tx.Stale(ctx, now, now.Add(-30*time.Minute), now.Add(-30*time.Minute), now.Add(-time.Minute), 100)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range stale {
			ids = append(ids, k.ID)
		}
		sort.Strings(ids)
		if fmt.Sprint(ids) != "[expired-1 late-1 orphan-1 slow-1]" {
			t.Errorf("stale tasks %v", ids)
		}
		return nil
	})
}

func testPurge(t *testing.T, s store.Store) {
	old, c := NewTask("old-1", "alice.near", "bot.near")
	insert(t, s, old, c)
	move(t, s, store.Move{ID: old.ID, Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	kept, c2 := NewTask("kept-1", "alice.near", "bot.near")
	insert(t, s, kept, c2)
	move(t, s, store.Move{ID: kept.ID, Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0.Add(20 * 24 * time.Hour)})
	open, c3 := NewTask("open-1", "alice.near", "bot.near")
	insert(t, s, open, c3)
	now := t0.Add(31 * 24 * time.Hour)
	expired, live := []byte("expired-nonce-0123456789abcdefgh"), []byte("live-nonce-0123456789abcdefghijk")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.SpendNonce(ctx, "alice.near", expired, now.Add(-time.Second)); err != nil {
			return err
		}
		if err := tx.SpendNonce(ctx, "alice.near", live, now.Add(time.Minute)); err != nil {
			return err
		}
		for key, at := range map[string]time.Time{"old-payment": t0, "recent-payment": now.Add(-time.Hour)} {
			if _, err := tx.ReserveSpend(ctx, store.Spend{Owner: "alice.near", ProjectUUID: "uuid-purge", Key: key, Cents: 100, At: at, Since: at}, -1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		n, err := tx.Purge(ctx, now, now.Add(-30*24*time.Hour), now.Add(-24*time.Hour), now.Add(-3*24*time.Hour))
		if err != nil || n < 3 { // the task, its event, the expired nonce
			t.Errorf("Purge deleted %d (%v)", n, err)
		}
		if _, err := tx.Task(ctx, old.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an outcome older than 30 days is kept: %v", err)
		}
		if ev, _ := tx.Events(ctx, old.ID); len(ev) != 0 {
			t.Errorf("its events are kept")
		}
		for _, id := range []string{kept.ID, open.ID} {
			if _, err := tx.Task(ctx, id); err != nil {
				t.Errorf("%s was purged: %v", id, err)
			}
		}
		// The older payment is gone: counting it again under a bound of
		// one payment admits it; the recent one is still counted.
		since := now.Add(-40 * 24 * time.Hour)
		if ok, _ := tx.ReserveSpend(ctx, store.Spend{Owner: "alice.near", ProjectUUID: "uuid-purge", Key: "another", Cents: 100, At: now, Since: since}, 200); !ok {
			t.Error("a payment older than 30 days is still counted after the purge")
		}
		if ok, _ := tx.ReserveSpend(ctx, store.Spend{Owner: "alice.near", ProjectUUID: "uuid-purge", Key: "third", Cents: 1, At: now, Since: since}, 200); ok {
			t.Error("a recent payment was purged")
		}
		return nil
	})
	if !spend(t, s, "alice.near", expired) {
		t.Error("an expired nonce is still spent")
	}
	if spend(t, s, "alice.near", live) {
		t.Error("a live nonce was purged")
	}
}

// testPurgeRuns: a run and its receipt go with the last task it opened or
// the task it answers, when that outcome is purged; a run that opened and
// answers nothing goes once it started as long ago as a purged outcome.
func testPurgeRuns(t *testing.T, s store.Store) {
	now := t0.Add(31 * 24 * time.Hour)
	task := func(id, run string, closed time.Duration) {
		k, c := NewTask(id, "alice.near", "bot.near")
		k.Run = run
		insert(t, s, k, c)
		if closed >= 0 {
			move(t, s, store.Move{ID: id, Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0.Add(closed)})
		}
	}
	task("rold-1", "rold", 0)                 // purged
	task("rkept-1", "rkept", 20*24*time.Hour) // kept 30 days more
	task("ropen-1", "ropen", -1)              // open
	task("rtwo-1", "rtwo", 0)                 // purged
	task("rtwo-2", "rtwo", 20*24*time.Hour)   // kept: so is its run
	runs := map[string]struct {
		taskID  string
		started time.Time
		kept    bool
	}{
		"rold":          {"", t0, false},
		"rold-answer":   {"rold-1", t0, false},
		"rkept":         {"", t0, true},
		"rkept-answer":  {"rkept-1", t0, true},
		"ropen":         {"", t0, true},
		"rtwo":          {"", t0, true},
		"rnone":         {"", t0, false},                           // opened nothing, 31 days ago
		"rnone-recent":  {"", now.Add(-29 * 24 * time.Hour), true}, // opened nothing, 29 days ago
		"ranswer-gone":  {"gone-1", t0, false},                     // its task is purged already
		"ranswer-fresh": {"gone-2", now.Add(-time.Hour), true},
	}
	inTx(t, s, func(tx store.Tx) error {
		for id, r := range runs {
			run := NewRun(id)
			run.TaskID, run.StartedAt = r.taskID, r.started
			run.Receipt = `{"receipt":{"run":"` + id + `"}}`
			if err := tx.InsertRun(ctx, run); err != nil {
				return err
			}
			if err := tx.FinishRun(ctx, id, r.started.Add(time.Second), strings.Repeat("b", 64), run.Receipt); err != nil {
				return err
			}
		}
		return tx.SetTaskReceipt(ctx, "rold-1", `{"receipt":{"run":"rold"}}`)
	})
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.Purge(ctx, now, now.Add(-30*24*time.Hour), now.Add(-24*time.Hour), now.Add(-3*24*time.Hour))
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		for id, r := range runs {
			_, err := tx.Run(ctx, id)
			switch {
			case r.kept && err != nil:
				t.Errorf("run %s was purged: %v", id, err)
			case !r.kept && !errors.Is(err, store.ErrNotFound):
				t.Errorf("run %s is kept: %v", id, err)
			}
		}
		if _, err := tx.TaskReceipt(ctx, "rold-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a purged task's receipt is kept: %v", err)
		}
		return nil
	})
}
