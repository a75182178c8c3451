// Package migrations holds the numbered SQL migrations of the service's own
// tables, embedded in the binary. They are written once, in the subset of SQL
// that PostgreSQL and SQLite share; the few type names that differ are
// translated for SQLite by For, and what only PostgreSQL has (how it stores
// a table's rows) follows a line PostgresOnly, which For cuts off for
// SQLite. The store applies them (countersign migrate).
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed sql/*.sql
var files embed.FS

// Dialect names a database the store runs on.
type Dialect string

// The dialects the migrations are written for.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Migration is one numbered step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// sqliteTypes are the only spellings that differ between the two dialects.
var sqliteTypes = strings.NewReplacer(
	"BIGSERIAL PRIMARY KEY", "INTEGER PRIMARY KEY AUTOINCREMENT",
	"BYTEA", "BLOB",
)

// PostgresOnly is the line after which the rest of a migration is
// PostgreSQL's alone: settings SQLite has no counterpart of.
const PostgresOnly = "-- On PostgreSQL alone:"

// For returns every migration in version order, as SQL for the dialect.
func For(d Dialect) ([]Migration, error) {
	if d != Postgres && d != SQLite {
		return nil, fmt.Errorf("migrations: unknown dialect %q", d)
	}
	names, err := fs.Glob(files, "sql/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".sql")
		num, rest, ok := strings.Cut(base, "_")
		if !ok || len(num) != 4 {
			return nil, fmt.Errorf("migrations: %s is not named NNNN_name.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migrations: %s has no version number", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		sql := string(body)
		if d == SQLite {
			sql, _, _ = strings.Cut(sql, "\n"+PostgresOnly+"\n")
			sql = sqliteTypes.Replace(sql)
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: sql})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations: version %d is missing", i+1)
		}
	}
	return out, nil
}

// Latest is the version the binary's schema is at once every migration ran.
func Latest() int {
	all, err := For(Postgres)
	if err != nil || len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}

// Statements splits a migration into its statements at semicolons that end a
// line. The migrations hold no procedural code, so this is all it needs.
func Statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
