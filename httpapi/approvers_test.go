package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/inbox"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// M-of-N approvers (SPEC §7, §13 `approvers`), through the HTTP API on
// loopback, on PostgreSQL, with real wallets and device keys.

// approversPolicy is a ledger policy asking about pay, approved by
// threshold of the owner and accounts.
func approversPolicy(threshold int, accounts ...string) string {
	list := `[]`
	if len(accounts) > 0 {
		list = `["` + accounts[0]
		for _, a := range accounts[1:] {
			list += `","` + a
		}
		list += `"]`
	}
	return fmt.Sprintf(`{"confirm":["pay"],"approvers":{"accounts":%s,"threshold":%d}}`, list, threshold)
}

// shared is a world whose ledger project is approved by threshold of its
// owner and n other accounts, each signed in on one device.
func shared(t *testing.T, threshold, n int) (*servicetest.World, []*device.Device) {
	t.Helper()
	w := servicetest.New(t, storetest.Postgres(t))
	var approvers []*device.Device
	var accounts []string
	for range n {
		d := w.NewOwner()
		approvers = append(approvers, d)
		accounts = append(accounts, d.Account)
	}
	w.PutProject("ledger", "ledger", approversPolicy(threshold, accounts...), nil)
	return w, approvers
}

// approveAs opens a task on d and approves it with d's own account.
func approveAs(t *testing.T, d *device.Device, id string) (client.TaskState, error) {
	t.Helper()
	o := open(t, d, id)
	return d.Approve(ctx, o, nil, "")
}

func mustApprove(t *testing.T, d *device.Device, id string) client.TaskState {
	t.Helper()
	st, err := approveAs(t, d, id)
	if err != nil {
		t.Fatalf("%s's approval of %s: %v", d.Account, id, err)
	}
	return st
}

// TestTwoOfThreeInParallel: two approvers approve at the same moment; the
// threshold is crossed once, one answer says approved with the run and the
// other open with one approval, and the write happens once. Each approver
// saw the task in its own inbox and on its event stream, marked with the
// owner, and the agent saw the count grow.
func TestTwoOfThreeInParallel(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 2)
	bob, carol := ap[0], ap[1]
	w.StartJobs()
	events, err := bob.Client.Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		id := w.Pay()
		for _, d := range ap {
			page, err := d.Client.Tasks(ctx, "waiting", "", 0)
			if err != nil || !slices.ContainsFunc(page.Tasks, func(v client.TaskView) bool { return v.ID == id }) {
				t.Fatalf("%s's inbox lacks the task: %v", d.Account, err)
			}
			v, _ := d.Client.Task(ctx, id)
			a := v.Approvals
			want := []string{w.Owner.Account, bob.Account, carol.Account}
			sort.Strings(want[1:])
			if v.Owner != w.Owner.Account || v.Role != client.RoleApprover || v.Project != "ledger" || v.Locked || a == nil ||
				a.Have != 0 || a.Need != 2 || !slices.Equal(a.Approvers, want) || len(a.By) != 0 || a.Approved {
				t.Fatalf("%s's view %+v %+v", d.Account, v, a)
			}
		}
		if round == 0 {
			waitEvent(t, events, id, "open")
			if st := w.Status("ledger", id); st.Status != "awaiting_owner" || st.Approvals == nil || *st.Approvals != (client.ApprovalsCount{Have: 0, Need: 2}) {
				t.Fatalf("task_status before any approval: %+v", st)
			}
		}
		// Both sign first, then both send at once.
		reqs := map[*device.Device]client.ApproveRequest{}
		for _, d := range ap {
			r, err := d.ApproveRequest(open(t, d, id), nil, "")
			if err != nil {
				t.Fatal(err)
			}
			reqs[d] = r
		}
		var wg sync.WaitGroup
		answers := make([]client.TaskState, 2)
		errs := make([]error, 2)
		for i, d := range ap {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = d.Client.Approve(ctx, id, reqs[d])
			}()
		}
		wg.Wait()
		var approved, open int
		for i, a := range answers {
			if errs[i] != nil {
				t.Fatalf("a parallel approval: %v", errs[i])
			}
			switch a.State {
			case "approved":
				approved++
				if a.Run == "" || a.Approvals == nil || a.Approvals.Have != 2 || !a.Approvals.Approved {
					t.Fatalf("the approving answer %+v", a)
				}
			case "open":
				open++
				if a.Run != "" || a.Approvals == nil || a.Approvals.Have != 1 || a.Approvals.Need != 2 {
					t.Fatalf("the recording answer %+v %+v", a, a.Approvals)
				}
			}
		}
		if approved != 1 || open != 1 {
			t.Fatalf("answers %+v: want one approved and one open", answers)
		}
		w.WaitState(id, countersign.StateDone)
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("the write happened %d times", n)
		}
		v, _ := w.Owner.Client.Task(ctx, id)
		if v.Role != client.RoleOwner || v.Approvals == nil || v.Approvals.Have != 2 || len(v.Approvals.By) != 2 || v.Approvals.Approved {
			t.Fatalf("the owner's view once done %+v %+v", v, v.Approvals)
		}
		if round == 0 {
			waitEvent(t, events, id, "done")
		}
	}
}

// waitEvent waits for a task event on an event stream.
func waitEvent(t *testing.T, events <-chan client.TaskEvent, id, state string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			if ev.TaskID == id && ev.State == state {
				return
			}
		case <-deadline:
			t.Fatalf("no event %s %s", id, state)
		}
	}
}

// TestApprovalsCountOncePerAccount: the owner alone never reaches a
// threshold of 2; each account's second approval, fresh or replayed, is a
// conflict; an approval replayed by another account, or signed by a key
// that is not the account's, is refused; the task stays open until a
// second account approves, and the agent sees how far it is.
func TestApprovalsCountOncePerAccount(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 2)
	bob, carol := ap[0], ap[1]
	id := w.Pay()

	first := mustApprove(t, w.Owner, id)
	if first.State != "open" || first.Run != "" || first.Approvals.Have != 1 || !first.Approvals.Approved {
		t.Fatalf("the owner's approval: %+v %+v", first, first.Approvals)
	}
	again, _ := w.Owner.ApproveRequest(open(t, w.Owner, id), nil, "")
	status, body := postJSON(t, w.Owner.Client, "/inbox/tasks/"+id+"/approve", again)
	if status != 409 || body["reason"] != "conflict" || body["terminal"] != true {
		t.Fatalf("the owner's second approval: %d %v", status, body)
	}
	if st := w.Status("ledger", id); st.State != "open" || st.Approvals == nil || st.Approvals.Have != 1 {
		t.Fatalf("task_status after one approval: %+v", st)
	}

	signed, _ := bob.ApproveRequest(open(t, bob, id), nil, "")
	if _, err := bob.Client.Approve(ctx, id, signed); err != nil {
		t.Fatal(err)
	}
	// bob's approval counted: the task, at 2 of 2, is approved.
	if got := w.Task(id).State; got != countersign.StateApproved {
		t.Fatalf("after two accounts: %s", got)
	}
	// Replays once the task moved: closed, whoever sends them.
	status, body = postJSON(t, bob.Client, "/inbox/tasks/"+id+"/approve", signed)
	if status != 409 || body["reason"] != "task_closed" || body["state"] != "approved" {
		t.Fatalf("bob's replay: %d %v", status, body)
	}
	status, body = postJSON(t, carol.Client, "/inbox/tasks/"+id+"/approve", signed)
	if status != 409 || body["reason"] != "task_closed" {
		t.Fatalf("bob's approval replayed by carol: %d %v", status, body)
	}
	_ = carol
}

// TestSharedApprovalRefusals: every refusal an approval of a shared task
// can meet, none of which records anything, spends a nonce or moves the
// task; the good approvals still count afterwards.
func TestSharedApprovalRefusals(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 3, 2)
	bob, carol := ap[0], ap[1]
	stranger := w.NewOwner()
	id, other := w.Pay(), w.Pay()

	good, _ := bob.ApproveRequest(open(t, bob, id), nil, "")
	noted, _ := bob.ApproveRequest(open(t, bob, id), nil, "please")
	impostor := *stranger
	impostor.Account = carol.Account // carol's sentence, a key that is not carol's
	forgedView, _ := carol.Client.Task(ctx, id)
	forgedOpen, _ := carol.Open(forgedView)
	forged, _ := impostor.ApproveRequest(forgedOpen, nil, "")
	otherTask, _ := bob.ApproveRequest(open(t, bob, other), nil, "")
	// carol approves first, so her second is a conflict.
	mustApprove(t, carol, id)
	carolAgain, _ := carol.ApproveRequest(open(t, carol, id), nil, "")

	for _, tc := range []struct {
		name   string
		as     *device.Device
		req    any
		status int
		reason string
	}{
		{"a note", bob, noted, 400, "invalid_request"},
		{"a supply", bob, with(good, func(r *client.ApproveRequest) { r.Supplied = []byte("x") }), 400, "invalid_request"},
		{"another task's approval", bob, otherTask, 403, "confirmation_required"},
		{"another hash", bob, with(good, func(r *client.ApproveRequest) { r.TaskHash = otherTask.TaskHash }), 403, "confirmation_required"},
		{"another summary", bob, with(good, func(r *client.ApproveRequest) { r.Summary = "pay $1 to someone else" }), 403, "confirmation_required"},
		{"bob's approval sent by carol", carol, good, 409, "conflict"},
		{"a key that is not carol's", carol, forged, 409, "conflict"},
		{"carol again", carol, carolAgain, 409, "conflict"},
		{"an account not listed", stranger, good, 404, "task_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postJSON(t, tc.as.Client, "/inbox/tasks/"+id+"/approve", tc.req)
			if status != tc.status || body["reason"] != tc.reason || body["error"] == "" {
				t.Fatalf("%d %v, want %d %s", status, body, tc.status, tc.reason)
			}
		})
	}
	// A forged or misdirected approval by an account that has not approved
	// yet: its signature does not verify for that account.
	dave := w.NewOwner()
	w.PutProject("ledger", "ledger", approversPolicy(3, bob.Account, carol.Account, dave.Account), nil)
	fresh := w.Pay()
	goodBob, _ := bob.ApproveRequest(open(t, bob, fresh), nil, "")
	impostor.Account = dave.Account
	daveView, _ := dave.Client.Task(ctx, fresh)
	daveOpen, err := dave.Open(daveView)
	if err != nil {
		t.Fatal(err)
	}
	forgedDave, _ := impostor.ApproveRequest(daveOpen, nil, "")
	for name, tc := range map[string]struct {
		as  *device.Device
		req client.ApproveRequest
	}{
		"bob's approval sent by dave":   {dave, goodBob},
		"a key that is not dave's":      {dave, forgedDave},
		"dave's approval sent by carol": {carol, forgedDave},
	} {
		status, body := postJSON(t, tc.as.Client, "/inbox/tasks/"+fresh+"/approve", tc.req)
		if status != 403 || body["reason"] != "confirmation_required" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	// Nothing was recorded or spent: bob's good approvals count.
	if st := mustApprove(t, bob, id); st.State != "open" || st.Approvals.Have != 2 {
		t.Fatalf("bob after the refusals: %+v %+v", st, st.Approvals)
	}
	if _, err := bob.Client.Approve(ctx, fresh, goodBob); err != nil {
		t.Fatalf("bob's signed approval after the refusals: %v", err)
	}
	// The task's preparer never approves it, even when the policy names
	// its account.
	preparer := addAgent(t, w, carol.Account)
	grant(t, w, "ledger", w.Agent, carol.Account)
	raw, err := preparer.Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	_ = jsonUnmarshal(raw, &a)
	byPreparer, _ := carol.ApproveRequest(open(t, carol, a.TaskID), nil, "")
	status, body := postJSON(t, carol.Client, "/inbox/tasks/"+a.TaskID+"/approve", byPreparer)
	if status != 403 || body["reason"] != "confirmation_required" {
		t.Fatalf("the preparer's approval: %d %v", status, body)
	}
	// A batch never holds a shared task.
	o1, o2 := open(t, w.Owner, id), open(t, w.Owner, other)
	batch, err := w.Owner.BatchApproveRequest([]*device.Opened{o1, o2})
	if err != nil {
		t.Fatal(err)
	}
	status, body = postJSON(t, w.Owner.Client, "/inbox/tasks/approve", batch)
	if status != 400 || body["reason"] != "invalid_request" || body["task_id"] == nil {
		t.Fatalf("a batch of shared tasks: %d %v", status, body)
	}
	// Expired before the approval arrived.
	late := w.Pay()
	lateReq, _ := bob.ApproveRequest(open(t, bob, late), nil, "")
	w.Clock.Add(24*time.Hour + time.Second)
	status, body = postJSON(t, bob.Client, "/inbox/tasks/"+late+"/approve", lateReq)
	if status != 409 || body["reason"] != "task_expired" {
		t.Fatalf("an expired task: %d %v", status, body)
	}
	if got := w.Task(id).State; got != countersign.StateExpired && got != countersign.StateOpen {
		t.Fatalf("the refusals moved the task to %s", got)
	}
}

// TestOneRejectionEndsIt: any approver's rejection ends a shared task,
// naming who rejected it, whatever approvals it had; nothing is written.
func TestOneRejectionEndsIt(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 2)
	bob, carol := ap[0], ap[1]
	w.StartJobs()
	id := w.Pay()
	mustApprove(t, bob, id)
	late, _ := w.Owner.ApproveRequest(open(t, w.Owner, id), nil, "")
	if st, err := carol.Client.Reject(ctx, id, nil); err != nil || st.State != "rejected" {
		t.Fatalf("carol's rejection: %+v %v", st, err)
	}
	for _, d := range []*device.Device{w.Owner, bob, carol} {
		v, err := d.Client.Task(ctx, id)
		if err != nil || v.State != "rejected" || v.RejectedBy != carol.Account || v.Content != nil || v.DeviceCopy != nil {
			t.Fatalf("%s's view of the rejected task: %+v %v", d.Account, v, err)
		}
	}
	status, body := postJSON(t, w.Owner.Client, "/inbox/tasks/"+id+"/approve", late)
	if status != 409 || body["reason"] != "task_closed" || body["state"] != "rejected" {
		t.Fatalf("an approval after the rejection: %d %v", status, body)
	}
	if st := w.Status("ledger", id); st.State != "rejected" || st.Approvals != nil || st.Status != "" {
		t.Fatalf("task_status of the rejected task: %+v", st)
	}
	if w.Effects.Count(id) != 0 {
		t.Fatal("a rejected task was carried out")
	}
	// The owner's history of the task names an approver as the actor.
	h, err := w.Owner.Client.History(ctx, id)
	if err != nil || len(h) != 1 || h[0].Actor != "approver" || h[0].To != "rejected" {
		t.Fatalf("history %+v %v", h, err)
	}
}

// TestRemovedApproverDropped: when the owner takes an approver off the
// policy, its earlier approval no longer counts and it no longer sees the
// project's waiting tasks; the task waits for the approvals the others
// give, and, approved after the change of policy, is void.
func TestRemovedApproverDropped(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 2)
	bob, carol := ap[0], ap[1]
	w.StartJobs()
	id := w.Pay()
	mustApprove(t, bob, id)
	putProject(t, w, approversPolicy(2, carol.Account))
	if _, err := bob.Client.Task(ctx, id); reason(err) != "task_not_found" {
		t.Fatalf("a removed approver still sees the task: %v", err)
	}
	if page, _ := bob.Client.Tasks(ctx, "waiting", "", 0); len(page.Tasks) != 0 {
		t.Fatalf("a removed approver lists %d tasks", len(page.Tasks))
	}
	v, _ := w.Owner.Client.Task(ctx, id)
	if v.Approvals == nil || v.Approvals.Have != 0 || len(v.Approvals.By) != 0 || slices.Contains(v.Approvals.Approvers, bob.Account) {
		t.Fatalf("the owner's view after the removal %+v", v.Approvals)
	}
	if st := mustApprove(t, carol, id); st.State != "open" || st.Approvals.Have != 1 {
		t.Fatalf("carol's approval after bob's was dropped: %+v %+v", st, st.Approvals)
	}
	if st := mustApprove(t, w.Owner, id); st.State != "approved" {
		t.Fatalf("the owner's approval: %+v", st)
	}
	w.WaitState(id, countersign.StateVoid)
	if w.Effects.Count(id) != 0 {
		t.Fatal("a task approved after its policy changed was carried out")
	}
	// The owner's own policy naming the owner is refused.
	conf, text := projectConfirmation(t, w, approversPolicy(2, w.Owner.Account))
	if _, err := w.Owner.Client.PutProject(ctx, "ledger", text, conf); reason(err) != "invalid_request" {
		t.Fatalf("a policy naming its owner as an approver: %v", err)
	}
}

// projectConfirmation is the owner's confirmation of the ledger project's
// text with policy.
func projectConfirmation(t *testing.T, w *servicetest.World, policy string) (client.Confirmation, string) {
	t.Helper()
	text, err := inbox.ProjectText("ledger", []byte(policy), []string{w.Agent})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := w.Owner.Confirm(approval.ActionSetProject("ledger", text))
	if err != nil {
		t.Fatal(err)
	}
	return conf, text
}

func putProject(t *testing.T, w *servicetest.World, policy string) {
	t.Helper()
	conf, text := projectConfirmation(t, w, policy)
	if _, err := w.Owner.Client.PutProject(ctx, "ledger", text, conf); err != nil {
		t.Fatal(err)
	}
}

// TestApproverAuthorizationMatrix: an approver sees, approves and
// rejects the owner's shared tasks and nothing else of the owner's: not
// the tasks its policy does not share (an input task of the same project,
// another project's), nor a shared task's history, cancel or Got it, nor
// the owner's projects, devices, webhook, deliveries or history.
func TestApproverAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 1)
	bob := ap[0]
	r := newReceiver(t)
	wh := nameWebhook(t, w, r.srv.URL+"/hooks")
	r.mu.Lock()
	r.secret = wh.Secret
	r.mu.Unlock()
	sharedTask := w.Pay()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 3, "invoice": "INV-9"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var withFile client.Awaiting
	_ = jsonUnmarshal(raw, &withFile)
	notShared := w.Guess() // another project's
	raw, err = w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "collect", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var input client.Awaiting
	_ = jsonUnmarshal(raw, &input)
	notice := w.Tell()

	// What an approver may do with a shared task.
	if _, err := bob.Client.Task(ctx, sharedTask); err != nil {
		t.Errorf("bob's view of a shared task: %v", err)
	}
	o := open(t, bob, withFile.TaskID)
	blob, err := bob.Client.File(ctx, withFile.TaskID, 0)
	if err != nil {
		t.Fatalf("bob's file of a shared task: %v", err)
	}
	if data, err := bob.OpenFile(o, 0, blob); err != nil || string(data) != "INV-9" {
		t.Errorf("bob opens the file: %q %v", data, err)
	}
	if org, err := bob.Client.Origin(ctx, sharedTask); err != nil || org.Run == "" {
		t.Errorf("bob's origin of a shared task: %+v %v", org, err)
	}

	ownerOnly := map[string]func(id string) error{
		"history":     func(id string) error { _, err := bob.Client.History(ctx, id); return err },
		"cancel":      func(id string) error { _, err := bob.Client.Cancel(ctx, id); return err },
		"acknowledge": func(id string) error { _, err := bob.Client.Acknowledge(ctx, id); return err },
	}
	for name, call := range ownerOnly {
		if err := call(sharedTask); reason(err) != "task_not_found" {
			t.Errorf("bob's %s of a shared task: %v", name, err)
		}
	}
	for what, id := range map[string]string{"another project's task": notShared, "an input task": input.TaskID, "a notice": notice} {
		for name, call := range map[string]func() error{
			"task":    func() error { _, err := bob.Client.Task(ctx, id); return err },
			"file":    func() error { _, err := bob.Client.File(ctx, id, 0); return err },
			"origin":  func() error { _, err := bob.Client.Origin(ctx, id); return err },
			"history": func() error { _, err := bob.Client.History(ctx, id); return err },
			"approve": func() error {
				_, err := bob.Client.Approve(ctx, id, client.ApproveRequest{TaskHash: "00", Approval: client.Confirmation{At: 1}})
				return err
			},
			"reject":      func() error { _, err := bob.Client.Reject(ctx, id, nil); return err },
			"acknowledge": func() error { _, err := bob.Client.Acknowledge(ctx, id); return err },
			"cancel":      func() error { _, err := bob.Client.Cancel(ctx, id); return err },
		} {
			var e *client.Error
			if err := call(); !errors.As(err, &e) || e.Status != 404 || e.Reason != "task_not_found" || e.State != "" {
				t.Errorf("bob's %s of %s: %v", name, what, err)
			}
		}
	}
	page, err := bob.Client.Tasks(ctx, "waiting", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, v := range page.Tasks {
		listed = append(listed, v.ID)
	}
	sort.Strings(listed)
	want := []string{sharedTask, withFile.TaskID}
	sort.Strings(want)
	if !slices.Equal(listed, want) {
		t.Errorf("bob lists %v, want the shared tasks %v", listed, want)
	}
	if n, err := bob.Client.CancelMatching(ctx, w.Agent, ""); err != nil || n != 0 {
		t.Errorf("bob cancelled %d of the owner's tasks (%v)", n, err)
	}
	if ps, err := bob.Client.Projects(ctx); err != nil || len(ps) != 0 {
		t.Errorf("bob lists projects %v (%v)", ps, err)
	}
	devices, err := bob.Client.Devices(ctx)
	if err != nil || len(devices) != 1 || !devices[0].This {
		t.Errorf("bob lists devices %+v (%v)", devices, err)
	}
	if hook, err := bob.Client.Webhook(ctx); err == nil && hook.URL != nil {
		t.Errorf("bob reads a webhook %+v", hook)
	}
	if ds, err := bob.Client.Deliveries(ctx); err != nil || len(ds) != 0 {
		t.Errorf("bob reads deliveries %+v (%v)", ds, err)
	}
	if h, err := bob.Client.Activity(ctx, client.ActivityQuery{}); err != nil || len(h.Entries) != 0 {
		t.Errorf("bob reads history %+v (%v)", h.Entries, err)
	}
	if err := bob.Client.DeleteProject(ctx, "ledger", client.Confirmation{}); err == nil {
		t.Error("bob removed the owner's project")
	}
	for _, id := range []string{sharedTask, withFile.TaskID, notShared, input.TaskID, notice} {
		if got := w.Task(id).State; got != countersign.StateOpen {
			t.Fatalf("bob's accesses moved %s to %s", id, got)
		}
	}
	// An approver's rejection is the one move it makes.
	if st, err := bob.Client.Reject(ctx, sharedTask, nil); err != nil || st.State != "rejected" {
		t.Fatalf("bob's rejection: %+v %v", st, err)
	}
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// TestApproversWebhooks: every approver's own webhook hears of a shared
// task's moves as the owner's does, the same events with the same members
// (nothing more), each logged among that account's deliveries; a task the
// owner alone approves reaches the owner's webhook alone.
func TestApproversWebhooks(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 2)
	bob := ap[0] // carol names no webhook
	w.StartJobs()
	receivers := map[string]*receiver{}
	for _, d := range []*device.Device{w.Owner, bob} {
		r := newReceiver(t)
		url := r.srv.URL + "/hooks/" + d.Account[:8]
		conf, err := d.Confirm(approval.ActionNameWebhook(url))
		if err != nil {
			t.Fatal(err)
		}
		wh, err := d.Client.PutWebhook(ctx, url, conf)
		if err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.secret = wh.Secret
		r.mu.Unlock()
		receivers[d.Account] = r
	}
	id := w.Pay()
	mustApprove(t, bob, id)
	mustApprove(t, w.Owner, id)
	w.WaitState(id, countersign.StateDone)
	types := func(events []map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, e := range events {
			if e["task_id"] == id {
				out[fmt.Sprint(e["type"])] = e
			}
		}
		return out
	}
	owners := types(waitEvents(t, receivers[w.Owner.Account], 3))
	bobs := types(waitEvents(t, receivers[bob.Account], 3))
	for _, typ := range []string{"task_created", "task_approved", "task_answered"} {
		o, b := owners[typ], bobs[typ]
		if o == nil || b == nil {
			t.Fatalf("%s: the owner heard %v, bob %v", typ, o, b)
		}
		if b["owner"] != w.Owner.Account || b["project"] != "ledger" || b["preparer"] != w.Agent {
			t.Errorf("bob's %s names %v", typ, b)
		}
		for k, v := range o {
			if k != "id" && k != "at" && fmt.Sprint(b[k]) != fmt.Sprint(v) {
				t.Errorf("%s: bob's %s is %v, the owner's %v", typ, k, b[k], v)
			}
		}
		if len(b) != len(o) {
			t.Errorf("%s: bob's event has members %v, the owner's %v", typ, b, o)
		}
	}
	// The receiver hears an event before its delivery is logged (the log
	// row follows the receiver's answer): wait for the third row.
	var deliveries []client.Delivery
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		deliveries, err = bob.Client.Deliveries(ctx)
		if err != nil || len(deliveries) >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(deliveries) < 3 || deliveries[0].TaskID != id {
		t.Fatalf("bob's deliveries %+v %v", deliveries, err)
	}
	// An input task of the same project is the owner's alone.
	if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "collect", nil, nil); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, receivers[w.Owner.Account], 4)
	time.Sleep(time.Second)
	if n := len(receivers[bob.Account].events()); n != 3 {
		t.Fatalf("bob's webhook heard %d events, want the shared task's 3", n)
	}
}

// TestApproverUnlock: an approver's device signed in after a shared task
// opened is given its key at sign-in, as an owner's is; the unlock counts
// the approver's waiting tasks among its own.
func TestApproverUnlock(t *testing.T) {
	t.Parallel()
	w, ap := shared(t, 2, 1)
	bob := ap[0]
	id := w.Pay()
	later := w.Device(bob.Signer.(device.WalletSigner).Wallet)
	if _, err := later.SignIn(ctx, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	v, err := later.Client.Task(ctx, id)
	if err != nil || v.Locked || v.DeviceCopy == nil {
		t.Fatalf("bob's later device: locked %v (%v)", v.Locked, err)
	}
	if _, err := later.Open(v); err != nil {
		t.Fatalf("bob's later device opens the task: %v", err)
	}
	if n, err := later.Client.Unlock(ctx); err != nil || n != 1 {
		t.Fatalf("unlock: %d %v", n, err)
	}
	// A stranger's device, told it is an approver by a lying listing,
	// would open nothing: it holds no copy.
	stranger := w.NewOwner()
	if _, err := stranger.Client.Task(ctx, id); reason(err) != "task_not_found" {
		t.Fatalf("a stranger reads the task: %v", err)
	}
}
