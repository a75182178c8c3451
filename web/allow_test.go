package web_test

// "Always allow this" on a task's card, in a real Chromium against the
// whole service (servicetest on PostgreSQL) and a fake Mercury on loopback:
// the rule it shows is the one Settings then lists, and the one the
// terminal's code builds; after it, a payment like the one allowed runs at
// once while one that differs still asks; every signature is asked before
// anything is sent, so a wallet that declines, a Cancel, or a project
// changed elsewhere since the rule was shown changes nothing; and the
// keyboard reaches it (Shift+A).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/connectors/github"
	"countersign/connectors/gmail"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/inbox"
	"countersign/policy"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestAllowWhenAsGo: for every write of Mercury, GitHub and Gmail (each
// example the connector declares, and cases of amounts, payees, branches,
// paths and addresses), the rule the page builds from the task it opened
// is the rule the connector's own TaskFacts builds (the terminal's
// `inbox allow`), byte for byte; where one refuses, so does the other.
func TestAllowWhenAsGo(t *testing.T) {
	t.Parallel()
	off := egress.Options{AllowPrivate: true}
	conns := map[string]*connectors.Connector{
		"mercury": mercury.New(mercury.Config{BaseURL: "http://127.0.0.1:1", Egress: off}),
		"github":  github.New(github.Options{BaseURL: "http://127.0.0.1:1", Egress: off}),
		"gmail":   gmail.New(gmail.Config{BaseURL: "http://127.0.0.1:1", Egress: off}),
	}
	policies := map[string]string{
		"mercury": `{"confirm": ["pay_invoice", "send_invoice"], "max_payment_usd": 5000}`,
		"gmail":   `{}`,
	}
	var ghWrites []string
	for _, op := range conns["github"].Operations {
		if op.Kind == connectors.Write {
			ghWrites = append(ghWrites, op.Name)
		}
	}
	ghPolicy, _ := json.Marshal(map[string]any{"actions": ghWrites, "confirm": ghWrites})
	policies["github"] = string(ghPolicy)

	type field struct {
		Label  string   `json:"label"`
		Values []string `json:"values"`
	}
	type tc struct {
		Connector string  `json:"connector"`
		Request   string  `json:"request"`
		Fields    []field `json:"fields"`
	}
	with := func(op, args string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		m["operation"] = op
		b, _ := json.Marshal(m)
		return string(b)
	}
	branch := []field{{"Branch", []string{"main"}}}
	var cases []tc
	for name, c := range conns {
		for _, op := range c.Operations {
			if op.Kind != connectors.Write {
				continue
			}
			for _, ex := range op.Examples {
				f := []field{}
				switch op.Name {
				case "file_put", "commit":
					f = branch
				case "pr_merge":
					f = []field{{"Branches", []string{"fix-typo into main"}}}
				}
				cases = append(cases, tc{name, with(op.Name, string(ex)), f})
			}
		}
	}
	cases = append(cases,
		tc{"mercury", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 120, "method": "ach"}`, nil},
		tc{"mercury", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 0.1, "method": "wire"}`, nil},
		tc{"mercury", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.GlobexID + `", "amount_usd": 1234.56, "method": "check"}`, nil},
		tc{"mercury", `{"operation": "pay_invoice", "recipient_id": "` + mercurytest.AcmeID + `", "amount_usd": 120.50, "method": "ach"}`, nil},
		tc{"mercury", `{"operation": "pay_invoice", "recipient": {"name": "Hooli Inc"}, "amount_usd": 99.5, "method": "ach"}`, nil},
		tc{"mercury", `{"operation": "send_invoice", "customer_id": "c", "line_items": [{"quantity": 3, "unit_price_usd": 19.99}, {"quantity": 1, "unit_price_usd": 0.05}]}`, nil},
		tc{"mercury", `{"operation": "cancel_invoice", "invoice_id": "` + mercurytest.InvoiceID + `"}`, nil},
		tc{"github", `{"operation": "file_put", "repo": "Octocat/Hello", "path": "docs/a b.md", "content": "x", "message": "m"}`, []field{{"Branch", []string{"release/1.0"}}}},
		tc{"github", `{"operation": "file_put", "repo": "octocat/hello", "path": "README.md", "content": "x", "message": "m"}`, nil},
		tc{"github", `{"operation": "commit", "repo": "octocat/hello", "branch": "dev", "message": "m", "changes": [{"path": "a.go", "content": "x"}, {"path": "b/c.go"}, {"path": "a.go", "content": "y"}]}`, []field{{"Branch", []string{"dev"}}}},
		tc{"github", `{"operation": "pr_merge", "repo": "octocat/hello", "number": 7, "method": "squash"}`, []field{{"Branches", []string{"feature into into main"}}}},
		tc{"github", `{"operation": "pr_merge", "repo": "octocat/hello", "number": 7}`, nil},
		tc{"github", `{"operation": "branch_create", "repo": "octocat/hello", "branch": "fix-typo", "from": "main"}`, nil},
		tc{"github", `{"operation": "gist_create", "files": {"a.txt": "x"}}`, nil},
		tc{"gmail", `{"operation": "send", "to": ["Dana@Example.COM", "lee@example.com"], "cc": ["ops@Other.example"], "bcc": ["dana@example.com"], "subject": "s", "body": "b"}`, nil},
	)

	in, _ := json.Marshal(cases)
	ctx := tab(t)
	raw := run(t, ctx, "the page's rules", chromedp.Evaluate[string](`(async () => {
  const cs = await import(window.BUNDLE);
  return JSON.stringify(`+string(in)+`.map((c) => {
    try {
      return {when: cs.allowWhen(c.connector, new TextEncoder().encode(c.request), {display: {fields: c.fields ?? []}})};
    } catch (e) {
      return {error: String(e.message)};
    }
  }));
})()`, chromedp.EvalAwaitPromise))
	var got []struct {
		When  json.RawMessage `json:"when"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got) != len(cases) {
		t.Fatalf("the page answered %s: %v", raw, err)
	}
	allowed := 0
	for i, c := range cases {
		conn := conns[c.Connector]
		env := countersign.Envelope{ID: "task-1", Kind: countersign.KindConfirm}
		for _, f := range c.Fields {
			env.Display.Fields = append(env.Display.Fields, countersign.Field{Kind: countersign.FieldText, Label: f.Label, Values: f.Values})
		}
		_, want, wantErr := conn.AlwaysAllow([]byte(policies[c.Connector]), []byte(c.Request), env)
		var page policy.Allowance
		pageErr := errors.New(got[i].Error)
		if got[i].Error == "" {
			page, pageErr = policy.AlwaysAllowWhen([]byte(policies[c.Connector]), conn.Schema(), got[i].When)
		}
		switch {
		case (wantErr == nil) != (pageErr == nil):
			t.Errorf("%s %s: Go %v, the page %v (its when %s)", c.Connector, c.Request, wantErr, pageErr, got[i].When)
		case wantErr == nil && (string(page.Rule) != string(want.Rule) || string(page.Policy) != string(want.Policy)):
			t.Errorf("%s %s: Go's rule %s, the page's %s", c.Connector, c.Request, want.Rule, page.Rule)
		case wantErr == nil:
			allowed++
		}
	}
	if allowed < 12 {
		t.Errorf("only %d of %d cases build a rule: the cases test too little", allowed, len(cases))
	}
}

// allowWorld is a service with a fake Mercury and the project bank, whose
// policy asks before every payment.
func allowWorld(t *testing.T) (*servicetest.World, *mercurytest.Fake) {
	t.Helper()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}})))
	followClock(t, w)
	w.PutProject("bank", "mercury", bankPolicy, []byte(`{"token": "`+mercurytest.Token+`"}`))
	w.StartJobs()
	return w, f
}

const bankPolicy = `{"confirm": ["pay_invoice"], "max_payment_usd": 5000}`

// pays has the agent pay payee in bank: "sent" when it was paid at once,
// "awaiting_owner" and the task's id when it waits, or the refusal.
func pays(t *testing.T, w *servicetest.World, payee, usd, method string) (string, string) {
	t.Helper()
	body := fmt.Sprintf(`{"operation": "pay_invoice", "recipient_id": %q, "amount_usd": %s, "method": %q}`, payee, usd, method)
	raw, err := w.AgentClient().CallRaw(context.Background(), w.Owner.Account, "bank", []byte(body), nil)
	var r *client.Refusal
	if errors.As(err, &r) {
		return r.Error(), ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Status  string `json:"status"`
		SentVia string `json:"sent_via"`
		TaskID  string `json:"task_id"`
	}
	_ = json.Unmarshal(raw, &out)
	if out.SentVia != "" {
		return "sent " + out.SentVia, ""
	}
	return out.Status, out.TaskID
}

// bankProject is the project bank as the owner's service lists it.
func bankProject(t *testing.T, w *servicetest.World) client.Project {
	t.Helper()
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		if p.Name == "bank" {
			return p
		}
	}
	t.Fatal("no project bank")
	return client.Project{}
}

// allowOpen clicks Always allow this on the open card and waits for the rule.
func allowOpen(t *testing.T, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, "Always allow this offered", `(() => { const b = document.getElementById("allow-open"); return b && !b.disabled && b.offsetParent !== null; })()`)
	do(t, ctx, "always allow this", chromedp.Click(chromedp.ID("allow-open")), chromedp.WaitVisible(chromedp.ID("allow-choices")))
}

// TestInboxPageAlwaysAllow: on a $120 ACH to a saved payee, Always allow
// this shows the rule as Settings words every rule (the rule the
// terminal's code builds), and "Always allow and approve" has the wallet
// sign the project's confirmation and the approval before anything is
// sent; the payment is made, the agent's next $119 ACH to the same payee
// runs at once, while $121, another payee or a wire still ask. The rule is
// then rule 1 in Settings, and removed there like any other rule.
func TestInboxPageAlwaysAllow(t *testing.T) {
	t.Parallel()
	w, f := allowWorld(t)
	status, id := pays(t, w, mercurytest.AcmeID, "120", "ach")
	if status != "awaiting_owner" || id == "" {
		t.Fatalf("$120 before the rule: %q", status)
	}
	// What the terminal would add: the connector's own rule from the task.
	v, err := w.Owner.Client.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	conn := mercury.New(mercury.Config{BaseURL: "http://127.0.0.1:1", Egress: egress.Options{AllowPrivate: true}})
	_, want, err := conn.AlwaysAllow([]byte(bankPolicy), o.Request, o.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	wantText, _ := inbox.ProjectText("mercury", want.Policy, []string{w.Agent})

	ctx := blankTab(t, 180*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	openCard(t, ctx, id)
	allowOpen(t, ctx)
	rule := textOf(t, ctx, "the rule shown", "#allow-rule li")
	if rule != want.Sentence || !strings.HasPrefix(rule, "Rule 1: ") || !strings.Contains(rule, "$120.00") {
		t.Fatalf("the page shows the rule %q, want %q", rule, want.Sentence)
	}
	if got := textOf(t, ctx, "the rule's JSON", "#allow-rule-json"); got != string(want.Rule) {
		t.Fatalf("the page's rule in the policy's words %q, want %s", got, want.Rule)
	}
	if moved := run(t, ctx, "the moved note", chromedp.Evaluate[bool](`!!document.getElementById("allow-moved")`)); !moved {
		t.Fatal("the page does not say the payment leaves Ask me")
	}
	if n := len(walletSigned(t, ctx)); n != 1 {
		t.Fatalf("the wallet signed %d sentences before a choice", n)
	}
	do(t, ctx, "the step in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("allow-step").scrollIntoView({block: "center"})`))
	screen(t, ctx, "inbox-always-allow")

	do(t, ctx, "always allow and approve", chromedp.Click(chromedp.ID("allow-and-approve")))
	waitJS(t, ctx, "allowed and approved", `document.getElementById("status").textContent.startsWith("Always allowed in bank, and approved")`)
	signed := walletSigned(t, ctx)[1:]
	if len(signed) != 2 {
		t.Fatalf("the wallet signed %q", signed)
	}
	action, err := approval.ActionSetProject("bank", wantText).Text()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(signed[0], "Confirm in Countersign as "+w.Owner.Account+": "+action+". At ") ||
		!strings.HasPrefix(signed[1], "Approve in Countersign as "+w.Owner.Account+": ") || !strings.Contains(signed[1], "Task "+id+" with hash ") {
		t.Fatalf("the wallet signed %q", signed)
	}
	if p := bankProject(t, w); p.Policy != string(want.Policy) {
		t.Fatalf("the policy is %s, want %s", p.Policy, want.Policy)
	}
	if st := w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
		t.Fatalf("the task allowed and approved is %s (%s)", st.State, st.FailureReason)
	}
	waitJS(t, ctx, "the outcome", `document.querySelector('#outcomes .outcome[data-outcome="`+id+`"]')?.dataset.state === "done"`)

	for _, c := range []struct{ payee, usd, method, want string }{
		{mercurytest.AcmeID, "119", "ach", "sent direct"},
		{mercurytest.AcmeID, "60.5", "ach", "sent direct"},
		{mercurytest.AcmeID, "121", "ach", "awaiting_owner"},
		{mercurytest.GlobexID, "50", "ach", "awaiting_owner"},
		{mercurytest.AcmeID, "50", "wire", "awaiting_owner"},
	} {
		got, task := pays(t, w, c.payee, c.usd, c.method)
		if got != c.want || (c.want == "sent direct") != (task == "") {
			t.Errorf("after the rule, $%s by %s to %s: %q (task %q), want %q", c.usd, c.method, c.payee, got, task, c.want)
		}
	}
	if n := f.Payments(); n != 3 {
		t.Fatalf("the fake Mercury paid %d times, want 3 (the approved $120, then $119 and $60.50 at once)", n)
	}

	// Settings lists it as rule 1 in the same words, and removes it like any other.
	settingsOpen(t, ctx, "projects")
	item := `#projects-list li[data-project="bank"]`
	rules := run(t, ctx, "the rules", chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+item+` [data-explained] ol.explained-rules li')].map((li) => li.textContent)`))
	if len(rules) == 0 || rules[0] != rule {
		t.Fatalf("Settings lists the rules %q, the card showed %q", rules, rule)
	}
	do(t, ctx, "edit the bank", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project bank"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Remove rule 1"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Remove rule 1"]`)),
		chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
	waitJS(t, ctx, "saved", `document.getElementById("status").textContent.includes("The project bank is saved")`)
	if got, _ := pays(t, w, mercurytest.AcmeID, "119", "ach"); got != "awaiting_owner" {
		t.Fatalf("after the rule was removed, $119 to the same payee is %q", got)
	}
}

// TestInboxPageAlwaysAllowNothingSent: a wallet that declines the
// project's confirmation, one that signs it but declines the approval,
// Cancel while the wallet is asked, and Cancel on the rule: each sends
// nothing (the policy as it was, the task waiting, no payment). A project
// saved elsewhere between the rule shown and the choice is not
// overwritten: the page says so, and neither the rule nor the approval is
// sent.
func TestInboxPageAlwaysAllowNothingSent(t *testing.T) {
	t.Parallel()
	w, f := allowWorld(t)
	_, id := pays(t, w, mercurytest.AcmeID, "120", "ach")
	ctx := blankTab(t, 180*time.Second)
	requests := injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	openCard(t, ctx, id)
	unchanged := func(what string, policy string) {
		t.Helper()
		if p := bankProject(t, w); p.Policy != policy {
			t.Fatalf("%s: the policy is %s", what, p.Policy)
		}
		if st := w.Task(id); st.State != countersign.StateOpen {
			t.Fatalf("%s: the task is %s", what, st.State)
		}
		if n := f.Payments(); n != 0 {
			t.Fatalf("%s: the fake Mercury paid %d times", what, n)
		}
	}
	sent := func() []string {
		var out []string
		for _, u := range requests() {
			if strings.Contains(u, "/inbox/projects/bank") && !strings.HasSuffix(u, "/allow") || strings.HasSuffix(u, "/approve") {
				out = append(out, u)
			}
		}
		return out
	}
	said := func(what, prefix string) {
		t.Helper()
		waitJS(t, ctx, what, `document.getElementById("status").textContent.includes(`+jsString(prefix)+`)`)
	}

	for _, c := range []struct {
		name, decline, said string
		both                bool
	}{
		{"the confirmation declined", `() => true`, "Nothing was sent: the policy is unchanged", false},
		{"the approval declined after the confirmation", `(m) => m.startsWith("Approve")`, "Nothing was sent: the policy is unchanged", true},
	} {
		allowOpen(t, ctx)
		before := len(walletSigned(t, ctx))
		choice := "allow-only"
		if c.both {
			choice = "allow-and-approve"
		}
		do(t, ctx, c.name, chromedp.Evaluate[chromedp.Void](`window.testWallet.declineIf = `+c.decline), chromedp.Click(chromedp.ID(choice)))
		said(c.name, c.said)
		do(t, ctx, "the wallet signs again", chromedp.Evaluate[chromedp.Void](`window.testWallet.declineIf = null`))
		if c.both && len(walletSigned(t, ctx)) != before+1 {
			t.Fatalf("%s: the wallet signed %q", c.name, walletSigned(t, ctx)[before:])
		}
		if s := sent(); len(s) != 0 {
			t.Fatalf("%s: the page sent %q", c.name, s)
		}
		unchanged(c.name, bankPolicy)
		// The choices are back: Cancel on them closes the rule.
		do(t, ctx, "cancel", chromedp.WaitVisible(chromedp.ID("allow-cancel")), chromedp.Click(chromedp.ID("allow-cancel")))
		waitJS(t, ctx, "closed", `document.getElementById("allow-step").hidden`)
	}

	// Cancel while the wallet is asked (a wallet that has not answered yet).
	allowOpen(t, ctx)
	do(t, ctx, "a wallet that waits", chromedp.Evaluate[chromedp.Void](`window.testWallet.hold = new Promise((r) => { window.testWallet.release = r; })`),
		chromedp.Click(chromedp.ID("allow-and-approve")), chromedp.WaitVisible(chromedp.ID("allow-sign-cancel")), chromedp.Click(chromedp.ID("allow-sign-cancel")))
	said("cancelled", "You cancelled the signature. Nothing was sent: the policy is unchanged")
	do(t, ctx, "the wallet answers late", chromedp.Evaluate[chromedp.Void](`window.testWallet.hold = null; window.testWallet.release()`))
	if s := sent(); len(s) != 0 {
		t.Fatalf("cancelled: the page sent %q", s)
	}
	unchanged("cancelled while the wallet was asked", bankPolicy)
	do(t, ctx, "cancel", chromedp.WaitVisible(chromedp.ID("allow-cancel")), chromedp.Click(chromedp.ID("allow-cancel")))
	waitJS(t, ctx, "closed", `document.getElementById("allow-step").hidden`)
	allowOpen(t, ctx)

	// A project saved elsewhere after the rule was shown: not overwritten.
	other := `{"confirm": ["pay_invoice", "cancel_invoice"], "max_payment_usd": 4000}`
	text, _ := inbox.ProjectText("mercury", []byte(other), []string{w.Agent})
	conf, err := w.Owner.Confirm(approval.ActionSetProject("bank", text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Owner.Client.PutProject(context.Background(), "bank", text, conf); err != nil {
		t.Fatal(err)
	}
	stored := bankProject(t, w).Policy
	before := len(walletSigned(t, ctx))
	do(t, ctx, "always allow and approve", chromedp.Click(chromedp.ID("allow-and-approve")))
	said("the change told", "Nothing was sent: the project bank changed since the rule was shown")
	if n := len(walletSigned(t, ctx)) - before; n != 2 {
		t.Fatalf("the wallet signed %d sentences before the change was found", n)
	}
	if s := sent(); len(s) != 0 {
		t.Fatalf("the page sent %q over a project changed elsewhere", s)
	}
	unchanged("a project changed elsewhere", stored)
	if hidden := run(t, ctx, "the step", chromedp.Evaluate[bool](`document.getElementById("allow-step").hidden`)); !hidden {
		t.Fatal("the rule shown before the change is still offered")
	}
	// Shown again, it is built on the policy as it is now.
	allowOpen(t, ctx)
	if got := textOf(t, ctx, "the rule's policy", "#allow-policy"); !strings.Contains(got, `"max_payment_usd":4000`) || !strings.Contains(got, `"cancel_invoice"`) {
		t.Fatalf("shown again, the policy would be %s", got)
	}
}

// TestInboxPageAlwaysAllowKeys: Shift+A on a task focused in the list opens
// its card with Always allow this; the choices are reached with Tab and
// Enter; "Always allow only" adds the rule and leaves the task waiting,
// and a approves it after. The keys list names Shift+A.
func TestInboxPageAlwaysAllowKeys(t *testing.T) {
	t.Parallel()
	w, f := allowWorld(t)
	_, id := pays(t, w, mercurytest.AcmeID, "120", "ach")
	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	do(t, ctx, "focus the task", chromedp.WaitVisible(chromedp.CSS(`button.task-open[data-task="`+id+`"]`)),
		chromedp.Focus(chromedp.CSS(`button.task-open[data-task="`+id+`"]`)))
	do(t, ctx, "Shift+A", chromedp.KeyEvent("A"))
	waitJS(t, ctx, "the rule shown", `!!document.getElementById("allow-choices") && !document.getElementById("allow-step").hidden`)
	if focused := run(t, ctx, "the focus", chromedp.Evaluate[string](`document.activeElement?.id ?? ""`)); focused != "allow-title" {
		t.Fatalf("the focus is on %q, not the rule's heading", focused)
	}
	hint := run(t, ctx, "the key hint", chromedp.Evaluate[string](`document.getElementById("allow-open").getAttribute("aria-keyshortcuts") + "|" + document.getElementById("allow-open").nextElementSibling.textContent`))
	if hint != "Shift+A|Shift+A" {
		t.Fatalf("Always allow this shows the key %q", hint)
	}
	// Tab to "Always allow only": past the details and the first choice.
	for range 10 {
		if run(t, ctx, "the focus", chromedp.Evaluate[string](`document.activeElement?.id ?? ""`)) == "allow-only" {
			break
		}
		do(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
	}
	do(t, ctx, "Enter", chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, "the rule added", `document.getElementById("status").textContent.startsWith("The rule is added first in bank")`)
	if n := len(walletSigned(t, ctx)); n != 2 {
		t.Fatalf("the wallet signed %q", walletSigned(t, ctx))
	}
	if p := bankProject(t, w); !strings.Contains(p.Policy, `"then":"allow"`) {
		t.Fatalf("the policy after Always allow only: %s", p.Policy)
	}
	if st := w.Task(id); st.State != countersign.StateOpen {
		t.Fatalf("after Always allow only the task is %s", st.State)
	}
	if off := run(t, ctx, "Always allow this", chromedp.Evaluate[bool](`document.getElementById("allow-open").disabled`)); !off {
		t.Fatal("Always allow this is offered again after the rule was added")
	}
	// a approves the task, still waiting, under the widened policy.
	do(t, ctx, "a", chromedp.KeyEvent("a"))
	waitApproved(t, ctx)
	if st := w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
		t.Fatalf("approved after Always allow only, the task is %s (%s)", st.State, st.FailureReason)
	}
	if n := f.Payments(); n != 1 {
		t.Fatalf("the fake Mercury paid %d times", n)
	}
	do(t, ctx, "?", chromedp.KeyEvent("?"))
	if keys := textOf(t, ctx, "the keys", "#keys"); !strings.Contains(keys, "Shift+AAlways allow this") {
		t.Fatalf("the keys list lacks Shift+A: %q", keys)
	}
}
