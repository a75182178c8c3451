package sqlstore

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"countersign"
	"countersign/migrations"
	"countersign/store"
)

// engine is everything the two databases do differently. The rest of the
// package is written once, in the SQL both share; what differs is here, and
// each database's side is one file: postgres.go (pgEngine) and sqlite.go
// (liteEngine).
type engine interface {
	dialect() migrations.Dialect

	// tx runs fn in one transaction; read runs fn's lookups, on PostgreSQL
	// without one.
	tx(ctx context.Context, db *DB, fn func(store.Tx) error) error
	read(ctx context.Context, db *DB, fn func(store.Tx) error) error
	ping(ctx context.Context) error
	close() error
	// grouping counts the grouped transactions (DB.Grouping): zeros where
	// every transaction runs alone.
	grouping() store.Grouping

	// forUpdate ends a SELECT whose rows stay locked until the
	// transaction ends ("" where a writing transaction holds the whole
	// database).
	forUpdate() string
	// jsonText is the SQL expression of key's text in the JSON column col.
	jsonText(col, key string) string
	// tableExists is a query counting the tables named by its one
	// argument in the store's schema.
	tableExists() string
	// lockOwner is the statement that holds owner's lock until the
	// transaction ends (false where a writing transaction holds the whole
	// database).
	lockOwner(owner string) (stmt, bool)
	// migrationLock is the statement that lets one migrator at a time run,
	// across processes ("" where the transaction already does).
	migrationLock() string

	// insertJobs queues jobs in t, on the driver's own transaction.
	insertJobs(ctx context.Context, t *tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	jobMigrator() (jobMigrator, error)

	// with is the checked write s and writes, whose results nobody
	// reads, as the engine sends them best.
	with(s stmt, writes []stmt) []stmt
	// taskEvents tells the approvers of task id (and its owner too, with
	// owner) that it reached state, once t commits.
	taskEvents(ctx context.Context, t *tx, id string, state countersign.State, owner bool) error
	// signal records sig in t, sent to every process once t commits;
	// signalNow sends it at once.
	signal(ctx context.Context, t *tx, sig store.StreamSignal) error
	signalNow(ctx context.Context, db *DB, sig store.StreamSignal) error
	// listen starts what feeds the hub with other processes' events, the
	// first time a subscriber needs it.
	listen(db *DB)

	// refund removes the run's charge from the ledger and returns it to
	// the balance, saying how much (0: there was none).
	refund(ctx context.Context, t *tx, account, run string) (int64, error)
}
