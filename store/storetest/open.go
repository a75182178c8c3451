// Package storetest is the conformance suite every store must pass, and the
// helpers that give a test its own store: a PostgreSQL schema of its own (from
// TEST_DATABASE_URL) or a fresh embedded SQLite file, so runs never collide.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/store/sqlstore"
)

// DefaultPostgresURL is used when TEST_DATABASE_URL is not set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresURL is the database the tests use.
func PostgresURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// NewSchema creates a schema of its own for one test and drops it when the
// test ends. It fails the test when PostgreSQL cannot be reached.
func NewSchema(t testing.TB) string {
	t.Helper()
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
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
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

// Postgres opens a migrated store in a schema of its own.
func Postgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	schema := NewSchema(t)
	db, err := sqlstore.OpenPostgres(context.Background(), PostgresURL(), schema)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	migrate(t, db)
	return db
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

// Each runs f once on a PostgreSQL store and once on an embedded store.
func Each(t *testing.T, f func(t *testing.T, db *sqlstore.DB)) {
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
}
