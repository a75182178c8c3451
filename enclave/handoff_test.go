package enclave_test

import (
	"context"
	"testing"
	"time"

	"countersign"
	"countersign/enclave/sweeps"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// sqlOn runs a statement on either database, outside the service, as a
// process the service shares the database with would.
func sqlOn(t *testing.T, db *sqlstore.DB, pg, lite string) int64 {
	t.Helper()
	ctx := context.Background()
	if db.Postgres() != nil {
		tag, err := db.Postgres().Exec(ctx, pg)
		if err != nil {
			t.Fatal(err)
		}
		return tag.RowsAffected()
	}
	res, err := db.SQLite().ExecContext(ctx, lite)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.RowsAffected()
	return n
}

// TestApprovalHandedOff: in a process that runs answers, the approval's
// commit hands its run to that process at once, writing nothing to the
// queue: the write happens once and nothing is left for another process to
// deliver.
func TestApprovalHandedOff(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		w.StartJobs()
		id := w.Pay()
		w.Approve(id, nil)
		if got := w.WaitState(id, countersign.StateDone, countersign.StateFailed); got.State != countersign.StateDone {
			t.Fatalf("the approved task ended %s %s", got.State, got.FailureReason)
		}
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("the write ran %d times", n)
		}
		if n := countJobs(t, db); n != 0 {
			t.Fatalf("%d answer jobs are left in the queue after the handed-off run", n)
		}
	})
}

// TestSweepRequeuesAStrandedApproval is R1's stranded approval: the answer
// job of an approved task was being worked by a process that died before it
// claimed the run, so the queue holds it as running (and would rescue it
// only after an hour). The sweep queues the task again once it has waited
// sweeps.StrandedAfter, once, and the owner's yes is carried out — once.
func TestSweepRequeuesAStrandedApproval(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		w.Approve(id, nil)
		if n := sqlOn(t, db, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE kind = 'answer_run'",
			"UPDATE river_job SET state = 'running', attempt = 1, attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE kind = 'answer_run'"); n != 1 {
			t.Fatalf("%d answer jobs marked running, want 1", n)
		}
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 0 {
			t.Fatalf("a sweep right after the approval: %+v %v", res, err)
		}
		w.Clock.Add(sweeps.StrandedAfter)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 1 || res.NotStarted != 0 {
			t.Fatalf("the sweep after %s: %+v %v, want one requeued", sweeps.StrandedAfter, res, err)
		}
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 0 {
			t.Fatalf("a second sweep queued it again: %+v %v", res, err)
		}
		w.StartJobs()
		if got := w.WaitState(id, countersign.StateDone, countersign.StateFailed); got.State != countersign.StateDone {
			t.Fatalf("the stranded approval ended %s %s", got.State, got.FailureReason)
		}
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("the write ran %d times", n)
		}
	})
}

// TestHandedOffToAProcessThatDied: the approval's commit handed its run to
// a process that died before the run began, and the queue holds nothing
// for it. The task row is the record: a sweep before sweeps.StrandedAfter
// leaves it alone, the first one after queues it again, and another
// process carries the owner's yes out, once.
func TestHandedOffToAProcessThatDied(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		lost := make(chan store.AnswerJob, 1)
		forget := db.SetHandOff(&sqlstore.HandOff{Jobs: lost})
		id := w.Pay()
		w.Approve(id, nil)
		forget() // the process dies with the job in its hands
		if j := <-lost; j.TaskID != id {
			t.Fatalf("handed off %+v, want %s", j, id)
		}
		if n := countJobs(t, db); n != 0 {
			t.Fatalf("%d answer jobs in the queue for a handed-off approval", n)
		}
		w.Clock.Add(sweeps.StrandedAfter - time.Second)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 0 {
			t.Fatalf("a sweep before %s: %+v %v", sweeps.StrandedAfter, res, err)
		}
		w.Clock.Add(time.Second)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 1 {
			t.Fatalf("the sweep at %s: %+v %v, want one requeued", sweeps.StrandedAfter, res, err)
		}
		w.StartJobs()
		if got := w.WaitState(id, countersign.StateDone, countersign.StateFailed); got.State != countersign.StateDone {
			t.Fatalf("the approval ended %s %s", got.State, got.FailureReason)
		}
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("the write ran %d times", n)
		}
	})
}
