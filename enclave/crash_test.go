package enclave_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/probe"
	"countersign/sealing"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// anyArgs is a schema that takes any arguments.
var anyArgs = json.RawMessage(`{"type": "object"}`)

// TestCrashChild is the worker process TestCrashNeverReplays kills: it runs
// one answer whose connector writes its side effect and then the process
// dies, between answering and the report.
func TestCrashChild(t *testing.T) {
	t.Parallel()
	if os.Getenv("CS_CRASH_SCHEMA") == "" {
		t.Skip("runs only as TestCrashNeverReplays' worker")
	}
	keys, err := sealing.ParseKeyring(os.Getenv("CS_CRASH_KEYS"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.OpenPostgres(context.Background(), storetest.PostgresURL(), os.Getenv("CS_CRASH_SCHEMA"))
	if err != nil {
		t.Fatal(err)
	}
	mark := os.Getenv("CS_CRASH_MARK")
	ledger := &connectors.Connector{Name: "ledger", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{
		{Name: "pay", Kind: connectors.Write, Description: "pay in a test.", Schema: anyArgs, Price: 1, Run: func(context.Context, *connectors.Call) (any, error) { return nil, nil }},
		{Name: "confirm", Kind: connectors.Answer, Description: "confirm in a test.", Limit: 2 * time.Second, Answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				f.WriteString("paid\n")
				f.Close()
			}
			os.Exit(3) // the process dies after the write, before the report
			return connectors.Report{}, nil
		}},
	}}
	// The probe, whose guess is declared in process, dies when its answer
	// has opened the next turn, before it returns.
	game := probe.New()
	for i, op := range game.Operations {
		if op.Name == "guess" {
			game.Operations[i].Answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
				if _, err := op.Answer(ctx, a); err != nil {
					t.Fatal(err)
				}
				if f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					f.WriteString("guessed\n")
					f.Close()
				}
				os.Exit(3)
				return connectors.Report{}, nil
			}
		}
	}
	cat, _ := connectors.NewCatalogue(game, ledger)
	now, _ := time.Parse(time.RFC3339, os.Getenv("CS_CRASH_NOW"))
	e := servicetest.NewEnclave(servicetest.EnclaveConfig{Keys: keys, Store: db, Connectors: cat, Now: func() time.Time { return now }, PublicURL: os.Getenv("CS_CRASH_PUBLIC_URL"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := e.Answers.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = e.Answers.Answer(context.Background(), os.Getenv("CS_CRASH_TASK"), os.Getenv("CS_CRASH_RUN"))
	t.Fatal("the worker survived its own crash")
}

// crashWorker runs TestCrashChild as a worker process answering task id's
// run, which dies in it (exit 3), and returns the file its connector
// marks what it did in.
func crashWorker(t *testing.T, db *sqlstore.DB, w *servicetest.World, id, run string) (mark string) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "mark")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CS_CRASH_SCHEMA="+db.SchemaName(), "CS_CRASH_KEYS="+w.Keys.Export(),
		"CS_CRASH_TASK="+id, "CS_CRASH_RUN="+run, "CS_CRASH_MARK="+mark, "CS_CRASH_NOW="+w.Clock.Now().Format(time.RFC3339), "CS_CRASH_PUBLIC_URL="+w.URL)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the worker did not die in its run: %v\n%s", err, out.String())
	}
	return mark
}

// TestCrashInProcessRunsAgain kills a worker process inside the answer of
// an operation declared in process (the probe's guess), after the answer
// opened the next turn through the platform and before it returned: the
// run, its claim and the turn are kept together or not at all, so nothing
// was kept — the task is still approved, no turn is waiting — and the
// retried job runs it, once: the task done, one next turn.
func TestCrashInProcessRunsAgain(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	id := w.Guess()
	run := w.Approve(id, []byte("0"))
	mark := crashWorker(t, db, w, id, run)
	if b, _ := os.ReadFile(mark); string(b) != "guessed\n" {
		t.Fatalf("the worker's answer ran %q before it died", b)
	}
	if got := w.Task(id); got.State != countersign.StateApproved || got.AnswerRun != run {
		t.Fatalf("after the crash the task is %s, run %q", got.State, got.AnswerRun)
	}
	if got := openTasks(t, w); len(got) != 0 {
		t.Fatalf("after the crash the owner's open tasks are %+v, want none: the next turn was not kept", got)
	}
	// The job is retried: the task is still approved, so it runs.
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
	got := w.Task(id)
	if got.State != countersign.StateDone || got.NextTaskID == "" {
		t.Fatalf("the guess after the crash: %s, next %q", got.State, got.NextTaskID)
	}
	// Run again, it does nothing: one turn opened in all.
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
	if next := openTasks(t, w); len(next) != 1 || next[0].ID != got.NextTaskID || next[0].State != countersign.StateOpen {
		t.Fatalf("the owner's open tasks are %+v, want the next turn %s alone", next, got.NextTaskID)
	}
}

// TestCrashNeverReplays kills a worker process between answering and its
// report: the task ends failed run_unfinished (observed), and the write is
// not made again, by a retried job or by anyone.
func TestCrashNeverReplays(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	id := w.Pay()
	run := w.Approve(id, nil)
	mark := crashWorker(t, db, w, id, run)
	if got := w.Task(id); got.State != countersign.StateAnswering {
		t.Fatalf("after the crash the task is %s", got.State)
	}
	marks := func() int {
		b, _ := os.ReadFile(mark)
		return bytes.Count(b, []byte("paid\n"))
	}
	if marks() != 1 {
		t.Fatalf("the worker wrote %d times before dying", marks())
	}
	// The job is retried (River rescues a job whose worker vanished): the
	// task row says the run began, so nothing runs.
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
	// The leader's sweep sees the dead process's run: run_unfinished.
	w.Clock.Add(2 * time.Minute)
	res, err := w.Enclave.Sweeps.Sweep(ctx)
	if err != nil || res.Unfinished != 1 {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	got := w.Task(id)
	if got.State != countersign.StateFailed || got.FailureReason != "run_unfinished" || got.OutcomeClass != "observed" {
		t.Fatalf("the crashed run's task: %+v", got)
	}
	st := w.Status("ledger", id)
	if st.FailureReason != "run_unfinished" {
		t.Fatalf("the agent reads %+v", st)
	}
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil || marks() != 1 {
		t.Fatalf("the write was replayed: %d writes (%v)", marks(), err)
	}
}
