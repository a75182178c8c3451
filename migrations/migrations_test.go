package migrations

import (
	"strings"
	"testing"
)

func TestForBothDialects(t *testing.T) {
	t.Parallel()
	pg, err := For(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := For(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg) == 0 || len(pg) != len(lite) {
		t.Fatalf("postgres has %d migrations, sqlite %d", len(pg), len(lite))
	}
	if Latest() != pg[len(pg)-1].Version {
		t.Fatalf("Latest() = %d, last migration is %d", Latest(), pg[len(pg)-1].Version)
	}
	for _, m := range lite {
		if strings.Contains(m.SQL, "BYTEA") || strings.Contains(m.SQL, "BIGSERIAL") {
			t.Errorf("sqlite migration %d still holds a postgres type", m.Version)
		}
	}
	for i := range pg {
		if strings.Contains(lite[i].SQL, PostgresOnly) {
			t.Errorf("sqlite migration %d holds what is PostgreSQL's alone", lite[i].Version)
		}
		if strings.Contains(pg[i].SQL, PostgresOnly) && len(Statements(lite[i].SQL)) >= len(Statements(pg[i].SQL)) {
			t.Errorf("migration %d: PostgreSQL's own statements were not left out for sqlite", pg[i].Version)
		}
	}
	if _, err := For("mysql"); err == nil {
		t.Fatal("an unknown dialect was accepted")
	}
}

func TestStatements(t *testing.T) {
	t.Parallel()
	got := Statements("-- a comment\nCREATE TABLE a (\n  x TEXT\n);\n\nCREATE INDEX b ON a (x);\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "CREATE TABLE a") || got[1] != "CREATE INDEX b ON a (x);" {
		t.Fatalf("Statements = %q", got)
	}
}
