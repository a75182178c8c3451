package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
