package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/client"
	"countersign/connectors/mercury/mercurytest"
)

// bankService is serve --dev on PostgreSQL with the fake NEAR RPC, its
// sandbox Mercury behind a "bank" project of a terminal owner asking
// before every payment, granted to an agent.
func bankService(t *testing.T) (*service, *owner, *client.Client) {
	t.Helper()
	s := newService(t)
	srv := startServe(t, s.env, "--dev")
	s.base, s.db, s.log = srv.base, srv.db, srv.log
	agent := s.agent("bot.near", 10_000_000)
	o := newOwner(t, s)
	o.login()
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"confirm": ["pay_invoice"], "max_payment_usd": 5000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o.ok("projects", "put", "bank", "--connector", "mercury", "--policy", policy, "--agent", "bot.near")
	return s, o, agent
}

// payment has the agent pay a saved payee; it returns the answer.
func payment(t *testing.T, agent *client.Client, o *owner, payee, amount, method string) map[string]any {
	t.Helper()
	raw, err := agent.CallRaw(context.Background(), o.account, "bank",
		[]byte(fmt.Sprintf(`{"operation": "pay_invoice", "recipient_id": %q, "amount_usd": %s, "method": %q}`, payee, amount, method)), nil)
	if err != nil {
		t.Fatalf("pay %s %s: %v", amount, method, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// ended waits for the agent to read a task ended, and returns its state.
func ended(t *testing.T, agent *client.Client, o *owner, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := agent.Status(context.Background(), o.account, "bank", id, 10)
		if err != nil {
			t.Fatal(err)
		}
		switch st.State {
		case "open", "approved", "answering":
		default:
			return st.State
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still %s", id, st.State)
		}
	}
}

// TestInboxTerminalApprovesSeveral: `inbox approve ID ID …` approves ten
// payments with as few signatures as fit 1,000 bytes, saying so, each
// carried out once; what cannot go in a batch is refused before anything
// is signed.
func TestInboxTerminalApprovesSeveral(t *testing.T) {
	t.Parallel()
	_, o, agent := bankService(t)
	var ids []string
	for i := range 10 {
		m := payment(t, agent, o, mercurytest.AcmeID, fmt.Sprint(100+i), "ach")
		id, _ := m["task_id"].(string)
		if id == "" {
			t.Fatalf("payment %d: %v", i, m)
		}
		ids = append(ids, id)
	}
	o.fails(append([]string{"approve", "--note", "thanks"}, ids[:2]...), "--note approves one task")
	o.fails([]string{"approve", ids[0], ids[0]}, "named twice")
	out := o.ok(append([]string{"approve"}, ids...)...)
	// Ten summaries of about ninety bytes do not fit one sentence: nine
	// do, and the tenth is approved alone.
	if !strings.Contains(out, "the 10 tasks of project bank take 2 signatures: one signature approves at most 10 tasks in a sentence of at most 1000 bytes\n") ||
		!strings.Contains(out, "approved 9 tasks of project bank with one signature:\n") {
		t.Fatalf("approve of ten:\n%s", out)
	}
	for _, id := range ids[:9] {
		if !regexp.MustCompile(`(?m)^  task ` + id + ` \(Pay \$10\d\.00 to Acme Supplies LLC\): run [0-9a-z]+$`).MatchString(out) {
			t.Fatalf("task %s is not reported approved in the batch:\n%s", id, out)
		}
	}
	if !regexp.MustCompile(`(?m)^approved task ` + ids[9] + ` \(Pay \$109\.00 to Acme Supplies LLC\) alone: run [0-9a-z]+$`).MatchString(out) {
		t.Fatalf("the tenth task is not reported approved alone:\n%s", out)
	}
	for _, id := range ids {
		if st := ended(t, agent, o, id); st != "done" {
			t.Fatalf("task %s ended %s", id, st)
		}
	}
	// A replayed approval names the task that is no longer waiting.
	o.fails([]string{"approve", ids[0], ids[1]}, "task "+ids[0]+" is done", "nothing was signed")
}

// TestInboxTerminalAlwaysAllow: `inbox allow ID --approve` shows the rule,
// puts it first in the project's policy with the owner's confirmation and
// approves the task in the same step: it is paid, then a $119 ACH to the
// same payee runs at once, and a $121 one, another payee or a wire asks.
func TestInboxTerminalAlwaysAllow(t *testing.T) {
	t.Parallel()
	_, o, agent := bankService(t)
	m := payment(t, agent, o, mercurytest.AcmeID, "120", "ach")
	id, _ := m["task_id"].(string)
	if id == "" {
		t.Fatalf("the $120 payment: %v", m)
	}
	out := o.ok("allow", id, "--approve")
	for _, want := range []string{
		"always allow in project bank, before every other rule:\n  Rule 1: pay_invoice where the amount is at most $120.00 and the method is ach and the payee is saved and the recipient is `" + mercurytest.AcmeID + "` runs at once.\n",
		"`confirm` named pay_invoice, which a rule cannot widen",
		"project bank: policy ok, the rule is rule 1\n",
		"approved task " + id + " (Pay $120.00 to Acme Supplies LLC)\nrun: ",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("allow does not say %q:\n%s", want, out)
		}
	}
	if st := ended(t, agent, o, id); st != "done" {
		t.Fatalf("the payment allowed and approved in one step ended %s", st)
	}
	if m := payment(t, agent, o, mercurytest.AcmeID, "119", "ach"); m["sent_via"] != "direct" {
		t.Fatalf("$119 ACH to the same payee: %v", m)
	}
	for _, p := range []struct{ payee, amount, method string }{
		{mercurytest.AcmeID, "121", "ach"}, {mercurytest.GlobexID, "119", "ach"}, {mercurytest.AcmeID, "119", "wire"},
	} {
		if m := payment(t, agent, o, p.payee, p.amount, p.method); m["status"] != "awaiting_owner" {
			t.Fatalf("%+v: %v", p, m)
		}
	}
	// Without --approve the task keeps waiting; a task whose write names
	// no payee id (a new payee) cannot be always allowed.
	m = payment(t, agent, o, mercurytest.GlobexID, "50", "ach")
	waiting := m["task_id"].(string)
	out = o.ok("allow", waiting)
	if !strings.Contains(out, "task "+waiting+" still waits") {
		t.Fatalf("allow without --approve:\n%s", out)
	}
	raw, err := agent.CallRaw(context.Background(), o.account, "bank", []byte(`{"operation": "pay_invoice", "recipient": {"name": "Hooli Inc", "email": "ap@hooli.example", `+
		`"account_number": "000111222333", "routing_number": "021000021", "address": {"address1": "1 Main St", "city": "Springfield", "region": "IL", "postal_code": "62701", "country": "US"}}, `+
		`"amount_usd": 20, "method": "ach"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &m)
	o.fails([]string{"allow", m["task_id"].(string)}, "cannot be always allowed", "names no recipient")
}
