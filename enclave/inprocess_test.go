package enclave_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors"
	"countersign/egress"
	"countersign/egress/egresstest"
	"countersign/enclave/calls"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestInProcessRunsReachNothing: a write declared in process that tries a
// request through an egress client is refused before anything is dialed
// (its run then answers the error, the task it opened kept with its
// end), while the same request from a write that is not declared so
// reaches the host.
func TestInProcessRunsReachNothing(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	httpc := egress.NewClient(egress.Options{AllowPrivate: true})
	var reachErr error
	reach := func(inProcess bool) connectors.Operation {
		name := "reach"
		if inProcess {
			name = "reach_in_process"
		}
		return connectors.Operation{Name: name, Kind: connectors.Write, Description: name + " in a test.", Schema: anyArgs, InProcess: inProcess,
			Run: func(ctx context.Context, c *connectors.Call) (any, error) {
				task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindNotice,
					Display: countersign.Display{Title: "Reached", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "Host", Values: []string{"a test"}, WrittenBy: countersign.WrittenByProject}}}})
				if err != nil {
					return nil, err
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/write", nil)
				resp, err := httpc.Do(req)
				if err != nil {
					reachErr = err
					return nil, err
				}
				resp.Body.Close()
				return connectors.Notified(task), nil
			}}
	}
	reacher := &connectors.Connector{Name: "reacher", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{reach(true), reach(false)}}
	db := storetest.Postgres(t)
	w := servicetest.New(t, db, servicetest.WithConnector(reacher))
	agent := w.AgentClient()

	raw, err := agent.Call(ctx, w.Owner.Account, "reacher", "reach_in_process", nil, nil)
	var r *client.Refusal
	if !errors.As(err, &r) || r.Code != "internal_error" || !errors.Is(reachErr, egress.ErrInProcess) {
		t.Fatalf("the in-process write answered %s %v (its request: %v)", raw, err, reachErr)
	}
	if srv.Conns() != 0 || srv.Requests() != 0 {
		t.Fatalf("the in-process write reached the host: %d connections, %d requests", srv.Conns(), srv.Requests())
	}
	if page, err := w.Owner.Client.Tasks(ctx, "waiting", "", 10); err != nil || len(page.Tasks) != 1 || page.Tasks[0].Kind != "notice" {
		t.Fatalf("waiting: %+v %v, want the notice the in-process write opened before its request", page, err)
	}

	raw, err = agent.Call(ctx, w.Owner.Account, "reacher", "reach", nil, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.Status != "notified" || srv.Requests() != 1 {
		t.Fatalf("the ordinary write answered %s %v, the host saw %d requests", raw, err, srv.Requests())
	}
}

// TestInProcessAnswerRunOnceUnderConcurrency: sixteen jobs of one approved
// guess, whose answer runs in its claim's transaction, run at once: one
// claims it and keeps its run whole, the others find it taken — the task
// done once, one next turn opened.
func TestInProcessAnswerRunOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Guess()
		answerAtOnce(t, w, id, w.Approve(id, []byte("0")))
		got := w.Task(id)
		if got.State != countersign.StateDone || got.NextTaskID == "" {
			t.Fatalf("the guess is %s, next %q", got.State, got.NextTaskID)
		}
		if open := openTasks(t, w); len(open) != 1 || open[0].ID != got.NextTaskID {
			t.Fatalf("the owner's open tasks are %+v, want the one next turn %s", open, got.NextTaskID)
		}
	})
}

// TestInProcessAnswerHandedAndQueuedAtOnce: jobs of one approved guess
// handed over with what the approval read (their claim holds the task as
// read) and jobs from the queue (which read it with its lock) run at once.
// Both take the task's row before the owner's lock, so none waits on
// another in a cycle: one keeps the run whole, the rest find it taken, and
// none has to be run again the ordinary way.
func TestInProcessAnswerHandedAndQueuedAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Guess()
		run := w.Approve(id, []byte("0"))
		jobs := make([]store.AnswerJob, 16)
		for i := range jobs {
			jobs[i] = answerJob(t, db, id, run, i%2 == 0)
		}
		runAtOnce(t, w, jobs)
		got := w.Task(id)
		if got.State != countersign.StateDone || got.NextTaskID == "" {
			t.Fatalf("the guess is %s, next %q", got.State, got.NextTaskID)
		}
		if open := openTasks(t, w); len(open) != 1 || open[0].ID != got.NextTaskID {
			t.Fatalf("the owner's open tasks are %+v, want the one next turn %s", open, got.NextTaskID)
		}
		if logs := w.Logs.String(); strings.Contains(logs, "runs again the ordinary way") {
			t.Errorf("a job's in-process run kept nothing and ran again:\n%s", logs)
		}
	})
}

// TestInProcessCallOnceUnderConcurrency: eight guess_starts with one
// Idempotency-Key sent at once run once: one game opened, one charge, and
// every answer is that game's or says the first call is still running.
func TestInProcessCallOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		agent := w.AgentClient()
		ledger := func() int {
			var l []store.LedgerEntry
			if err := db.Read(ctx, func(tx store.Tx) (err error) {
				l, err = tx.Ledger(ctx, w.Agent)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return len(l)
		}
		before := ledger()
		answers := make([]string, 8)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				raw, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", map[string]any{"max": 10}, &client.CallOptions{IdempotencyKey: "game-once"})
				if err != nil {
					answers[i] = err.Error()
				} else {
					answers[i] = string(raw)
				}
			}()
		}
		close(start)
		wg.Wait()
		var game string
		for _, a := range answers {
			var aw client.Awaiting
			switch {
			case json.Unmarshal([]byte(a), &aw) == nil && aw.TaskID != "":
				if game != "" && aw.TaskID != game {
					t.Fatalf("two games answered: %s and %s", game, aw.TaskID)
				}
				game = aw.TaskID
			case strings.Contains(a, "still running"):
			default:
				t.Fatalf("an answer: %s", a)
			}
		}
		page, err := w.Owner.Client.Tasks(ctx, "waiting", "", 10)
		if err != nil || game == "" || len(page.Tasks) != 1 || page.Tasks[0].ID != game {
			t.Fatalf("waiting: %+v %v, want the one game %s", page, err, game)
		}
		if got := ledger() - before; got != 1 {
			t.Fatalf("%d charges, want one", got)
		}
	})
}

// openTasks are the open tasks of w's owner (at most ten).
func openTasks(t *testing.T, w *servicetest.World) []store.Task {
	t.Helper()
	var tasks []store.Task
	if err := w.DB.Read(ctx, func(tx store.Tx) (err error) {
		tasks, err = tx.OwnerTasks(ctx, w.Owner.Account, true, nil, 10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestInProcessUncoveredKeepsNothing: a guess_start whose price the
// agent's balance does not cover is refused payment_required when its
// one transaction commits — after the game's turn was written in it — and
// keeps nothing: no task waits, nothing is charged.
func TestInProcessUncoveredKeepsNothing(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	const poor, key = "poor.near", "ak_poor_agent_key_for_tests_0001"
	now := w.Clock.Now()
	if err := db.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, poor, calls.HashAgentKey(key), now); err != nil {
			return err
		}
		p, err := tx.Project(ctx, w.Owner.Account, "probe")
		if err != nil {
			return err
		}
		p.Agents, p.UpdatedAt = append(p.Agents, poor), now
		return tx.PutProject(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	agent := &client.Client{BaseURL: w.URL, AgentKey: key}
	raw, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil)
	var r *client.Refusal
	if !errors.As(err, &r) || r.Code != "payment_required" {
		t.Fatalf("an uncovered guess_start answered %s %v", raw, err)
	}
	if open := openTasks(t, w); len(open) != 0 {
		t.Fatalf("the owner's open tasks are %+v, want none", open)
	}
	var a store.Agent
	var ledger []store.LedgerEntry
	if err := db.Read(ctx, func(tx store.Tx) (err error) {
		if a, err = tx.Agent(ctx, poor); err != nil {
			return err
		}
		ledger, err = tx.Ledger(ctx, poor)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if a.Balance != 0 || len(ledger) != 0 {
		t.Fatalf("balance %d, ledger %+v: want nothing charged", a.Balance, ledger)
	}
	if strings.Contains(w.Logs.String(), "runs again in transactions of its own") {
		t.Fatal("an uncovered call was made again the ordinary way")
	}
}

// TestInProcessAnswerAtThePreparersLimit: with as many of its games
// approved as an agent may have active for an owner, each answer still
// opens its next turn. An in-process answer's claim is written with its
// end, so while it runs the task it answers is approved in the database:
// it is counted as the answering task it is, not against the limit.
func TestInProcessAnswerAtThePreparersLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		ids := make([]string, countersign.MaxActiveTasksPerPreparer)
		runs := make([]string, len(ids))
		for i := range ids {
			ids[i] = w.Guess()
			runs[i] = w.Approve(ids[i], []byte("0"))
		}
		for i, id := range ids {
			job := answerJob(t, db, id, runs[i], i%2 == 0) // handed over by the approval, and as from the queue
			if err := w.Enclave.Answers.AnswerJob(ctx, job); err != nil {
				t.Fatal(err)
			}
			if got := w.Task(id); got.State != countersign.StateDone || got.NextTaskID == "" {
				t.Fatalf("game %d of %d: %s %s, next %q", i+1, len(ids), got.State, got.FailureReason, got.NextTaskID)
			}
		}
		if open := openTasks(t, w); len(open) != len(ids) {
			t.Fatalf("%d next turns waiting, want %d", len(open), len(ids))
		}
	})
}
