package sqlstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivermigrate"

	"countersign/migrations"
	"countersign/store"
)

const createVersions = `CREATE TABLE IF NOT EXISTS countersign_migrations (
    version    BIGINT PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)`

// Migrate brings the database to the binary's schema: the service's own
// migrations, in one transaction, then the job queue's. It refuses a database
// that a newer binary migrated. It reports the versions it applied.
func (db *DB) Migrate(ctx context.Context) ([]int, error) {
	all, err := migrations.For(db.e.dialect())
	if err != nil {
		return nil, err
	}
	var applied []int
	err = db.Tx(ctx, func(stx store.Tx) error {
		t := stx.(*tx)
		// One migrator at a time, across processes.
		if lock := db.e.migrationLock(); lock != "" {
			if _, err := t.q.exec(ctx, lock); err != nil {
				return err
			}
		}
		if _, err := t.q.exec(ctx, createVersions); err != nil {
			return err
		}
		current, err := t.schemaVersion(ctx)
		if err != nil {
			return err
		}
		if current > len(all) {
			return fmt.Errorf("the database schema is at version %d, newer than this binary's %d: run a newer countersign", current, len(all))
		}
		for _, m := range all[current:] {
			for _, stmt := range migrations.Statements(m.SQL) {
				if _, err := t.q.exec(ctx, stmt); err != nil {
					return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
				}
			}
			if _, err := t.q.exec(ctx, "INSERT INTO countersign_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.Version, m.Name, time.Now().Unix()); err != nil {
				return err
			}
			applied = append(applied, m.Version)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := db.migrateJobs(ctx); err != nil {
		return applied, fmt.Errorf("job queue tables: %w", err)
	}
	return applied, nil
}

// quietLogger keeps the job queue's migrator from printing to stdout.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// jobMigrator is the job queue's migrator for either database.
type jobMigrator interface {
	Migrate(ctx context.Context, direction rivermigrate.Direction, opts *rivermigrate.MigrateOpts) (*rivermigrate.MigrateResult, error)
	Validate(ctx context.Context, opts *rivermigrate.ValidateOpts) (*rivermigrate.ValidateResult, error)
}

func (db *DB) jobMigrator() (jobMigrator, error) { return db.e.jobMigrator() }

func (db *DB) migrateJobs(ctx context.Context) error {
	m, err := db.jobMigrator()
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

func (db *DB) jobsCurrent(ctx context.Context) (bool, error) {
	m, err := db.jobMigrator()
	if err != nil {
		return false, err
	}
	res, err := m.Validate(ctx, nil)
	if err != nil {
		return false, classify(err)
	}
	return res.OK, nil
}

// Schema compares the database's schema with the binary's.
func (db *DB) Schema(ctx context.Context) (store.SchemaStatus, error) {
	st := store.SchemaStatus{Needed: migrations.Latest()}
	err := db.Tx(ctx, func(stx store.Tx) error {
		v, err := stx.(*tx).schemaVersion(ctx)
		st.Current = v
		return err
	})
	if err != nil {
		return st, err
	}
	if st.JobsCurrent, err = db.jobsCurrent(ctx); err != nil {
		return st, err
	}
	return st, nil
}

func (t *tx) schemaVersion(ctx context.Context) (int, error) {
	var exists int
	err := t.q.queryRow(ctx, t.db.e.tableExists(), "countersign_migrations").Scan(&exists)
	if err != nil || exists == 0 {
		return 0, err
	}
	var v *int64
	if err := t.q.queryRow(ctx, "SELECT MAX(version) FROM countersign_migrations").Scan(&v); err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	return int(*v), nil
}
