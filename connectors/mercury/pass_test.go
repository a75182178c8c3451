package mercury_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/policy"
)

// recorder keeps what each run told the owner's history: the Did of a
// write made at once, and the Outcome of an answer.
type recorder struct {
	mu       sync.Mutex
	did      []connectors.Did
	outcomes []connectors.Outcome
}

func (r *recorder) dids() []connectors.Did {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.did)
}

func (r *recorder) answered() []connectors.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.outcomes)
}

// recording wraps c's runs so that rec sees what they told the history.
func recording(c *connectors.Connector, rec *recorder) *connectors.Connector {
	for i := range c.Operations {
		op := &c.Operations[i]
		if run := op.Run; run != nil {
			op.Run = func(ctx context.Context, call *connectors.Call) (any, error) {
				out, err := run(ctx, call)
				if d := call.Done(); d != nil {
					rec.mu.Lock()
					rec.did = append(rec.did, *d)
					rec.mu.Unlock()
				}
				return out, err
			}
		}
		if answer := op.Answer; answer != nil {
			op.Answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
				r, err := answer(ctx, a)
				if err == nil {
					rec.mu.Lock()
					rec.outcomes = append(rec.outcomes, r.Outcome)
					rec.mu.Unlock()
				}
				return r, err
			}
		}
	}
	return c
}

func recorded(t *testing.T, pol string) (*connectortest.Harness, *mercurytest.Fake, *recorder) {
	t.Helper()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	rec := &recorder{}
	h := connectortest.New(t, recording(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}}), rec))
	h.Policy = []byte(pol)
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	return h, f, rec
}

// checkResult validates out against the result schema op declares.
func checkResult(t *testing.T, op string, out []byte) {
	t.Helper()
	o, ok := mercury.New(mercury.Config{}).Operation(op)
	if !ok || o.Result == nil {
		t.Fatalf("%s declares no result schema", op)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(o.Result))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:result", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:result")
	if err != nil {
		t.Fatalf("%s's result schema does not compile: %v", op, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s answered %s, which its result schema refuses: %v", op, out, err)
	}
}

const (
	addRecipient = `{"operation": "add_recipient", "name": "Hooli Inc", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` + address + `}`
	sendInvoice  = `{"operation": "send_invoice", "customer_id": "` + mercurytest.CustomerID + `", "invoice_date": "2026-12-01", "due_date": "2026-12-31", ` +
		`"line_items": [{"name": "Consulting", "quantity": 3, "unit_price_usd": 150.25}]}`
	cancelInvoice = `{"operation": "cancel_invoice", "invoice_id": "` + mercurytest.InvoiceID + `"}`
)

// The summary each write's task names: what approving does, with the
// values the owner must check, in SPEC §8's shape for a payment.
func TestSummaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"a payment to a saved payee", pay(mercurytest.AcmeID, "750.25", "ach"),
			"pay $750.25 to Acme Supplies LLC from Checking ••1234 by ACH; it cannot be undone"},
		{"a wire", pay(mercurytest.GlobexID, "12000", "wire"),
			"pay $12,000.00 to Globex Corporation from Checking ••1234 by domestic wire; it cannot be undone"},
		{"a check from savings", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 5, "method": "check", "account_id": "` + mercurytest.SavingsID + `"}`,
			"pay $5.00 to Acme Supplies LLC from Savings ••5678 by check; it cannot be undone"},
		{"a new payee", `{"operation": "pay_invoice", ` + newPayee + `, "amount_usd": 99.5, "method": "ach"}`,
			`pay $99.50 to new payee "Hooli Inc" from Checking ••1234 by ACH; it cannot be undone`},
		{"a new payee's name with quotes", `{"operation": "pay_invoice", "recipient": {"name": "Hooli \"Inc\" from Savings", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` + address + `}, "amount_usd": 1, "method": "ach"}`,
			`pay $1.00 to new payee "Hooli \"Inc\" from Savings" from Checking ••1234 by ACH; it cannot be undone`},
		{"a payee saved", addRecipient,
			`save the payee "Hooli Inc" (ACH to account ••2333, routing 021000021); it can be deleted later in Mercury`},
		{"an invoice", sendInvoice,
			"email an invoice of $450.75 to Initech, due 2026-12-31; it can be cancelled while unpaid"},
		{"a cancellation", cancelInvoice,
			"cancel invoice INV-0001 of $1,500.00, due 2026-12-01; it cannot be undone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := setup(t, `{"confirm": ["pay_invoice", "add_recipient", "send_invoice", "cancel_invoice"]}`)
			out, err := h.Call(ctx, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			task, err := h.Awaiting(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := task.Spec.Display.Summary; got != tc.want {
				t.Fatalf("summary\n got %q\nwant %q", got, tc.want)
			}
			if err := countersign.ValidateSummary(task.Spec.Display.Summary); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A name that quoting makes longer than a summary holds is cut inside its
// quotes, and the summary stays within 200 characters.
func TestSummaryCutsALongName(t *testing.T) {
	t.Parallel()
	h, _ := setup(t, `{"confirm": ["pay_invoice"]}`)
	name := "H" + strings.Repeat("\u00a0", 90) + "I"
	out, err := h.Call(ctx, `{"operation": "pay_invoice", "recipient": {"name": "`+name+`", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", `+address+`}, "amount_usd": 1, "method": "ach"}`)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := h.Awaiting(out)
	got := task.Spec.Display.Summary
	if n := len([]rune(got)); n > 200 || !strings.HasPrefix(got, `pay $1.00 to new payee "H\u00a0\u00a0`) ||
		!strings.HasSuffix(got, `\u00a0…" from Checking ••1234 by ACH; it cannot be undone`) || countersign.ValidateSummary(got) != nil {
		t.Fatalf("%d characters: %q", n, got)
	}
}

// What each write answers fits its result schema and tells the owner's
// history what it did: made at once, with Did and the title and summary a
// task of it shows; approved, in the answer's Outcome. Reads fit theirs.
func TestResultsAndOutcomes(t *testing.T) {
	t.Parallel()
	type write struct {
		op, body string
		outcome  func(result map[string]any) connectors.Outcome
	}
	writes := []write{
		{"pay_invoice", pay(mercurytest.AcmeID, "120", "ach"), func(r map[string]any) connectors.Outcome {
			id := r["transaction_id"].(string)
			return connectors.Outcome{Text: "Payment sent: transaction " + id + " (pending)", URL: "https://app.mercury.com/transactions/" + id}
		}},
		{"pay_invoice", `{"operation": "pay_invoice", ` + newPayee + `, "amount_usd": 99.5, "method": "ach"}`, func(r map[string]any) connectors.Outcome {
			id := r["transaction_id"].(string)
			return connectors.Outcome{Text: "Payee saved and payment sent: transaction " + id + " (pending)", URL: "https://app.mercury.com/transactions/" + id}
		}},
		{"add_recipient", addRecipient, func(r map[string]any) connectors.Outcome {
			return connectors.Outcome{Text: "Payee saved: recipient " + r["recipient_id"].(string)}
		}},
		{"send_invoice", sendInvoice, func(r map[string]any) connectors.Outcome {
			return connectors.Outcome{Text: "Invoice " + r["invoice_number"].(string) + " emailed: $450.75, invoice " + r["invoice_id"].(string)}
		}},
		{"cancel_invoice", cancelInvoice, func(map[string]any) connectors.Outcome {
			return connectors.Outcome{Text: "Invoice INV-0001 cancelled (" + mercurytest.InvoiceID + ")"}
		}},
	}
	for _, asked := range []bool{false, true} {
		h, _, rec := recorded(t, `{}`)
		if asked {
			h.Policy = []byte(`{"confirm": ["pay_invoice", "add_recipient", "send_invoice", "cancel_invoice"]}`)
		}
		for i, w := range writes {
			out, err := h.Call(ctx, w.body)
			if err != nil {
				t.Fatalf("%s: %v", w.op, err)
			}
			var task connectortest.Opened
			if asked {
				if task, err = h.Awaiting(out); err != nil {
					t.Fatal(err)
				}
				if out, _, err = h.Answer(ctx, task, nil, ""); err != nil {
					t.Fatalf("%s: %v", w.op, err)
				}
				checkResult(t, "confirm", out)
			}
			checkResult(t, w.op, out)
			var r map[string]any
			_ = json.Unmarshal(out, &r)
			want := w.outcome(r)
			if asked {
				got := rec.answered()
				if len(got) != i+1 || got[i] != want || len(rec.dids()) != 0 {
					t.Fatalf("%s approved told the history %+v; want %+v", w.op, got, want)
				}
			} else {
				got := rec.dids()
				if len(got) != i+1 || got[i].Outcome != want || got[i].Title == "" || countersign.ValidateSummary(got[i].Summary) != nil {
					t.Fatalf("%s made at once told the history %+v; want %+v", w.op, got, want)
				}
			}
			if err := countersign.ValidateSummary(want.Text); err != nil {
				t.Fatalf("the outcome %q is not one line of shown text: %v", want.Text, err)
			}
		}
	}
	// A write made at once tells the title and summary a task of it shows.
	h, _, rec := recorded(t, `{}`)
	if _, err := h.Call(ctx, pay(mercurytest.AcmeID, "31", "ach")); err != nil {
		t.Fatal(err)
	}
	h.Policy = []byte(`{"confirm": ["pay_invoice"]}`)
	out, err := h.Call(ctx, pay(mercurytest.AcmeID, "31", "ach"))
	if err != nil {
		t.Fatal(err)
	}
	task, _ := h.Awaiting(out)
	if d := rec.dids()[0]; d.Title != task.Spec.Display.Title || d.Summary != task.Spec.Display.Summary ||
		d.Summary != "pay $31.00 to Acme Supplies LLC from Checking ••1234 by ACH; it cannot be undone" {
		t.Fatalf("told %q, %q; a task shows %q, %q", d.Title, d.Summary, task.Spec.Display.Title, task.Spec.Display.Summary)
	}

	for _, read := range []struct{ op, body string }{
		{"accounts", `{"operation": "accounts"}`},
		{"recipients", `{"operation": "recipients"}`},
		{"transactions", `{"operation": "transactions"}`},
		{"transactions", `{"operation": "transactions", "account_id": "` + mercurytest.SavingsID + `"}`},
	} {
		out, err := h.Call(ctx, read.body)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, read.op, out)
	}
}

// max_payment_usd, and max_spend_usd_month for one payment alone, are the
// policy's caps: Decide refuses above them with the owner's words, and
// Explain tells them with pay_invoice rather than as limits.
func TestCapsAreThePolicys(t *testing.T) {
	t.Parallel()
	p := mercury.New(mercury.Config{}).ParsePolicy([]byte(`{"max_payment_usd": 1000, "max_spend_usd_month": 800.5}`))
	facts := func(c policy.Cents) policy.Facts {
		return policy.Facts{Amounts: map[string]policy.Cents{"amount": c}, Words: map[string]string{"method": "ach", "payee": "saved"},
			Names: map[string][]string{"recipient": {mercurytest.AcmeID}}}
	}
	for _, tc := range []struct {
		cents policy.Cents
		want  string
	}{
		{80050, ""},
		{80051, "the payment of $800.51 is above the owner's max_spend_usd_month of $800.50"},
		{100001, "the payment of $1,000.01 is above the owner's max_payment_usd of $1,000.00"},
	} {
		d := p.Decide("pay_invoice", facts(tc.cents))
		if d.Sentence != tc.want || (tc.want != "") != (d.Outcome == policy.Refuse) {
			t.Errorf("%d cents: %+v", tc.cents, d)
		}
	}
	e := p.Explain()
	if len(e.Limits) != 0 || !strings.Contains(e.Writes[0].Text, "refused when the amount is above $1,000.00 (max_payment_usd); refused when the amount, with the last 30 days' payments, is above $800.50 (max_spend_usd_month)") {
		t.Fatalf("the owner is told %q and %q", e.Writes[0].Text, e.Limits)
	}
}

// switcher serves whichever fake is current, so each call of a table
// meets Mercury as seeded (Mercury refuses the same payment twice a day).
type switcher struct {
	f atomic.Pointer[mercurytest.Fake]
}

func (s *switcher) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.f.Load().ServeHTTP(w, r) }

// The policy truth test: for every Mercury policy the README and this
// package's and the policy package's tests name, a table of real calls of
// every write through the harness; the outcome the owner's words claim
// for each call (read from Explain's sentence for the write: its cases'
// conditions and verbs) is what the connector did: made at once, a task
// opened, or a policy refusal with nothing written.
func TestPolicyTruth(t *testing.T) {
	t.Parallel()
	policies := []string{
		SeedPolicy, // the README's six rules
		`{"max_payment_usd": 100}`,
		`{"max_spend_usd_month": 50}`,
		`{"rules": [{"when": {"methods": ["check"]}, "then": "refuse"}]}`,
		`{"confirm": ["pay_invoice"]}`,
		`{"max_payment_usd": 500}`,
		`{"rules": [{"when": {"op": "pay_invoice"}, "then": "refuse"}]}`,
		`{"max_spend_usd_month": 15}`,
		`{"max_spend_usd_month": 100}`,
		`{"confirm": ["pay_invoice"], "max_spend_usd_month": 100}`,
		`{"confirm": ["pay_invoice", "add_recipient", "send_invoice", "cancel_invoice"]}`,
		`{}`,
		// policy/explain_test.go.
		`{"confirm":["pay_invoice","cancel_invoice"],"max_payment_usd":750}`,
		`{"confirm":["pay_invoice"],"rules":[{"when":{"op":"pay_invoice","max_usd":100},"then":"allow"},{"when":{"methods":["wire"]},"then":"refuse"}]}`,
		`{"rules":[{"when":{"min_usd":10,"max_usd":99.99},"then":"ask"},{"when":{"payee":"new"},"then":"refuse"}]}`,
		`{"rules":[{"then":"refuse"}]}`,
		// cmd/countersign's sandbox test.
		`{"max_spend_usd_month": 1000}`,
	}
	type call struct {
		op, body string
		facts    policy.Facts
	}
	var calls []call
	for _, usd := range []string{"5", "9.99", "10", "99.99", "100", "100.01", "500", "500.01", "750", "750.01", "1000", "1000.01", "5000", "5000.01", "20000", "20000.01"} {
		cents, _ := policy.ParseCents(usd)
		for _, method := range []string{"ach", "wire", "check"} {
			calls = append(calls, call{"pay_invoice", pay(mercurytest.AcmeID, usd, method),
				policy.Facts{Amounts: map[string]policy.Cents{"amount": cents}, Words: map[string]string{"method": method, "payee": "saved"}}})
			calls = append(calls, call{"pay_invoice", `{"operation": "pay_invoice", ` + newPayee + `, "amount_usd": ` + usd + `, "method": "` + method + `"}`,
				policy.Facts{Amounts: map[string]policy.Cents{"amount": cents}, Words: map[string]string{"method": method, "payee": "new"}}})
		}
	}
	for _, price := range []string{"5", "50", "600"} {
		cents, _ := policy.ParseCents(price)
		calls = append(calls, call{"send_invoice", `{"operation": "send_invoice", "customer_id": "` + mercurytest.CustomerID + `", "invoice_date": "2026-12-01", "due_date": "2026-12-31", ` +
			`"line_items": [{"name": "Consulting", "quantity": 1, "unit_price_usd": ` + price + `}]}`, policy.Facts{Amounts: map[string]policy.Cents{"amount": cents}}})
	}
	calls = append(calls, call{"add_recipient", addRecipient, policy.Facts{}}, call{"cancel_invoice", cancelInvoice, policy.Facts{}})

	sw := &switcher{}
	sw.f.Store(mercurytest.New())
	srv := httptest.NewServer(sw)
	t.Cleanup(srv.Close)
	conn := mercury.New(mercury.Config{BaseURL: srv.URL + "/api/v1", Egress: egress.Options{AllowPrivate: true}})
	checked := 0
	for _, pol := range policies {
		e := conn.ParsePolicy([]byte(pol)).Explain()
		if e.Mode != policy.OK {
			t.Fatalf("%s: %s", pol, e.Sentence)
		}
		said := map[string]string{}
		for _, w := range e.Writes {
			said[w.Op] = w.Text
		}
		h := connectortest.New(t, conn)
		h.Policy = []byte(pol)
		h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
		for i, c := range calls {
			want := claimed(t, said[c.op], c.op, c.facts)
			f := mercurytest.New()
			sw.f.Store(f)
			// Each call a month after the last: the month's spending
			// starts at nothing.
			at := time.Now().Add(time.Duration(i) * 31 * 24 * time.Hour)
			h.Now = func() time.Time { return at }
			before := len(f.Recipients())
			inv, _ := f.Invoice(mercurytest.InvoiceID)
			out, err := h.Call(ctx, c.body)
			after, _ := f.Invoice(mercurytest.InvoiceID)
			wrote := f.Payments() > 0 || len(f.Recipients()) != before || after.Status != inv.Status || strings.Contains(string(out), `"invoice_number"`)
			var got policy.Outcome
			switch {
			case err != nil && countersign.ErrorCode(err) == countersign.PolicyDenied && !wrote:
				got = policy.Refuse
			case err != nil:
				t.Fatalf("%s, %s: %v", pol, c.body, err)
			case strings.Contains(string(out), `"status":"awaiting_owner"`) && !wrote:
				got = policy.Ask
			case strings.Contains(string(out), `"wrote":true`) && wrote:
				got = policy.Allow
			}
			if got != want {
				t.Errorf("policy %s, %s %v: the owner is told %q, which says %s; the connector did %s", pol, c.op, c.facts, said[c.op], want, got)
			}
			checked++
		}
	}
	if checked != len(policies)*len(calls) {
		t.Fatalf("%d calls checked", checked)
	}
}

// claimed reads what the owner's words for a write say of a call with
// facts: "op: verb." or "op: verb (why)." for one outcome, else "op, the
// first that applies: verb when conditions (why); …; otherwise verb".
func claimed(t *testing.T, text, op string, facts policy.Facts) policy.Outcome {
	t.Helper()
	verb := func(s string) policy.Outcome {
		s, _, _ = strings.Cut(s, " (")
		switch s {
		case "runs at once":
			return policy.Allow
		case "asks you first":
			return policy.Ask
		case "refused":
			return policy.Refuse
		}
		t.Fatalf("cannot read the verb %q in %q", s, text)
		return 0
	}
	text = strings.TrimSuffix(text, ".")
	if rest, ok := strings.CutPrefix(text, op+": "); ok {
		return verb(rest)
	}
	rest, ok := strings.CutPrefix(text, op+", the first that applies: ")
	if !ok {
		t.Fatalf("cannot read %q", text)
	}
	for _, part := range strings.Split(rest, "; ") {
		if v, ok := strings.CutPrefix(part, "otherwise "); ok {
			return verb(v)
		}
		v, cond, ok := strings.Cut(part, " when ")
		if !ok {
			t.Fatalf("cannot read %q in %q", part, text)
		}
		if i := strings.LastIndex(cond, " ("); i >= 0 {
			cond = cond[:i]
		}
		if holds(t, cond, facts) {
			return verb(v)
		}
	}
	t.Fatalf("%q says nothing of %v", text, facts)
	return 0
}

// holds evaluates a case's words, "the amount is at least $500.01 and the
// method is ach or wire", against facts.
func holds(t *testing.T, when string, facts policy.Facts) bool {
	t.Helper()
	amount := func(s string) policy.Cents {
		c, err := policy.ParseCents(strings.ReplaceAll(strings.TrimPrefix(s, "$"), ",", ""))
		if err != nil {
			t.Fatalf("cannot read the amount %q in %q", s, when)
		}
		return c
	}
	// Each call is a month after the last, so the last 30 days' payments
	// add nothing to its amount.
	when = strings.ReplaceAll(when, ", with the last 30 days' payments,", "")
	for _, part := range strings.Split(when, " and ") {
		name, test, ok := strings.Cut(strings.TrimPrefix(part, "the "), " is ")
		if !ok {
			t.Fatalf("cannot read %q", part)
		}
		a, hasAmount := facts.Amounts[name]
		word, hasWord := facts.Words[name]
		var yes bool
		switch {
		case strings.HasPrefix(test, "above "):
			yes = hasAmount && a > amount(strings.TrimPrefix(test, "above "))
		case strings.HasPrefix(test, "at least "):
			yes = hasAmount && a >= amount(strings.TrimPrefix(test, "at least "))
		case strings.HasPrefix(test, "at most "):
			yes = hasAmount && a <= amount(strings.TrimPrefix(test, "at most "))
		case strings.HasPrefix(test, "from "):
			lo, hi, _ := strings.Cut(strings.TrimPrefix(test, "from "), " to ")
			yes = hasAmount && a >= amount(lo) && a <= amount(hi)
		default:
			yes = hasWord && slices.Contains(strings.Split(strings.ReplaceAll(test, " or ", ", "), ", "), word)
		}
		if !yes {
			return false
		}
	}
	return true
}
