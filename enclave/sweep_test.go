package enclave_test

import (
	"context"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestSweeps: expiry, the 30-minute rule before and during a run, a run
// whose process stopped beating, and the purge — each once, observed.
func TestSweeps(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		expiring := w.Pay()
		stuck := approveOnly(w, w.Pay())

		// A run that begins and whose process then stops beating.
		release := make(chan struct{})
		started := make(chan struct{})
		w.SetAnswer(func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			w.Effects.Add(a.Task.ID)
			close(started)
			<-release
			return connectors.Report{Result: map[string]any{"ok": true}}, nil
		})
		orphan := w.Pay()
		run := w.Approve(orphan, nil)
		if err := w.Enclave.Answers.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- w.Enclave.Answers.Answer(ctx, orphan, run) }()
		<-started
		if got := w.Task(orphan).State; got != countersign.StateAnswering {
			t.Fatalf("a running answer is %s", got)
		}

		// Nothing is due yet.
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Expired+res.NotStarted+res.Unfinished != 0 {
			t.Fatalf("an early sweep: %+v %v", res, err)
		}
		w.Clock.Add(2 * time.Minute) // the runner's heartbeat is now a minute old
		res, err := w.Enclave.Sweeps.Sweep(ctx)
		if err != nil || res.Unfinished != 1 || res.NotStarted != 0 {
			t.Fatalf("sweep after the runner stopped: %+v %v", res, err)
		}
		if got := w.Task(orphan); got.State != countersign.StateFailed || got.FailureReason != "run_unfinished" || got.OutcomeClass != "observed" {
			t.Fatalf("the orphaned run's task: %+v", got)
		}
		// The run reports after all: nothing is recorded, nothing runs again.
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := w.Task(orphan); got.State != countersign.StateFailed {
			t.Fatalf("a late report changed the task: %+v", got)
		}
		_ = w.Enclave.Answers.Answer(ctx, orphan, run)
		if n := w.Effects.Count(orphan); n != 1 {
			t.Fatalf("the orphaned write ran %d times", n)
		}

		w.Clock.Add(29 * time.Minute) // the stuck approval is 31 minutes old
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.NotStarted != 1 {
			t.Fatalf("sweep after 30 minutes: %+v %v", res, err)
		}
		if got := w.Task(stuck); got.State != countersign.StateFailed || got.FailureReason != "run_not_started" {
			t.Fatalf("the stuck task: %+v", got)
		}
		w.Clock.Add(24 * time.Hour)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Expired != 1 {
			t.Fatalf("sweep after a day: %+v %v", res, err)
		}
		if got := w.Task(expiring); got.State != countersign.StateExpired || got.OutcomeClass != "observed" {
			t.Fatalf("the expired task: %+v", got)
		}
		st := w.Status("ledger", expiring)
		if st.State != string(countersign.StateExpired) {
			t.Fatalf("the agent reads %+v", st)
		}
		// A sweep finds nothing twice; 30 days later the outcomes go.
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Expired+res.NotStarted+res.Unfinished != 0 {
			t.Fatalf("a second sweep: %+v %v", res, err)
		}
		w.Clock.Add(31 * 24 * time.Hour)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Purged == 0 {
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
func approveOnly(w *servicetest.World, id string) string {
	w.Approve(id, nil)
	return id
}
