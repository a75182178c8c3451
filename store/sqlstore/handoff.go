package sqlstore

import (
	"context"
	"sync"
	"time"

	"countersign/store"
)

// An answer job queued by a transaction of a process that works answer
// jobs itself is handed to that process's own workers the moment the
// transaction commits: the owner's approval wakes its run at once, with no
// trip through the queue. The queue keeps the job too, scheduled a grace
// later, so that if this process dies (or its hand-off workers are all
// busy) any process takes it then. The run's claim deletes that fallback
// while it still waits; if another process took it meanwhile, the task
// row's compare-and-set (approved → answering) lets only one of them run.
type handOff struct {
	jobs  chan store.AnswerJob
	grace time.Duration
}

// defaultHandOffGrace is how long a handed-off answer job's fallback waits
// in the queue, unless Jobs says otherwise, before any process may take it.
const defaultHandOffGrace = 10 * time.Second

// handOffBacklog bounds the jobs waiting for this process's hand-off
// workers; past it, a job is left to its fallback in the queue.
const handOffBacklog = 1024

// handOver gives committed answer jobs to this process's workers, never
// waiting: a job that does not fit is left to the queue.
func (db *DB) handOver(jobs []store.AnswerJob) {
	h := db.handoff.Load()
	if h == nil {
		return
	}
	for _, j := range jobs {
		select {
		case h.jobs <- j:
		default:
		}
	}
}

// startHandOff starts j.HandOffWorkers workers running handed-off answer
// jobs with run, each within j.HandOffTimeout; the function it returns stops taking jobs and waits
// for the running ones while ctx lasts. Jobs still waiting are left to
// their fallbacks.
func (db *DB) startHandOff(ctx context.Context, cfg Jobs, run func(context.Context, store.AnswerJob) error) func(context.Context) error {
	h := &handOff{jobs: make(chan store.AnswerJob, handOffBacklog), grace: cfg.HandOffGrace}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range cfg.HandOffWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-quit:
					return
				case <-ctx.Done():
					return
				case j := <-h.jobs:
					jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.HandOffTimeout)
					// An error leaves the job to its fallback.
					_ = run(jctx, j)
					cancel()
				}
			}
		}()
	}
	db.handoff.Store(h)
	return func(stopCtx context.Context) error {
		db.handoff.CompareAndSwap(h, nil)
		close(quit)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-stopCtx.Done():
			return stopCtx.Err()
		}
	}
}
