package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestInboxActivity: `inbox activity` on a terminal signed in after the
// history was made opens every entry (time, project, agent, asked or not,
// state, title, summary, what it did and its link), prints a failure after
// approval loudly, filters by project and agent, pages, and says when an
// entry is locked on this terminal.
func TestInboxActivity(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	fx := &servicetest.Effects{}
	w := servicetest.New(t, db, servicetest.WithConnector(servicetest.Notes(fx)))
	ctx := context.Background()
	agent := w.AgentClient()
	call := func(project, op string, args map[string]any) string {
		raw, err := agent.Call(ctx, w.Owner.Account, project, op, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			TaskID string `json:"task_id"`
		}
		_ = json.Unmarshal(raw, &a)
		return a.TaskID
	}
	call("notes", "note", map[string]any{"title": "Note to self", "outcome": "Noted on page 3", "url": "https://notes.example/3"})
	w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{Result: map[string]any{"ok": true}, Outcome: connectors.Outcome{Text: "Payment sent: transaction tx-1",
			URL: "https://ledger.example/tx-1"}}, nil
	})
	paid := call("ledger", "pay", map[string]any{"amount": 1, "title": "Pay Acme", "summary": "pay $1 to Acme Corp; it cannot be undone"})
	if err := w.Enclave.Answers.Answer(ctx, paid, w.Approve(paid, nil)); err != nil {
		t.Fatal(err)
	}
	w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{}, connectors.Refused(countersign.Conflict, false, "README.md changed after you saw it.")
	})
	failed := call("ledger", "pay", map[string]any{"amount": 1, "title": "Commit to octo/app"})
	if err := w.Enclave.Answers.Answer(ctx, failed, w.Approve(failed, nil)); err != nil {
		t.Fatal(err)
	}
	rejected := call("ledger", "pay", map[string]any{"amount": 1, "title": "Pay Bob"})
	if _, err := w.Owner.Client.Reject(ctx, rejected, nil); err != nil {
		t.Fatal(err)
	}
	// Approved by a device shown another summary: not carried out.
	mismatched := call("ledger", "pay", map[string]any{"amount": 1, "title": "Pay Carol", "summary": "pay $1 to Carol"})
	view, err := w.Owner.Client.Task(ctx, mismatched)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	opened.Envelope.Display.Summary = "pay $1 to Mallory"
	req, err := w.Owner.ApproveRequest(opened, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.Owner.Client.Approve(ctx, mismatched, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Enclave.Answers.Answer(ctx, mismatched, st.Run); err != nil {
		t.Fatal(err)
	}

	// This terminal is a device of the same owner, signed in after all of it.
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	path := filepath.Join(t.TempDir(), "wallet.json")
	if err := wallet.Save(path); err != nil {
		t.Fatal(err)
	}
	o := &owner{t: t, wallet: path, account: wallet.AccountID, dir: filepath.Join(t.TempDir(), "inbox"),
		env: map[string]string{"COUNTERSIGN_SERVER": w.URL}}
	o.login()

	out := o.ok("activity")
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(blocks) != 5 {
		t.Fatalf("activity printed %d entries, want 5:\n%s", len(blocks), out)
	}
	const ledgerSummary = "  pay $1 from the ledger; it cannot be undone\n"
	for _, want := range []struct{ id, head, body string }{
		{failed, "ledger  bot.near  asked  FAILED run_refused:conflict", "  Commit to octo/app\n" + ledgerSummary + "  FAILED: README.md changed after you saw it. Nothing was written."},
		{paid, "ledger  bot.near  asked  done", "  Pay Acme\n  pay $1 to Acme Corp; it cannot be undone\n  Payment sent: transaction tx-1\n  https://ledger.example/tx-1"},
		{rejected, "ledger  bot.near  asked  rejected", "  Pay Bob\n" + ledgerSummary + "  You rejected it. Nothing was written."},
		{mismatched, "ledger  bot.near  asked  VOID", "  Pay Carol\n  pay $1 to Carol\n  NOT CARRIED OUT: The owner's approval was signed over another summary than the task's own, so it was not carried out. Nothing was written."},
		{"", "notes  bot.near  not asked  done", "  Note to self\n  Noted on page 3\n  https://notes.example/3"},
	} {
		found := false
		for _, b := range blocks {
			head, body, _ := strings.Cut(b, "\n")
			if strings.Contains(head, want.head) && strings.HasSuffix(head, want.id) && body == want.body &&
				strings.HasPrefix(head, w.Clock.Now().Format("2006-01-02T")) {
				found = true
			}
		}
		if !found {
			t.Errorf("no entry reads %q / %q in:\n%s", want.head, want.body, out)
		}
	}

	// The closed task itself says so loudly too, and so does the list.
	if got := o.ok("show", failed); !strings.Contains(got, "\nFAILED (run_refused:conflict): The write failed after your approval (conflict); whether it happened is not known.\ncountersign inbox activity says what happened\n") {
		t.Errorf("show of a failed task:\n%s", got)
	}
	if got := o.ok("show", mismatched); !strings.Contains(got, "\nNOT CARRIED OUT (void): nothing was written; countersign inbox activity says why\n") {
		t.Errorf("show of a void task:\n%s", got)
	}
	if got := o.ok("list", "--closed"); !strings.Contains(got, "FAILED (run_refused:conflict)") || !strings.Contains(got, "VOID") {
		t.Errorf("list --closed:\n%s", got)
	}

	if got := o.ok("activity", "--project", "notes"); strings.Count(got, "not asked") != 1 || strings.Contains(got, "ledger") {
		t.Errorf("--project notes:\n%s", got)
	}
	if got := o.ok("activity", "--agent", "other.near"); got != "nothing in the history\n" {
		t.Errorf("--agent other.near: %q", got)
	}
	first := o.ok("activity", "--limit", "3")
	i := strings.Index(first, "more: countersign inbox activity --before ")
	if strings.Count(first, "\n\n") != 3 || i < 0 {
		t.Fatalf("--limit 3:\n%s", first)
	}
	next := strings.Fields(first[i:])[5]
	if rest := o.ok("activity", "--limit", "3", "--before", next); strings.Count(rest, "\n\n") != 1 || strings.Contains(rest, "more:") {
		t.Errorf("the second page:\n%s", rest)
	}

	// An entry this terminal holds no copy of is said to be locked; a
	// failure is still said loudly, in the words of its state.
	device := o.session().DeviceID
	if _, err := db.Postgres().Exec(ctx, "DELETE FROM activity_copies WHERE device_id = $1 AND entry_id = $2", device, failed); err != nil {
		t.Fatal(err)
	}
	locked := o.ok("activity")
	if !strings.Contains(locked, "  (pay of ledger; locked on this terminal)\n  FAILED: The write failed after your approval (conflict); whether it happened is not known.") ||
		!strings.Contains(locked, "run `countersign inbox unlock`") {
		t.Errorf("a locked entry:\n%s", locked)
	}
	o.ok("unlock")
	if again := o.ok("activity"); !strings.Contains(again, "FAILED: README.md changed after you saw it.") || strings.Contains(again, "locked") {
		t.Errorf("after unlock:\n%s", again)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"activity", "extra"}, "usage: countersign inbox activity"},
		{[]string{"activity", "--limit", "101"}, "--limit: 1 to 100"},
		{[]string{"activity", "--before", "NOT AN ID"}, "--before: an entry's id is needed"},
		{[]string{"activity", "--project", "a/b"}, "--project"},
		{[]string{"activity", "--agent", "UPPER"}, "--agent"},
	} {
		o.fails(c.args, c.want)
	}
}
