package enclave_test

import (
	"encoding/json"
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestRoundTripsPerAction holds the number of waits on PostgreSQL each
// action of the task layer costs (statements and batches, BEGIN and COMMIT
// included), measured through the real HTTP API: on a service whose unit of
// work is a handful of small rows, these waits, not the work, are what the
// time goes to. The budgets are what the design needs; a change that adds a
// round trip to a hot path fails here and has to say why.
func TestRoundTripsPerAction(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
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

	const n = 10
	var opens, cancels int64
	for range n {
		before := db.RoundTrips()
		id := open()
		mid := db.RoundTrips()
		cancel(id)
		opens, cancels = opens+mid-before, cancels+db.RoundTrips()-mid
	}
	approveAndAnswer := func() (approve, answer int64) {
		id := w.Pay()
		view, err := w.Owner.Client.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		opened, err := w.Owner.Open(view)
		if err != nil {
			t.Fatal(err)
		}
		before, wakeUps := db.RoundTrips(), db.QueueWakeUps()
		st, err := w.Owner.Approve(ctx, opened, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		// The queue's wake-up of other processes' workers is sent at most
		// every 100 ms: whether this approval pays for it depends on the
		// clock, so it is counted apart.
		approve = db.RoundTrips() - before - (db.QueueWakeUps() - wakeUps)
		before = db.RoundTrips()
		if err := w.Enclave.Answer(ctx, id, st.Run); err != nil {
			t.Fatal(err)
		}
		answer = db.RoundTrips() - before
		if got := w.Task(id).State; got != "done" {
			t.Fatalf("the answered task is %s", got)
		}
		return approve, answer
	}
	approveAndAnswer() // the job queue's first insert asks the server's version
	approve, answer := approveAndAnswer()

	t.Logf("round trips: guess_start %d, task_cancel %d, approval %d, answer run %d", opens/n, cancels/n, approve, answer)
	for _, c := range []struct {
		what      string
		got, most int64
	}{
		{"a guess_start", opens / n, 10},
		{"a task_cancel", cancels / n, 5},
		{"an approval", approve, 6},
		{"an answer run", answer, 7},
	} {
		if c.got > c.most {
			t.Errorf("%s waits on the database %d times, more than its budget of %d", c.what, c.got, c.most)
		}
	}
}
