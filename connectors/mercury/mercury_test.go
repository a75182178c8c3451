package mercury_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
)

var ctx = context.Background()

// SeedPolicy is the seed's sentence as rules: "a payment above $500, every
// wire, every cancellation can wait while a small ACH payment to a saved
// payee runs at once", with new payees refused above $1,000.
const SeedPolicy = `{
  "max_payment_usd": 5000,
  "max_spend_usd_month": 20000,
  "rules": [
    {"when": {"op": "pay_invoice", "payee": "new", "min_usd": 1000.01}, "then": "refuse"},
    {"when": {"op": "pay_invoice", "min_usd": 500.01}, "then": "ask"},
    {"when": {"op": "pay_invoice", "methods": ["wire"]}, "then": "ask"},
    {"when": {"op": "cancel_invoice"}, "then": "ask"},
    {"when": {"op": "pay_invoice", "methods": ["ach"], "payee": "saved"}, "then": "allow"},
    {"when": {"op": ["pay_invoice", "add_recipient", "send_invoice"]}, "then": "ask"}
  ]
}`

func setup(t *testing.T, pol string) (*connectortest.Harness, *mercurytest.Fake) {
	t.Helper()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	h := connectortest.New(t, mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}}))
	h.Policy = []byte(pol)
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	return h, f
}

func call(t *testing.T, h *connectortest.Harness, body string) map[string]any {
	t.Helper()
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func pay(recipient, amount, method string) string {
	return fmt.Sprintf(`{"operation": "pay_invoice", "recipient_id": %q, "amount_usd": %s, "method": %q}`, recipient, amount, method)
}

const newPayee = `"recipient": {"name": "Hooli Inc", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` + address + `}`

// address is a new payee's legal address.
const address = `"address": {"address1": "1600 Amphitheatre Pkwy", "city": "Mountain View", "region": "CA", "postal_code": "94043", "country": "US"}`

func TestSeedRules(t *testing.T) {
	t.Parallel()
	h, f := setup(t, SeedPolicy)

	// $120 ACH to a saved payee: at once.
	out := call(t, h, pay(mercurytest.AcmeID, "120", "ach"))
	if out["sent_via"] != "direct" || out["amount_usd"] != 120.0 || out["transaction_id"] == "" {
		t.Fatalf("a small ACH to a saved payee: %v", out)
	}
	if f.Payments() != 1 || h.Paid() != 12_000 {
		t.Fatalf("payments %d, paid %d", f.Payments(), h.Paid())
	}
	// $600 ACH: asks, by rule 2, and pays nothing until approved.
	out = call(t, h, pay(mercurytest.AcmeID, "600", "ach"))
	if out["status"] != "awaiting_owner" || out["transaction_id"] != nil {
		t.Fatalf("$600: %v", out)
	}
	task, ok := h.Task(out["task_id"].(string))
	if !ok || f.Payments() != 1 {
		t.Fatal("the $600 payment was made before the owner approved it")
	}
	shown := map[string]string{}
	for _, fl := range task.Spec.Display.Fields {
		shown[fl.Label] = fl.Values[0]
	}
	if shown["Amount"] != "$600.00" || !strings.HasPrefix(shown["To"], "Acme Supplies LLC") || shown["Method"] != "ACH" ||
		!strings.Contains(shown["Why you are asked"], "rule 2 (pay_invoice, amount at least $500.01)") || !strings.HasPrefix(shown["Payee"], "saved") {
		t.Fatalf("the task shows %v", shown)
	}
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	_ = json.Unmarshal(res, &r)
	if r["sent_via"] != "direct" || r["amount_usd"] != 600.0 || r["transaction_id"] == "" || f.Payments() != 2 {
		t.Fatalf("the approved payment: %s", res)
	}
	tx := f.Transactions()[1]
	if tx.Amount != "-600.00" || tx.PaymentMethod != "ach" || tx.CounterpartyID != mercurytest.AcmeID {
		t.Fatalf("Mercury received %+v", tx)
	}
	// Any wire asks, even a small one.
	out = call(t, h, pay(mercurytest.GlobexID, "50", "wire"))
	if out["status"] != "awaiting_owner" {
		t.Fatalf("a $50 wire: %v", out)
	}
	// Any cancellation asks.
	out = call(t, h, `{"operation": "cancel_invoice", "invoice_id": "`+mercurytest.InvoiceID+`"}`)
	if out["status"] != "awaiting_owner" {
		t.Fatalf("a cancellation: %v", out)
	}
	// A new payee over $1,000 is refused by rule 1.
	_, err = h.Call(ctx, `{"operation": "pay_invoice", `+newPayee+`, "amount_usd": 1500, "method": "ach"}`)
	want := "policy_denied: the owner's rule 1 (pay_invoice, amount at least $1,000.01, payee new) refuses this payment"
	if connectortest.Text(err) != want {
		t.Fatalf("a new payee over the cap: %v; want %s", err, want)
	}
	if f.Payments() != 2 || len(f.Recipients()) != 2 {
		t.Fatal("a refused payment reached Mercury")
	}
}

func TestNewPayeeIsSavedWithItsPayment(t *testing.T) {
	t.Parallel()
	h, f := setup(t, SeedPolicy)
	out := call(t, h, `{"operation": "pay_invoice", `+newPayee+`, "amount_usd": 99.5, "method": "ach"}`)
	if out["status"] != "awaiting_owner" || len(f.Recipients()) != 2 {
		t.Fatalf("a new payee's payment: %v", out)
	}
	task, _ := h.Task(out["task_id"].(string))
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	_ = json.Unmarshal(res, &r)
	if len(f.Recipients()) != 3 || r["payee_saved"] != true || r["amount_usd"] != 99.5 || f.Transactions()[0].Amount != "-99.50" {
		t.Fatalf("result %s; recipients %d", res, len(f.Recipients()))
	}
	// Mercury was given the payee's ACH account with its type and the
	// payee's legal address, as its reference requires.
	ri := f.Recipients()[2].ElectronicRoutingInfo
	want := mercurytest.Address{Address1: "1600 Amphitheatre Pkwy", City: "Mountain View", Region: "CA", PostalCode: "94043", Country: "US"}
	if ri == nil || ri.ElectronicAccountType != "businessChecking" || ri.Address == nil || *ri.Address != want {
		t.Fatalf("Mercury saved %+v", ri)
	}
}

// A wire is sent with the purpose Vendor and the payee's name, which
// Mercury requires of that purpose, as the owner was shown.
func TestAWireNamesItsPayee(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"confirm": ["pay_invoice"]}`)
	out := call(t, h, pay(mercurytest.GlobexID, "75", "wire"))
	task, _ := h.Task(out["task_id"].(string))
	shown := ""
	for _, fl := range task.Spec.Display.Fields {
		if fl.Label == "Method" {
			shown = fl.Values[0]
		}
	}
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
		t.Fatal(err)
	}
	if tx := f.Transactions(); len(tx) != 1 || tx[0].PaymentMethod != "domesticWire" || tx[0].Purpose != "Vendor: Globex Corporation" ||
		shown != "Domestic wire (purpose: Vendor, Globex Corporation)" {
		t.Fatalf("Mercury received %+v; the owner was shown %q", tx, shown)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, policy, creds, body, want string
	}{
		{"amount with three decimals", SeedPolicy, "", pay(mercurytest.AcmeID, "1.005", "ach"), "invalid_request: `amount_usd` is an amount in dollars above 0 with at most two decimals, such as 120 or 499.99"},
		{"amount with an exponent", SeedPolicy, "", pay(mercurytest.AcmeID, "1e2", "ach"), "invalid_request: `amount_usd` is an amount in dollars above 0 with at most two decimals, such as 120 or 499.99"},
		{"above max_payment_usd", `{"max_payment_usd": 100}`, "", pay(mercurytest.AcmeID, "100.01", "ach"), "policy_denied: the payment of $100.01 is above the owner's max_payment_usd of $100.00"},
		{"above the month's bound alone", `{"max_spend_usd_month": 50}`, "", pay(mercurytest.AcmeID, "60", "ach"), "policy_denied: the payment of $60.00 is above the owner's max_spend_usd_month of $50.00"},
		{"refused by rule", `{"rules": [{"when": {"methods": ["check"]}, "then": "refuse"}]}`, "", pay(mercurytest.AcmeID, "5", "check"), "policy_denied: the owner's rule 1 (method check) refuses this payment"},
		{"broken rule", `{"rules": [{"when": {"op": "cancel_invoice", "min_usd": 10}, "then": "ask"}]}`, "", pay(mercurytest.AcmeID, "5", "ach"), "policy_unreadable: rule 1 bounds an amount, and cancel_invoice carries none"},
		{"unreadable policy", `{"confirm": ["accounts"]}`, "", pay(mercurytest.AcmeID, "5", "ach"), "policy_unreadable: `confirm` names `accounts`, a read: only writes belong there"},
		{"unknown payee", `{}`, "", pay("b2b2b2b2-0000-4000-8000-00000000ffff", "5", "ach"), "invalid_request: Mercury does not know it (recipient not found)"},
		{"unknown account", `{}`, "", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 5, "method": "ach", "account_id": "nope"}`, "invalid_request: Mercury has no account nope for this token"},
		{"insufficient funds", `{}`, "", pay(mercurytest.AcmeID, "250000.01", "ach"), "invalid_request: Mercury refused the payment: insufficient funds. Nothing was written."},
		{"no token", `{}`, "-", pay(mercurytest.AcmeID, "5", "ach"), "invalid_request: the project has no Mercury API token: its owner stores one as {\"token\": \"secret-token:…\"}"},
		{"wrong token", `{}`, `{"token": "secret-token:wrong"}`, pay(mercurytest.AcmeID, "5", "ach"), "credentials_rejected: Mercury refused the project's token (401): its owner must store a valid one"},
		{"an unknown invoice", `{}`, "", `{"operation": "cancel_invoice", "invoice_id": "nope"}`, "invalid_request: Mercury does not know it (invoice not found)"},
		{"base_url not http(s)", `{}`, `{"token": "secret-token:x", "base_url": "file:///etc"}`, pay(mercurytest.AcmeID, "5", "ach"), "invalid_request: the project's Mercury base_url must use https: the owner must correct the project's credentials"},
		{"unknown customer", `{}`, "", `{"operation": "send_invoice", "customer_id": "nope", "invoice_date": "2026-12-01", "due_date": "2026-12-31", ` +
			`"line_items": [{"name": "Consulting", "quantity": 1, "unit_price_usd": 10}]}`, "invalid_request: Mercury has no customer nope"},
		{"blank payee name", `{}`, "", `{"operation": "add_recipient", "name": " ", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` + address + `}`, "invalid_request: the payee's name is empty"},
		{"memo with a bidi control", `{}`, "", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 5, "method": "ach", "memo": "a\u202eb"}`, "invalid_request: the memo holds characters a task may not show (control, invisible or reordering characters)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, f := setup(t, tc.policy)
			switch tc.creds {
			case "-":
				h.Credentials = nil
			case "":
			default:
				h.Credentials = []byte(tc.creds)
			}
			_, err := h.Call(ctx, tc.body)
			if got := connectortest.Text(err); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if f.Payments() != 0 {
				t.Fatal("a refused call paid")
			}
		})
	}
}

func TestPolicyModes(t *testing.T) {
	t.Parallel()
	c := mercury.New(mercury.Config{})
	mode, sentence, _ := connectors.Catalogue{"mercury": c}.PolicyMode("mercury", []byte(`{"rules": [{"when": {"op": "cancel_invoice", "min_usd": 10}, "then": "ask"}]}`))
	if mode != "broken" || sentence != "rule 1 bounds an amount, and cancel_invoice carries none" {
		t.Fatalf("%s: %s", mode, sentence)
	}
	if mode, _, _ := (connectors.Catalogue{"mercury": c}).PolicyMode("mercury", []byte(SeedPolicy)); mode != "ok" {
		t.Fatalf("the seed policy is %s", mode)
	}
}

// A payment whose answer is lost is asked again with the same idempotency
// key; Mercury answers 409 with the payment the key made, which is the
// result, and pays once.
func TestLostAnswerPaysOnce(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"confirm": ["pay_invoice"]}`)
	out := call(t, h, pay(mercurytest.AcmeID, "42.17", "ach"))
	task, _ := h.Task(out["task_id"].(string))
	f.DropNextPayment()
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	_ = json.Unmarshal(res, &r)
	txs := f.Transactions()
	if f.Payments() != 1 || len(txs) != 1 || r["transaction_id"] != txs[0].ID {
		t.Fatalf("payments %d, transactions %d, result %s", f.Payments(), len(txs), res)
	}
	if f.Balance(mercurytest.CheckingID) != 25_000_000-4_217 {
		t.Fatalf("balance %d", f.Balance(mercurytest.CheckingID))
	}
}

// The answer checks the policy as it is when it runs.
func TestAnswerRechecksThePolicy(t *testing.T) {
	t.Parallel()
	h, f := setup(t, SeedPolicy)
	h.NoVoid = true
	out := call(t, h, pay(mercurytest.AcmeID, "700", "ach"))
	task, _ := h.Task(out["task_id"].(string))
	h.Policy = []byte(`{"max_payment_usd": 500}`)
	_, _, err := h.Answer(ctx, task, nil, "")
	want := "policy_denied: The payment of $700.00 is above the owner's max_payment_usd of $500.00. Nothing was written."
	if connectortest.Text(err) != want || f.Payments() != 0 {
		t.Fatalf("got %v; want %s", err, want)
	}
}

func TestMonthlyBoundUnderConcurrency(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"max_spend_usd_month": 100}`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid, refused := 0, 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Distinct amounts: Mercury refuses the same amount to the same payee twice a day.
			_, err := h.Call(ctx, pay(mercurytest.AcmeID, fmt.Sprintf("10.%02d", i), "ach"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				paid++
			case countersign.ErrorCode(err) == countersign.PolicyDenied:
				refused++
			default:
				t.Errorf("payment %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if paid+refused != 20 || h.Paid() > 10_000 || f.Payments() != paid || paid < 9 {
		t.Fatalf("paid %d, refused %d, counted %d, at Mercury %d", paid, refused, h.Paid(), f.Payments())
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	h, _ := setup(t, `{"confirm": ["pay_invoice"]}`)
	out := call(t, h, `{"operation": "accounts"}`)
	accts := out["accounts"].([]any)
	if len(accts) != 2 || accts[0].(map[string]any)["available_cents"] != 25_000_000.0 {
		t.Fatalf("accounts: %v", out)
	}
	out = call(t, h, `{"operation": "recipients"}`)
	if len(out["recipients"].([]any)) != 2 {
		t.Fatalf("recipients: %v", out)
	}
	out = call(t, h, `{"operation": "transactions", "limit": 5}`)
	if out["account_id"] != mercurytest.CheckingID || len(out["transactions"].([]any)) != 0 {
		t.Fatalf("transactions: %v", out)
	}
	// Reads are served under a policy that cannot be applied.
	h.Policy = []byte(`{"rules": [{"when": {"op": "cancel_invoice", "min_usd": 10}, "then": "ask"}]}`)
	call(t, h, `{"operation": "accounts"}`)
}

func TestOtherWrites(t *testing.T) {
	t.Parallel()
	h, f := setup(t, SeedPolicy)
	out := call(t, h, `{"operation": "add_recipient", "name": "Hooli Inc", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", `+address+`}`)
	task, _ := h.Task(out["task_id"].(string))
	if len(f.Recipients()) != 2 {
		t.Fatal("a payee was saved before the owner approved")
	}
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil || len(f.Recipients()) != 3 {
		t.Fatalf("add_recipient: %v", err)
	}
	out = call(t, h, `{"operation": "send_invoice", "customer_id": "`+mercurytest.CustomerID+`", "invoice_date": "2026-12-01", "due_date": "2026-12-31", `+
		`"line_items": [{"name": "Consulting", "quantity": 3, "unit_price_usd": 150.25}]}`)
	task, _ = h.Task(out["task_id"].(string))
	if task.Spec.Display.Fields[0].Values[0] != "$450.75" {
		t.Fatalf("the invoice shows %v", task.Spec.Display.Fields)
	}
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil || !strings.Contains(string(res), `"amount_cents":45075`) {
		t.Fatalf("send_invoice: %s %v", res, err)
	}
	out = call(t, h, `{"operation": "cancel_invoice", "invoice_id": "`+mercurytest.InvoiceID+`"}`)
	task, _ = h.Task(out["task_id"].(string))
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
		t.Fatal(err)
	}
	if inv, _ := f.Invoice(mercurytest.InvoiceID); inv.Status != "Cancelled" {
		t.Fatalf("the invoice is %s", inv.Status)
	}
}

func TestOnlyAnUnpaidInvoiceIsCancelled(t *testing.T) {
	t.Parallel()
	h, _ := setup(t, `{}`)
	body := `{"operation": "cancel_invoice", "invoice_id": "` + mercurytest.InvoiceID + `"}`
	call(t, h, body)
	_, err := h.Call(ctx, body)
	if got := connectortest.Text(err); got != "invalid_request: the invoice is Cancelled: only an unpaid invoice can be cancelled" {
		t.Fatalf("got %s", got)
	}
}

// Refusals of the answer run, after the owner's approval: each says what
// happened to the payment.
func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before func(h *connectortest.Harness, f *mercurytest.Fake)
		body   string
		want   string
		paid   int
	}{
		{"lost twice", func(_ *connectortest.Harness, f *mercurytest.Fake) { f.FailNextPayments(2, 503) }, pay(mercurytest.AcmeID, "12.34", "ach"),
			"upstream_unavailable: Mercury answered 503 (the service is unavailable), so the payment may or may not have been made: look at the account's transactions before preparing it again. Whether the write happened is not known.", 0},
		{"one 503, then paid", func(_ *connectortest.Harness, f *mercurytest.Fake) { f.FailNextPayments(1, 503) }, pay(mercurytest.AcmeID, "12.35", "ach"), "", 1},
		{"insufficient funds", nil, pay(mercurytest.AcmeID, "250000.01", "ach"), "invalid_request: Mercury refused the payment: insufficient funds. Nothing was written.", 0},
		{"token revoked since", func(h *connectortest.Harness, _ *mercurytest.Fake) {
			h.Credentials = []byte(`{"token": "secret-token:revoked"}`)
		}, pay(mercurytest.AcmeID, "5", "ach"), "credentials_rejected: Mercury refused the project's token for the payment (401): its owner must store a valid one. Nothing was written.", 0},
		{"the month's bound reached since", func(h *connectortest.Harness, _ *mercurytest.Fake) {
			h.Policy = []byte(`{"max_spend_usd_month": 15}`)
			if _, err := h.Call(ctx, pay(mercurytest.AcmeID, "9", "ach")); err != nil {
				panic(err)
			}
		}, pay(mercurytest.AcmeID, "10.01", "ach"), "policy_denied: This payment of $10.01 would take the last 30 days' payments past the owner's max_spend_usd_month of $15.00. Nothing was written.", 1},
		{"a rule refuses it now", func(h *connectortest.Harness, _ *mercurytest.Fake) {
			h.Policy = []byte(`{"rules": [{"when": {"op": "pay_invoice"}, "then": "refuse"}]}`)
		}, pay(mercurytest.AcmeID, "7", "ach"), "policy_denied: The owner's rule 1 (pay_invoice) refuses this payment. Nothing was written.", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, f := setup(t, `{"confirm": ["pay_invoice"]}`)
			h.NoVoid = true
			out := call(t, h, tc.body)
			task, _ := h.Task(out["task_id"].(string))
			if tc.before != nil {
				tc.before(h, f)
			}
			_, _, err := h.Answer(ctx, task, nil, "")
			if got := connectortest.Text(err); got != tc.want && !(tc.want == "" && err == nil) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if f.Payments() != tc.paid {
				t.Fatalf("%d payments", f.Payments())
			}
		})
	}
}

// A 409 for a payment's idempotency key that carries another payment than
// the one meant leaves whether it was made unknown: it stays counted in the
// month's spending, and the agent is told to look.
func TestConflictWithAnotherPayment(t *testing.T) {
	t.Parallel()
	f := mercurytest.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/transactions") {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"id": "e5e5e5e5-0000-4000-8000-000000000001", "counterpartyId": "` + mercurytest.GlobexID + `", "amount": -1.00, "status": "sent"}`))
			return
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h := connectortest.New(t, mercury.New(mercury.Config{BaseURL: srv.URL + "/api/v1", Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	_, err := h.Call(ctx, pay(mercurytest.AcmeID, "12", "ach"))
	want := "upstream_unavailable: Mercury answered 409 for this payment's idempotency key with another transaction, so whether this payment was made is not known: " +
		"look at the account's transactions before preparing it again. Whether the write happened is not known."
	if got := connectortest.Text(err); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if h.Paid() != 1200 {
		t.Fatalf("the payment is not counted: %d", h.Paid())
	}
}
