package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"countersign/store"
)

// Work is what the queue's jobs do, as the process wires it: each worker
// calls one of these, and turns what it answers into the job's end, a
// snooze or a failure.
type Work struct {
	// Answer runs an approved task's answer (an error: try the job again
	// later), within AnswerTimeout.
	Answer        func(context.Context, store.AnswerJob) error
	AnswerTimeout time.Duration
	// Sweep ends and purges what the platform must; the leader runs it
	// every SweepEvery, and at its start.
	Sweep      func(context.Context) error
	SweepEvery time.Duration
	// Deliver makes one attempt of an outbox event to a webhook, and Push
	// one of a task's push to a device, within their timeouts; each says
	// whether to try again and when (the job is snoozed till then).
	Deliver        func(ctx context.Context, eventID, webhookID string) (time.Duration, bool, error)
	DeliverTimeout time.Duration
	Push           func(ctx context.Context, taskID, deviceID string) (time.Duration, bool, error)
	PushTimeout    time.Duration
}

// Workers are the job queue's workers for w.
func (w Work) Workers() *river.Workers {
	ws := river.NewWorkers()
	river.AddWorker(ws, &answerWorker{w: w})
	river.AddWorker(ws, &sweepWorker{w: w})
	river.AddWorker(ws, &deliveryWorker{w: w})
	river.AddWorker(ws, &pushWorker{w: w})
	return ws
}

// Periodic are the jobs the queue's leader runs on a schedule.
func (w Work) Periodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(w.SweepEvery),
			func() (river.JobArgs, *river.InsertOpts) { return sweepJob{}, &river.InsertOpts{MaxAttempts: 1} },
			&river.PeriodicJobOpts{ID: "sweep", RunOnStart: true}),
	}
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

// again snoozes a job until its next attempt, or ends it.
func again(delay time.Duration, more bool, err error) error {
	if err != nil {
		return unavailableSnoozes(err)
	}
	if more {
		return river.JobSnooze(delay)
	}
	return nil
}

// answerWorker runs approved tasks' answers from the job queue.
type answerWorker struct {
	river.WorkerDefaults[store.AnswerJob]
	w Work
}

func (a *answerWorker) Work(ctx context.Context, job *river.Job[store.AnswerJob]) error {
	return unavailableSnoozes(a.w.Answer(ctx, job.Args))
}

// Timeout lets an answer run use its whole compute limit.
func (a *answerWorker) Timeout(*river.Job[store.AnswerJob]) time.Duration { return a.w.AnswerTimeout }

// sweepJob is the leader's periodic sweep.
type sweepJob struct{}

func (sweepJob) Kind() string { return "sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepJob]
	w Work
}

func (s *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepJob]) error { return s.w.Sweep(ctx) }

// deliveryWorker delivers outbox events from the job queue, snoozing the
// job between attempts by the webhook schedule.
type deliveryWorker struct {
	river.WorkerDefaults[store.DeliveryJob]
	w Work
}

func (d *deliveryWorker) Work(ctx context.Context, job *river.Job[store.DeliveryJob]) error {
	return again(d.w.Deliver(ctx, job.Args.EventID, job.Args.WebhookID))
}

func (d *deliveryWorker) Timeout(*river.Job[store.DeliveryJob]) time.Duration {
	return d.w.DeliverTimeout
}

// pushWorker sends pushes from the job queue, snoozing the job between
// attempts.
type pushWorker struct {
	river.WorkerDefaults[store.PushJob]
	w Work
}

func (p *pushWorker) Work(ctx context.Context, job *river.Job[store.PushJob]) error {
	return again(p.w.Push(ctx, job.Args.TaskID, job.Args.DeviceID))
}

func (p *pushWorker) Timeout(*river.Job[store.PushJob]) time.Duration { return p.w.PushTimeout }
