package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/client"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// The owner edits a Mercury project's rules in Settings: one rule, "a
// payment of $100 or more asks", added row by row and confirmed with the
// wallet; the agent's next $500 payment then waits for the owner, while a
// $50 one still goes at once — against a fake Mercury over loopback.
func TestSettingsMercuryRule(t *testing.T) {
	t.Parallel()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}})))
	followClock(t, w)
	w.PutProject("bank", "mercury", "{}", []byte(`{"token": "`+mercurytest.Token+`"}`))
	w.StartJobs()
	pay := func(usd int) string {
		t.Helper()
		body := fmt.Sprintf(`{"operation": "pay_invoice", "recipient_id": %q, "amount_usd": %d, "method": "ach"}`, mercurytest.AcmeID, usd)
		raw, err := w.AgentClient().CallRaw(context.Background(), w.Owner.Account, "bank", []byte(body), nil)
		var r *client.Refusal
		if errors.As(err, &r) {
			return r.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Status  string `json:"status"`
			SentVia string `json:"sent_via"`
		}
		_ = json.Unmarshal(raw, &out)
		if out.SentVia != "" {
			return "sent " + out.SentVia
		}
		return out.Status
	}
	if got := pay(500); got != "sent direct" {
		t.Fatalf("before any rule, $500 is %q", got)
	}

	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	item := `#projects-list li[data-project="bank"]`
	do(t, ctx, "edit the bank", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project bank"]`)),
		chromedp.WaitVisible(chromedp.ID("project-bank-rules")))
	do(t, ctx, "add a rule", chromedp.Click(named("Add a rule")), chromedp.WaitVisible(chromedp.ID("project-bank-rules-1-op")),
		chromedp.SetValue(chromedp.ID("project-bank-rules-1-op"), "pay_invoice"),
		chromedp.SendKeys(chromedp.ID("project-bank-rules-1-conds"), `{"min_usd": 100}`),
		chromedp.SetValue(chromedp.ID("project-bank-rules-1-then"), "ask"),
		chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
	waitJS(t, ctx, "saved", `document.getElementById("status").textContent.includes("The project bank is saved")`)
	waitJS(t, ctx, "readable", `document.querySelector('`+item+` [data-mode]')?.dataset.mode === "ok"`)

	if got := pay(500); got != "awaiting_owner" {
		t.Fatalf("under the rule, $500 is %q", got)
	}
	if got := pay(50); got != "sent direct" {
		t.Fatalf("under the rule, $50 is %q", got)
	}
	if n := f.Payments(); n != 2 {
		t.Fatalf("the fake Mercury paid %d times, want 2 (the $500 under the rule waits)", n)
	}
}

// readmeMercuryPolicy is the README's six-rule Mercury policy ("a payment
// above $500, every wire, every cancellation can wait while a small ACH
// payment to a saved payee runs at once"), read from the README itself.
func readmeMercuryPolicy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "a small ACH payment to a saved payee runs at once\", as a")
	if !ok {
		t.Fatal("the README no longer holds the six-rule Mercury policy")
	}
	start := strings.Index(after, `{"max_payment_usd"`)
	end := strings.Index(after, "]}\n")
	if start < 0 || end < start {
		t.Fatal("the README's Mercury policy is not where it was")
	}
	policy := after[start : end+2]
	if !json.Valid([]byte(policy)) || strings.Count(policy, `"then"`) != 6 {
		t.Fatalf("the README's Mercury policy reads %q", policy)
	}
	return policy
}

// Settings tells what the README's Mercury policy does in the words of the
// code that decides: a payment above $500 asks, every wire asks, every
// cancellation asks, a small ACH payment to a saved payee runs at once,
// each rule a sentence; never that nothing asks. What it says holds for
// the agent's calls.
func TestSettingsMercuryReadmePolicy(t *testing.T) {
	t.Parallel()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}})))
	followClock(t, w)
	w.PutProject("bank", "mercury", readmeMercuryPolicy(t), []byte(`{"token": "`+mercurytest.Token+`"}`))
	w.StartJobs()

	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	item := `#projects-list li[data-project="bank"]`
	waitJS(t, ctx, "what the policy does", `!!document.querySelector('`+item+` [data-explained] li[data-write="cancel_invoice"]')`)
	whole := textOf(t, ctx, "the project", item)
	if strings.Contains(strings.ToLower(whole), "nothing") || strings.Contains(whole, "decides alone") {
		t.Fatalf("the project says nothing asks: %q", whole)
	}
	row := func(op string) (outcome, text string) {
		t.Helper()
		got := run(t, ctx, "the row of "+op, chromedp.Evaluate[[]string](`(() => { const li = document.querySelector('`+item+` [data-explained] li[data-write="`+op+`"]'); return li ? [li.dataset.outcome, li.textContent] : ["", ""]; })()`))
		return got[0], got[1]
	}
	// A payment: above $500 it asks, a wire asks, a small ACH payment to a
	// saved payee runs at once, in the rules' order.
	outcome, pay := row("pay_invoice")
	cases := run(t, ctx, "pay_invoice's cases", chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+item+` [data-explained] li[data-write="pay_invoice"] ol li')].map((li) => li.textContent)`))
	if outcome != "depends" || !strings.HasPrefix(pay, "pay_invoice, the first that applies:") ||
		!slices.Contains(cases, "asks you first when the amount is at least $500.01 (rule 2)") ||
		!slices.Contains(cases, "asks you first when the method is wire (rule 3)") ||
		!slices.Contains(cases, "runs at once when the method is ach and the payee is saved (rule 5)") ||
		!slices.Contains(cases, "refused when the amount is above $5,000.00 (max_payment_usd)") ||
		cases[len(cases)-1] != "otherwise asks you first (rule 6)" {
		t.Errorf("the page says of a payment (%s): %q", outcome, cases)
	}
	if outcome, text := row("cancel_invoice"); outcome != "ask" || text != "cancel_invoice: asks you first (rule 4)." {
		t.Errorf("the page says of a cancellation (%s): %q", outcome, text)
	}
	for _, op := range []string{"add_recipient", "send_invoice"} {
		if outcome, text := row(op); outcome != "ask" || text != op+": asks you first (rule 6)." {
			t.Errorf("the page says of %s (%s): %q", op, outcome, text)
		}
	}
	// The page shows what the service wrote, and nothing it worked out:
	// each write's line and each rule as the policy reader has them.
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ex client.PolicyExplained
	for _, p := range projects {
		if p.Name == "bank" {
			ex = p.PolicyExplained
		}
	}
	if len(ex.Writes) != 4 || len(ex.Rules) != 6 {
		t.Fatalf("the service explains %d writes and %d rules", len(ex.Writes), len(ex.Rules))
	}
	for _, wr := range ex.Writes {
		_, text := row(wr.Op)
		for _, c := range wr.Cases {
			if c.When != "always" && !strings.Contains(text, c.When+" ("+c.Because+")") {
				t.Errorf("%s: the page leaves out the case %q (%s): %q", wr.Op, c.When, c.Because, text)
			}
		}
	}
	rules := run(t, ctx, "the rules", chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+item+` [data-explained] ol.explained-rules li')].map((li) => li.textContent)`))
	if !slices.Equal(rules, ex.Rules) {
		t.Errorf("the page's rules %q, the service's %q", rules, ex.Rules)
	}
	do(t, ctx, "the project in view", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+item+`').scrollIntoView({block: "start"})`))
	screen(t, ctx, "settings-policy-explained")

	// The editor says beside each row what the saved policy does with it.
	do(t, ctx, "edit the bank", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project bank"]`)),
		chromedp.WaitVisible(chromedp.ID("project-bank-write-pay_invoice-now")))
	if got := textOf(t, ctx, "pay_invoice as saved", "#project-bank-write-pay_invoice-now"); got != "As saved: "+ex.Writes[0].Text {
		t.Errorf("the editor says of pay_invoice %q", got)
	}

	// What the page says holds for the agent.
	call := func(body string) string {
		t.Helper()
		raw, err := w.AgentClient().CallRaw(context.Background(), w.Owner.Account, "bank", []byte(body), nil)
		var r *client.Refusal
		if errors.As(err, &r) {
			return r.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Status  string `json:"status"`
			SentVia string `json:"sent_via"`
		}
		_ = json.Unmarshal(raw, &out)
		if out.SentVia != "" {
			return "sent"
		}
		return out.Status
	}
	pays := func(usd, method string) string {
		return call(fmt.Sprintf(`{"operation": "pay_invoice", "recipient_id": %q, "amount_usd": %s, "method": %q}`, mercurytest.AcmeID, usd, method))
	}
	for _, c := range []struct{ usd, method, want string }{
		{"600", "ach", "awaiting_owner"},
		{"100", "wire", "awaiting_owner"},
		{"100", "ach", "sent"},
	} {
		if got := pays(c.usd, c.method); got != c.want {
			t.Errorf("a payment of $%s by %s is %q; the page says %s", c.usd, c.method, got, c.want)
		}
	}
}
