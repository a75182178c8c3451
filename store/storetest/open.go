// Package storetest is the conformance suite every store must pass, and the
// helpers that give a test its own store: a PostgreSQL schema of its own (from
// TEST_DATABASE_URL) or a fresh embedded SQLite file, so runs never collide.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/store/sqlstore"
)

// DefaultPostgresURL is used when TEST_DATABASE_URL is not set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresURL is the database the tests use (see throwaway.go for how it is
// found).
func PostgresURL() string {
	resolve()
	return where.url
}

// NewSchema creates a schema of its own for one test and drops it when the
// test ends. It fails the test when PostgreSQL cannot be reached.
func NewSchema(t testing.TB) string {
	t.Helper()
	needPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, PostgresURL())
	if err != nil {
		t.Fatalf("PostgreSQL is needed for this test (TEST_DATABASE_URL, default %s): %v", DefaultPostgresURL, err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "cs_test_" + hex.EncodeToString(b[:])
	held, err := claimSchema(ctx, schema)
	if err != nil {
		t.Fatalf("claim schema: %v", err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		defer held.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, PostgresURL())
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// pool holds this test binary's migrated PostgreSQL schemas that no test is
// using. Migrating a schema costs more than most tests, so a test takes a
// free one (or makes one, when every schema is in use by a test running at
// the same time) and gives it back, emptied, when it ends: tests that run in
// parallel each have a schema of their own, and the binary makes no more
// schemas than it runs tests at once.
var pool struct {
	mu    sync.Mutex
	free  []string
	swept bool
}

// Postgres opens a migrated store on a schema that is this test's own until
// it ends, empty of every row.
func Postgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	needPostgres(t)
	schema, err := takeSchema()
	if err != nil {
		t.Fatalf("PostgreSQL is needed for this test (TEST_DATABASE_URL, default %s): %v", DefaultPostgresURL, err)
	}
	ctx := context.Background()
	db, err := sqlstore.OpenPostgres(ctx, PostgresURL(), schema)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		// Emptied before it is given back, so the next test finds it empty;
		// a schema that cannot be emptied is not given back.
		if err := empty(context.Background(), schema); err != nil {
			t.Logf("empty the test schema %s: %v", schema, err)
			return
		}
		pool.mu.Lock()
		pool.free = append(pool.free, schema)
		pool.mu.Unlock()
	})
	return db
}

// FreshPostgres opens a migrated store on a schema made for this test alone
// and dropped when it ends: no statistics of an earlier test's rows, nor
// any setting a test gave its tables, are carried into it or out of it, as
// they are by the pool's emptied schemas. For tests of what PostgreSQL's
// planner does.
func FreshPostgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	schema := NewSchema(t)
	ctx := context.Background()
	db, err := sqlstore.OpenPostgres(ctx, PostgresURL(), schema)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// takeSchema hands out a free schema of the pool, or makes a new one.
func takeSchema() (string, error) {
	pool.mu.Lock()
	if n := len(pool.free); n > 0 {
		schema := pool.free[n-1]
		pool.free = pool.free[:n-1]
		pool.mu.Unlock()
		return schema, nil
	}
	sweep := !pool.swept
	pool.swept = true
	pool.mu.Unlock()
	return newPoolSchema(sweep)
}

// newPoolSchema makes and migrates a schema for the pool, after dropping the
// schemas of earlier test binaries that are no longer connected (once per
// binary).
func newPoolSchema(sweep bool) (string, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PostgresURL())
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "cs_test_" + hex.EncodeToString(b[:])
	if sweep {
		// A schema's binary connects with application_name = the schema; one
		// nobody is connected as is left over from a run that ended.
		rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'cs\_test\_%'
			AND nspname NOT IN (SELECT application_name FROM pg_stat_activity)`)
		if err != nil {
			return "", err
		}
		stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return "", err
		}
		for _, s := range stale {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE")
		}
	}
	// Claim the name before the schema exists, so no other run takes it for
	// stale while it is migrated. The claim is held until the process exits.
	claim, err := claimSchema(ctx, schema)
	if err != nil {
		return "", err
	}
	claims.Lock()
	claims.held = append(claims.held, claim)
	claims.Unlock()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	db, err := sqlstore.OpenPostgres(ctx, PostgresURL(), schema)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return "", err
	}
	return schema, nil
}

// claims holds the pool's claims (connections named after their schemas)
// until the process exits, so a concurrent run leaves the schemas alone.
var claims struct {
	sync.Mutex
	held []*pgx.Conn
}

// claimSchema opens a connection named after a schema: while it is open, other
// test binaries leave the schema alone.
func claimSchema(ctx context.Context, schema string) (*pgx.Conn, error) {
	return pgx.Connect(ctx, PostgresURL()+sep(PostgresURL())+"application_name="+schema)
}

func sep(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}

// empty deletes every row of the schema's tables but the migrations'.
func empty(ctx context.Context, schema string) error {
	conn, err := pgx.Connect(ctx, PostgresURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1
		AND table_type = 'BASE TABLE' AND table_name NOT IN ('countersign_migrations', 'river_migration')`, schema)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tables {
		names = append(names, pgx.Identifier{schema, t}.Sanitize())
	}
	_, err = conn.Exec(ctx, "TRUNCATE "+strings.Join(names, ", ")+" RESTART IDENTITY")
	return err
}

// SQLite opens a migrated embedded store in a directory of its own.
func SQLite(t testing.TB) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	migrate(t, db)
	return db
}

func migrate(t testing.TB, db *sqlstore.DB) {
	t.Helper()
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// Each runs f once on a PostgreSQL store and once on an embedded store, the
// two at the same time.
func Each(t *testing.T, f func(t *testing.T, db *sqlstore.DB)) {
	t.Run("postgres", func(t *testing.T) { t.Parallel(); f(t, Postgres(t)) })
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); f(t, SQLite(t)) })
}
