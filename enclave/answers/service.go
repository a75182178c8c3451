// Package answers carries out approved tasks on the enclave side: an
// answer run opens the task's sealed copy with the key-holder's keys,
// checks again everything the owner (or the task's approvers) approved,
// and runs the connector's answer operation exactly once (SPEC §7, §8).
// The process that runs answer runs says it is alive (Heartbeat), so that
// the sweep can end the runs of one that died.
package answers

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"countersign"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/calls"
	"countersign/enclave/history"
	"countersign/store"
)

// Service runs approved tasks' answers.
type Service struct {
	keys       *enclave.Keys
	store      store.Port[answersTx]
	connectors connectors.Catalogue
	// calls runs the answer operation as it runs an agent's call.
	calls   *calls.Service
	history *history.Writer
	now     func() time.Time
	log     *slog.Logger
	// instance names this process: an answer run's row names the process
	// that runs it, and the process's heartbeat says it is alive.
	instance string
	// runs is how long answer runs take, by connector, for /metrics.
	runs *prometheus.HistogramVec
}

// Config is what a Service is built from.
type Config struct {
	enclave.Deps
	Connectors connectors.Catalogue
	// Calls runs the answer operations.
	Calls *calls.Service
}

// New returns the answers service.
func New(c Config) *Service {
	c.Deps = c.Deps.WithDefaults()
	return &Service{keys: c.Keys, store: port(c.Store), connectors: c.Connectors, calls: c.Calls,
		history: history.New(c.Keys, c.Logger), now: c.Now, log: c.Logger, instance: "p" + countersign.NewRunID(),
		runs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "countersign_answer_run_seconds",
			Help:    "Answer runs, from their claim to their recorded end, by connector.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"connector"})}
}

// clock is the time in whole seconds, UTC.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Second) }

// Collectors are the answer runs' metrics, to register where /metrics is
// served. Labels carry connector names only: never an owner, an agent or
// anything a task shows.
func (s *Service) Collectors() []prometheus.Collector { return []prometheus.Collector{s.runs} }

func (s *Service) observe(connector string, since time.Time) {
	s.runs.WithLabelValues(connector).Observe(time.Since(since).Seconds())
}

// Timeout bounds one answer job: the whole compute limit, its grace, and
// the transactions around it.
const Timeout = connectors.MaxLimit + 2*calls.OverrunGrace + 30*time.Second

// Heartbeat timings.
const (
	// HeartbeatEvery is how often a process says it is alive; a process not
	// heard from for RunnerDead is taken for dead, and its answer runs end
	// run_unfinished (never replayed).
	HeartbeatEvery = 10 * time.Second
	RunnerDead     = time.Minute
)

// Heartbeat says this process is alive, for the answer runs it runs.
func (s *Service) Heartbeat(ctx context.Context) error {
	return s.store.Tx(ctx, func(tx answersTx) error { return tx.Heartbeat(ctx, s.instance, s.now().UTC()) })
}

// KeepAlive beats until ctx ends.
func (s *Service) KeepAlive(ctx context.Context) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		if err := s.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
