// Package sqlstore implements the store on PostgreSQL (through pgx) and on an
// embedded SQLite file (modernc.org/sqlite, pure Go). Every query of the
// service is in this package, written once in the SQL both databases share
// with "?" placeholders; the PostgreSQL side numbers them.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
)

// DB is a store on one database.
type DB struct {
	e      engine // what the database does its own way
	pg     *pgxpool.Pool
	lite   *sql.DB
	schema string // postgres schema, "" for the connection's default
	dir    string // directory of the embedded store

	// Task events: the hub of subscribers, and on PostgreSQL the LISTEN
	// connection that feeds it, started by the first Subscribe.
	hub           hub
	listenOnce    sync.Once
	stopListening context.CancelFunc

	// trips counts the round trips to PostgreSQL.
	trips roundTrips

	// handoff, while this process works answer jobs itself (SetHandOff),
	// takes the answer jobs its transactions queue.
	handoff atomic.Pointer[HandOff]
}

var (
	_ store.Store           = (*DB)(nil)
	_ store.Subscriber      = (*DB)(nil)
	_ store.StreamSignaller = (*DB)(nil)
)

// Dialect names the database.
func (db *DB) Dialect() string { return string(db.e.dialect()) }

// Postgres returns the pool of a PostgreSQL store (nil for SQLite), for the
// job queue and LISTEN/NOTIFY, which need the native driver.
func (db *DB) Postgres() *pgxpool.Pool { return db.pg }

// SQLite returns the database of an embedded store (nil for PostgreSQL).
func (db *DB) SQLite() *sql.DB { return db.lite }

// Dir is the directory of an embedded store ("" for PostgreSQL).
func (db *DB) Dir() string { return db.dir }

// SchemaName is the PostgreSQL schema the store was opened on ("" = default).
func (db *DB) SchemaName() string { return db.schema }

// Close releases the connections and ends every subscription.
func (db *DB) Close() error {
	if db.stopListening != nil {
		db.stopListening()
	}
	db.hub.closeAll()
	return db.e.close()
}

// Grouping is what this store's grouped transactions (store.Grouped)
// came to so far. Zeros on SQLite, which runs every transaction alone.
func (db *DB) Grouping() store.Grouping { return db.e.grouping() }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return classify(db.e.ping(ctx)) }

// Tx runs fn in one transaction.
func (db *DB) Tx(ctx context.Context, fn func(store.Tx) error) error { return db.e.tx(ctx, db, fn) }

// run runs fn in t and sends what it left pending.
func run(ctx context.Context, t *tx, fn func(store.Tx) error) error {
	if err := fn(t); err != nil {
		return err
	}
	return t.flush(ctx)
}

// Read runs fn's lookups: on PostgreSQL without a transaction, each
// statement taking a connection and committing on its own, which saves the
// BEGIN and COMMIT round trips a lookup would otherwise pay; the embedded
// store, in process, reads in a transaction as Tx does.
func (db *DB) Read(ctx context.Context, fn func(store.Tx) error) error { return db.e.read(ctx, db, fn) }

// readOnly stands for the driver's transaction in Read, where there is
// none: what needs one (the job queue's inserts) refuses it.
type readOnly struct{}

// tx implements store.Tx on either database.
type tx struct {
	// q is what the store's methods run statements with: it first sends
	// the writes still pending, in the same round trip where it can. raw
	// is the driver's own querier.
	q       querier
	raw     driver
	pending []stmt
	// native is the driver's transaction, as the job queue's inserts take
	// it (readOnly in a read).
	native  any
	db      *DB
	events  []store.TaskEvent // told once it commits (tell)
	signals []store.StreamSignal
	// handoffs are the answer jobs handed to this process after commit.
	handoffs []store.AnswerJob
	// gated is the owner the last OwnerGate read.
	gated *gatedOwner
	// locked is the task the last RunInputs or LockTask read and locked.
	locked *lockedTask
}

func newTx(raw driver, native any, db *DB) *tx {
	t := &tx{raw: raw, native: native, db: db}
	t.q = pipelined{t}
	return t
}

// later keeps writes whose results nobody waits for (a move's event, its
// drops, its notification) to go out with the transaction's next round
// trip: the next statement, the next batch, or the commit. An error in one
// of them is the error of that round trip, and the transaction is rolled
// back as for any other.
func (t *tx) later(stmts ...stmt) { t.pending = append(t.pending, stmts...) }

// flush sends the writes still pending.
func (t *tx) flush(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	stmts := t.pending
	t.pending = nil
	_, err := t.raw.execAll(ctx, stmts)
	return err
}

// takePending returns the writes still pending, for a batch to send first.
func (t *tx) takePending() []stmt {
	stmts := t.pending
	t.pending = nil
	return stmts
}

// pipelined is a tx's querier: a statement or batch goes out with the
// writes still pending before it, in one round trip on PostgreSQL.
type pipelined struct{ t *tx }

func (p pipelined) exec(ctx context.Context, q string, args ...any) (int64, error) {
	if len(p.t.pending) == 0 {
		return p.t.raw.exec(ctx, q, args...)
	}
	n, err := p.execAll(ctx, []stmt{{sql: q, args: args}})
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

func (p pipelined) execAll(ctx context.Context, stmts []stmt) ([]int64, error) {
	pending := p.t.takePending()
	n, err := p.t.raw.execAll(ctx, append(pending, stmts...))
	if len(n) < len(pending) {
		return nil, err
	}
	return n[len(pending):], err
}

func (p pipelined) query(ctx context.Context, q string, args ...any) (rows, error) {
	if len(p.t.pending) == 0 {
		return p.t.raw.query(ctx, q, args...)
	}
	r, err := p.t.send(ctx, stmt{sql: q, args: args})
	if err != nil {
		return nil, err
	}
	rs, err := r.rows()
	if err != nil {
		_ = r.close()
		return nil, err
	}
	return &lastRows{rows: rs, r: r}, nil
}

// lastRows are the rows of a batch's last statement, a read; the batch
// ends when they are closed.
type lastRows struct {
	rows
	r   results
	err error
}

func (l *lastRows) Close() {
	if l.r == nil {
		return
	}
	l.rows.Close()
	l.err = l.r.close()
	l.r = nil
}

func (l *lastRows) Err() error {
	if err := l.rows.Err(); err != nil {
		return err
	}
	return l.err
}

func (p pipelined) queryRow(ctx context.Context, q string, args ...any) row {
	if len(p.t.pending) == 0 {
		return p.t.raw.queryRow(ctx, q, args...)
	}
	r, err := p.t.send(ctx, stmt{sql: q, args: args})
	if err != nil {
		return errRow{err}
	}
	return lastRow{r}
}

// lastRow is the row of a batch's last statement, a read; the batch ends
// when it is scanned, which its callers do at once.
type lastRow struct{ r results }

func (l lastRow) Scan(dest ...any) error {
	err := l.r.row().Scan(dest...)
	if cerr := l.r.close(); err == nil {
		err = cerr
	}
	return err
}

// errRow is a row whose reading failed before it was asked for.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// querier is the little both drivers share.
type querier interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (rows, error)
	queryRow(ctx context.Context, q string, args ...any) row
	// execAll runs writes in order, on PostgreSQL in one round trip, and
	// says how many rows each changed.
	execAll(ctx context.Context, stmts []stmt) ([]int64, error)
}

// driver is a querier of the database's own driver, which can also send
// statements together.
type driver interface {
	querier
	// send sends statements together, on PostgreSQL in one round trip;
	// their results are read in order.
	send(ctx context.Context, stmts []stmt) results
}

// results are the answers of statements sent together, read in the order
// sent: a write's with exec, a read's with row or rows (closed before the
// next is read). close ends them.
type results interface {
	exec() error
	row() row
	rows() (rows, error)
	close() error
}

// unread are the statements of a batch whose results are not read yet, in
// the order sent.
type unread []stmt

// next is the statement whose result is read next.
func (u *unread) next() stmt {
	s := (*u)[0]
	*u = (*u)[1:]
	return s
}

// send sends the writes still pending and then stmts, together; what is
// returned are stmts' results.
func (t *tx) send(ctx context.Context, stmts ...stmt) (results, error) {
	pending := t.takePending()
	r := t.raw.send(ctx, append(pending, stmts...))
	for range pending {
		if err := r.exec(); err != nil {
			_ = r.close()
			return nil, err
		}
	}
	return r, nil
}

// stmt is one statement of an execAll.
type stmt struct {
	sql  string
	args []any
	// orElse makes the statement a checked write (made by checked): one
	// that must change a row, and fails the transaction with orElse if it
	// changes none or breaks a unique key.
	orElse error
	// held makes a checked statement a read that locks (made by held).
	held bool
	// with are writes whose results nobody reads that go in the same
	// statement as this checked write, on PostgreSQL (with).
	with []stmt
}

// args are the statement's arguments, with those of its with after its own.
func (s stmt) allArgs() []any {
	if len(s.with) == 0 {
		return s.args
	}
	args := append([]any(nil), s.args...)
	for _, w := range s.with {
		args = append(args, w.args...)
	}
	return args
}

// held is a checked read: sql, a query of the rows it locks, must find
// one, or the transaction fails with orElse, as a checked write that
// changed none. It counts what it found as 1 / COUNT(*), which fails on
// PostgreSQL (division_by_zero, aborting the transaction) and is NULL on
// SQLite, whose check is made at once.
func held(orElse error, sql string, args ...any) stmt {
	return stmt{sql: "SELECT 1 / COUNT(*) FROM (" + sql + ") AS held", args: args, orElse: orElse, held: true}
}

// checked is a write that must change a row: if it changes none, or breaks
// a unique key, the transaction fails with orElse. The check is the
// database's own (on PostgreSQL the failed check aborts the transaction),
// so the write can be kept for later and travel with the COMMIT: the caller
// learns of a failure from the transaction's next round trip, at the latest
// its commit, and nothing of the transaction is kept. sql is an INSERT,
// UPDATE or DELETE without RETURNING.
func checked(orElse error, sql string, args ...any) stmt {
	return stmt{sql: sql, args: args, orElse: orElse}
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type row interface{ Scan(dest ...any) error }

// execThenScan runs writes in order and then one read, scanned into dest
// (ErrNotFound when it has no row): on PostgreSQL in one round trip.
func (t *tx) execThenScan(ctx context.Context, stmts []stmt, q stmt, dest ...any) error {
	r, err := t.send(ctx, append(stmts, q)...)
	if err != nil {
		return err
	}
	for range stmts {
		if err := r.exec(); err != nil {
			_ = r.close()
			return err
		}
	}
	return lastRow{r}.Scan(dest...)
}

// classify maps driver errors onto the store's errors: not found, a
// conflict (a unique key), unavailable (the database out of reach or busy).
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows), errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	}
	if c, ok := classifyPostgres(err); ok {
		return c
	}
	if c, ok := classifySQLite(err); ok {
		return c
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
	}
	return err
}

// redactURLError keeps a password out of a URL parse error: the driver's
// message may quote the URL.
func redactURLError(error) error {
	return errors.New("expected postgres://user[:password]@host[:port]/database[?options]")
}

func validIdent(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
