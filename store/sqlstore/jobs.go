package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// Jobs is the queue's working side: which workers, which periodic jobs.
type Jobs struct {
	Workers  *river.Workers
	Periodic []*river.PeriodicJob
	// MaxWorkers bounds jobs run at once by this process (0: 4).
	MaxWorkers int
	Logger     *slog.Logger
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
	if db.pg != nil {
		c, err := river.NewClient[pgx.Tx](riverpgxv5.New(db.pg), cfg)
		if err != nil {
			return nil, err
		}
		return c.Stop, c.Start(ctx)
	}
	// The embedded store has no notifications: poll often.
	cfg.FetchPollInterval = 200 * time.Millisecond
	cfg.Schema = ""
	c, err := river.NewClient[*sql.Tx](riversqlite.New(db.lite), cfg)
	if err != nil {
		return nil, err
	}
	return c.Stop, c.Start(ctx)
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
