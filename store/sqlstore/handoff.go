package sqlstore

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"countersign/store"
)

// An answer job queued by a transaction of a process that works answer
// jobs itself is handed to that process's own workers (package jobs) the
// moment the transaction commits: the owner's approval wakes its run at
// once, with no trip through the queue, and nothing is written to the
// queue for it. The approved task's row is the job's durable record: if
// the process dies before the run begins, the sweep finds the task still
// approved with no job waiting in the queue and queues it again, for any
// process (store.Upkeep's StrandedApprovals). A job this process cannot
// take at once (its workers' backlog is full, or it is stopping) is
// written to the queue after the commit; a job whose run failed for a
// reason worth trying again is written there by package jobs. Whichever
// process takes a job, the task row's compare-and-set (approved →
// answering) lets only one run begin.

// handedInputsMax bounds the ciphertext a handed-over job carries with
// what its run reads (AnswerJob.Inputs): a task's sealed copy may reach
// half a megabyte, and up to a thousand jobs may wait for this process's
// workers. A larger task's run reads it itself, as from the queue.
const handedInputsMax = 32 << 10

// HandOff is where this process's own workers take the answer jobs its
// transactions queue.
type HandOff struct {
	// Jobs takes each job as its transaction commits, never waiting: a job
	// that does not fit is written to the queue.
	Jobs chan<- store.AnswerJob
}

// SetHandOff hands the answer jobs this store's transactions queue to h,
// from now until the function it returns is called.
func (db *DB) SetHandOff(h *HandOff) (stop func()) {
	db.handoff.Store(h)
	return func() { db.handoff.CompareAndSwap(h, nil) }
}

// handOver gives committed answer jobs to this process's workers, never
// waiting; what they cannot take now is written to the queue, and if even
// that fails, the sweep queues it again.
func (db *DB) handOver(jobs []store.AnswerJob) {
	if len(jobs) == 0 {
		return
	}
	h := db.handoff.Load()
	var left []store.AnswerJob
	for _, j := range jobs {
		if h == nil {
			left = append(left, j)
			continue
		}
		select {
		case h.Jobs <- j:
		default:
			left = append(left, j)
		}
	}
	if len(left) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), queueAnswersWithin)
		defer cancel()
		_ = db.QueueAnswers(ctx, left, time.Time{})
	}
}

// queueAnswersWithin bounds writing to the queue the jobs a commit could
// not hand over.
const queueAnswersWithin = 5 * time.Second

// QueueAnswers writes answer jobs to the job queue, for any process to take
// from at on (at once when at is zero), in a transaction of their own.
func (db *DB) QueueAnswers(ctx context.Context, jobs []store.AnswerJob, at time.Time) error {
	params := make([]river.InsertManyParams, len(jobs))
	opts := answerJobOpts()
	if !at.IsZero() {
		opts.ScheduledAt = at
	}
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: j, InsertOpts: opts}
	}
	return db.Tx(ctx, func(st store.Tx) error {
		t := st.(*tx)
		_, err := t.db.e.insertJobs(ctx, t, params)
		return err
	})
}
