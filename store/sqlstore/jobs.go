package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"countersign/store"
)

// Jobs is the queue's working side: which workers, which periodic jobs.
type Jobs struct {
	Workers  *river.Workers
	Periodic []*river.PeriodicJob
	// MaxWorkers bounds jobs run at once by this process (0: 4).
	MaxWorkers int
	Logger     *slog.Logger
	// HandOff, when set, runs the answer jobs this process's own
	// transactions queue, as soon as each commits (see handOff), on
	// HandOffWorkers workers (0: 16), each within HandOffTimeout; the
	// queue's fallback copy of each waits HandOffGrace (0: 10 s).
	HandOff        func(context.Context, store.AnswerJob) error
	HandOffWorkers int
	HandOffTimeout time.Duration
	HandOffGrace   time.Duration
}

// StartJobs starts working the job queue on this store's database. On
// PostgreSQL several processes share the queue, and one of them, the
// leader, runs the periodic jobs. It returns the function that stops it,
// letting running jobs finish while ctx lasts.
func (db *DB) StartJobs(ctx context.Context, j Jobs) (func(context.Context) error, error) {
	if j.MaxWorkers == 0 {
		j.MaxWorkers = 4
	}
	if j.Logger == nil {
		j.Logger = quietLogger
	}
	cfg := &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: j.MaxWorkers}},
		Workers:           j.Workers,
		PeriodicJobs:      j.Periodic,
		Logger:            slog.New(demoted{j.Logger.Handler()}),
		Schema:            db.schema,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 100 * time.Millisecond,
	}
	var stopQueue func(context.Context) error
	if db.pg != nil {
		c, err := river.NewClient[pgx.Tx](riverpgxv5.New(db.pg), cfg)
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		stopQueue = c.Stop
	} else {
		// The embedded store has no notifications: poll often.
		cfg.FetchPollInterval = 200 * time.Millisecond
		cfg.Schema = ""
		c, err := river.NewClient[*sql.Tx](riversqlite.New(db.lite), cfg)
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		stopQueue = c.Stop
	}
	if j.HandOff == nil {
		return stopQueue, nil
	}
	if j.HandOffWorkers == 0 {
		j.HandOffWorkers = 16
	}
	if j.HandOffTimeout == 0 {
		j.HandOffTimeout = time.Hour
	}
	if j.HandOffGrace == 0 {
		j.HandOffGrace = defaultHandOffGrace
	}
	stopHandOff := db.startHandOff(ctx, j, j.HandOff)
	return func(ctx context.Context) error {
		return errors.Join(stopHandOff(ctx), stopQueue(ctx))
	}, nil
}

// demoted hands the job queue's records to h one level lower: its routine
// INFO lines (elections, maintenance) become DEBUG, so a service's log shows
// them only when asked; warnings and errors stay as they are.
type demoted struct{ h slog.Handler }

func (d demoted) level(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool { return d.h.Enabled(ctx, d.level(l)) }

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoted) WithAttrs(as []slog.Attr) slog.Handler { return demoted{d.h.WithAttrs(as)} }
func (d demoted) WithGroup(name string) slog.Handler    { return demoted{d.h.WithGroup(name)} }
