package httpapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/device"
	"countersign/enclave/calls"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

func open(t *testing.T, d *device.Device, id string) *device.Opened {
	t.Helper()
	view, err := d.Client.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	o, err := d.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestApprovalRefusals produces every row of SPEC §4's owner table that an
// approval can meet; none of them spends the approval's nonce or moves the
// task, and the good approval still goes through afterwards.
func TestApprovalRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		owner := w.Owner
		confirmTask, inputTask, notice := w.Pay(), w.Guess(), w.Tell()
		other := w.Pay()
		co, io := open(t, owner, confirmTask), open(t, owner, inputTask)
		good, err := owner.ApproveRequest(co, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		withInput, _ := owner.ApproveRequest(io, []byte("5"), "")
		otherRecipient := *owner
		otherRecipient.Recipient = "elsewhere"
		fromElsewhere, _ := otherRecipient.ApproveRequest(co, nil, "")
		stranger := w.NewOwner()
		impostor := *stranger
		impostor.Account = owner.Account // signs alice's sentence with a key that is not alice's
		byStranger, _ := impostor.ApproveRequest(co, nil, "")
		// Sign with a note and a supply, send them swapped.
		noted, _ := owner.ApproveRequest(io, []byte("5"), "hello")
		swapped := noted
		swapped.Supplied, swapped.Note = noted.Note, noted.Supplied

		cases := []struct {
			name   string
			id     string
			req    any
			status int
			reason string
		}{
			{"malformed body", confirmTask, "{", 400, "invalid_request"},
			{"malformed base64", confirmTask, `{"task_hash":"` + good.TaskHash + `","approval":{"at":1},"note":"***"}`, 400, "invalid_request"},
			{"a body over 64 KiB", confirmTask, `{"task_hash":"` + strings.Repeat("a", 65<<10) + `"}`, 400, "invalid_request"},
			{"unknown member", confirmTask, map[string]any{"task_hash": good.TaskHash, "approval": good.Approval, "extra": 1}, 400, "invalid_request"},
			{"approving a notice", notice, good, 400, "invalid_request"},
			{"a supply for a confirm task", confirmTask, with(good, func(r *client.ApproveRequest) { r.Supplied = []byte("x") }), 400, "invalid_request"},
			{"no supply for an input task", inputTask, with(withInput, func(r *client.ApproveRequest) { r.Supplied = nil }), 400, "invalid_request"},
			{"an oversized note", confirmTask, with(good, func(r *client.ApproveRequest) { r.Note = make([]byte, 8<<10+1) }), 400, "invalid_request"},
			{"an empty note", confirmTask, map[string]any{"task_hash": good.TaskHash, "approval": good.Approval, "note": ""}, 400, "invalid_request"},
			{"an empty supply", inputTask, map[string]any{"task_hash": withInput.TaskHash, "approval": withInput.Approval, "supplied": ""}, 400, "invalid_request"},
			{"another task's approval", other, good, 403, "confirmation_required"},
			{"another hash", confirmTask, with(good, func(r *client.ApproveRequest) { r.TaskHash = strings.Repeat("0", 64) }), 403, "confirmation_required"},
			{"another recipient", confirmTask, fromElsewhere, 403, "confirmation_required"},
			{"a key that is not the owner's", confirmTask, byStranger, 403, "confirmation_required"},
			{"swapped note and supply", inputTask, swapped, 403, "confirmation_required"},
			{"another owner's task", stranger.Account, good, 404, "task_not_found"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body := postJSON(t, owner.Client, "/inbox/tasks/"+tc.id+"/approve", tc.req)
				if status != tc.status || body["reason"] != tc.reason || body["terminal"] != true || body["error"] == "" {
					t.Fatalf("%d %v, want %d %s", status, body, tc.status, tc.reason)
				}
			})
		}
		// The chain cannot be asked (and the 5-minute cache of the owner's
		// key has run out): 503, not "valid".
		w.Clock.Add(6 * time.Minute)
		w.RPC.SetMode(neartest.Down500)
		status, body := postJSON(t, owner.Client, "/inbox/tasks/"+confirmTask+"/approve", good)
		if status != 503 || body["reason"] != "upstream_unavailable" || body["terminal"] != false {
			t.Fatalf("RPC down: %d %v", status, body)
		}
		w.RPC.SetMode(neartest.Up)
		// Too old: ten minutes and a second after it was signed.
		w.Clock.Add(4*time.Minute + time.Second) // 10:01 after signing
		if _, err := owner.Client.Approve(ctx, confirmTask, good); reason(err) != "confirmation_required" {
			t.Fatalf("an old approval: %v", err)
		}
		w.Clock.Add(-4*time.Minute - time.Second)

		// Nothing moved, nothing was spent: the good approval goes through,
		// once; its replay is 409 with the state.
		if got := w.Task(confirmTask).State; got != countersign.StateOpen {
			t.Fatalf("a refused approval moved the task to %s", got)
		}
		if _, err := owner.Client.Approve(ctx, confirmTask, good); err != nil {
			t.Fatalf("the good approval after the refusals: %v", err)
		}
		status, body = postJSON(t, owner.Client, "/inbox/tasks/"+confirmTask+"/approve", good)
		if status != 409 || body["reason"] != "task_closed" || body["state"] != "approved" {
			t.Fatalf("a replay: %d %v", status, body)
		}
		// Expired before the approval arrived.
		// (Read while it waits: past its expiry it shows nothing.)
		late := w.Pay()
		opened := open(t, owner, late)
		w.Clock.Add(24*time.Hour + time.Second)
		fresh, _ := owner.ApproveRequest(opened, nil, "")
		status, body = postJSON(t, owner.Client, "/inbox/tasks/"+late+"/approve", fresh)
		if status != 409 || body["reason"] != "task_expired" {
			t.Fatalf("an expired task: %d %v", status, body)
		}
	})
}

func with(r client.ApproveRequest, f func(*client.ApproveRequest)) client.ApproveRequest {
	f(&r)
	return r
}

func reason(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// postJSON sends body (a string is sent as is) with the client's session.
func postJSON(t *testing.T, c *client.Client, path string, body any) (int, map[string]any) {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, _ := json.Marshal(body)
		raw = string(b)
	}
	req, _ := http.NewRequest(http.MethodPost, c.BaseURL+path, strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+c.Session)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestAuthorizationMatrix: two owners, two agents; every cross access is
// refused, and an owner never learns of another owner's task (404, never
// 403, never its metadata).
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		alice := w.Owner
		task := w.Pay()
		bob := w.NewOwner()
		aliceReq, _ := alice.ApproveRequest(open(t, alice, task), nil, "")

		for name, call := range map[string]func() error{
			"task":        func() error { _, err := bob.Client.Task(ctx, task); return err },
			"file":        func() error { _, err := bob.Client.File(ctx, task, 0); return err },
			"origin":      func() error { _, err := bob.Client.Origin(ctx, task); return err },
			"history":     func() error { _, err := bob.Client.History(ctx, task); return err },
			"approve":     func() error { _, err := bob.Client.Approve(ctx, task, aliceReq); return err },
			"reject":      func() error { _, err := bob.Client.Reject(ctx, task, nil); return err },
			"acknowledge": func() error { _, err := bob.Client.Acknowledge(ctx, task); return err },
			"cancel":      func() error { _, err := bob.Client.Cancel(ctx, task); return err },
		} {
			var e *client.Error
			err := call()
			if !errors.As(err, &e) || e.Status != 404 || e.Reason != "task_not_found" || e.State != "" {
				t.Errorf("bob's %s of alice's task: %v", name, err)
			}
		}
		// Approving a task that does not exist is told as approving
		// another's (the session's read of it finds none).
		var e *client.Error
		if _, err := alice.Client.Approve(ctx, "nosuch-1", aliceReq); !errors.As(err, &e) || e.Status != 404 || e.Reason != "task_not_found" || e.State != "" {
			t.Errorf("alice's approval of no task: %v", err)
		}
		page, err := bob.Client.Tasks(ctx, "waiting", "", 0)
		if err != nil || len(page.Tasks) != 0 {
			t.Errorf("bob lists %d of alice's tasks (%v)", len(page.Tasks), err)
		}
		if n, _ := bob.Client.CancelMatching(ctx, w.Agent, ""); n != 0 {
			t.Errorf("bob cancelled %d of alice's tasks", n)
		}
		// Another agent, even granted the project, does not see alice's
		// tasks of this agent.
		second := addAgent(t, w, "second.near")
		if _, err := second.Status(ctx, alice.Account, "ledger", task, 0); refusal(err) != "not_granted" {
			t.Errorf("an agent not granted: %v", err)
		}
		grant(t, w, "ledger", "bot.near", "second.near")
		if _, err := second.Status(ctx, alice.Account, "ledger", task, 0); refusal(err) != "task_not_found" {
			t.Errorf("another agent's task_status: %v", err)
		}
		if _, err := second.Call(ctx, alice.Account, "ledger", "task_cancel", map[string]any{"task_id": task}, nil); refusal(err) != "task_not_found" {
			t.Errorf("another agent's task_cancel: %v", err)
		}
		// The owner's own session cannot call as an agent, nor an agent's
		// key open the inbox.
		if _, err := (&client.Client{BaseURL: w.URL, AgentKey: alice.Client.Session}).Call(ctx, alice.Account, "ledger", "tasks", nil, nil); reason(err) != "unauthorized" {
			t.Errorf("a session token as an agent key: %v", err)
		}
		if _, err := (&client.Client{BaseURL: w.URL, Session: w.AgentKey}).Tasks(ctx, "waiting", "", 0); reason(err) != "session_required" {
			t.Errorf("an agent key as a session: %v", err)
		}
		if got := w.Task(task).State; got != countersign.StateOpen {
			t.Fatalf("cross access moved the task to %s", got)
		}
	})
}

func refusal(err error) string {
	var r *client.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return "not a refusal: " + errString(err)
}

func addAgent(t *testing.T, w *servicetest.World, account string) *client.Client {
	t.Helper()
	key := "ak_" + account + "-key-0123456789abcdefghijkl"
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, account, hash(key), w.Clock.Now()); err != nil {
			return err
		}
		_, err := tx.Credit(ctx, account, 1<<30, "test", w.Clock.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return &client.Client{BaseURL: w.URL, AgentKey: key}
}

func grant(t *testing.T, w *servicetest.World, project string, agents ...string) {
	t.Helper()
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, project)
		if err != nil {
			return err
		}
		p.Agents = agents
		return tx.PutProject(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRejectReasonAndUnlock: a device signed in after a task was made sees
// it locked until unlock; a rejection's reason reaches the agent.
func TestRejectReasonAndUnlock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		task := w.Pay()
		// A device whose session exists but which missed the automatic
		// unlock (its row written without going through sign-in).
		late := w.Device(w.Owner.Signer.(device.WalletSigner).Wallet)
		signInWithoutUnlock(t, w, late)
		view, err := late.Client.Task(ctx, task)
		if err != nil || !view.Locked || view.DeviceCopy != nil {
			t.Fatalf("a later device: locked %v copy %v (%v)", view.Locked, view.DeviceCopy != nil, err)
		}
		if _, err := late.Open(view); err == nil {
			t.Fatal("a locked task opened")
		}
		n, err := late.Client.Unlock(ctx)
		if err != nil || n != 1 {
			t.Fatalf("unlock: %d %v", n, err)
		}
		o := open(t, late, task)
		reasonBlob, err := device.SealRejection(o, "not today")
		if err != nil {
			t.Fatal(err)
		}
		if st, err := late.Client.Reject(ctx, task, reasonBlob); err != nil || st.State != string(countersign.StateRejected) {
			t.Fatalf("reject: %+v %v", st, err)
		}
		st := w.Status("ledger", task)
		if st.State != string(countersign.StateRejected) || st.Reason == nil || *st.Reason != "not today" || st.OutcomeClass != "observed" {
			t.Fatalf("the agent reads %+v", st)
		}
		if w.Effects.Count(task) != 0 {
			t.Fatal("a rejected write happened")
		}
	})
}

// signInWithoutUnlock signs a device in through a service with no keeper,
// as a device signed in while the enclave side was away would be.
func signInWithoutUnlock(t *testing.T, w *servicetest.World, d *device.Device) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := inboxWithoutKeeper(w, quiet)
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Inbox: svc,
		Limits: httpapi.Limits{SignInPerMinute: 1000, OwnerWritesPerMinute: 1000}}))
	defer srv.Close()
	d.Client.BaseURL, d.Recipient = srv.URL, svc.Recipient()
	if _, err := d.SignIn(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	d.Client.BaseURL = w.URL
}

func inboxWithoutKeeper(w *servicetest.World, log *slog.Logger) *inbox.Service {
	return inbox.NewService(inbox.Config{Store: w.DB, Tokens: w.Enclave.Keys, Catalogue: w.Catalogue, Keys: approval.OffChecker{}, PublicURL: w.URL, Now: w.Clock.Now, Logger: log})
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func hash(key string) []byte { return calls.HashAgentKey(key) }
