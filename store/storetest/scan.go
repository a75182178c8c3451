package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"countersign/store/sqlstore"
)

// Forms returns the byte strings under which a secret could sit in a
// database: as is, in hex of either case, and in standard and URL-safe base64
// at each of the three alignments it may have inside a longer value.
func Forms(secret string) [][]byte {
	forms := [][]byte{[]byte(secret), []byte(hex.EncodeToString([]byte(secret))), []byte(strings.ToUpper(hex.EncodeToString([]byte(secret))))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := 0; pad < 3; pad++ {
			full := enc.EncodeToString(append(bytes.Repeat([]byte{0}, pad), secret...))
			// Drop the characters that depend on what precedes and follows.
			start, end := (pad*8+5)/6+1, len(full)-4
			if end > start {
				forms = append(forms, []byte(full[start:end]))
			}
		}
	}
	return forms
}

// Find reads every byte of every table of a store and returns where any of
// the secrets appears, in any of its Forms. On PostgreSQL it reads the raw
// column values of every table in the store's schema; on SQLite every byte of
// every file of the store (database, write-ahead log, shared memory), so even
// a deleted page is read.
func Find(t testing.TB, db *sqlstore.DB, secrets ...string) []string {
	t.Helper()
	var needles [][]byte
	var names []string
	for _, s := range secrets {
		for _, f := range Forms(s) {
			needles = append(needles, f)
			names = append(names, s)
		}
	}
	var found []string
	each(t, db, func(where string, b []byte) {
		for i, n := range needles {
			if bytes.Contains(b, n) {
				found = append(found, fmt.Sprintf("%s holds %q", where, names[i]))
			}
		}
	})
	return found
}

// FindBareHashes reads the store as Find does and returns where the bare
// SHA-256 of any of the candidates appears, raw or in any of its Forms, each
// named by its candidate. It is what someone who reads the database would
// try: hash every value a small secret could take and look for the hash.
// Thousands of candidates are looked for in one pass over the bytes.
func FindBareHashes(t testing.TB, db *sqlstore.DB, candidates ...[]byte) []string {
	t.Helper()
	// By length, the forms of every candidate's hash and the candidate.
	byLen := map[int]map[string]string{}
	for _, c := range candidates {
		sum := sha256.Sum256(c)
		for _, f := range Forms(string(sum[:])) {
			m := byLen[len(f)]
			if m == nil {
				m = map[string]string{}
				byLen[len(f)] = m
			}
			m[string(f)] = string(c)
		}
	}
	var found []string
	each(t, db, func(where string, b []byte) {
		seen := map[string]bool{}
		for n, m := range byLen {
			for i := 0; i+n <= len(b); i++ {
				if c, ok := m[string(b[i:i+n])]; ok && !seen[c] {
					seen[c] = true
					found = append(found, fmt.Sprintf("%s holds the SHA-256 of %q", where, c))
				}
			}
		}
	})
	return found
}

// each calls look with every byte of every table of a store: on PostgreSQL
// the raw value of every column of every row of every table in the store's
// schema, named table.column; on SQLite the whole of every file of the store,
// named by the file.
func each(t testing.TB, db *sqlstore.DB, look func(where string, b []byte)) {
	t.Helper()
	if db.Dir() != "" {
		files, err := filepath.Glob(filepath.Join(db.Dir(), "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			look(filepath.Base(f), b)
		}
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables in schema %q: %v", db.SchemaName(), err)
	}
	for _, table := range tables {
		rows, err := conn.Query(ctx, fmt.Sprintf("SELECT * FROM %s.%s", pgx.Identifier{db.SchemaName()}.Sanitize(), pgx.Identifier{table}.Sanitize()))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			for i, v := range rows.RawValues() {
				look(fmt.Sprintf("%s.%s", table, rows.FieldDescriptions()[i].Name), v)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// FindInText dumps every row of every table of a PostgreSQL store as text,
// as PostgreSQL itself prints a row (`SELECT t::text FROM table t`: bytea as
// \x hex, JSON and arrays as their text), and returns where any of the
// secrets appears in it, in any of its Forms. It reads what someone with a
// plain SQL client, or a text dump of the database, would read. A SQLite
// store has no such form: Find reads its files whole.
func FindInText(t testing.TB, db *sqlstore.DB, secrets ...string) []string {
	t.Helper()
	if db.Dir() != "" {
		t.Fatal("storetest: FindInText reads a PostgreSQL store")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables in schema %q: %v", db.SchemaName(), err)
	}
	var found []string
	for _, table := range tables {
		q := fmt.Sprintf("SELECT t::text FROM %s.%s t", pgx.Identifier{db.SchemaName()}.Sanitize(), pgx.Identifier{table}.Sanitize())
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		dumped, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(dumped, "\n")
		for _, s := range secrets {
			for _, f := range Forms(s) {
				if strings.Contains(text, string(f)) {
					found = append(found, fmt.Sprintf("table %s, dumped as text, holds %q", table, s))
					break
				}
			}
		}
	}
	return found
}
