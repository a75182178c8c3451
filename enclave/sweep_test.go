package enclave_test

import (
	"context"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/sweeps"
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
		orphan, run, report := runningAnswer(t, w)
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
		if err := report(); err != nil {
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

// runningAnswer approves a task and begins its answer run, after a
// heartbeat of the process, and holds the run (its write made) until
// report is called, which returns what the run returned.
func runningAnswer(t *testing.T, w *servicetest.World) (id, run string, report func() error) {
	t.Helper()
	release := make(chan struct{})
	started := make(chan struct{})
	w.SetAnswer(func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		w.Effects.Add(a.Task.ID)
		close(started)
		<-release
		return connectors.Report{Result: map[string]any{"ok": true}}, nil
	})
	id = w.Pay()
	run = w.Approve(id, nil)
	if err := w.Enclave.Answers.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- w.Enclave.Answers.Answer(ctx, id, run) }()
	<-started
	return id, run, func() error { close(release); return <-done }
}

// approveOnly approves a task and returns its id.
func approveOnly(w *servicetest.World, id string) string {
	w.Approve(id, nil)
	return id
}

// TestRunnerDeadAfterIsSettable: a deployment that takes a silent runner
// for dead sooner than a minute (RUNNER_DEAD_AFTER) has its runs ended
// run_unfinished that much sooner, and sweeps often enough to see it; by
// default a runner silent for 25 s is still alive.
func TestRunnerDeadAfterIsSettable(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	id, _, report := runningAnswer(t, w)
	defer func() { _ = report() }()

	quick := sweeps.New(sweeps.Config{Deps: enclave.Deps{Keys: w.Enclave.Keys, Store: w.DB, Now: w.Clock.Now}, RunnerDead: 20 * time.Second})
	if got, want := w.Enclave.Sweeps.Every(), sweeps.SweepEvery; got != want {
		t.Errorf("by default the leader sweeps every %s, want %s", got, want)
	}
	if got, want := quick.Every(), 10*time.Second; got != want {
		t.Errorf("with runners dead after 20s the leader sweeps every %s, want %s", got, want)
	}
	w.Clock.Add(25 * time.Second)
	if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Unfinished != 0 {
		t.Fatalf("by default, a runner silent for 25s: %+v %v", res, err)
	}
	if got := w.Task(id).State; got != countersign.StateAnswering {
		t.Fatalf("by default, a runner silent for 25s: the task is %s", got)
	}
	if res, err := quick.Sweep(ctx); err != nil || res.Unfinished != 1 {
		t.Fatalf("with runners dead after 20s, one silent for 25s: %+v %v", res, err)
	}
	if got := w.Task(id); got.State != countersign.StateFailed || got.FailureReason != "run_unfinished" {
		t.Fatalf("with runners dead after 20s: the task %+v", got)
	}
}
