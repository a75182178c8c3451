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

// TestHandedOverClaim: a job handed over at the approval's commit carries
// what that commit read of its task (on PostgreSQL; on SQLite nothing),
// and its claim reads nothing more. Copies of the job, with what was read
// and without, run at once and claim the run once. When the owner names
// another webhook between the approval's commit and the claim, the claim
// reads the task again, and the answer's event goes to the webhook named
// now.
func TestHandedOverClaim(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		handed := handedOver(t, db, 4)
		approve := func() store.AnswerJob {
			id := w.Pay()
			run := w.Approve(id, nil)
			j := <-handed
			if j.TaskID != id || j.Run != run {
				t.Fatalf("handed over %+v for %s, run %s", j, id, run)
			}
			if (j.Inputs != nil) != (db.Postgres() != nil) {
				t.Fatalf("handed over with inputs %v on %s", j.Inputs != nil, db.Dialect())
			}
			if in := j.Inputs; in != nil && (in.Task.State != countersign.StateApproved || in.Task.AnswerRun != run ||
				in.Sealed == nil || in.Approval == nil || in.Project == nil || in.Preparer == nil || in.Seen.Owner != w.Owner.Account) {
				t.Fatalf("the approval's commit read %+v", *in)
			}
			return j
		}

		j := approve()
		jobs := make([]store.AnswerJob, 16)
		for i := range jobs {
			jobs[i] = j
			if i%2 == 1 {
				jobs[i].Inputs = nil // a copy from the queue, or a sweep
			}
		}
		runAtOnce(t, w, jobs)
		w.DoneOnce(j.TaskID)

		j = approve()
		if err := w.DB.Tx(ctx, func(tx store.Tx) error {
			return tx.PutWebhook(ctx, store.Webhook{Owner: w.Owner.Account, ID: "wh-named-now", SetAt: time.Now(),
				SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")})
		}); err != nil {
			t.Fatal(err)
		}
		if err := w.Enclave.Answers.AnswerJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		w.DoneOnce(j.TaskID)
		q := "SELECT COUNT(*) FROM webhook_events WHERE task_id = '" + j.TaskID + "' AND webhook_id = 'wh-named-now' AND type = 'task_answered'"
		if n := countOn(t, db, q); n != 1 {
			t.Fatalf("%d task_answered events for the webhook named before the claim, want 1", n)
		}
	})
}

// countOn reads a count on either database, outside the service.
func countOn(t *testing.T, db *sqlstore.DB, q string) int64 {
	t.Helper()
	var n int64
	var err error
	if db.Postgres() != nil {
		err = db.Postgres().QueryRow(context.Background(), q).Scan(&n)
	} else {
		err = db.SQLite().QueryRowContext(context.Background(), q).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}
