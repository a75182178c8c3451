package mercury_test

import (
	"encoding/json"
	"testing"

	"countersign"
	"countersign/approval"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/device"
	"countersign/inbox"
	"countersign/policy"
	"countersign/servicetest"
)

// openTask opens a task on the owner's device.
func openTask(t *testing.T, w *servicetest.World, id string) *device.Opened {
	t.Helper()
	view, err := w.Owner.Client.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// alwaysAllow is "Always allow this" as the owner's terminal does it: the
// rule built from the opened task, inserted first in the bank project's
// policy, confirmed and put. It returns what was added.
func alwaysAllow(t *testing.T, w *servicetest.World, o *device.Opened) policy.Allowance {
	t.Helper()
	projects, err := w.Owner.Client.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var current []byte
	var agents []string
	for _, p := range projects {
		if p.Name == "bank" {
			current, agents = []byte(p.Policy), p.Agents
		}
	}
	_, a, err := mercury.New(mercury.Config{}).AlwaysAllow(current, o.Request, o.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	text, err := inbox.ProjectText("mercury", a.Policy, agents)
	if err != nil {
		t.Fatal(err)
	}
	// The door proposes the same text from the rule's `when`.
	var rule struct {
		When json.RawMessage `json:"when"`
	}
	if err := json.Unmarshal(a.Rule, &rule); err != nil {
		t.Fatal(err)
	}
	proposal, err := w.Owner.Client.ProposeAllow(ctx, "bank", rule.When)
	if err != nil {
		t.Fatal(err)
	}
	if proposal.Project != text || proposal.Sentence != a.Sentence || proposal.Moved != a.Moved {
		t.Fatalf("the door proposes %+v, the device built %s", proposal, text)
	}
	conf, err := w.Owner.Confirm(approval.ActionSetProject("bank", text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Owner.Client.PutProject(ctx, "bank", text, conf); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAlwaysAllowEndToEnd is SPEC §13's "Always allow this" with Approve
// in the same step, on a policy asking before every payment: the $120 ACH
// to a saved payee the owner always allows is paid (the policy changed
// after it opened, only by that rule, so it is not void), and so is a
// payment opened before and approved after; then a $119 ACH to the same
// payee runs at once, while a $121 one, one to another payee and a wire
// still ask. Any other change of the policy voids a waiting task, as
// before.
func TestAlwaysAllowEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["pay_invoice"], "max_payment_usd": 5000}`)
	waiting := func(body string) string {
		t.Helper()
		out, refused := agentCall(t, w, body)
		if refused != "" || out["status"] != "awaiting_owner" {
			t.Fatalf("%s: %v %s", body, out, refused)
		}
		return out["task_id"].(string)
	}
	first := waiting(pay(mercurytest.AcmeID, "120", "ach"))
	earlier := waiting(pay(mercurytest.GlobexID, "300", "ach"))
	o := openTask(t, w, first)
	a := alwaysAllow(t, w, o)
	if !a.Moved || a.Sentence != "Rule 1: pay_invoice where the amount is at most $120.00 and the method is ach and the payee is saved and the recipient is `"+mercurytest.AcmeID+"` runs at once." {
		t.Fatalf("the rule added: %+v", a)
	}
	// Approve, in the same step: carried out, once.
	if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
		t.Fatal(err)
	}
	if end := w.WaitState(first, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); end.State != countersign.StateDone {
		t.Fatalf("the payment allowed and approved in one step ended %s %s", end.State, end.FailureReason)
	}
	if f.Payments() != 1 {
		t.Fatalf("%d payments", f.Payments())
	}
	// A task opened before the rule, approved after it: carried out.
	st, _ := approve(t, w, earlier)
	if st.State != "done" || f.Payments() != 2 {
		t.Fatalf("the payment opened before the rule: %+v", st)
	}
	// $119 ACH to the same payee: at once.
	out, refused := agentCall(t, w, pay(mercurytest.AcmeID, "119", "ach"))
	if refused != "" || out["sent_via"] != "direct" || out["amount_usd"] != 119.0 || f.Payments() != 3 {
		t.Fatalf("$119 ACH to the same payee: %v %s", out, refused)
	}
	// The rest still asks.
	for _, body := range []string{
		pay(mercurytest.AcmeID, "121", "ach"),
		pay(mercurytest.AcmeID, "120.01", "ach"),
		pay(mercurytest.GlobexID, "119", "ach"),
		pay(mercurytest.AcmeID, "119", "wire"),
		`{"operation": "pay_invoice", ` + newPayee + `, "amount_usd": 50, "method": "ach"}`,
	} {
		waiting(body)
	}
	if f.Payments() != 3 {
		t.Fatalf("%d payments", f.Payments())
	}
	// Any other change of the policy voids the tasks waiting under the old
	// one, as it always did.
	late := waiting(pay(mercurytest.AcmeID, "500", "ach"))
	lo := openTask(t, w, late)
	text, err := inbox.ProjectText("mercury", []byte(`{"confirm":["pay_invoice"],"max_payment_usd":4000}`), []string{w.Agent})
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := w.Owner.Confirm(approval.ActionSetProject("bank", text))
	if _, err := w.Owner.Client.PutProject(ctx, "bank", text, conf); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Owner.Approve(ctx, lo, nil, ""); err != nil {
		t.Fatal(err)
	}
	if end := w.WaitState(late, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); end.State != countersign.StateVoid || f.Payments() != 3 {
		t.Fatalf("a task approved after another change of the policy ended %s (%d payments)", end.State, f.Payments())
	}
}

// TestAlwaysAllowRefusesWhatItCannotName: a payment to a new payee has no
// payee id to name, and a cancellation carries nothing a rule can name.
func TestAlwaysAllowRefusesWhatItCannotName(t *testing.T) {
	t.Parallel()
	w, _ := world(t, `{"confirm": ["pay_invoice", "cancel_invoice"]}`)
	conn := mercury.New(mercury.Config{})
	for _, body := range []string{
		`{"operation": "pay_invoice", ` + newPayee + `, "amount_usd": 50, "method": "ach"}`,
		`{"operation": "cancel_invoice", "invoice_id": "` + mercurytest.InvoiceID + `"}`,
	} {
		out, _ := agentCall(t, w, body)
		o := openTask(t, w, out["task_id"].(string))
		if _, a, err := conn.AlwaysAllow([]byte(`{"confirm": ["pay_invoice", "cancel_invoice"]}`), o.Request, o.Envelope); err == nil {
			t.Fatalf("%s: always allowed as %s", body, a.Policy)
		}
	}
}
