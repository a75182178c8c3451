package inbox_test

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestListingWhileTasksLeaveOpen: the owner's listing of waiting tasks and
// a task's own view, read while the tasks are cancelled under them, never
// fail: a task that left open between its row and its content is left out
// of the waiting list, and its own view shows it as it is now. (A listing
// is not a snapshot: before, its content read found nothing and the
// owner got a 500.)
func TestListingWhileTasksLeaveOpen(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	agent := w.AgentClient()
	var failed atomic.Int64
	var lastErr atomic.Value
	for range 40 {
		var ids []string
		for range 5 {
			raw, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var a client.Awaiting
			_ = json.Unmarshal(raw, &a)
			ids = append(ids, a.TaskID)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(3)
			go func() {
				defer wg.Done()
				if _, err := agent.Call(ctx, w.Owner.Account, "probe", "task_cancel", map[string]any{"task_id": id}, nil); err != nil {
					t.Error(err)
				}
			}()
			go func() {
				defer wg.Done()
				if _, err := w.Owner.Client.Tasks(ctx, "waiting", "", 0); err != nil {
					failed.Add(1)
					lastErr.Store(err)
				}
			}()
			go func() {
				defer wg.Done()
				if v, err := w.Owner.Client.Task(ctx, id); err != nil && !isNotFound(err) {
					failed.Add(1)
					lastErr.Store(err)
				} else if err == nil && v.State == "open" && v.Content == nil {
					t.Errorf("task %s shown open without its content", id)
				}
			}()
		}
		wg.Wait()
	}
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d readings failed while tasks left open; the last: %v", n, lastErr.Load())
	}
}

// isNotFound is a cancelled task's view: a cancel deletes it.
func isNotFound(err error) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == 404
}
