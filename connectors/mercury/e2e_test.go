package mercury_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// world is the whole service on PostgreSQL with the Mercury connector
// talking to a fake Mercury over loopback HTTP.
func world(t *testing.T, pol string) (*servicetest.World, *mercurytest.Fake) {
	t.Helper()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}})))
	w.PutProject("bank", "mercury", pol, []byte(`{"token": "`+mercurytest.Token+`"}`))
	w.StartJobs()
	return w, f
}

// agentCall calls the bank project; a refusal is returned as its text.
func agentCall(t *testing.T, w *servicetest.World, body string) (map[string]any, string) {
	t.Helper()
	raw, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "bank", []byte(body), nil)
	var r *client.Refusal
	if errors.As(err, &r) {
		return nil, r.Error()
	}
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, ""
}

// approve approves a task as the owner and waits for its end; it returns
// what the agent reads of it and what the owner was shown.
func approve(t *testing.T, w *servicetest.World, id string) (client.TaskStatus, map[string]string) {
	t.Helper()
	view, err := w.Owner.Client.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{}
	for _, f := range o.Envelope.Display.Fields {
		shown[f.Label] = strings.Join(f.Values, "; ")
	}
	if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
		t.Fatal(err)
	}
	w.WaitState(id, countersign.StateDone, countersign.StateFailed)
	return w.Status("bank", id), shown
}

func TestSeedRulesEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, SeedPolicy)

	// 1. $120 ACH to a saved payee runs at once.
	out, refused := agentCall(t, w, pay(mercurytest.AcmeID, "120", "ach"))
	if refused != "" || out["sent_via"] != "direct" || out["amount_usd"] != 120.0 || f.Payments() != 1 {
		t.Fatalf("$120 ACH: %v %s", out, refused)
	}
	// 2. $600 ACH asks; approved, it pays once, and reports what it paid.
	out, _ = agentCall(t, w, pay(mercurytest.AcmeID, "600", "ach"))
	if out["status"] != "awaiting_owner" || f.Payments() != 1 {
		t.Fatalf("$600 ACH: %v", out)
	}
	st, shown := approve(t, w, out["task_id"].(string))
	var res map[string]any
	_ = json.Unmarshal(st.Result, &res)
	if st.State != "done" || res["sent_via"] != "direct" || res["amount_usd"] != 600.0 || res["transaction_id"] != f.Transactions()[1].ID {
		t.Fatalf("approved $600: %+v", st)
	}
	if shown["Amount"] != "$600.00" || shown["Method"] != "ACH" || !strings.Contains(shown["Why you are asked"], "rule 2") {
		t.Fatalf("the owner was shown %v", shown)
	}
	// 3. Any wire asks.
	out, _ = agentCall(t, w, pay(mercurytest.GlobexID, "75", "wire"))
	if out["status"] != "awaiting_owner" {
		t.Fatalf("a $75 wire: %v", out)
	}
	st, shown = approve(t, w, out["task_id"].(string))
	if st.State != "done" || shown["Method"] != "Domestic wire (purpose: Vendor, Globex Corporation)" || f.Transactions()[2].PaymentMethod != "domesticWire" ||
		f.Transactions()[2].Purpose != "Vendor: Globex Corporation" {
		t.Fatalf("the wire: %+v, shown %v", st, shown)
	}
	// 4. Any cancellation asks.
	out, _ = agentCall(t, w, `{"operation": "cancel_invoice", "invoice_id": "`+mercurytest.InvoiceID+`"}`)
	if out["status"] != "awaiting_owner" {
		t.Fatalf("a cancellation: %v", out)
	}
	if inv, _ := f.Invoice(mercurytest.InvoiceID); inv.Status != "Unpaid" {
		t.Fatal("the invoice was cancelled before the owner approved")
	}
	st, _ = approve(t, w, out["task_id"].(string))
	if inv, _ := f.Invoice(mercurytest.InvoiceID); st.State != "done" || inv.Status != "Cancelled" {
		t.Fatalf("the cancellation: %+v", st)
	}
	// 5. A new payee over $1,000 is refused by rule 1.
	_, refused = agentCall(t, w, `{"operation": "pay_invoice", `+newPayee+`, "amount_usd": 1500, "method": "ach"}`)
	if refused != "policy_denied: the owner's rule 1 (pay_invoice, amount at least $1,000.01, payee new) refuses this payment" {
		t.Fatalf("a new payee over the cap: %q", refused)
	}
	if f.Payments() != 3 || len(f.Recipients()) != 2 {
		t.Fatalf("Mercury made %d payments", f.Payments())
	}
	// The token reached no log.
	if strings.Contains(w.Logs.String(), mercurytest.Token) {
		t.Fatal("the token was logged")
	}
}

// TestEveryWriteApprovedEndToEnd: each of the four writes, asked about,
// shows its summary; the owner's device signs the sentence naming it, the
// door and the answer run check it, and Mercury does the write once.
func TestEveryWriteApprovedEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["pay_invoice", "add_recipient", "send_invoice", "cancel_invoice"]}`)
	for _, tc := range []struct{ body, summary string }{
		{pay(mercurytest.AcmeID, "750.25", "ach"), "pay $750.25 to Acme Supplies LLC from Checking ••1234 by ACH; it cannot be undone"},
		{addRecipient, `save the payee "Hooli Inc" (ACH to account ••2333, routing 021000021); it can be deleted later in Mercury`},
		{sendInvoice, "email an invoice of $450.75 to Initech, due 2026-12-31; it can be cancelled while unpaid"},
		{cancelInvoice, "cancel invoice INV-0001 of $1,500.00, due 2026-12-01; it cannot be undone"},
	} {
		out, refused := agentCall(t, w, tc.body)
		if refused != "" || out["status"] != "awaiting_owner" {
			t.Fatalf("%s: %v %s", tc.body, out, refused)
		}
		id := out["task_id"].(string)
		view, err := w.Owner.Client.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		o, err := w.Owner.Open(view)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Envelope.Display.Summary; got != tc.summary {
			t.Fatalf("the task shows the summary %q, want %q", got, tc.summary)
		}
		req, err := w.Owner.ApproveRequest(o, nil, "")
		if err != nil || req.Summary != tc.summary {
			t.Fatalf("the approval sends the summary %q: %v", req.Summary, err)
		}
		if _, err := w.Owner.Client.Approve(ctx, id, req); err != nil {
			t.Fatal(err)
		}
		w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid)
		if st := w.Status("bank", id); st.State != "done" {
			t.Fatalf("%s: %+v", tc.body, st)
		}
	}
	if inv, _ := f.Invoice(mercurytest.InvoiceID); f.Payments() != 1 || len(f.Recipients()) != 3 || inv.Status != "Cancelled" {
		t.Fatalf("Mercury made %d payments, holds %d payees, the invoice is %s", f.Payments(), len(f.Recipients()), inv.Status)
	}
}

func TestBrokenRuleIsShownEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"rules": [{"when": {"op": "cancel_invoice", "max_usd": 100}, "then": "ask"}]}`)
	ps, err := w.Owner.Client.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		if p.Name == "bank" {
			found = true
			if p.PolicyMode != "broken" || p.PolicySentence != "rule 1 bounds an amount, and cancel_invoice carries none" {
				t.Fatalf("the owner reads %+v", p)
			}
		}
	}
	if !found {
		t.Fatal("no bank project")
	}
	_, refused := agentCall(t, w, pay(mercurytest.AcmeID, "5", "ach"))
	if refused != "policy_unreadable: rule 1 bounds an amount, and cancel_invoice carries none" || f.Payments() != 0 {
		t.Fatalf("a payment under a broken policy: %q", refused)
	}
	// Reads still work.
	if out, refused := agentCall(t, w, `{"operation": "accounts"}`); refused != "" || out["ok"] != true {
		t.Fatalf("accounts: %v %s", out, refused)
	}
}

// The answer to the payment request is lost on the way back; the connector
// asks again with the same idempotency key, and Mercury pays once.
func TestLostAnswerPaysOnceEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["pay_invoice"]}`)
	out, _ := agentCall(t, w, pay(mercurytest.AcmeID, "321.09", "ach"))
	f.DropNextPayment()
	st, _ := approve(t, w, out["task_id"].(string))
	var res map[string]any
	_ = json.Unmarshal(st.Result, &res)
	txs := f.Transactions()
	if st.State != "done" || f.Payments() != 1 || len(txs) != 1 || res["transaction_id"] != txs[0].ID || res["amount_cents"] != 32109.0 {
		t.Fatalf("state %s, payments %d, result %s", st.State, f.Payments(), st.Result)
	}
}

func TestMonthlyBoundUnderConcurrencyEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"max_spend_usd_month": 100}`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var paid int64
	n := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, refused := agentCall(t, w, pay(mercurytest.AcmeID, fmt.Sprintf("10.%02d", i), "ach"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case refused == "":
				paid += int64(out["amount_cents"].(float64))
				n++
			case !strings.HasPrefix(refused, "policy_denied: this payment of $10."):
				t.Errorf("payment %d: %s", i, refused)
			}
		}()
	}
	wg.Wait()
	var atMercury int64
	for _, tx := range f.Transactions() {
		c, _ := mercurytestCents(string(tx.Amount))
		atMercury -= c
	}
	if paid > 10_000 || atMercury != paid || f.Payments() != n || n < 9 {
		t.Fatalf("%d payments of %d cents; Mercury holds %d cents in %d", n, paid, atMercury, f.Payments())
	}
}

// mercurytestCents reads "-10.05" as -1005.
func mercurytestCents(s string) (int64, error) {
	var whole, frac int64
	neg := strings.HasPrefix(s, "-")
	_, err := fmt.Sscanf(strings.TrimPrefix(s, "-"), "%d.%d", &whole, &frac)
	c := whole*100 + frac
	if neg {
		c = -c
	}
	return c, err
}

// Confirmed payments are counted against the month's bound when their
// answers run, whatever order the job queue runs them in.
func TestMonthlyBoundOfConfirmedPaymentsEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["pay_invoice"], "max_spend_usd_month": 100}`)
	var ids []string
	for i := range 10 { // a preparer's most open tasks for one owner
		out, refused := agentCall(t, w, pay(mercurytest.AcmeID, fmt.Sprintf("15.%02d", i), "ach"))
		if refused != "" {
			t.Fatal(refused)
		}
		ids = append(ids, out["task_id"].(string))
	}
	for _, id := range ids {
		w.Approve(id, nil)
	}
	var paid int64
	done := 0
	for _, id := range ids {
		w.WaitState(id, countersign.StateDone, countersign.StateFailed)
		st := w.Status("bank", id)
		var res map[string]any
		_ = json.Unmarshal(st.Result, &res)
		switch {
		case st.State == "done":
			paid += int64(res["amount_cents"].(float64))
			done++
		case st.FailureReason != "run_refused:policy_denied":
			t.Fatalf("%s: %+v %s", id, st, st.Result)
		}
	}
	if paid > 10_000 || done != 6 || f.Payments() != done {
		t.Fatalf("%d paid, %d cents; Mercury made %d", done, paid, f.Payments())
	}
}
