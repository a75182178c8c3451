package sqlstore

import (
	"time"

	"countersign/store"
)

// An answer job queued by a transaction of a process that works answer
// jobs itself is handed to that process's own workers (package jobs) the
// moment the transaction commits: the owner's approval wakes its run at
// once, with no trip through the queue. The queue keeps the job too,
// scheduled a grace later, so that if this process dies (or its hand-off
// workers are all busy) any process takes it then. The run's claim deletes
// that fallback while it still waits; if another process took it
// meanwhile, the task row's compare-and-set (approved → answering) lets
// only one of them run.

// HandOff is where this process's own workers take the answer jobs its
// transactions queue.
type HandOff struct {
	// Jobs takes each job as its transaction commits, never waiting: a job
	// that does not fit is left to the queue.
	Jobs chan<- store.AnswerJob
	// Grace is how long the queue's copy of a handed-off job waits before
	// any process may take it.
	Grace time.Duration
}

// SetHandOff hands the answer jobs this store's transactions queue to h,
// from now until the function it returns is called.
func (db *DB) SetHandOff(h *HandOff) (stop func()) {
	db.handoff.Store(h)
	return func() { db.handoff.CompareAndSwap(h, nil) }
}

// handOver gives committed answer jobs to this process's workers, never
// waiting: a job that does not fit is left to the queue.
func (db *DB) handOver(jobs []store.AnswerJob) {
	h := db.handoff.Load()
	if h == nil {
		return
	}
	for _, j := range jobs {
		select {
		case h.Jobs <- j:
		default:
		}
	}
}
