package enclave

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"countersign/connectors"
	"countersign/store"
)

// answerWorker runs approved tasks' answers from the job queue.
type answerWorker struct {
	river.WorkerDefaults[store.AnswerJob]
	e *Enclave
}

func (w *answerWorker) Work(ctx context.Context, job *river.Job[store.AnswerJob]) error {
	return unavailableSnoozes(w.e.AnswerJob(ctx, job.Args))
}

// storeSnooze is how long a job the store was unavailable for waits before
// it is tried again.
const storeSnooze = 5 * time.Second

// unavailableSnoozes turns the store's unavailability into a snooze: an
// outage of the database does not use up a job's attempts, so no job is
// given up for it.
func unavailableSnoozes(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return river.JobSnooze(storeSnooze)
	}
	return err
}

// Timeout lets an answer run use its whole compute limit.
func (w *answerWorker) Timeout(*river.Job[store.AnswerJob]) time.Duration { return AnswerTimeout }

// AnswerTimeout bounds one answer job: the whole compute limit, its grace,
// and the transactions around it.
const AnswerTimeout = connectors.MaxLimit + 2*overrunGrace + 30*time.Second

// sweepJob is the leader's periodic sweep.
type sweepJob struct{}

func (sweepJob) Kind() string { return "sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepJob]
	e *Enclave
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepJob]) error {
	_, err := w.e.Sweep(ctx)
	return err
}

// Workers are the job queue's workers for this enclave.
func (e *Enclave) Workers() *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &answerWorker{e: e})
	river.AddWorker(w, &sweepWorker{e: e})
	river.AddWorker(w, &deliveryWorker{e: e})
	river.AddWorker(w, &pushWorker{e: e})
	return w
}

// PeriodicJobs are the jobs the queue's leader runs on a schedule.
func (e *Enclave) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(SweepEvery),
			func() (river.JobArgs, *river.InsertOpts) { return sweepJob{}, &river.InsertOpts{MaxAttempts: 1} },
			&river.PeriodicJobOpts{ID: "sweep", RunOnStart: true}),
	}
}
