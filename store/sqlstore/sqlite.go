package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	// registers the "sqlite" database/sql driver
	"countersign"
	"countersign/migrations"
	"countersign/store"
)

// The embedded store's side: one SQLite file in WAL mode, one connection
// (SQLite writes one transaction at a time), events published in this
// process after commit (it is the only one), and the job queue's inserts on
// the same *sql.Tx.

// OpenSQLite opens (creating if needed) the embedded store in dir.
func OpenSQLite(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data directory: %w", err)
	}
	path := SQLitePath(dir)
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(FULL)&_pragma=foreign_keys(ON)"
	lite, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// SQLite writes one transaction at a time; one connection makes that
	// explicit and keeps the job queue (which shares it) free of SQLITE_BUSY.
	lite.SetMaxOpenConns(1)
	l := &liteEngine{db: lite}
	db := &DB{e: l, lite: lite, dir: dir}
	if err := db.Ping(ctx); err != nil {
		lite.Close()
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lite.Close()
		return nil, err
	}
	if l.jobs, err = river.NewClient(riversqlite.New(lite), &river.Config{Logger: quietLogger}); err != nil {
		lite.Close()
		return nil, err
	}
	return db, nil
}

// liteEngine is the engine of the embedded store.
type liteEngine struct {
	db *sql.DB
	// jobs is an insert-only client of the job queue, for the jobs a
	// transaction queues.
	jobs *river.Client[*sql.Tx]
}

func (*liteEngine) dialect() migrations.Dialect { return migrations.SQLite }

func (l *liteEngine) ping(ctx context.Context) error { return l.db.PingContext(ctx) }

func (l *liteEngine) close() error { return l.db.Close() }

// grouping is none: SQLite runs every transaction alone (store.Grouped).
func (*liteEngine) grouping() store.Grouping { return store.Grouping{} }

// tx runs fn in one transaction; what it tells subscribers is published
// once it commits.
func (l *liteEngine) tx(ctx context.Context, db *DB, fn func(store.Tx) error) error {
	ltx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	t := newTx(liteQuerier{ltx}, ltx, db)
	if err := run(ctx, t, fn); err != nil {
		_ = ltx.Rollback()
		return err
	}
	if err := classify(ltx.Commit()); err != nil {
		return err
	}
	for _, ev := range t.events {
		db.hub.publish(ev)
	}
	for _, sig := range t.signals {
		db.hub.signal(sig)
	}
	db.handOver(t.handoffs)
	return nil
}

// read reads in a transaction, as tx does: in process it costs nothing.
func (l *liteEngine) read(ctx context.Context, db *DB, fn func(store.Tx) error) error {
	return l.tx(ctx, db, fn)
}

// with is s and writes one after another.
func (*liteEngine) with(s stmt, writes []stmt) []stmt { return append([]stmt{s}, writes...) }

// forUpdate is empty: a writing transaction holds the whole database
// (_txlock=immediate).
func (*liteEngine) forUpdate() string { return "" }

func (*liteEngine) jsonText(col, key string) string {
	return "json_extract(" + col + ", '$." + key + "')"
}

func (*liteEngine) tableExists() string {
	return "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
}

// lockOwner takes nothing: a writing transaction holds the whole database.
func (*liteEngine) lockOwner(string) (stmt, bool) { return stmt{}, false }

func (*liteEngine) migrationLock() string { return "" }

func (l *liteEngine) jobMigrator() (jobMigrator, error) {
	return rivermigrate.New(riversqlite.New(l.db), &rivermigrate.Config{Logger: quietLogger})
}

func (l *liteEngine) insertJobs(ctx context.Context, t *tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	ltx, ok := t.native.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("store: a job is queued in a transaction, not in %T", t.native)
	}
	res, err := l.jobs.InsertManyTx(ctx, ltx, params)
	return res, classify(err)
}

// taskEvents reads whom to tell now and publishes after commit.
func (*liteEngine) taskEvents(ctx context.Context, t *tx, id string, state countersign.State, owner bool) error {
	accounts, err := t.TaskApprovers(ctx, id)
	if err != nil {
		return err
	}
	if owner {
		k, err := t.Task(ctx, id)
		if err != nil {
			return err
		}
		accounts = append([]string{k.Owner}, accounts...)
	}
	for _, a := range accounts {
		t.events = append(t.events, store.TaskEvent{Owner: a, TaskID: id, State: state})
	}
	return nil
}

func (*liteEngine) signal(_ context.Context, t *tx, sig store.StreamSignal) error {
	t.signals = append(t.signals, sig)
	return nil
}

// signalNow reaches this process's hub alone: it is the only process.
func (*liteEngine) signalNow(_ context.Context, db *DB, sig store.StreamSignal) error {
	db.hub.signal(sig)
	return nil
}

// listen has nothing to start: every event is this process's own.
func (*liteEngine) listen(*DB) {}

// refund removes the ledger entry, then returns its amount, refusing a
// balance that would pass the largest int64.
func (*liteEngine) refund(ctx context.Context, t *tx, account, run string) (int64, error) {
	var amount int64
	err := t.q.queryRow(ctx, "DELETE FROM ledger WHERE account = ? AND run = ? AND amount < 0 RETURNING amount", account, run).Scan(&amount)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := t.q.exec(ctx, "UPDATE agents SET balance = balance - ? WHERE account = ? AND balance <= ?", amount, account, math.MaxInt64+amount)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("the balance would pass %d µUSD", int64(math.MaxInt64))
	}
	return -amount, nil
}

// SQLitePath is the file of the embedded store in dir.
func SQLitePath(dir string) string { return filepath.Join(dir, "countersign.db") }

type liteQuerier struct{ q *sql.Tx }

func (l liteQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := l.q.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, classify(err)
	}
	return res.RowsAffected()
}

func (l liteQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := l.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(err)
	}
	return liteRows{r}, nil
}

func (l liteQuerier) queryRow(ctx context.Context, q string, args ...any) row {
	return liteRow{l.q.QueryRowContext(ctx, q, args...)}
}

// send runs each statement as its result is read: in process a round trip
// costs nothing.
func (l liteQuerier) send(ctx context.Context, stmts []stmt) results {
	return &liteResults{ctx: ctx, q: l, unread: stmts}
}

type liteResults struct {
	ctx context.Context
	q   liteQuerier
	unread
}

func (r *liteResults) exec() error {
	s := r.next()
	n, err := r.q.run(r.ctx, s)
	return liteChecked(s, n, err)
}

// run runs a statement for what it changed: a checked read's count is 1
// for a row found and 0 for none.
func (l liteQuerier) run(ctx context.Context, s stmt) (int64, error) {
	if !s.held {
		return l.exec(ctx, s.sql, s.args...)
	}
	var found *int64
	if err := l.queryRow(ctx, s.sql, s.args...).Scan(&found); err != nil {
		return 0, err
	}
	if found == nil {
		return 0, nil
	}
	return 1, nil
}

// liteChecked is the error of statement s, which changed n rows: its
// check's own for a checked write that changed none or broke a unique
// key. In process the check costs nothing, so it is made at once.
func liteChecked(s stmt, n int64, err error) error {
	if s.orElse != nil && (err == nil && n == 0 || errors.Is(err, store.ErrConflict)) {
		return s.orElse
	}
	return err
}

func (r *liteResults) row() row {
	s := r.next()
	return r.q.queryRow(r.ctx, s.sql, s.args...)
}

func (r *liteResults) rows() (rows, error) {
	s := r.next()
	return r.q.query(r.ctx, s.sql, s.args...)
}

func (r *liteResults) close() error { return nil }

func (l liteQuerier) execAll(ctx context.Context, stmts []stmt) ([]int64, error) {
	n := make([]int64, len(stmts))
	for i, s := range stmts {
		var err error
		n[i], err = l.run(ctx, s)
		if err = liteChecked(s, n[i], err); err != nil {
			return n, err
		}
	}
	return n, nil
}

// classifySQLite classifies SQLite's own errors, by their extended result
// codes (the driver turns them on).
func classifySQLite(err error) (error, bool) {
	var liteErr *sqlite.Error
	if !errors.As(err, &liteErr) {
		return nil, false
	}
	switch code := liteErr.Code(); {
	case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE, code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %v", store.ErrConflict, err), true
	case code&0xff == sqlite3.SQLITE_BUSY:
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err), true
	}
	return err, true
}

type liteRows struct{ *sql.Rows }

func (r liteRows) Close()     { _ = r.Rows.Close() }
func (r liteRows) Err() error { return classify(r.Rows.Err()) }

type liteRow struct{ r *sql.Row }

func (r liteRow) Scan(dest ...any) error { return classify(r.r.Scan(dest...)) }
