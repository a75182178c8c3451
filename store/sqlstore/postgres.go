package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgxlisten"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"countersign"
	"countersign/migrations"
	"countersign/store"
)

// PostgreSQL's side of the store: the pool, transactions whose BEGIN and
// COMMIT travel with their statements, "?" numbered as $n, events through
// LISTEN/NOTIFY (so every process on the database hears every change), and
// the job queue's inserts on the store's own transaction.

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
	db := &DB{schema: schema}
	cfg.ConnConfig.Tracer = &db.trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p := &pgEngine{pool: pool, schema: schema}
	db.e, db.pg = p, pool
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if p.jobs, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Logger: quietLogger}); err != nil {
		pool.Close()
		return nil, err
	}
	p.lanes = lanesFor(p, db, pool)
	return db, nil
}

// pgEngine is the engine on PostgreSQL.
type pgEngine struct {
	pool   *pgxpool.Pool
	schema string
	// jobs is an insert-only client of the job queue, for the jobs a
	// transaction queues.
	jobs *river.Client[pgx.Tx]
	// lanes run grouped transactions (store.Grouped).
	lanes *lanes
}

func (*pgEngine) dialect() migrations.Dialect { return migrations.Postgres }

func (p *pgEngine) ping(ctx context.Context) error { return p.pool.Ping(ctx) }

func (p *pgEngine) close() error {
	if p.lanes != nil {
		p.lanes.close()
	}
	p.pool.Close()
	return nil
}

func (*pgEngine) forUpdate() string { return " FOR UPDATE" }

func (*pgEngine) jsonText(col, key string) string { return col + "->>'" + key + "'" }

func (*pgEngine) tableExists() string {
	return "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
}

// ownerLocks is the class of PostgreSQL's advisory locks that are owners'
// locks; the other key is a hash of the schema and the owner. (Locks of two
// keys never meet those of one, which the migrations and the job queue
// take.)
const ownerLocks int32 = 0x6f776e72 // "ownr"

// lockOwner takes a transaction-level advisory lock: held in the server's
// memory until the transaction ends, it writes no row and no WAL. (An
// owner's row, upserted, made a new version of the row at every task
// opened: 0.23 ms a call in the bench's P1, the most costly statement of
// an open.) Two owners whose hashes meet wait for each other, and nothing
// more.
func (p *pgEngine) lockOwner(owner string) (stmt, bool) {
	h := fnv.New32a()
	h.Write([]byte(p.schema))
	h.Write([]byte{0})
	h.Write([]byte(owner))
	return stmt{sql: "SELECT pg_advisory_xact_lock(?, ?)", args: []any{ownerLocks, int32(h.Sum32())}}, true
}

func (*pgEngine) migrationLock() string { return "SELECT pg_advisory_xact_lock(7223372036854775001)" }

func (p *pgEngine) jobMigrator() (jobMigrator, error) {
	return rivermigrate.New(riverpgxv5.New(p.pool), &rivermigrate.Config{Logger: quietLogger, Schema: p.schema})
}

// insertJobs queues on the store's own transaction: queueTx sends what the
// transaction left pending first.
func (p *pgEngine) insertJobs(ctx context.Context, t *tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	q, ok := t.native.(queueTx)
	if !ok {
		return nil, errors.New("store: a job is queued in a transaction, not in a read")
	}
	res, err := p.jobs.InsertManyTx(ctx, q, params)
	return res, classify(err)
}

// taskEvents are NOTIFYs made by the database from the task's rows, sent
// with the transaction's next round trip.
func (*pgEngine) taskEvents(_ context.Context, t *tx, id string, state countersign.State, owner bool) error {
	if owner {
		t.later(stmt{sql: "SELECT pg_notify(CAST(? AS TEXT), owner || ' ' || id || ' ' || CAST(? AS TEXT)) FROM tasks WHERE id = ?",
			args: []any{t.db.channel(), string(state), id}})
	}
	t.later(stmt{sql: "SELECT pg_notify(CAST(? AS TEXT), account || ' ' || CAST(? AS TEXT) || ' ' || CAST(? AS TEXT)) FROM task_approvers WHERE task_id = ?",
		args: []any{t.db.channel(), id, string(state), id}})
	return nil
}

func (*pgEngine) signal(ctx context.Context, t *tx, sig store.StreamSignal) error {
	_, err := t.q.exec(ctx, "SELECT pg_notify(?, ?)", t.db.channel(), signalPayload(sig))
	return err
}

func (p *pgEngine) signalNow(ctx context.Context, db *DB, sig store.StreamSignal) error {
	_, err := p.pool.Exec(ctx, "SELECT pg_notify($1, $2)", db.channel(), signalPayload(sig))
	return err
}

// refund is the ledger entry's removal and the balance's return in one
// statement.
func (*pgEngine) refund(ctx context.Context, t *tx, account, run string) (int64, error) {
	var amount int64
	err := t.q.queryRow(ctx, `WITH gone AS (DELETE FROM ledger WHERE account = ? AND run = ? AND amount < 0 RETURNING amount)
		UPDATE agents SET balance = agents.balance - gone.amount FROM gone WHERE agents.account = ? RETURNING -gone.amount`,
		account, run, account).Scan(&amount)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return amount, err
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

// Statements is how many statements this store has sent to PostgreSQL,
// each on its own or in a batch (BEGIN and COMMIT included; the job
// queue's own included). 0 on the embedded store.
func (db *DB) Statements() int64 { return db.trips.stmts.Load() }

// roundTrips counts, as pgx's tracer, each statement and each batch sent,
// and the statements in all.
type roundTrips struct{ n, wakeUps, stmts atomic.Int64 }

// queueWakeUp starts the job queue's NOTIFY statement (River names its
// queries in a leading comment).
const queueWakeUp = "-- name: PGNotifyMany "

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	r.stmts.Add(1)
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

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	r.stmts.Add(1)
}
func (*roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// tx runs fn in one transaction whose BEGIN travels with
// its first statement and whose COMMIT with its last writes: a transaction
// costs no round trip of its own, and one that sent nothing (refused
// before its first statement) costs none at all.
func (p *pgEngine) tx(ctx context.Context, db *DB, fn func(store.Tx) error) error {
	if key, ok := store.GroupOf(ctx); ok && p.lanes != nil {
		return p.grouped(ctx, db, key, fn)
	}
	c, err := p.pool.Acquire(ctx)
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
	return p.commit(ctx, db, c, t)
}

// commit commits t on c, with the events told in it and the answer jobs
// it hands over.
func (p *pgEngine) commit(ctx context.Context, db *DB, c *pgxpool.Conn, t *tx) error {
	if len(t.pending) == 1 && t.pending[0].sql == "BEGIN" && len(t.events) == 0 {
		// It sent nothing: there is nothing to commit (an answer job
		// queued again by a sweep is all it may have to hand over).
		db.handOver(t.handoffs)
		return nil
	}
	// The events told in it go in one NOTIFY with the COMMIT, delivered
	// at commit to every process's LISTEN.
	t.later(notices(db.channel(), t.events)...)
	pending := t.takePending()
	stmts := append(pending, stmt{sql: "COMMIT"})
	// The answer jobs handed over at commit take what their runs read of
	// their tasks, read right after the COMMIT, in its round trip.
	for _, j := range t.handoffs {
		stmts = append(stmts, runInputsStmts(j.TaskID, "")...)
	}
	r := pgQuerier{c}.send(ctx, stmts).(*pgResults)
	var err error
	for range pending {
		if err = r.exec(); err != nil {
			break
		}
	}
	var tag pgconn.CommandTag
	if err == nil {
		r.next()
		tag, err = r.br.Exec()
	}
	if err == nil && tag.String() != "COMMIT" {
		// COMMIT of a transaction an error already aborted answers ROLLBACK.
		err = pgx.ErrTxCommitRollback
	}
	if err != nil {
		_ = r.close()
		t.rollback(ctx, c)
		return classify(err)
	}
	// Committed: the reads after it decide nothing of the transaction. A
	// job whose read fails is handed over without it, and its run reads.
	for i := range t.handoffs {
		in, err := scanRunInputs(r)
		if err != nil {
			break
		}
		if len(in.Sealed)+len(in.Approval) <= handedInputsMax {
			t.handoffs[i].Inputs = &in
		}
	}
	_ = r.close()
	db.handOver(t.handoffs)
	return nil
}

// read runs fn's lookups on the pool without a transaction.
func (p *pgEngine) read(_ context.Context, db *DB, fn func(store.Tx) error) error {
	t := newTx(pgQuerier{p.pool}, readOnly{}, db)
	if err := fn(t); err != nil {
		return err
	}
	if len(t.pending) > 0 || len(t.events) > 0 {
		return errors.New("store: a write in a read")
	}
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

// queueTx is the store's transaction as the job queue's inserts take it
// (River's driver takes a pgx.Tx): its statements run on the transaction's
// connection, after what the transaction left pending. It is not pgx's own
// transaction because pgx's sends BEGIN on its own, a round trip the
// store's BEGIN (pipelined with the first statement) does not pay; the
// queue never begins, commits or ends it.
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
		tag, err := p.q.Exec(ctx, pgSQL(stmts[0]), stmts[0].allArgs()...)
		n[0] = tag.RowsAffected()
		return n, pgFailed(stmts[0], err)
	}
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(pgSQL(s), s.allArgs()...)
	}
	br := p.q.SendBatch(ctx, b)
	for i, s := range stmts {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return n, pgFailed(s, err)
		}
		n[i] = tag.RowsAffected()
	}
	return n, classify(br.Close())
}

// pgSQL is a statement as PostgreSQL runs it: a checked write made a
// query that divides by the number of rows it changed, so that a write
// changing none fails (division_by_zero) and aborts the transaction, and
// the COMMIT sent after it answers ROLLBACK. A checked read divides so
// already.
//
// The writes that go with a checked write are its statement's other
// parts: data-modifying WITH queries, each run once, to completion, in the
// statement's snapshot, the whole failing if the check does (they are the
// move's event and drops, which touch other tables than the move's row).
func pgSQL(s stmt) string {
	if s.orElse == nil || s.held {
		return rebind(s.sql)
	}
	q := "WITH w AS (" + s.sql + " RETURNING 1)"
	for i, w := range s.with {
		q += ", w" + strconv.Itoa(i+1) + " AS (" + w.sql + ")"
	}
	return rebind(q + " SELECT 1 / COUNT(*) FROM w")
}

// with puts writes in the statement of the checked write s: one statement
// to parse, plan and run on PostgreSQL, one after another on SQLite. The
// writes must not break a unique key, which pgFailed would take for the
// check's own failure, nor touch the rows s changes.
func (*pgEngine) with(s stmt, writes []stmt) []stmt {
	for _, w := range writes {
		if w.orElse != nil || len(w.with) > 0 {
			return append([]stmt{s}, writes...)
		}
	}
	s.with = append(s.with, writes...)
	return []stmt{s}
}

// pgFailed is the error of statement s: its check's own for a checked
// write that changed no row or broke a unique key, else what classify
// makes of it.
func pgFailed(s stmt, err error) error {
	var pgErr *pgconn.PgError
	if s.orElse != nil && errors.As(err, &pgErr) && (pgErr.Code == "22012" || pgErr.Code == "23505") {
		return s.orElse
	}
	return classify(err)
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

func (p pgQuerier) send(ctx context.Context, stmts []stmt) results {
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(pgSQL(s), s.allArgs()...)
	}
	return &pgResults{br: p.q.SendBatch(ctx, b), unread: stmts}
}

// pgResults are a batch's results.
type pgResults struct {
	br pgx.BatchResults
	unread
}

func (r *pgResults) exec() error {
	s := r.next()
	_, err := r.br.Exec()
	if err != nil {
		return pgFailed(s, err)
	}
	return nil
}

func (r *pgResults) row() row {
	r.next()
	return pgRow{r.br.QueryRow()}
}

func (r *pgResults) rows() (rows, error) {
	r.next()
	q, err := r.br.Query()
	if err != nil {
		return nil, classify(err)
	}
	return pgRows{q}, nil
}

func (r *pgResults) close() error { return classify(r.br.Close()) }

func (p pgQuerier) queryRow(ctx context.Context, q string, args ...any) row {
	return pgRow{p.q.QueryRow(ctx, rebind(q), args...)}
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Err() error { return classify(r.Rows.Err()) }

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error { return classify(r.r.Scan(dest...)) }

// classifyPostgres classifies PostgreSQL's own errors, by their SQLSTATE.
func classifyPostgres(err error) (error, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505":
			return fmt.Errorf("%w: %s", store.ErrConflict, pgErr.ConstraintName), true
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"), pgErr.Code == "53300":
			return fmt.Errorf("%w: %v", store.ErrUnavailable, err), true
		}
		return err, true
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %v", store.ErrUnavailable, err), true
	}
	return nil, false
}

// rebind numbers "?" placeholders for PostgreSQL. The queries hold no "?"
// anywhere else. The statements are the store's own, a few hundred
// shapes: each is numbered once and kept (up to rebindKept of them; a
// statement whose shape varies, such as an IN list, is numbered each time
// once they are kept).
func rebind(q string) string {
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := numbered(q)
	if reboundN.Load() < rebindKept {
		if _, had := rebound.LoadOrStore(q, r); !had {
			reboundN.Add(1)
		}
	}
	return r
}

const rebindKept = 4096

var (
	rebound  sync.Map // statement → numbered
	reboundN atomic.Int64
)

// numbered is rebind's numbering.
func numbered(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + len(q)/8)
	for n := 1; ; n++ {
		before, after, found := strings.Cut(q, "?")
		b.WriteString(before)
		if !found {
			return b.String()
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		q = after
	}
}

// channel is the NOTIFY channel of this store's schema.
func (db *DB) channel() string {
	if db.schema == "" {
		return "countersign_tasks"
	}
	return "countersign_tasks_" + db.schema
}

// listen starts the LISTEN connection that feeds the hub, until Close. It
// waits (a little) until LISTEN is in place, so that changes made right after
// the first Subscribe are not missed.
func (p *pgEngine) listen(db *DB) {
	ctx, cancel := context.WithCancel(context.Background())
	db.stopListening = cancel
	h := &listenHandler{hub: &db.hub, ready: make(chan struct{})}
	l := &pgxlisten.Listener{
		Connect: func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, p.pool.Config().ConnConfig.Copy())
		},
		ReconnectDelay: time.Second,
	}
	l.Handle(db.channel(), h)
	go func() { _ = l.Listen(ctx) }() // returns when ctx ends; reconnects on its own
	select {
	case <-h.ready:
	case <-time.After(5 * time.Second):
	}
}

// listenHandler publishes notifications; its backlog hook, called right
// after each LISTEN, tells listen the channel is in place.
type listenHandler struct {
	hub   *hub
	ready chan struct{}
	once  sync.Once
}

func (h *listenHandler) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	sig, evs, ok := parseNotification(n.Payload)
	if ok {
		h.hub.signal(sig)
	}
	for _, ev := range evs {
		h.hub.publish(ev)
	}
	return nil
}

func (h *listenHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.once.Do(func() { close(h.ready) })
	return nil
}
