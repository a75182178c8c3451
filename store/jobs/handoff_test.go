package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
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

// queued lists the answer jobs written to the queue, with their states, by
// task id.
func queued(t *testing.T, db *sqlstore.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	var rows interface {
		Next() bool
		Scan(...any) error
		Err() error
	}
	if pool := db.Postgres(); pool != nil {
		r, err := pool.Query(ctx, "SELECT args, CAST(state AS TEXT) FROM river_job WHERE kind = 'answer_run'")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows = r
	} else {
		r, err := db.SQLite().QueryContext(ctx, "SELECT json(args), state FROM river_job WHERE kind = 'answer_run'")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows = r
	}
	out := map[string]string{}
	for rows.Next() {
		var args []byte
		var st string
		if err := rows.Scan(&args, &st); err != nil {
			t.Fatal(err)
		}
		var j store.AnswerJob
		if err := json.Unmarshal(args, &j); err != nil {
			t.Fatal(err)
		}
		out[j.TaskID] = st
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// enqueue commits one transaction queueing the answer jobs of tasks ids.
func enqueue(t *testing.T, db *sqlstore.DB, ids ...string) {
	t.Helper()
	ctx := context.Background()
	if err := db.Tx(ctx, func(tx store.Tx) error {
		for _, id := range ids {
			if err := tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: id, Run: "run-" + id}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// receive takes n jobs from c, sorted by task id, or fails after wait.
func receive(t *testing.T, c <-chan store.AnswerJob, n int, wait time.Duration, what string) []string {
	t.Helper()
	var got []string
	deadline := time.After(wait)
	for len(got) < n {
		select {
		case j := <-c:
			if j.Run != "run-"+j.TaskID {
				t.Fatalf("%s: %+v, its run not its own", what, j)
			}
			got = append(got, j.TaskID)
		case <-deadline:
			t.Fatalf("%s: %v after %s, want %d", what, got, wait, n)
		}
	}
	sort.Strings(got)
	return got
}

// TestAnswerHandOff: a process that runs answers itself is handed each
// answer job its transactions queue, once they commit and never before,
// and nothing is written to the queue for it; a job whose run asks to be
// tried again is written to the queue, which delivers it after the retry
// delay; jobs still waiting for the workers when the process stops are
// written to the queue, for any process.
func TestAnswerHandOff(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		handed := make(chan store.AnswerJob, 10)
		release := make(chan struct{})
		fromQueue := &queueWorker{got: make(chan store.AnswerJob, 10)}
		workers := river.NewWorkers()
		river.AddWorker(workers, fromQueue)
		const retry = 1500 * time.Millisecond
		stop, err := jobs.Start(ctx, db, jobs.Config{Workers: workers, HandOffWorkers: 1, HandOffRetry: retry,
			HandOff: func(_ context.Context, j store.AnswerJob) error {
				handed <- j
				switch j.TaskID {
				case "again-1":
					return errors.New("the store went away")
				case "slow-1":
					<-release
				}
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		stopped := false
		t.Cleanup(func() {
			if !stopped {
				close(release)
				_ = stop(context.Background())
			}
		})

		_ = db.Tx(ctx, func(tx store.Tx) error {
			if err := tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "rolled-1", Run: "run-rolled-1"}); err != nil {
				t.Fatal(err)
			}
			return errors.New("refused")
		})
		enqueue(t, db, "a-1", "b-1")
		if got := receive(t, handed, 2, 5*time.Second, "handed off"); got[0] != "a-1" || got[1] != "b-1" {
			t.Fatalf("handed off %v, want a-1 and b-1", got)
		}
		if q := queued(t, db); len(q) != 0 {
			t.Fatalf("handed-off jobs left in the queue: %v", q)
		}

		// A run that answers "try again later" goes to the queue, which
		// delivers it after the retry delay, once.
		failed := time.Now()
		enqueue(t, db, "again-1")
		receive(t, handed, 1, 5*time.Second, "handed off")
		if got := receive(t, fromQueue.got, 1, 15*time.Second, "delivered by the queue"); got[0] != "again-1" {
			t.Fatalf("the queue delivered %v, want again-1", got)
		}
		if waited := time.Since(failed); waited < retry {
			t.Fatalf("the queue tried the failed run again after %s, before its delay of %s", waited, retry)
		}

		// Stopping: the worker is busy with slow-1; c-1 and d-1 wait, and
		// are written to the queue when the process stops (the queue,
		// stopping after, may still run them), slow-1 not.
		enqueue(t, db, "slow-1")
		receive(t, handed, 1, 5*time.Second, "handed off")
		enqueue(t, db, "c-1", "d-1")
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		stopped = true
		if err := stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("stop with a run in flight: %v", err)
		}
		close(release)
		q := queued(t, db)
		if _, ok := q["c-1"]; !ok || len(q) != 3 || q["again-1"] != "completed" {
			t.Fatalf("the queue after the stop: %v, want c-1 and d-1 beside again-1 completed", q)
		} else if _, ok := q["d-1"]; !ok {
			t.Fatalf("the queue after the stop: %v, want d-1 in it", q)
		}
		select {
		case j := <-handed:
			t.Fatalf("also handed off %+v (a rolled-back job, or one written to the queue?)", j)
		case <-time.After(retry):
		}
		for len(fromQueue.got) > 0 {
			if j := <-fromQueue.got; j.TaskID != "c-1" && j.TaskID != "d-1" {
				t.Fatalf("the queue also delivered %+v", j)
			}
		}
	})
}

// TestHandOverFull: a committed answer job that this process's workers
// cannot take at once is written to the queue; those they can take are
// not.
func TestHandOverFull(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		room := make(chan store.AnswerJob, 1)
		t.Cleanup(db.SetHandOff(&sqlstore.HandOff{Jobs: room}))
		enqueue(t, db, "a-1", "b-1")
		if got := receive(t, room, 1, time.Second, "handed off"); got[0] != "a-1" {
			t.Fatalf("handed off %v, want a-1", got)
		}
		if q := queued(t, db); len(q) != 1 || q["b-1"] != "available" {
			t.Fatalf("the queue: %v, want b-1 available", q)
		}
	})
}
