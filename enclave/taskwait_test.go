package enclave_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"countersign"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestTaskWaitWakesOnTheEvent: with polling off, task_wait answers from the
// store's task event alone, within a second of the change it waited for, on
// both stores (NOTIFY on PostgreSQL, in-process on SQLite).
func TestTaskWaitWakesOnTheEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db, servicetest.WithTaskWaitPoll(-1))
		id := w.Pay()
		type answer struct {
			state string
			at    time.Time
			err   error
		}
		woke := make(chan answer, 1)
		go func() {
			st, err := w.AgentClient().Status(t.Context(), w.Owner.Account, "ledger", id, 30)
			woke <- answer{st.State, time.Now(), err}
		}()
		// The wait listens before it reads the task, so once it is
		// listening the change below can only reach it as an event.
		deadline := time.Now().Add(10 * time.Second)
		for db.Subscribers(w.Owner.Account) == 0 {
			select {
			case a := <-woke:
				t.Fatalf("task_wait answered %q %v before the task changed", a.state, a.err)
			case <-time.After(time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("task_wait never listened for the owner's task events")
			}
		}
		if _, err := w.Owner.Client.Cancel(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		changed := time.Now()
		select {
		case a := <-woke:
			if a.err != nil || a.state != string(countersign.StateCancelled) {
				t.Fatalf("task_wait answered %q %v, want cancelled", a.state, a.err)
			}
			if d := a.at.Sub(changed); d > time.Second {
				t.Fatalf("task_wait answered %s after the change", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("task_wait did not wake on the task's event")
		}
	})
}

// TestTaskWaitAnswersWhenItsRequestEnds: a task_wait whose request ends
// while it waits (as every request does when serve shuts down) answers the
// task's status, never an error, even when the end comes just as it has
// begun to listen, before its first look at the task.
func TestTaskWaitAnswersWhenItsRequestEnds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db, servicetest.WithTaskWaitPoll(-1))
		checked, err := w.Enclave.Calls.Authenticate(t.Context(), w.AgentKey)
		if err != nil {
			t.Fatal(err)
		}
		id := w.Pay()
		body := []byte(`{"operation": "task_wait", "task_id": "` + id + `", "timeout_s": 30}`)
		for i := range 40 {
			rctx, end := context.WithCancel(checked)
			type answer struct {
				raw []byte
				err error
			}
			answered := make(chan answer, 1)
			go func() {
				raw, err := w.Enclave.Calls.Call(rctx, w.AgentKey, w.Owner.Account, "ledger", "", body)
				answered <- answer{raw, err}
			}()
			for db.Subscribers(w.Owner.Account) == 0 {
				runtime.Gosched()
			}
			end() // the request ends as the wait begins
			select {
			case a := <-answered:
				var st struct{ State string }
				if a.err != nil || json.Unmarshal(a.raw, &st) != nil || st.State != string(countersign.StateOpen) {
					t.Fatalf("round %d: task_wait answered %s %v at its request's end, want the task open", i, a.raw, a.err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: task_wait did not answer when its request ended", i)
			}
			for db.Subscribers(w.Owner.Account) != 0 {
				runtime.Gosched()
			}
		}
	})
}
