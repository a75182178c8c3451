package sqlstore

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"countersign/store"
)

// SQLite's refusals are read by their result codes: a unique or primary
// key taken is a conflict, a database another connection holds is
// unavailable (try again), any other constraint is neither.
func TestClassifySQLiteCodes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "classify.db")
	a, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, q := range []string{
		"CREATE TABLE r (id INTEGER PRIMARY KEY, u TEXT UNIQUE)",
		"CREATE TABLE k (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
		"INSERT INTO r (id, u) VALUES (1, 'x')",
		"INSERT INTO k VALUES ('a', 'b')",
	} {
		if _, err := a.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, q string
		want    error
	}{
		{"unique", "INSERT INTO r (u) VALUES ('x')", store.ErrConflict},
		{"rowid primary key", "INSERT INTO r (id) VALUES (1)", store.ErrConflict},
		{"primary key", "INSERT INTO k VALUES ('a', 'c')", store.ErrConflict},
		{"not null", "INSERT INTO k VALUES ('z', NULL)", nil},
	} {
		_, err := a.Exec(tt.q)
		got := classify(err)
		if err == nil || tt.want != nil && !errors.Is(got, tt.want) ||
			tt.want == nil && (errors.Is(got, store.ErrConflict) || errors.Is(got, store.ErrUnavailable)) {
			t.Errorf("%s: %v classified as %v, want %v", tt.name, err, got, tt.want)
		}
	}
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO r (u) VALUES ('held')"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec("INSERT INTO r (u) VALUES ('waits')"); !errors.Is(classify(err), store.ErrUnavailable) {
		t.Errorf("a write while another connection writes: %v classified as %v, want unavailable", err, classify(err))
	}
}
