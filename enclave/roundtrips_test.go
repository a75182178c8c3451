package enclave_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// TestRoundTripsPerAction holds the number of waits on PostgreSQL each
// action of the task layer costs (statements and batches, BEGIN and COMMIT
// included), and the statements of the two hottest, measured through the
// real HTTP API: on a service whose unit of
// work is a handful of small rows, these waits, not the work, are what the
// time goes to. The budgets are what the design needs; a change that adds a
// round trip to a hot path fails here and has to say why.
func TestRoundTripsPerAction(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db, servicetest.WithConnector(servicetest.Notes(&servicetest.Effects{})))
	agent := w.AgentClient()
	open := func() string {
		raw, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a client.Awaiting
		if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
			t.Fatalf("guess_start answered %s", raw)
		}
		return a.TaskID
	}
	cancel := func(id string) {
		if _, err := agent.Call(ctx, w.Owner.Account, "probe", "task_cancel", map[string]any{"task_id": id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	cancel(open()) // statements prepared, pools filled
	// An agent's poll of its task.
	polled := open()
	status := func() int64 {
		before := db.RoundTrips()
		if _, err := agent.Call(ctx, w.Owner.Account, "probe", "task_status", map[string]any{"task_id": polled}, nil); err != nil {
			t.Fatal(err)
		}
		return db.RoundTrips() - before
	}
	status()
	poll := status()
	cancel(polled)

	const n = 10
	var opens, cancels, pairStmts int64
	for range n {
		before, stmts := db.RoundTrips(), db.Statements()
		id := open()
		mid := db.RoundTrips()
		cancel(id)
		opens, cancels = opens+mid-before, cancels+db.RoundTrips()-mid
		pairStmts += db.Statements() - stmts
	}
	// Approvals are made as in a process that runs answers: each hands its
	// job to this process at commit (here to a channel the test reads; the
	// runs are then made one by one).
	handed := handedOver(t, db, 16)
	// Each answer run is made from the job as handed over, with what the
	// approval's commit read of its task, but the last, which is made as
	// from the queue, reading its task itself.
	approveAndAnswer := func(k int) (approve, answer, queued int64) {
		var ids []string
		var jobs []store.AnswerJob
		var opened []*device.Opened
		for range k {
			id := w.Pay()
			ids, opened = append(ids, id), append(opened, w.Open(id))
		}
		for i, o := range opened {
			before := db.RoundTrips()
			st, err := w.Owner.Approve(ctx, o, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			approve = max(approve, db.RoundTrips()-before)
			j := <-handed
			if j.TaskID != ids[i] || j.Run != st.Run || j.Inputs == nil || j.Inputs.Task.State != "approved" {
				t.Fatalf("handed off %+v for %s", j, ids[i])
			}
			jobs = append(jobs, j)
		}
		for i, j := range jobs {
			if i == len(jobs)-1 {
				j.Inputs = nil
			}
			before := db.RoundTrips()
			if err := w.Enclave.Answers.AnswerJob(ctx, j); err != nil {
				t.Fatal(err)
			}
			if n := db.RoundTrips() - before; i == len(jobs)-1 {
				queued = n
			} else {
				answer = max(answer, n)
			}
			if got := w.Task(j.TaskID).State; got != "done" {
				t.Fatalf("the answered task is %s", got)
			}
		}
		return approve, answer, queued
	}
	approveAndAnswer(2)
	approve, answer, queued := approveAndAnswer(3)
	// Ten confirm tasks approved in one batch, under one signature.
	var ten []*device.Opened
	for i := range 10 {
		ten = append(ten, w.Open(w.PaySummed(fmt.Sprintf("pay $%d.00 to Acme Corp", i+1))))
	}
	before := db.RoundTrips()
	if _, err := w.Owner.BatchApprove(ctx, ten); err != nil {
		t.Fatal(err)
	}
	batch := db.RoundTrips() - before
	// Their runs, which leave the agent room for the turns below.
	for range ten {
		j := <-handed
		if err := w.Enclave.Answers.AnswerJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// An answer run that opens the next turn of its thread: a guessing
	// game's turn answered with a wrong guess.
	var turn, turnStmts int64
	for range 2 {
		id := w.Guess()
		run := w.Approve(id, []byte("0"))
		j := <-handed
		if j.TaskID != id || j.Run != run {
			t.Fatalf("handed off %+v for %s", j, id)
		}
		before, stmts := db.RoundTrips(), db.Statements()
		if err := w.Enclave.Answers.AnswerJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		turn, turnStmts = db.RoundTrips()-before, db.Statements()-stmts
		if k := w.Task(id); k.State != "done" || k.NextTaskID == "" {
			t.Fatalf("the answered turn is %s, next %q", k.State, k.NextTaskID)
		}
	}
	// The owner's own moves: a rejection, and a cancel.
	ownerMove := func(f func(id string) (client.TaskState, error)) int64 {
		id := w.Pay()
		before := db.RoundTrips()
		if st, err := f(id); err != nil || st.State == "open" {
			t.Fatalf("the owner's move: %+v, %v", st, err)
		}
		return db.RoundTrips() - before
	}
	reject := ownerMove(func(id string) (client.TaskState, error) { return w.Owner.Client.Reject(ctx, id, nil) })
	ownerCancel := ownerMove(func(id string) (client.TaskState, error) { return w.Owner.Client.Cancel(ctx, id) })
	// A write carried out at once, which the owner's history keeps, and a
	// read, which it does not.
	direct := func(op string) int64 {
		before := db.RoundTrips()
		if _, err := agent.Call(ctx, w.Owner.Account, "notes", op, map[string]any{}, nil); err != nil {
			t.Fatal(err)
		}
		return db.RoundTrips() - before
	}
	direct("note")
	write, read := direct("note"), direct("look")

	for _, c := range []struct {
		what      string
		got, most int64
	}{
		// Declared in process: its start, its task and its end in one
		// transaction, which also checks the admission an earlier call kept
		// (no read of the key and project of its own).
		{"a guess_start", opens / n, 2},
		{"a task_cancel", cancels / n, 2},
		// Lookups, each committing on its own: the task with its
		// admission's check, then its outcome.
		{"a task_status", poll, 2},
		{"an approval", approve, 2},
		{"a batch of ten approvals", batch, 3},
		{"an owner's rejection", reject, 3},
		{"an owner's cancel", ownerCancel, 3},
		{"an answer run, handed over", answer, 2},
		{"an answer run from the queue", queued, 3},
		// The probe's guess is declared in process: the claim, the next
		// turn and the end in one transaction.
		{"an answer run that opens the next turn", turn, 2},
		// The write's history entry needs the owner's devices, read in the
		// run's end: one more than a read.
		{"a direct write", write, read + 1},
		{"a read", read, 3},
	} {
		t.Logf("%s: %d round trips (budget %d)", c.what, c.got, c.most)
		if c.got > c.most {
			t.Errorf("%s waits on the database %d times, more than its budget of %d", c.what, c.got, c.most)
		}
	}
	// Within its round trips, each statement is parsed, planned and run
	// on its own: the two hottest actions' statements, BEGIN and COMMIT
	// included. A task's row is written once with its receipt, an
	// in-process answer's claim and end are one write with its events in
	// one INSERT, a move's event and drops go in its own statement, a
	// transaction's events go in one NOTIFY, and the reads that go
	// together are one statement.
	for _, c := range []struct {
		what      string
		got, most int64
	}{
		{"a guess_start and its task_cancel", pairStmts / n, 21},
		{"an answer run that opens the next turn", turnStmts, 15},
	} {
		t.Logf("%s: %d statements (budget %d)", c.what, c.got, c.most)
		if c.got > c.most {
			t.Errorf("%s sends %d statements, more than its budget of %d", c.what, c.got, c.most)
		}
	}
}
