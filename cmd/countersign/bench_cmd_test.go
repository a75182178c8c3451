package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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
	bin := benchBinary(t)
	profiles := t.TempDir()
	var rep loadtest.Report
	quickBench(t, bin, &rep, "--profile", profiles)
	// The service's profiles: gzipped pprof protobufs; P1's loop and P7's
	// heap name the service's own functions (the quick P2 is over in too
	// few of the profiler's 10 ms ticks to be sure of a sample).
	if len(rep.ProfileProblems) > 0 || len(rep.Profiles) != 3 {
		t.Errorf("profiles %v, problems %v", rep.Profiles, rep.ProfileProblems)
	}
	for _, name := range []string{"p1-writes.cpu.pprof", "p2-approvals.cpu.pprof", "p7-streams.heap.pprof"} {
		f, err := os.Open(filepath.Join(profiles, name))
		if err != nil {
			t.Error(err)
			continue
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			f.Close()
			continue
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil || len(b) == 0 || name != "p2-approvals.cpu.pprof" && !bytes.Contains(b, []byte("countersign/")) {
			t.Errorf("%s (%d bytes, %v) names none of the service's functions", name, len(b), err)
		}
	}
	q := loadtest.Quick()
	f := rep.Floor
	if f.CommitsPerSecond <= 0 || f.OneCommitMS <= 0 || f.Commits <= 0 || f.SynchronousCommit == "" {
		t.Errorf("floor %+v", f)
	}
	if rep.P1.Pairs <= 0 || rep.P1.WritesPerSecond <= 0 || rep.P1.Errors != 0 || rep.P1.CPU.ServiceMS <= 0 {
		t.Errorf("P1 %+v", rep.P1)
	}
	// Every P1 write is a grouped transaction, kept by a lane's commit (or
	// run alone): the lanes' counters, read from the service's /metrics
	// around the phase, account for each once.
	if l := rep.P1.CPU.Lanes; l == nil || l.Lanes < 1 || l.Kept+l.Alone != 2*rep.P1.Pairs || l.Commits < 1 || l.Commits > l.Kept ||
		l.Busy() <= 0 || l.Busy() > 1.05 {
		t.Errorf("P1's lanes %+v for %d pairs", l, rep.P1.Pairs)
	}
	// Each pair writes a task's ciphertext (about 2.5 KiB) to the WAL.
	if rep.P1.CPU.WALPerOp() < 1024 || rep.P2.CPU.WALPerOp() < 1024 {
		t.Errorf("WAL per P1 write %.0f B, per P2 task done %.0f B: want at least a task's ciphertext's share", rep.P1.CPU.WALPerOp(), rep.P2.CPU.WALPerOp())
	}
	if rep.P2.Accepted != q.P2Approvals || rep.P2.Done != q.P2Approvals || rep.P2.AcceptedPerSecond <= 0 || rep.P2.DonePerSecond <= 0 || rep.P2.Errors != 0 {
		t.Errorf("P2 %+v", rep.P2)
	}
	// The bare commits beside P3's turns are timings too: with three
	// samples on a machine other tests share, the disk may make them the
	// slower, so only their being measured is checked.
	if rep.P3.Samples != q.P3Samples || rep.P3.MedianMS <= 0 || rep.P3.MedianMS > rep.P3.MaxMS || rep.P3.FirstError != "" ||
		rep.P3.BesideCommitMS <= 0 {
		t.Errorf("P3 %+v", rep.P3)
	}
	if want := q.P7Owners * 2 * q.P7TasksPerAgent; rep.P7.Tasks != want || rep.P7.Streams != q.P7Owners || rep.P7.RSS < 1<<20 || rep.P7.FileRSS <= 0 || rep.P7.FileRSS >= rep.P7.RSS || rep.P7.FirstError != "" {
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

	tableSays(t, &rep, "FIGURE", "floor PostgreSQL commits/s", "P1 task-layer writes/s", "P2 approvals accepted/s", "P2′", "P3 approve → done", "P7 service VmRSS", "P1 per write", "P2 per approval done", "P1: the service's", "writes per commit")

	if !strings.HasPrefix(rep.Database, "countersign_bench_") {
		t.Errorf("the database is named %q", rep.Database)
	}
	databasesGone(t, rep.Database)
}

// TestBenchScaleQuick runs `countersign bench --scale --quick`: every step
// of the ladder is read, the streams hold no goroutine of the service, each
// probed stream still carries its event, none was lost, and the table says
// what each stream and task added.
func TestBenchScaleQuick(t *testing.T) {
	t.Parallel()
	var rep loadtest.ScaleReport
	quickBench(t, benchBinary(t), &rep, "--scale")
	q := loadtest.QuickScale()
	if len(rep.Steps) != len(q.Steps) || !rep.Dropped || rep.SignInErrors != 0 || rep.FirstError != "" {
		t.Fatalf("report %+v", rep)
	}
	for i, st := range rep.Steps {
		if st.Tasks != q.Steps[i].Tasks || st.Streams != q.Steps[i].Streams || st.RSS < 1<<20 || st.HeapInUse <= 0 || st.Goroutines <= 0 {
			t.Errorf("step %d: %+v, want %+v", i+1, st, q.Steps[i])
		}
	}
	// Steps 2 to 4 add 20 streams to the same tasks.
	if added := rep.Steps[3].Goroutines - rep.Steps[1].Goroutines; added >= 10 {
		t.Errorf("20 streams added %d goroutines to the service", added)
	}
	if rep.Probes != q.Probes || rep.Heard != rep.Probes || rep.StreamsLost != 0 {
		t.Errorf("probes %d, heard %d, lost %d", rep.Probes, rep.Heard, rep.StreamsLost)
	}
	tableSays(t, &rep, "PER ADDED STREAM", "PER ADDED TASK", "signed in", "5 of 5 probed")
}

// TestBenchReplicasQuick runs `countersign bench --replicas --quick`: one
// then two serve processes on one database, each process serving writes,
// and approvals sent to one process reaching done on a stream held by the
// other.
func TestBenchReplicasQuick(t *testing.T) {
	t.Parallel()
	var rep loadtest.ReplicasReport
	quickBench(t, benchBinary(t), &rep, "--replicas")
	q := loadtest.QuickReplicas()
	if len(rep.Rounds) != len(q.Rounds) || !rep.Dropped {
		t.Fatalf("report %+v", rep)
	}
	for i, rd := range rep.Rounds {
		if rd.Processes != q.Rounds[i] || len(rd.PerProcess) != rd.Processes || rd.Errors != 0 || rd.FirstError != "" || rd.Ratio <= 0 {
			t.Errorf("round %d: %+v", i+1, rd)
		}
		for _, w := range rd.PerProcess {
			if w <= 0 {
				t.Errorf("round %d: a process served no writes: %+v", i+1, rd)
			}
		}
		if rd.Samples != q.Samples || rd.DoneMS <= 0 || rd.ApprovedMS <= 0 || rd.DoneMS < rd.ApprovedMS {
			t.Errorf("round %d's approvals: %+v", i+1, rd)
		}
	}
}

// TestBenchPairedQuick runs `countersign bench --paired --quick` with the
// built binary on both sides: every turn of each is timed, each turn of A
// has its pair, each side's P1 slices wrote, each side's P2 rounds saw
// every approval done, the table says which side is which and how they
// differ, and both throwaway databases are gone.
func TestBenchPairedQuick(t *testing.T) {
	t.Parallel()
	bin := benchBinary(t)
	var rep loadtest.PairedReport
	quickBench(t, bin, &rep, "--paired", bin)
	q := loadtest.QuickPaired()
	for _, s := range []loadtest.PairedSide{rep.A, rep.B} {
		l := s.Latency
		if s.Binary != bin || l.Samples != q.Turns || l.MedianMS <= 0 || l.MedianMS > l.MaxMS || l.ApproveMS <= 0 || l.ApproveMS > l.MaxMS || l.FirstError != "" {
			t.Errorf("a side: %+v", s)
		}
	}
	d := rep.Diff
	if d.Pairs != q.Turns || d.Q1MS > d.MedianMS || d.MedianMS > d.Q3MS || d.BQuicker > d.Pairs || rep.Floor1MS <= 0 {
		t.Errorf("B − A %+v, one bare commit %v ms", d, rep.Floor1MS)
	}
	for _, s := range []loadtest.PairedSide{rep.A, rep.B} {
		w := s.Writes
		if w.Agents != q.Agents || w.Pairs <= 0 || w.WritesPerSecond <= 0 || w.Errors != 0 || w.CPU.Ops != int(2*w.Pairs) || w.CPU.ServiceMS <= 0 {
			t.Errorf("a side's P1: %+v", w)
		}
		// Each side's lanes, read over its own slices only.
		if l := w.CPU.Lanes; l == nil || l.Kept+l.Alone != 2*w.Pairs || l.Busy() <= 0 || l.Busy() > 1.05 {
			t.Errorf("a side's P1 lanes %+v for %d pairs", l, w.Pairs)
		}
	}
	if r := rep.WritesRatio; r.Slices != q.Slices || r.Min <= 0 || r.Min > r.Median || r.Median > r.Max || r.BHigher > r.Slices {
		t.Errorf("B ÷ A writes/s %+v", r)
	}
	for _, s := range []loadtest.PairedSide{rep.A, rep.B} {
		a := s.Approvals
		if want := q.Rounds * q.Agents * 10; a.Owners != 2*q.Agents || a.Rounds != q.Rounds || a.Accepted != want || a.Done != want ||
			a.DonePerSecond <= 0 || a.Errors != 0 || a.CPU.Ops != want || a.CPU.ServiceMS <= 0 {
			t.Errorf("a side's P2: %+v", a)
		}
	}
	if r := rep.DoneRatio; r.Slices != q.Rounds || r.Min <= 0 || r.Min > r.Median || r.Median > r.Max || r.BHigher > r.Slices {
		t.Errorf("B ÷ A approvals done/s %+v", r)
	}
	tableSays(t, &rep, "SIDE", "LANES: PER COMMIT, BUSY", "B − A, turn by turn", "One bare commit", "B ÷ A writes/s, slice by slice", "B ÷ A approvals done/s, round by round")
	if len(rep.Databases) != 2 || !rep.Dropped {
		t.Fatalf("databases %v, dropped %v", rep.Databases, rep.Dropped)
	}
	databasesGone(t, rep.Databases...)
}

// tableSays fails the test unless the report's table holds each of wants.
// benchBinary is the built binary the bench tests run, with the test
// PostgreSQL (skipped, or failed under CI, without it).
func benchBinary(t *testing.T) string {
	t.Helper()
	_ = pgURL(t)
	return buildBinary(t)
}

// quickBench runs `countersign bench ARGS --quick --json` with bin as the
// service against the test PostgreSQL, and reads its report into rep.
func quickBench(t *testing.T, bin string, rep any, args ...string) {
	t.Helper()
	env := map[string]string{"COUNTERSIGN_DATABASE_URL": storetest.PostgresURL()}
	args = append(append([]string{"bench"}, args...), "--quick", "--json", "--binary", bin)
	r := run(t, context.Background(), env, args...)
	if r.code != 0 {
		t.Fatalf("%s: %+v", strings.Join(args, " "), r)
	}
	if err := json.Unmarshal([]byte(r.stdout), rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, r.stdout)
	}
}

func tableSays(t *testing.T, rep interface{ WriteTable(io.Writer) error }, wants ...string) {
	t.Helper()
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

// databasesGone fails the test if any of the named databases is still on
// the test server.
func databasesGone(t *testing.T, names ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, name := range names {
		var left bool
		if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&left); err != nil || left {
			t.Errorf("the database %q is left behind (%v)", name, err)
		}
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
