package jobs_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"countersign/store"
	"countersign/store/jobs"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// queueWorker is the queue's answer worker in these tests: it says which
// jobs the queue delivered.
type queueWorker struct {
	river.WorkerDefaults[store.AnswerJob]
	got chan store.AnswerJob
}

func (w *queueWorker) Work(_ context.Context, j *river.Job[store.AnswerJob]) error {
	w.got <- j.Args
	return nil
}

// jobState reads a queued job's state ("" when it is gone).
func jobState(t *testing.T, db *sqlstore.DB, id int64) string {
	t.Helper()
	ctx := context.Background()
	var st string
	var err error
	if db.Postgres() != nil {
		err = db.Postgres().QueryRow(ctx, "SELECT CAST(state AS TEXT) FROM river_job WHERE id = $1", id).Scan(&st)
	} else {
		err = db.SQLite().QueryRowContext(ctx, "SELECT state FROM river_job WHERE id = ?", id).Scan(&st)
	}
	if errors.Is(err, sql.ErrNoRows) || err != nil && err.Error() == "no rows in result set" {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestAnswerHandOff: a process that runs answers itself is handed each
// answer job its transactions queue, once they commit and never before; the
// queue's fallback copy waits out the grace, is deleted by DropAnswerJob
// while it waits (not once a process works it), and is delivered by the
// queue when the hand-off never ran it — a process that died.
func TestAnswerHandOff(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		handed := make(chan store.AnswerJob, 10)
		fromQueue := &queueWorker{got: make(chan store.AnswerJob, 10)}
		workers := river.NewWorkers()
		river.AddWorker(workers, fromQueue)
		const grace = 1500 * time.Millisecond
		stop, err := jobs.Start(ctx, db, jobs.Config{Workers: workers, HandOffGrace: grace,
			HandOff: func(_ context.Context, j store.AnswerJob) error { handed <- j; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop(context.Background()) })

		_ = db.Tx(ctx, func(tx store.Tx) error {
			if err := tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "rolled-1", Run: "run-rolled"}); err != nil {
				t.Fatal(err)
			}
			return errors.New("refused")
		})
		queued := time.Now()
		if err := db.Tx(ctx, func(tx store.Tx) error {
			if err := tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "a-1", Run: "run-a"}); err != nil {
				return err
			}
			return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "b-1", Run: "run-b"})
		}); err != nil {
			t.Fatal(err)
		}
		var a, b store.AnswerJob
		for _, j := range []*store.AnswerJob{&a, &b} {
			select {
			case *j = <-handed:
			case <-time.After(5 * time.Second):
				t.Fatal("a committed answer job was not handed off")
			}
		}
		if a.TaskID == "b-1" {
			a, b = b, a // handed to workers running at once
		}
		if a.TaskID != "a-1" || b.TaskID != "b-1" || a.Queued == 0 || b.Queued == 0 || a.Queued == b.Queued {
			t.Fatalf("handed off %+v and %+v", a, b)
		}
		if st := jobState(t, db, a.Queued); st != "scheduled" {
			t.Fatalf("the fallback of a handed-off job is %q, want scheduled", st)
		}
		// The claim deletes a's fallback while it waits.
		if err := db.Tx(ctx, func(tx store.Tx) error { return tx.DropAnswerJob(ctx, a.Queued) }); err != nil {
			t.Fatal(err)
		}
		if st := jobState(t, db, a.Queued); st != "" {
			t.Fatalf("a dropped fallback is still %q", st)
		}
		// b's hand-off "died": the queue delivers it after the grace.
		select {
		case j := <-fromQueue.got:
			if j.TaskID != "b-1" || j.Run != "run-b" {
				t.Fatalf("the queue delivered %+v, want b-1", j)
			}
			if waited := time.Since(queued); waited < grace {
				t.Fatalf("the fallback came after %s, before its grace of %s", waited, grace)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the fallback of a job whose hand-off never ran was not delivered")
		}
		select {
		case j := <-fromQueue.got:
			t.Fatalf("the queue also delivered %+v", j)
		case j := <-handed:
			t.Fatalf("also handed off %+v (a rolled-back job?)", j)
		case <-time.After(grace):
		}
		// A job a process works is not dropped.
		if err := db.Tx(ctx, func(tx store.Tx) error {
			return tx.DropAnswerJob(ctx, b.Queued)
		}); err != nil {
			t.Fatal(err)
		}
		if st := jobState(t, db, b.Queued); st == "" {
			t.Fatal("DropAnswerJob deleted a job the queue had delivered")
		}
	})
}
