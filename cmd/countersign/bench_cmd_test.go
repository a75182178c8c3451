package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"countersign/loadtest"
	"countersign/store/storetest"
)

// TestBenchQuick runs `countersign bench --quick` with the built binary as
// its service against the test PostgreSQL: the report has the floor and the
// five figures with plausible values, the table names them all, and the
// throwaway database is gone.
func TestBenchQuick(t *testing.T) {
	t.Parallel()
	_ = pgURL(t) // skips, or fails under CI, without PostgreSQL
	bin := buildBinary(t)
	env := map[string]string{"COUNTERSIGN_DATABASE_URL": storetest.PostgresURL()}
	r := run(t, context.Background(), env, "bench", "--quick", "--json", "--binary", bin)
	if r.code != 0 {
		t.Fatalf("bench --quick: %+v", r)
	}
	var rep loadtest.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, r.stdout)
	}
	q := loadtest.Quick()
	f := rep.Floor
	if f.CommitsPerSecond <= 0 || f.OneCommitMS <= 0 || f.Commits <= 0 || f.SynchronousCommit == "" {
		t.Errorf("floor %+v", f)
	}
	if rep.P1.Pairs <= 0 || rep.P1.WritesPerSecond <= 0 || rep.P1.Errors != 0 || rep.P1.CPU.ServiceMS <= 0 {
		t.Errorf("P1 %+v", rep.P1)
	}
	if rep.P2.Accepted != q.P2Approvals || rep.P2.Done != q.P2Approvals || rep.P2.AcceptedPerSecond <= 0 || rep.P2.DonePerSecond <= 0 || rep.P2.Errors != 0 {
		t.Errorf("P2 %+v", rep.P2)
	}
	if rep.P3.Samples != q.P3Samples || rep.P3.MedianMS <= 0 || rep.P3.MedianMS > rep.P3.MaxMS || rep.P3.FirstError != "" {
		t.Errorf("P3 %+v", rep.P3)
	}
	if want := q.P7Owners * 2 * q.P7TasksPerAgent; rep.P7.Tasks != want || rep.P7.Streams != q.P7Owners || rep.P7.RSS < 1<<20 || rep.P7.FirstError != "" {
		t.Errorf("P7 %+v, want %d tasks", rep.P7, want)
	}
	var ids []string
	for _, fg := range rep.Figures {
		ids = append(ids, fg.ID)
		if fg.Value <= 0 {
			t.Errorf("figure %s is %v", fg.ID, fg.Value)
		}
		if fg.Goal != "" && fg.Ratio <= 0 {
			t.Errorf("figure %s has no ratio: %+v", fg.ID, fg)
		}
	}
	if got := strings.Join(ids, " "); got != "floor floor1 P1 P2 P2′ P3 P7" {
		t.Errorf("figures %s", got)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FIGURE", "floor PostgreSQL commits/s", "P1 task-layer writes/s", "P2 approvals accepted/s", "P2′", "P3 approve → done", "P7 service VmRSS", "P1 per write", "P2 per approval done"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}

	conn, err := pgx.Connect(context.Background(), storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left bool
	if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", rep.Database).Scan(&left); err != nil || left || !strings.HasPrefix(rep.Database, "countersign_bench_") {
		t.Errorf("the database %q is left behind (%v)", rep.Database, err)
	}
}

// TestBenchRefusesRemoteDatabases: the bench loads only this machine.
func TestBenchRefusesRemoteDatabases(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"postgres://postgres@db.example.com:5432/postgres", "postgres://postgres@10.0.0.5/postgres", "postgres://postgres@127.0.0.1/postgres?host=db.example.com"} {
		r := run(t, context.Background(), nil, "bench", "--database", url)
		if r.code != 1 || !strings.Contains(r.stderr, "loopback") {
			t.Errorf("bench --database %s: %+v", url, r)
		}
	}
	if r := run(t, context.Background(), nil, "bench"); r.code != 1 || !strings.Contains(r.stderr, "COUNTERSIGN_DATABASE_URL") {
		t.Errorf("bench without a database: %+v", r)
	}
}
