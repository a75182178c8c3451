// Package side wires the enclave side: the key-holder, the services given
// it, and what the job queue's workers do with them. serve and the tests'
// service build it here, so both run the same wiring.
package side

import (
	"context"
	"log/slog"
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
)

// Side is the enclave side's services around one key-holder, the only
// holder of the master keyring. The door reaches it only through the
// inbox's narrow interfaces (inbox.Keeper, TokenKeeper, WebhookKeeper,
// PushKeeper).
type Side struct {
	Keys     *enclave.Keys
	Calls    *calls.Service
	Answers  *answers.Service
	Delivery *delivery.Service
	Sweeps   *sweeps.Service
	Rotation *rotation.Service
	Unlock   *unlock.Service
}

// Config is what New builds the enclave side from.
type Config struct {
	Keys       *sealing.Keyring
	Store      store.Store
	Connectors connectors.Catalogue
	// Recipient and PublicURL are the deployment's (known once serve
	// listens).
	Recipient string
	PublicURL string
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// WebhookAllowPrivate, PushAllowAnyEndpoint, PushContact and Jitter
	// are delivery's (delivery.Config); TaskWaitPoll is the calls'.
	WebhookAllowPrivate  bool
	PushAllowAnyEndpoint bool
	PushContact          string
	Jitter               func() float64
	TaskWaitPoll         time.Duration
	// RunnerDead is the sweeps' (sweeps.Config; 0: answers.RunnerDead).
	RunnerDead time.Duration
}

// New builds the enclave side.
func New(c Config) *Side {
	keys := enclave.New(enclave.Config{Keyring: c.Keys, Recipient: c.Recipient, PublicURL: c.PublicURL})
	deps := enclave.Deps{Keys: keys, Store: c.Store, Now: c.Now, Logger: c.Logger}.WithDefaults()
	cs := calls.New(calls.Config{Deps: deps, Connectors: c.Connectors, PublicURL: c.PublicURL, TaskWaitPoll: c.TaskWaitPoll})
	return &Side{
		Keys:    keys,
		Calls:   cs,
		Answers: answers.New(answers.Config{Deps: deps, Connectors: c.Connectors, Calls: cs}),
		Delivery: delivery.New(delivery.Config{Deps: deps, PublicURL: c.PublicURL,
			WebhookAllowPrivate: c.WebhookAllowPrivate, PushAllowAnyEndpoint: c.PushAllowAnyEndpoint,
			PushContact: c.PushContact, Jitter: c.Jitter}),
		Sweeps:   sweeps.New(sweeps.Config{Deps: deps, RunnerDead: c.RunnerDead}),
		Rotation: rotation.New(keys, c.Store, deps.Logger),
		Unlock:   unlock.New(unlock.Config{Deps: deps}),
	}
}

// Work is what the job queue's workers do: answer runs, the leader's
// sweeps, webhook deliveries and pushes.
func (s *Side) Work() jobs.Work {
	return jobs.Work{
		Answer: s.Answers.AnswerJob, AnswerTimeout: answers.Timeout,
		Sweep: func(ctx context.Context) error {
			_, err := s.Sweeps.Sweep(ctx)
			return err
		},
		SweepEvery: s.Sweeps.Every(),
		Deliver:    s.Delivery.Deliver, DeliverTimeout: delivery.WebhookTimeout,
		Push: s.Delivery.DeliverPush, PushTimeout: delivery.PushTimeout,
	}
}
