package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// payWithSummary has the agent open a ledger task whose envelope names
// summary, and returns its id.
func payWithSummary(t *testing.T, w *servicetest.World, summary string) string {
	t.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1, "summary": summary}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("pay answered %s", raw)
	}
	return a.TaskID
}

// spentNonces counts the owner's spent signature nonces.
func spentNonces(t *testing.T, db *sqlstore.DB, account string) int {
	t.Helper()
	var n int
	var err error
	if db.Postgres() != nil {
		err = db.Postgres().QueryRow(ctx, "SELECT COUNT(*) FROM nonces WHERE account = $1", account).Scan(&n)
	} else {
		err = db.SQLite().QueryRowContext(ctx, "SELECT COUNT(*) FROM nonces WHERE account = ?", account).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestApprovalSummaryRefusals: the door rebuilds the approval sentence
// with the summary the body carries (SPEC §6, §7). A body whose summary
// is not the one signed is refused as a signature that does not verify; a
// summary that is no summary (a line break, too long, a bidi control,
// spaces, not a string) is invalid_request before any signature is
// checked. None of them moves the task or spends the approval's nonce:
// the good approval goes through afterwards.
func TestApprovalSummaryRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		owner := w.Owner
		const summary = "pay $1.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone"
		id := payWithSummary(t, w, summary)
		o := open(t, owner, id)
		if o.Envelope.Display.Summary != summary {
			t.Fatalf("the envelope's summary is %q", o.Envelope.Display.Summary)
		}
		good, err := owner.ApproveRequest(o, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if good.Summary != summary {
			t.Fatalf("the device sends the summary %q", good.Summary)
		}
		// A device shown another summary signs and sends that one.
		shownOther := *o
		shownOther.Envelope.Display.Summary = "pay $1.00 to Mallory from Checking ••1234 by ACH; it cannot be undone"
		other, err := owner.ApproveRequest(&shownOther, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		body := func(summary any) map[string]any {
			return map[string]any{"task_hash": good.TaskHash, "approval": good.Approval, "summary": summary}
		}
		before := spentNonces(t, db, owner.Account)

		cases := []struct {
			name   string
			req    any
			status int
			reason string
		}{
			{"the signed summary replaced by another", with(good, func(r *client.ApproveRequest) { r.Summary = shownOther.Envelope.Display.Summary }), 403, "confirmation_required"},
			{"another summary signed, the task's sent", with(other, func(r *client.ApproveRequest) { r.Summary = summary }), 403, "confirmation_required"},
			{"the summary left out", with(good, func(r *client.ApproveRequest) { r.Summary = "" }), 403, "confirmation_required"},
			{"the summary null", body(nil), 403, "confirmation_required"},
			{"a summary with a line break", body(summary + "\nand more"), 400, "invalid_request"},
			{"a summary ending in a line break", body(summary + "\n"), 400, "invalid_request"},
			{"a summary with a tab", body("pay\t$1"), 400, "invalid_request"},
			{"a summary over 200 characters", body(strings.Repeat("x", countersign.MaxSummaryChars+1)), 400, "invalid_request"},
			{"a summary with a bidi control", body("pay $1 to \u202eproc emca"), 400, "invalid_request"},
			{"a summary of spaces", body("   "), 400, "invalid_request"},
			{"an empty summary", body(""), 403, "confirmation_required"},
			{"a summary that is not a string", body(12), 400, "invalid_request"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, answer := postJSON(t, owner.Client, "/inbox/tasks/"+id+"/approve", tc.req)
				if status != tc.status || answer["reason"] != tc.reason || answer["terminal"] != true || answer["error"] == "" {
					t.Fatalf("%d %v, want %d %s", status, answer, tc.status, tc.reason)
				}
				if msg, _ := answer["error"].(string); strings.Contains(msg, "Acme") || strings.Contains(msg, "Mallory") {
					t.Errorf("the refusal quotes the summary: %q", msg)
				}
			})
		}
		if got := w.Task(id).State; got != countersign.StateOpen {
			t.Fatalf("a refused approval moved the task to %s", got)
		}
		if after := spentNonces(t, db, owner.Account); after != before {
			t.Fatalf("refused approvals spent %d nonces", after-before)
		}
		// The 200-character summary is a summary: it reaches the signature
		// check (and is refused there, signed for another).
		status, answer := postJSON(t, owner.Client, "/inbox/tasks/"+id+"/approve", body(strings.Repeat("x", countersign.MaxSummaryChars)))
		if status != 403 || answer["reason"] != "confirmation_required" {
			t.Fatalf("a 200-character summary: %d %v", status, answer)
		}
		if _, err := owner.Client.Approve(ctx, id, good); err != nil {
			t.Fatalf("the good approval after the refusals: %v", err)
		}
		if after := spentNonces(t, db, owner.Account); after != before+1 {
			t.Fatalf("the approval spent %d nonces", after-before)
		}
		if logs := w.Logs.String(); strings.Contains(logs, "Acme") || strings.Contains(logs, "Mallory") {
			t.Errorf("the door logged a summary:\n%s", logs)
		}
	})
}
