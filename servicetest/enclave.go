package servicetest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/answers"
	"countersign/enclave/calls"
	"countersign/enclave/delivery"
	"countersign/enclave/rotation"
	"countersign/enclave/sweeps"
	"countersign/enclave/unlock"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/jobs"
	"countersign/store/sqlstore"
)

// Enclave is the enclave side's services around one key-holder, wired as
// serve wires them.
type Enclave struct {
	Keys     *enclave.Keys
	Calls    *calls.Service
	Answers  *answers.Service
	Delivery *delivery.Service
	Sweeps   *sweeps.Service
	Rotation *rotation.Service
	Unlock   *unlock.Service
}

// EnclaveConfig is what NewEnclave builds the enclave side from.
type EnclaveConfig struct {
	Keys       *sealing.Keyring
	Store      store.Store
	Connectors connectors.Catalogue
	Recipient  string
	PublicURL  string
	Now        func() time.Time
	Logger     *slog.Logger
	// WebhookAllowPrivate, PushAllowAnyEndpoint, PushContact and Jitter
	// are delivery's (delivery.Config); TaskWaitPoll is the calls'.
	WebhookAllowPrivate  bool
	PushAllowAnyEndpoint bool
	PushContact          string
	Jitter               func() float64
	TaskWaitPoll         time.Duration
}

// NewEnclave builds the enclave side.
func NewEnclave(c EnclaveConfig) *Enclave {
	keys := enclave.New(enclave.Config{Keyring: c.Keys, Recipient: c.Recipient, PublicURL: c.PublicURL})
	cs := calls.New(calls.Config{Keys: keys, Store: c.Store, Connectors: c.Connectors, PublicURL: c.PublicURL,
		Now: c.Now, Logger: c.Logger, TaskWaitPoll: c.TaskWaitPoll})
	return &Enclave{
		Keys:  keys,
		Calls: cs,
		Answers: answers.New(answers.Config{Keys: keys, Store: c.Store, Connectors: c.Connectors, Calls: cs,
			Now: c.Now, Logger: c.Logger}),
		Delivery: delivery.New(delivery.Config{Keys: keys, Store: c.Store, PublicURL: c.PublicURL, Now: c.Now, Logger: c.Logger,
			WebhookAllowPrivate: c.WebhookAllowPrivate, PushAllowAnyEndpoint: c.PushAllowAnyEndpoint,
			PushContact: c.PushContact, Jitter: c.Jitter}),
		Sweeps:   sweeps.New(sweeps.Config{Keys: keys, Store: c.Store, Now: c.Now, Logger: c.Logger}),
		Rotation: rotation.New(keys, c.Store, c.Logger),
		Unlock:   unlock.New(unlock.Config{Keys: keys, Store: c.Store, Now: c.Now, Logger: c.Logger}),
	}
}

// Work is what the job queue's workers do with e, as serve wires it.
func (e *Enclave) Work() jobs.Work {
	return jobs.Work{
		Answer: e.Answers.AnswerJob, AnswerTimeout: answers.Timeout,
		Sweep: func(ctx context.Context) error {
			_, err := e.Sweeps.Sweep(ctx)
			return err
		},
		SweepEvery: sweeps.SweepEvery,
		Deliver:    e.Delivery.Deliver, DeliverTimeout: delivery.WebhookTimeout,
		Push: e.Delivery.DeliverPush, PushTimeout: delivery.PushTimeout,
	}
}

// StartJobs works the job queue with e on db until the test ends, with a
// heartbeat.
func StartJobs(t testing.TB, db *sqlstore.DB, e *Enclave) {
	t.Helper()
	jctx, cancel := context.WithCancel(context.Background())
	go e.Answers.KeepAlive(jctx)
	work := e.Work()
	stop, err := jobs.Start(jctx, db, jobs.Config{Workers: work.Workers(), Periodic: work.Periodic(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), HandOff: work.Answer, HandOffTimeout: work.AnswerTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = stop(sctx)
		cancel()
	})
}
