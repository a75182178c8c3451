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
		Logger:            j.Logger,
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
