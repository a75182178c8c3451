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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"countersign/migrations"
	"countersign/store"
)

// DB is a store on one database.
type DB struct {
	dialect migrations.Dialect
	pg      *pgxpool.Pool
	lite    *sql.DB
	schema  string // postgres schema, "" for the connection's default
	dir     string // directory of the embedded store

	// Task events: the hub of subscribers, and on PostgreSQL the LISTEN
	// connection that feeds it, started by the first Subscribe.
	hub           hub
	listenOnce    sync.Once
	stopListening context.CancelFunc

	// Insert-only job queue clients, for jobs queued in a transaction.
	pgJobs   *river.Client[pgx.Tx]
	liteJobs *river.Client[*sql.Tx]

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

// OpenPostgres connects to a PostgreSQL database. schema, if not empty, is the
// schema every table lives in (tests use one schema each).
func OpenPostgres(ctx context.Context, url, schema string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("the database URL is not a valid postgres URL: %w", redactURLError(err))
	}
	if schema != "" {
		if !validIdent(schema) {
			return nil, fmt.Errorf("schema %q is not a plain identifier", schema)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
	}
	db := &DB{dialect: migrations.Postgres, schema: schema}
	cfg.ConnConfig.Tracer = &db.trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	db.pg = pool
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if db.pgJobs, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Logger: quietLogger}); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

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
	db := &DB{dialect: migrations.SQLite, lite: lite, dir: dir}
	if err := db.Ping(ctx); err != nil {
		lite.Close()
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lite.Close()
		return nil, err
	}
	if db.liteJobs, err = river.NewClient(riversqlite.New(lite), &river.Config{Logger: quietLogger}); err != nil {
		lite.Close()
		return nil, err
	}
	return db, nil
}

// RoundTrips is how many statements and batches this store has sent to
// PostgreSQL (BEGIN and COMMIT included; the job queue's own polling
// included): each is one wait on the database. 0 on the embedded store.
func (db *DB) RoundTrips() int64 { return db.trips.n.Load() }

// QueueWakeUps is how many of those round trips were the job queue waking
// its workers in every process after an insert (River's NOTIFY, sent at
// most every 100 ms per queue, so whether an action pays for it depends on
// what else was inserted just before).
func (db *DB) QueueWakeUps() int64 { return db.trips.wakeUps.Load() }

// roundTrips counts, as pgx's tracer, each statement and each batch sent.
type roundTrips struct{ n, wakeUps atomic.Int64 }

// queueWakeUp starts the job queue's NOTIFY statement (River names its
// queries in a leading comment).
const queueWakeUp = "-- name: PGNotifyMany "

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	if strings.HasPrefix(d.SQL, queueWakeUp) {
		r.wakeUps.Add(1)
	}
	return ctx
}

func (*roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (*roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (*roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// SQLitePath is the file of the embedded store in dir.
func SQLitePath(dir string) string { return filepath.Join(dir, "countersign.db") }

// Dialect names the database.
func (db *DB) Dialect() string { return string(db.dialect) }

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
	if db.pg != nil {
		db.pg.Close()
		return nil
	}
	return db.lite.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var err error
	if db.pg != nil {
		err = db.pg.Ping(ctx)
	} else {
		err = db.lite.PingContext(ctx)
	}
	return classify(err)
}

// Tx runs fn in one transaction.
func (db *DB) Tx(ctx context.Context, fn func(store.Tx) error) error {
	if db.pg != nil {
		return db.pgTx(ctx, fn)
	}
	ltx, err := db.lite.BeginTx(ctx, nil)
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

// pgTx runs fn in one transaction on PostgreSQL whose BEGIN travels with
// its first statement and whose COMMIT with its last writes: a transaction
// costs no round trip of its own, and one that sent nothing (refused
// before its first statement) costs none at all.
func (db *DB) pgTx(ctx context.Context, fn func(store.Tx) error) error {
	c, err := db.pg.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	// A connection left in a transaction (a ROLLBACK that could not be
	// sent) is destroyed by the pool rather than used again.
	defer c.Release()
	t := newTx(pgQuerier{c}, nil, db)
	t.native = queueTx{c: c, t: t}
	t.pending = []stmt{{sql: "BEGIN"}}
	if err := fn(t); err != nil {
		t.rollback(ctx, c)
		return err
	}
	if len(t.pending) == 1 && t.pending[0].sql == "BEGIN" {
		return nil // it sent nothing: there is nothing to commit
	}
	b, _ := t.batch()
	b.Queue("COMMIT")
	br := c.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for range b.Len() {
		if tag, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		// COMMIT of a transaction an error already aborted answers ROLLBACK.
		err = pgx.ErrTxCommitRollback
	}
	if err != nil {
		t.rollback(ctx, c)
		return classify(err)
	}
	db.handOver(t.handoffs)
	return nil
}

// rollback ends a transaction that will not commit: nothing to send if its
// BEGIN never went out.
func (t *tx) rollback(ctx context.Context, c *pgxpool.Conn) {
	if len(t.pending) > 0 && t.pending[0].sql == "BEGIN" {
		return
	}
	t.pending = nil
	_, _ = c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
}

// queueTx is the transaction as the job queue's inserts take it (a pgx.Tx):
// what the store's own statements left pending goes first.
type queueTx struct {
	c *pgxpool.Conn
	t *tx
}

var _ pgx.Tx = queueTx{}

func (q queueTx) Begin(context.Context) (pgx.Tx, error) {
	return nil, errors.New("store: no nested transactions in the store's own")
}
func (q queueTx) Commit(context.Context) error {
	return errors.New("store: the store commits its own transactions")
}
func (q queueTx) Rollback(context.Context) error {
	return errors.New("store: the store ends its own transactions")
}
func (q queueTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := q.t.flush(ctx); err != nil {
		return 0, err
	}
	return q.c.CopyFrom(ctx, table, cols, src)
}
func (q queueTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := q.t.flush(ctx); err != nil {
		return failedBatch{err}
	}
	return q.c.SendBatch(ctx, b)
}
func (q queueTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }
func (q queueTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := q.t.flush(ctx); err != nil {
		return nil, err
	}
	return q.c.Conn().Prepare(ctx, name, sql)
}
func (q queueTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := q.t.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return q.c.Exec(ctx, sql, args...)
}
func (q queueTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := q.t.flush(ctx); err != nil {
		return nil, err
	}
	return q.c.Query(ctx, sql, args...)
}
func (q queueTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := q.t.flush(ctx); err != nil {
		return errRow{err}
	}
	return q.c.QueryRow(ctx, sql, args...)
}
func (q queueTx) Conn() *pgx.Conn { return q.c.Conn() }

// failedBatch is a batch that could not be sent.
type failedBatch struct{ err error }

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return errRow{f.err} }
func (f failedBatch) Close() error                     { return f.err }
func (f failedBatch) Tx() pgx.Tx                       { return nil }

// run runs fn in t and sends what it left pending.
func run(ctx context.Context, t *tx, fn func(store.Tx) error) error {
	if err := fn(t); err != nil {
		return err
	}
	return t.flush(ctx)
}

// Read runs fn's lookups on PostgreSQL's pool without a transaction: each
// statement takes a connection and commits on its own, which saves the
// BEGIN and COMMIT round trips a lookup would otherwise pay. The embedded
// store, in process, reads in a transaction as Tx does.
func (db *DB) Read(ctx context.Context, fn func(store.Tx) error) error {
	if db.pg == nil {
		return db.Tx(ctx, fn)
	}
	t := newTx(pgQuerier{db.pg}, readOnly{}, db)
	if err := fn(t); err != nil {
		return err
	}
	if len(t.pending) > 0 {
		return errors.New("store: a write in a read")
	}
	return nil
}

// readOnly stands for the driver's transaction in Read, where there is
// none: what needs one (the job queue's inserts) refuses it.
type readOnly struct{}

// tx implements store.Tx on either database.
type tx struct {
	// q is what the store's methods run statements with: it first sends
	// the writes still pending, in the same round trip where it can. raw
	// is the driver's own querier.
	q       querier
	raw     querier
	pending []stmt
	dialect migrations.Dialect
	native  any // pgx.Tx or *sql.Tx, for the job queue's transactional insert (flush first)
	db      *DB
	events  []store.TaskEvent // SQLite: published after commit
	signals []store.StreamSignal
	// handoffs are the answer jobs handed to this process after commit.
	handoffs []store.AnswerJob
}

func newTx(raw querier, native any, db *DB) *tx {
	t := &tx{raw: raw, dialect: db.dialect, native: native, db: db}
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
	n, err := p.execAll(ctx, []stmt{{q, args}})
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
	if err := p.t.flush(ctx); err != nil {
		return nil, err
	}
	return p.t.raw.query(ctx, q, args...)
}

func (p pipelined) queryRow(ctx context.Context, q string, args ...any) row {
	if pq, ok := p.t.raw.(pgQuerier); ok && len(p.t.pending) > 0 {
		// The pending writes, then the read, in one batch; the row is read
		// when it is scanned, which its callers do at once.
		b, n := p.t.batch()
		b.Queue(rebind(q), args...)
		return batchRow{pq.q.SendBatch(ctx, b), n}
	}
	if err := p.t.flush(ctx); err != nil {
		return errRow{err}
	}
	return p.t.raw.queryRow(ctx, q, args...)
}

// batchRow is the last row of a batch whose first n statements are writes.
type batchRow struct {
	br pgx.BatchResults
	n  int
}

func (r batchRow) Scan(dest ...any) error {
	defer r.br.Close()
	if err := execAllOf(r.br, r.n); err != nil {
		return err
	}
	if err := (pgRow{r.br.QueryRow()}).Scan(dest...); err != nil {
		return err
	}
	return classify(r.br.Close())
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

// stmt is one statement of an execAll.
type stmt struct {
	sql  string
	args []any
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type row interface{ Scan(dest ...any) error }

// pgQuerier runs statements in a transaction or on the pool.
type pgQuerier struct {
	q interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
		SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	}
}

func (p pgQuerier) execAll(ctx context.Context, stmts []stmt) ([]int64, error) {
	n := make([]int64, len(stmts))
	switch len(stmts) {
	case 0:
		return n, nil
	case 1:
		var err error
		n[0], err = p.exec(ctx, stmts[0].sql, stmts[0].args...)
		return n, err
	}
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(rebind(s.sql), s.args...)
	}
	br := p.q.SendBatch(ctx, b)
	for i := range stmts {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return n, classify(err)
		}
		n[i] = tag.RowsAffected()
	}
	return n, classify(br.Close())
}

func (p pgQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, rebind(q), args...)
	return tag.RowsAffected(), classify(err)
}

func (p pgQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := p.q.Query(ctx, rebind(q), args...)
	if err != nil {
		return nil, classify(err)
	}
	return pgRows{r}, nil
}

func (p pgQuerier) queryRow(ctx context.Context, q string, args ...any) row {
	return pgRow{p.q.QueryRow(ctx, rebind(q), args...)}
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Err() error { return classify(r.Rows.Err()) }

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error { return classify(r.r.Scan(dest...)) }

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

// batch starts a pgx batch with the writes still pending, and says how
// many it holds.
func (t *tx) batch() (*pgx.Batch, int) {
	b := &pgx.Batch{}
	pending := t.takePending()
	for _, s := range pending {
		b.Queue(rebind(s.sql), s.args...)
	}
	return b, len(pending)
}

// execAllOf reads the results of a batch's first n statements, writes.
func execAllOf(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return classify(err)
		}
	}
	return nil
}

// execThenScan runs writes in order and then one read, scanned into dest
// (ErrNotFound when it has no row): on PostgreSQL in one round trip.
func (t *tx) execThenScan(ctx context.Context, stmts []stmt, q stmt, dest ...any) error {
	pq, ok := t.raw.(pgQuerier)
	if !ok {
		if _, err := t.q.execAll(ctx, stmts); err != nil {
			return err
		}
		return t.q.queryRow(ctx, q.sql, q.args...).Scan(dest...)
	}
	stmts = append(t.takePending(), stmts...)
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(rebind(s.sql), s.args...)
	}
	b.Queue(rebind(q.sql), q.args...)
	br := pq.q.SendBatch(ctx, b)
	defer br.Close()
	for range stmts {
		if _, err := br.Exec(); err != nil {
			return classify(err)
		}
	}
	if err := (pgRow{br.QueryRow()}).Scan(dest...); err != nil {
		return err
	}
	return classify(br.Close())
}

func (l liteQuerier) execAll(ctx context.Context, stmts []stmt) ([]int64, error) {
	n := make([]int64, len(stmts))
	for i, s := range stmts {
		var err error
		if n[i], err = l.exec(ctx, s.sql, s.args...); err != nil {
			return n, err
		}
	}
	return n, nil
}

type liteRows struct{ *sql.Rows }

func (r liteRows) Close()     { _ = r.Rows.Close() }
func (r liteRows) Err() error { return classify(r.Rows.Err()) }

type liteRow struct{ r *sql.Row }

func (r liteRow) Scan(dest ...any) error { return classify(r.r.Scan(dest...)) }

// rebind numbers "?" placeholders for PostgreSQL. The queries hold no "?"
// anywhere else.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// classify maps driver errors onto the store's errors.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows), errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505":
			return fmt.Errorf("%w: %s", store.ErrConflict, pgErr.ConstraintName)
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"), pgErr.Code == "53300":
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		return err
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		// Extended result codes are on (the driver turns them on).
		switch code := liteErr.Code(); {
		case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE, code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", store.ErrConflict, err)
		case code&0xff == sqlite3.SQLITE_BUSY:
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connectErr) || errors.Is(err, syscall.ECONNREFUSED) || pgconn.Timeout(err) {
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
