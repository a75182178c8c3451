package web_test

// The task card in a real Chromium against the whole service (servicetest on
// PostgreSQL): the preview and RAW form, the receipt checked before Approve,
// approving with a wallet's answer pasted, rejecting with a reason the agent
// reads, and a tampered receipt keeping Approve off.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// signInPage signs the page in as the world's owner with the owner's wallet.
func signInPage(t testing.TB, ctx context.Context, w *servicetest.World) {
	t.Helper()
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign with another wallet")),
		chromedp.SendKeys(chromedp.ID("account"), w.Owner.Account),
		chromedp.Click(named("Sign with another wallet")), chromedp.WaitVisible(chromedp.ID("sentence")))
	sentence := run(t, ctx, "the sentence", chromedp.TextContent(chromedp.ID("sentence")))
	answer := walletSign(t, ctx, w, sentence, "nonce")
	do(t, ctx, "sign in", chromedp.SetValue(chromedp.ID("signed"), answer), chromedp.Click(named("Send signature")),
		chromedp.WaitVisible(named("Sign out")))
}

// walletSign signs sentence with the owner's wallet for the recipient and
// the nonce the page shows (nonceID is the element showing it), as the
// wallet's JSON answer.
func walletSign(t testing.TB, ctx context.Context, w *servicetest.World, sentence, nonceID string) string {
	t.Helper()
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	nonce, err := approval.ParseNonce(run(t, ctx, "the nonce", chromedp.TextContent(chromedp.ID(nonceID))))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := wallet.Sign(approval.SignRequest{Message: sentence, Recipient: w.Inbox.Recipient(), Nonce: &nonce})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(signed, "", "  ")
	return string(b)
}

func waitJS(t testing.TB, ctx context.Context, what, js string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("status")?.textContent ?? "") + " | " + location.href`))
		t.Fatalf("%s: %v; the page says %q", what, err, status)
	}
}

// waitApproved waits until the page has told the owner that the approval
// was taken ("Approved: …"), or already what became of it: an answer run
// may end before the page is looked at again, and its outcome ("Done: …",
// "Failed after your approval: …") then takes the live region's place.
func waitApproved(t testing.TB, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, "approved", `/^(Approved|Done|Failed after your approval)\b/.test(document.getElementById("status").textContent)`)
}

// openCard clicks a listed task and waits for its receipt check.
func openCard(t testing.TB, ctx context.Context, id string) {
	t.Helper()
	item := `li[data-task="` + id + `"] button.task-open`
	// Clicked again until the card shows: a listing redrawn just then (each
	// task event lists again) may take the first click's item away.
	do(t, ctx, "open task "+id, chromedp.WaitVisible(chromedp.CSS(item)),
		chromedp.Poll[chromedp.Void](`(() => {
  const c = document.getElementById("card-title");
  if (c && !document.getElementById("card").hidden && c.closest("#card")) return true;
  document.querySelector('`+item+`')?.click();
  return false;
})()`, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(300*time.Millisecond)))
	waitJS(t, ctx, "the receipt check", `!document.getElementById("receipt").textContent.startsWith("Checking")`)
}

// approveButton is the card's Approve button by its accessible name: its
// text, "Approve", or "Approve: " and the task's summary when it has one.
func approveButton() chromedp.Search {
	return chromedp.Search(`//div[@id="card-actions"]//button[normalize-space(.)="Approve" or starts-with(normalize-space(.), "Approve: ")]`)
}

func approveDisabled(t testing.TB, ctx context.Context) bool {
	t.Helper()
	return run(t, ctx, "Approve's state", chromedp.Evaluate[bool](
		`[...document.querySelectorAll("#card-actions button")].find((b) => /^Approve(: |$)/.test(b.textContent.trim())).disabled`))
}

func TestInboxPageTaskCard(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	guess := w.Guess()
	pay := w.Pay()
	tampered := w.Pay()
	notice := w.Tell()

	// The receipt of one task is changed in the database: its signature no
	// longer covers it.
	ctxb := context.Background()
	if err := w.DB.Tx(ctxb, func(tx store.Tx) error {
		raw, err := tx.TaskReceipt(ctxb, tampered)
		if err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return err
		}
		v["receipt"].(map[string]any)["at"] = "2001-01-01T00:00:00Z"
		b, _ := json.Marshal(v)
		return tx.SetTaskReceipt(ctxb, tampered, string(b))
	}); err != nil {
		t.Fatal(err)
	}

	ctx := blankTab(t, 150*time.Second)
	signInPage(t, ctx, w)

	// The probe's input task: its card shows the title, the fields with
	// their labels, the RAW envelope and its hash, the countdown; the
	// receipt verifies and Approve is on.
	openCard(t, ctx, guess)
	view, err := w.Owner.Client.Task(ctxb, guess)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, ctx, "the card's title", chromedp.TextContent(chromedp.ID("card-title"))); got != o.Envelope.Display.Title {
		t.Fatalf("the card's title %q, want %q", got, o.Envelope.Display.Title)
	}
	fields := run(t, ctx, "the fields", chromedp.TextContent(chromedp.ID("fields")))
	for _, f := range o.Envelope.Display.Fields {
		if !strings.Contains(fields, f.Label) || !strings.Contains(fields, f.Values[0]) {
			t.Errorf("the card's fields %q lack %q: %q", fields, f.Label, f.Values)
		}
	}
	raw := run(t, ctx, "the RAW form", chromedp.TextContent(chromedp.ID("raw")))
	if raw != string(o.EnvelopeBytes) {
		t.Fatalf("the RAW form is not the envelope's bytes:\n%s\n%s", raw, o.EnvelopeBytes)
	}
	sum := sha256.Sum256([]byte(raw))
	if got := run(t, ctx, "the RAW hash", chromedp.TextContent(chromedp.ID("raw-sha"))); got != hex.EncodeToString(sum[:]) || got != o.TaskHash {
		t.Fatalf("the RAW hash %q", got)
	}
	request := run(t, ctx, "the RAW request", chromedp.TextContent(chromedp.ID("request")))
	if request != string(o.Request) {
		t.Fatalf("the RAW request is not the agent's call bytes:\n%s\n%s", request, o.Request)
	}
	reqSum := sha256.Sum256(o.Request)
	if got := run(t, ctx, "the RAW request's hash", chromedp.TextContent(chromedp.ID("request-sha"))); got != hex.EncodeToString(reqSum[:]) {
		t.Fatalf("the RAW request's hash %q", got)
	}
	if open := run(t, ctx, "the RAW request folded", chromedp.Evaluate[bool](`document.getElementById("raw-request").open`)); open {
		t.Fatal("the RAW request starts unfolded")
	}
	if got := run(t, ctx, "the countdown", chromedp.TextContent(chromedp.ID("countdown"))); !strings.HasPrefix(got, "in ") {
		t.Fatalf("the countdown %q", got)
	}
	if got := run(t, ctx, "the receipt", chromedp.TextContent(chromedp.ID("receipt"))); !strings.HasPrefix(got, "Checked: the service's own run made this task") {
		t.Fatalf("the receipt: %q", got)
	}
	// The precise words are one click away, under Details.
	if got := run(t, ctx, "the receipt, precisely", chromedp.TextContent(chromedp.ID("receipt-precise"))); !strings.HasPrefix(got, "Receipt verified: run ") || !strings.Contains(got, " of probe@") {
		t.Fatalf("the receipt under Details: %q", got)
	}
	if approveDisabled(t, ctx) {
		t.Fatal("Approve is off for a task whose receipt verifies")
	}
	// The answer box fits a guess: one line (the guess's declared shape,
	// answer_test.go); a text box (the note) starts at one line and grows
	// as more is typed.
	if tag := run(t, ctx, "the answer box", chromedp.Evaluate[string](`document.getElementById("answer").tagName`)); tag != "INPUT" {
		t.Fatalf("the guess's answer box is a %s", tag)
	}
	heights := run(t, ctx, "the note's box", chromedp.Evaluate[[]float64](`(() => {
  const a = document.getElementById("note"), lh = parseFloat(getComputedStyle(a).lineHeight);
  const one = a.getBoundingClientRect().height / lh;
  a.value = "1\n2\n3\n4\n5"; a.dispatchEvent(new Event("input"));
  const five = a.getBoundingClientRect().height / lh;
  a.value = "";
  return [one, five];
})()`))
	if heights[0] > 2 || heights[1] < 4.5 {
		t.Fatalf("the note's box is %.1f lines high empty and %.1f with five lines", heights[0], heights[1])
	}
	do(t, ctx, "show the RAW form", chromedp.Click(chromedp.CSS("#raw-form summary")))
	png := run(t, ctx, "a screenshot", chromedp.CaptureScreenshot())
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("the screenshot is not a PNG")
	}
	screen(t, ctx, "inbox-card")

	// Approve with an answer and a note: the page shows the sentence, which
	// the owner's wallet signs in Go; the task is carried out.
	do(t, ctx, "answer", chromedp.SetValue(chromedp.ID("answer"), "42"), chromedp.SetValue(chromedp.ID("note"), "a guess"),
		chromedp.Click(approveButton()), chromedp.WaitVisible(chromedp.ID("approval-sentence")))
	sentence := run(t, ctx, "the approval sentence", chromedp.TextContent(chromedp.ID("approval-sentence")))
	names := "task " + guess
	if sum := o.Envelope.Display.Summary; sum != "" {
		names = sum + ". Task " + guess
	}
	if !strings.HasPrefix(sentence, "Approve in Countersign as "+w.Owner.Account+": "+names+" with hash "+o.TaskHash+" and supply ") {
		t.Fatalf("the approval sentence %q", sentence)
	}
	if got := run(t, ctx, "the recipient", chromedp.TextContent(chromedp.ID("approval-recipient"))); got != w.Inbox.Recipient() {
		t.Fatalf("the approval's recipient %q", got)
	}
	if cmd := run(t, ctx, "the command", chromedp.TextContent(chromedp.ID("approval-command"))); !strings.Contains(cmd, "countersign wallet sign ") || !strings.Contains(cmd, "'"+sentence+"'") {
		t.Fatalf("the command %q", cmd)
	}
	// An answer signing another sentence is refused on the page.
	do(t, ctx, "paste a wrong answer", chromedp.SetValue(chromedp.ID("approval-signed"), walletSign(t, ctx, w, sentence+" ", "approval-nonce")),
		chromedp.Click(named("Send approval")))
	waitJS(t, ctx, "the refusal", `document.getElementById("status").textContent.includes("another sentence")`)
	do(t, ctx, "send the approval", chromedp.SetValue(chromedp.ID("approval-signed"), walletSign(t, ctx, w, sentence, "approval-nonce")),
		chromedp.Click(named("Send approval")))
	waitApproved(t, ctx)
	if st := w.WaitState(guess, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the approved task is %s", st.State)
	}

	// Reject another with a reason, which the agent reads. Its fields the
	// agent wrote are marked, with a text alternative.
	openCard(t, ctx, pay)
	pv, err := w.Owner.Client.Task(ctxb, pay)
	if err != nil {
		t.Fatal(err)
	}
	po, err := w.Owner.Open(pv)
	if err != nil {
		t.Fatal(err)
	}
	byAgent := 0
	for _, f := range po.Envelope.Display.Fields {
		if f.WrittenBy == countersign.WrittenByAgent {
			byAgent++
		}
	}
	if byAgent == 0 {
		t.Fatal("the ledger's task has no field the agent wrote: the mark would go untested")
	}
	if got := run(t, ctx, "the agent's marks", chromedp.Evaluate[int](
		`document.querySelectorAll('#fields .agent-mark[aria-label="written by the agent"]').length`)); got != byAgent {
		t.Fatalf("%d fields marked as the agent's, want %d", got, byAgent)
	}
	// Reject asks once more: the reason, and a second, explicit Reject;
	// until then nothing is sent.
	if visible := run(t, ctx, "the reason box", chromedp.Evaluate[bool](`document.getElementById("reason").offsetParent !== null`)); visible {
		t.Fatal("the reason box shows before Reject is chosen")
	}
	do(t, ctx, "reject", chromedp.Click(named("Reject")), chromedp.WaitVisible(chromedp.ID("reason")))
	waitJS(t, ctx, "the reason box has the focus", `document.activeElement?.id === "reason"`)
	if st := w.Task(pay); st.State != countersign.StateOpen {
		t.Fatalf("after the first Reject the task is %s", st.State)
	}
	do(t, ctx, "the reason", chromedp.SetValue(chromedp.ID("reason"), "not this month"), chromedp.Click(named("Reject this task")))
	waitJS(t, ctx, "rejected", `document.getElementById("status").textContent.startsWith("Rejected")`)
	if st := w.Status("ledger", pay); st.State != string(countersign.StateRejected) || st.Reason == nil || *st.Reason != "not this month" {
		t.Fatalf("the agent reads %+v", st)
	}

	// The tampered receipt: the card says why, and Approve stays off.
	openCard(t, ctx, tampered)
	if got := run(t, ctx, "the receipt", chromedp.TextContent(chromedp.ID("receipt"))); !strings.Contains(got, "signature does not verify") {
		t.Fatalf("the tampered receipt: %q", got)
	}
	if !approveDisabled(t, ctx) {
		t.Fatal("Approve is on for a task whose receipt does not verify")
	}
	do(t, ctx, "back", chromedp.Click(named("Back to the list")))

	// A notice, opened from the keyboard (Enter on its item), is closed with
	// Got it.
	noticeItem := `li[data-task="` + notice + `"] button.task-open`
	do(t, ctx, "open the notice with Enter", chromedp.WaitVisible(chromedp.CSS(noticeItem)),
		chromedp.SendKeys(chromedp.CSS(noticeItem), "\r"), chromedp.WaitVisible(chromedp.ID("card-title")))
	waitJS(t, ctx, "the notice's card", `document.getElementById("card-title").textContent !== ""`)
	do(t, ctx, "got it", chromedp.Click(named("Got it")))
	waitJS(t, ctx, "closed", `document.getElementById("status").textContent.startsWith("Closed")`)
	if st := w.WaitState(notice, countersign.StateDone); st.State != countersign.StateDone {
		t.Fatalf("the notice is %s", st.State)
	}

	signOut(t, ctx)
	if c := sessionCookie(t, ctx, w.URL); c != nil {
		t.Fatalf("after signing out the browser keeps %+v", c)
	}
}

// accessibleName is the accessible name Chromium computes for the element
// css selects.
func accessibleName(t testing.TB, ctx context.Context, css string) string {
	t.Helper()
	q, _ := json.Marshal(css)
	r, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.querySelector(" + string(q) + ")"})
	if err != nil || r.Result == nil || r.Result.ObjectID == "" {
		t.Fatalf("no element %s: %v", css, err)
	}
	relatives := false
	ax, err := chromedp.Call(ctx, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: runtime.RemoteObjectID(r.Result.ObjectID), FetchRelatives: &relatives})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ax.Nodes {
		if n.Name != nil {
			var name string
			if err := json.Unmarshal(n.Name.Value, &name); err == nil {
				return name
			}
		}
	}
	return ""
}

// The consequence on the card, the button and in the wallet (SPEC §7, §8):
// a task whose envelope has display.summary shows it first, above its
// fields; Approve reads "Approve: {summary}" (its accessible name begins
// with Approve); the wallet is asked to sign the sentence that names the
// summary, the approval carries it to the door, and the answer run, which
// checks the signature again against the envelope's own summary, carries
// the task out.
func TestInboxPageCardSummary(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	const summary = "pay $1.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone"
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1, "title": "Pay Acme Corp", "summary": summary}, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.TaskID == "" {
		t.Fatalf("the pay call: %s, %v", raw, err)
	}

	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	openCard(t, ctx, a.TaskID)
	// First: right under the title, above the fields.
	got := run(t, ctx, "the summary", chromedp.Evaluate[[]string](`(() => {
  const s = document.getElementById("card-summary");
  return [s.textContent, s.previousElementSibling.id, String(!!(s.compareDocumentPosition(document.getElementById("fields")) & Node.DOCUMENT_POSITION_FOLLOWING))];
})()`))
	if got[0] != "If you approve, it will"+summary || got[1] != "card-title" || got[2] != "true" {
		t.Fatalf("the card's summary reads %q, after #%s, above the fields %s", got[0], got[1], got[2])
	}
	// The button says the consequence; its name begins with Approve.
	if text := textOf(t, ctx, "Approve", `#card-actions button[aria-keyshortcuts="a"]`); text != "Approve: "+summary {
		t.Fatalf("the Approve button reads %q", text)
	}
	if name := accessibleName(t, ctx, `#card-actions button[aria-keyshortcuts="a"]`); name != "Approve: "+summary {
		t.Fatalf("the Approve button's accessible name is %q", name)
	}
	do(t, ctx, "the card at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, ctx, "inbox-card-summary")
	do(t, ctx, "approve", chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	signed := walletSigned(t, ctx)
	if len(signed) == 0 {
		t.Fatal("the wallet signed nothing")
	}
	ap, err := approval.ParseApproval(signed[len(signed)-1])
	if err != nil || ap.Summary != summary || ap.TaskID != a.TaskID || ap.Account != w.Owner.Account {
		t.Fatalf("the wallet signed %q (%+v, %v)", signed[len(signed)-1], ap, err)
	}
	if st := w.WaitState(a.TaskID, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
		t.Fatalf("the task approved with its summary is %s", st.State)
	}
	waitJS(t, ctx, "the outcome", `document.querySelector('#outcomes .outcome[data-outcome="`+a.TaskID+`"]')?.dataset.state === "done"`)

}
