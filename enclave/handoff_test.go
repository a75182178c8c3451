package enclave_test

import (
	"context"
	"testing"
	"time"

	"countersign"
	"countersign/servicetest"
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
// commit hands its run to that process at once, and the run's claim deletes
// the queue's fallback copy: the write happens once and nothing is left for
// another process to deliver.
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
// only after an hour). The sweep queues the task again once it has waited a
// minute, once, and the owner's yes is carried out — once.
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
		w.Clock.Add(2 * time.Minute)
		if res, err := w.Enclave.Sweeps.Sweep(ctx); err != nil || res.Requeued != 1 || res.NotStarted != 0 {
			t.Fatalf("the sweep after a minute: %+v %v, want one requeued", res, err)
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
