package inbox_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestExpiryIsEveryonesNotOnlyTheSweeps: once a task's expires_at has come,
// and before any sweep has run, no one can move it and no one reads what it
// showed: the owner's views carry no content, device copy or files and say
// expired; reject, cancel and Got it are 409 task_expired; a bulk cancel
// counts nothing; the agent sees it expired and its cancel is task_closed;
// an unlock wraps nothing for it.
func TestExpiryIsEveryonesNotOnlyTheSweeps(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		confirm := w.Pay()
		raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "tell", map[string]any{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var notice client.Awaiting
		if err := json.Unmarshal(raw, &notice); err != nil || notice.TaskID == "" {
			t.Fatalf("notice: %s %v", raw, err)
		}
		if v, err := w.Owner.Client.Task(ctx, confirm); err != nil || v.Content == nil || v.DeviceCopy == nil {
			t.Fatalf("before its expiry the task shows %+v %v", v, err)
		}

		w.Clock.Add(countersign.DefaultTaskLife) // expires_at has come; no sweep runs

		for _, id := range []string{confirm, notice.TaskID} {
			v, err := w.Owner.Client.Task(ctx, id)
			if err != nil || v.State != string(countersign.StateExpired) || v.Content != nil || v.DeviceCopy != nil || len(v.Files) != 0 {
				t.Errorf("an expired task's view: %+v %v", v, err)
			}
		}
		page, err := w.Owner.Client.Tasks(ctx, "waiting", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Tasks {
			if v.Content != nil || v.DeviceCopy != nil || v.State != string(countersign.StateExpired) {
				t.Errorf("the waiting list shows an expired task %+v", v)
			}
		}
		if _, err := w.Owner.Client.File(ctx, confirm, 0); !refusedWith(err, 409, "task_closed") {
			t.Errorf("a file of an expired task: %v", err)
		}
		for name, move := range map[string]func() (client.TaskState, error){
			"reject":      func() (client.TaskState, error) { return w.Owner.Client.Reject(ctx, confirm, nil) },
			"cancel":      func() (client.TaskState, error) { return w.Owner.Client.Cancel(ctx, confirm) },
			"acknowledge": func() (client.TaskState, error) { return w.Owner.Client.Acknowledge(ctx, notice.TaskID) },
		} {
			if st, err := move(); !refusedWith(err, 409, "task_expired") {
				t.Errorf("%s of an expired task: %+v %v", name, st, err)
			}
		}
		if n, err := w.Owner.Client.CancelMatching(ctx, w.Agent, ""); err != nil || n != 0 {
			t.Errorf("a bulk cancel counted %d expired tasks (%v)", n, err)
		}
		if st := w.Status("ledger", confirm); st.State != string(countersign.StateExpired) {
			t.Errorf("the agent reads %q", st.State)
		}
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "task_cancel", map[string]any{"task_id": confirm}, nil); err == nil || !strings.HasPrefix(err.Error(), "task_closed: ") {
			t.Errorf("the agent's cancel of an expired task: %v", err)
		}
		if n, err := w.Owner.Client.Unlock(ctx); err != nil || n != 0 {
			t.Errorf("unlock counted %d expired tasks waiting (%v)", n, err)
		}
		if got := w.Task(confirm); got.State != countersign.StateOpen {
			t.Fatalf("something moved the task: %s", got.State)
		}
	})
}

func refusedWith(err error, status int, reason string) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == status && e.Reason == reason
}
