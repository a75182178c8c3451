package enclave_test

import (
	"context"
	"testing"
	"time"

	"countersign/connectors"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestSweeps: expiry, the 30-minute rule before and during a run, a run
// whose process stopped beating, and the purge — each once, observed.
func TestSweeps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := newWorld(t, db)
		expiring := w.pay()
		stuck := w.approveOnly(w.pay())

		// A run that begins and whose process then stops beating.
		release := make(chan struct{})
		started := make(chan struct{})
		w.answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			w.effects.add(a.Task.ID)
			close(started)
			<-release
			return connectors.Report{Result: map[string]any{"ok": true}}, nil
		}
		orphan := w.pay()
		run := w.approve(orphan, nil)
		if err := w.e.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- w.e.Answer(ctx, orphan, run) }()
		<-started
		if got := w.task(orphan).State; got != "answering" {
			t.Fatalf("a running answer is %s", got)
		}

		// Nothing is due yet.
		if res, err := w.e.Sweep(ctx); err != nil || res.Expired+res.NotStarted+res.Unfinished != 0 {
			t.Fatalf("an early sweep: %+v %v", res, err)
		}
		w.clock.Add(2 * time.Minute) // the runner's heartbeat is now a minute old
		res, err := w.e.Sweep(ctx)
		if err != nil || res.Unfinished != 1 || res.NotStarted != 0 {
			t.Fatalf("sweep after the runner stopped: %+v %v", res, err)
		}
		if got := w.task(orphan); got.State != "failed" || got.FailureReason != "run_unfinished" || got.OutcomeClass != "observed" {
			t.Fatalf("the orphaned run's task: %+v", got)
		}
		// The run reports after all: nothing is recorded, nothing runs again.
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := w.task(orphan); got.State != "failed" {
			t.Fatalf("a late report changed the task: %+v", got)
		}
		_ = w.e.Answer(ctx, orphan, run)
		if n := w.effects.count(orphan); n != 1 {
			t.Fatalf("the orphaned write ran %d times", n)
		}

		w.clock.Add(29 * time.Minute) // the stuck approval is 31 minutes old
		if res, err := w.e.Sweep(ctx); err != nil || res.NotStarted != 1 {
			t.Fatalf("sweep after 30 minutes: %+v %v", res, err)
		}
		if got := w.task(stuck); got.State != "failed" || got.FailureReason != "run_not_started" {
			t.Fatalf("the stuck task: %+v", got)
		}
		w.clock.Add(24 * time.Hour)
		if res, err := w.e.Sweep(ctx); err != nil || res.Expired != 1 {
			t.Fatalf("sweep after a day: %+v %v", res, err)
		}
		if got := w.task(expiring); got.State != "expired" || got.OutcomeClass != "observed" {
			t.Fatalf("the expired task: %+v", got)
		}
		st := w.status("ledger", expiring)
		if st.State != "expired" {
			t.Fatalf("the agent reads %+v", st)
		}
		// A sweep finds nothing twice; 30 days later the outcomes go.
		if res, err := w.e.Sweep(ctx); err != nil || res.Expired+res.NotStarted+res.Unfinished != 0 {
			t.Fatalf("a second sweep: %+v %v", res, err)
		}
		w.clock.Add(31 * 24 * time.Hour)
		if res, err := w.e.Sweep(ctx); err != nil || res.Purged == 0 {
			t.Fatalf("the purge: %+v %v", res, err)
		}
		_ = db.Tx(ctx, func(tx store.Tx) error {
			for _, id := range []string{expiring, stuck, orphan} {
				if _, err := tx.Task(ctx, id); err == nil {
					t.Errorf("%s is kept past 30 days", id)
				}
			}
			return nil
		})
	})
}

// approveOnly approves a task and returns its id.
func (w *world) approveOnly(id string) string {
	w.approve(id, nil)
	return id
}
