// Package jobs works the job queue (River) on a sqlstore database: the
// workers and periodic jobs a process runs, and the in-process hand-off of
// the answer jobs its own transactions queue (sqlstore.HandOff), which run
// at once rather than through the queue. Jobs are queued by the store,
// inside the transactions that make them (store.Tx.EnqueueAnswer).
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"countersign/store"
	"countersign/store/sqlstore"
)

// DB is what working the job queue needs of a database (a *sqlstore.DB):
// its connections and schema, and the hand-off of the answer jobs its
// transactions queue. The queue's workers reach the store only through
// what they are given, never through DB.
type DB interface {
	// Postgres is the pool on PostgreSQL (nil on the embedded store).
	Postgres() *pgxpool.Pool
	// SQLite is the embedded store's database (nil on PostgreSQL).
	SQLite() *sql.DB
	// SchemaName is the PostgreSQL schema the queue's tables are in.
	SchemaName() string
	// SetHandOff hands the answer jobs that transactions queue, as each
	// commits, to h, until stop is called.
	SetHandOff(h *sqlstore.HandOff) (stop func())
	// QueueAnswers writes answer jobs to the queue, for any process, from
	// at on (at once when zero).
	QueueAnswers(ctx context.Context, jobs []store.AnswerJob, at time.Time) error
}

// Config is the queue's working side: which workers, which periodic jobs.
type Config struct {
	Workers  *river.Workers
	Periodic []*river.PeriodicJob
	// MaxWorkers bounds jobs run at once by this process (0: 4).
	MaxWorkers int
	Logger     *slog.Logger
	// HandOff, when set, runs the answer jobs this process's own
	// transactions queue, as soon as each commits (sqlstore.HandOff), on
	// HandOffWorkers workers (0: 16), each within HandOffTimeout (0: an
	// hour). A job whose run answers an error (try again later) is written
	// to the queue, to be tried again HandOffRetry later (0: 10 s).
	HandOff        func(context.Context, store.AnswerJob) error
	HandOffWorkers int
	HandOffTimeout time.Duration
	HandOffRetry   time.Duration
}

// DefaultHandOffRetry is how long after a handed-off answer run failed
// (the store unavailable) the queue tries it again, unless Config says
// otherwise.
const DefaultHandOffRetry = 10 * time.Second

// handOffBacklog bounds the jobs waiting for this process's hand-off
// workers; past it, a job is written to the queue.
const handOffBacklog = 1024

// quiet is the queue's logger when Config names none.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Start starts working the job queue on db. On PostgreSQL several
// processes share the queue, and one of them, the leader, runs the
// periodic jobs. It returns the function that stops it, letting running
// jobs finish while ctx lasts.
func Start(ctx context.Context, db DB, j Config) (func(context.Context) error, error) {
	if j.MaxWorkers == 0 {
		j.MaxWorkers = 4
	}
	if j.Logger == nil {
		j.Logger = quiet
	}
	cfg := &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: j.MaxWorkers}},
		Workers:           j.Workers,
		PeriodicJobs:      j.Periodic,
		Logger:            slog.New(demoted{j.Logger.Handler()}),
		Schema:            db.SchemaName(),
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 100 * time.Millisecond,
	}
	var stopQueue func(context.Context) error
	if pool := db.Postgres(); pool != nil {
		c, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), cfg)
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
		c, err := river.NewClient[*sql.Tx](riversqlite.New(db.SQLite()), cfg)
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
	if j.HandOffRetry == 0 {
		j.HandOffRetry = DefaultHandOffRetry
	}
	stopHandOff := startHandOff(ctx, db, j)
	return func(ctx context.Context) error {
		return errors.Join(stopHandOff(ctx), stopQueue(ctx))
	}, nil
}

// startHandOff starts cfg.HandOffWorkers workers running the answer jobs
// db hands off with cfg.HandOff, each within cfg.HandOffTimeout; the
// function it returns stops taking jobs, waits for the running ones while
// ctx lasts, and writes the jobs still waiting to the queue.
func startHandOff(ctx context.Context, db DB, cfg Config) func(context.Context) error {
	jobs := make(chan store.AnswerJob, handOffBacklog)
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
				case j := <-jobs:
					jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.HandOffTimeout)
					err := cfg.HandOff(jctx, j)
					cancel()
					if err != nil {
						// Tried again by the queue.
						toQueue(ctx, db, cfg.Logger, []store.AnswerJob{j}, time.Now().Add(cfg.HandOffRetry))
					}
				}
			}
		}()
	}
	unset := db.SetHandOff(&sqlstore.HandOff{Jobs: jobs})
	return func(stopCtx context.Context) error {
		unset()
		close(quit)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var err error
		select {
		case <-done:
		case <-stopCtx.Done():
			err = stopCtx.Err()
		}
		var left []store.AnswerJob
	drain:
		for {
			select {
			case j := <-jobs:
				left = append(left, j)
			default:
				break drain
			}
		}
		if len(left) > 0 {
			toQueue(stopCtx, db, cfg.Logger, left, time.Time{})
		}
		return err
	}
}

// toQueueWithin bounds writing to the queue the answer jobs the hand-off
// gives back.
const toQueueWithin = 5 * time.Second

// toQueue writes answer jobs the hand-off gives back to the queue, from at
// on, within toQueueWithin of its own whatever ctx has left; jobs it cannot
// write are left to the sweep, which queues an approval again once it has
// waited sweeps.StrandedAfter.
func toQueue(ctx context.Context, db DB, log *slog.Logger, jobs []store.AnswerJob, at time.Time) {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), toQueueWithin)
	defer cancel()
	if err := db.QueueAnswers(qctx, jobs, at); err != nil {
		log.Warn("answer runs not begun were left to the sweep", "jobs", len(jobs), "err", err)
	}
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
