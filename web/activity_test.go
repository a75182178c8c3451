package web_test

// The history below the waiting list (SPEC §6, GET /inbox/activity) in a
// real Chromium against the whole service (servicetest on PostgreSQL), with
// Mercury on its fake: every write carried out, asked or not, and every
// task that ended, each opened on the page's device to its title, how it
// ended in the connector's words (a failure said as one) and where; a
// write carried out at once marked as not asked; each opens to its
// details; filtered by project and by agent; older entries paged in.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/client"
	"countersign/connectors"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/device"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// historyCount is the number of entries the page's history lists.
const historyCount = `document.querySelectorAll("#history > li").length`

// setFilter chooses value in the history's filter select (its id) as a
// person does: the change event follows.
func setFilter(t testing.TB, ctx context.Context, id, value string) {
	t.Helper()
	v, _ := json.Marshal(value)
	do(t, ctx, "filter "+id, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById("`+id+`"); s.value = `+string(v)+`; s.dispatchEvent(new Event("change")); })()`))
}

func TestInboxPageHistory(t *testing.T) {
	t.Parallel()
	f := mercurytest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t),
		servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: f.URL(), Egress: egress.Options{AllowPrivate: true}})),
		servicetest.WithConnector(servicetest.Notes(&servicetest.Effects{})))
	followClock(t, w)
	w.PutProject("bank", "mercury", "{}", []byte(`{"token": "`+mercurytest.Token+`"}`))
	w.StartJobs()
	ctxb := context.Background()

	// 22 notes written at once, before the rest: the history's first page
	// (20) leaves some of them to Show more.
	for i := range 22 {
		if _, err := w.AgentClient().Call(ctxb, w.Owner.Account, "notes", "note", map[string]any{"title": fmt.Sprintf("Note %d", i+1), "outcome": "Written"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A second later (entries of one second are in the order of their ids)
	// a payment Mercury makes at once: the project asks about nothing.
	time.Sleep(1100 * time.Millisecond)
	raw, err := w.AgentClient().Call(ctxb, w.Owner.Account, "bank", "pay_invoice", map[string]any{"recipient_id": mercurytest.AcmeID, "amount_usd": 120, "method": "ach"}, nil)
	if err != nil || !strings.Contains(string(raw), `"sent_via":"direct"`) {
		t.Fatalf("the direct payment: %s, %v", raw, err)
	}
	// A task done, a task that failed after the approval, a task of
	// another agent rejected, and one waiting.
	done := w.Pay()
	w.Approve(done, nil)
	w.WaitState(done, countersign.StateDone)
	w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{}, connectors.Refused(countersign.Conflict, false, "The payee changed after you saw it.")
	})
	failed := w.Pay()
	w.Approve(failed, nil)
	w.WaitState(failed, countersign.StateFailed)
	other := w.NewAgent("other.near", "ak_other-agent-key-0123456789abcdefghijklmn")
	raw, err = other.Call(ctxb, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.TaskID == "" {
		t.Fatalf("the other agent's task: %s, %v", raw, err)
	}
	rejected := a.TaskID
	if _, err := w.Owner.Client.Reject(ctxb, rejected, nil); err != nil {
		t.Fatal(err)
	}
	waiting := w.Pay()

	// What the Go device opens of each entry: the page must say the same.
	page, err := w.Owner.Client.Activity(ctxb, client.ActivityQuery{Limit: 100})
	if err != nil || len(page.Entries) != 26 {
		t.Fatalf("the history holds %d entries (%v), want 26", len(page.Entries), err)
	}
	opened := map[string]*device.Entry{}
	var payment *device.Entry
	for _, e := range page.Entries {
		o, err := w.Owner.OpenEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		opened[e.ID] = o
		if e.Project == "bank" {
			payment = o
		}
	}
	if payment == nil || payment.Via != client.ViaDirect || payment.Title == "" || payment.Summary == "" || !strings.HasPrefix(payment.Result.Text, "Payment sent") {
		t.Fatalf("the payment's entry: %+v", payment)
	}

	ctx := blankTab(t, 150*time.Second)
	signInPage(t, ctx, w)
	waitJS(t, ctx, "the first page", historyCount+` === 20 && !document.getElementById("history-more").hidden`)
	if n := run(t, ctx, "the waiting list", chromedp.Evaluate[int](`document.querySelectorAll("#tasks > li").length`)); n != 1 {
		t.Fatalf("%d tasks waiting, want 1 (%s)", n, waiting)
	}
	// The history is below the waiting list.
	if below := run(t, ctx, "the order", chromedp.Evaluate[bool](
		`!!(document.getElementById("tasks").compareDocumentPosition(document.getElementById("history")) & Node.DOCUMENT_POSITION_FOLLOWING)`)); !below {
		t.Fatal("the history is not below the waiting list")
	}
	entry := func(id string) string {
		return textOf(t, ctx, "entry "+id, `#history li[data-entry="`+id+`"]`)
	}

	// Each entry: its title, how it ended, where and when.
	for id, want := range map[string][]string{
		done:     {"Pay", "Done.", "ledger · pay on ledger · by " + w.Agent},
		failed:   {"Pay", "Failed: The payee changed after you saw it. Nothing was written."},
		rejected: {"Pay", "You rejected it. Nothing was written.", "by other.near"},
	} {
		got := entry(id)
		for _, s := range want {
			if !strings.Contains(got, s) {
				t.Errorf("entry %s reads %q, without %q", id, got, s)
			}
		}
		if strings.Contains(got, "Not asked") || !strings.Contains(got, " ago") && !strings.Contains(got, "just now") {
			t.Errorf("entry %s reads %q", id, got)
		}
	}
	// The failure is said as one: marked, in the warning colour.
	if loud := run(t, ctx, "the failure", chromedp.Evaluate[bool](`(() => {
  const li = document.querySelector('#history li[data-entry="`+failed+`"]');
  const o = li.querySelector(".entry-outcome");
  return li.classList.contains("entry-failed") && o.classList.contains("failure") && getComputedStyle(o).color !== getComputedStyle(li.querySelector(".task-title")).color;
})()`)); !loud {
		t.Error("the failed entry is not marked as a failure")
	}

	// The direct payment: marked as not asked; it opens, by its name, to
	// what it did, what happened and where.
	pay := `//ul[@id="history"]//summary[contains(., "` + payment.Title + `") and contains(., "Not asked")]`
	if got := entry(payment.ID); !strings.Contains(got, payment.Title) || !strings.Contains(got, "Done: "+payment.Result.Text) ||
		!strings.Contains(got, "Not asked: ran at once under your policy") || !strings.Contains(got, "bank · pay_invoice on mercury") {
		t.Errorf("the payment reads %q", got)
	}
	do(t, ctx, "open the payment", chromedp.Click(chromedp.Search(pay)),
		chromedp.WaitVisible(chromedp.CSS(`#history li[data-entry="`+payment.ID+`"] dl.entry-details`)))
	details := textOf(t, ctx, "the payment's details", `#history li[data-entry="`+payment.ID+`"] dl.entry-details`)
	for _, s := range []string{"What it did" + payment.Summary, "What happened" + payment.Result.Text, "Carried out at once: your policy did not ask you.", payment.ID} {
		if !strings.Contains(details, s) {
			t.Errorf("the payment's details %q lack %q", details, s)
		}
	}
	if payment.Result.URL != "" {
		if href := textOf(t, ctx, "the link", `#history li[data-entry="`+payment.ID+`"] dl.entry-details a`); href != payment.Result.URL {
			t.Errorf("the payment's link reads %q, want %q", href, payment.Result.URL)
		}
	}
	if expanded := run(t, ctx, "opened", chromedp.Evaluate[bool](`document.querySelector('#history li[data-entry="`+payment.ID+`"] details').open`)); !expanded {
		t.Error("the payment did not open")
	}
	// Every entry on the page says what the Go device opens of it.
	shown := run(t, ctx, "the entries shown", chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("#history > li")].map((li) => [li.dataset.entry, li.querySelector("summary")?.textContent ?? li.textContent]))`))
	for id, text := range shown {
		o := opened[id]
		if o == nil {
			t.Errorf("the page lists %s, which the history does not hold", id)
			continue
		}
		title := o.Title
		if title == "" {
			title = o.Operation + " of " + o.Connector
		}
		if !strings.Contains(text, title) || !strings.Contains(text, o.Told()) {
			t.Errorf("entry %s reads %q; the Go device opens %q, %q", id, text, title, o.Told())
		}
	}
	screen(t, ctx, "inbox-history")

	// Show more: the older notes, after the others.
	do(t, ctx, "show more", chromedp.Click(named("Show more")))
	waitJS(t, ctx, "all of it", historyCount+` === 26 && document.getElementById("history-more").hidden`)
	order := run(t, ctx, "the order", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#history > li")].map((li) => li.dataset.entry)`))
	for i, e := range page.Entries {
		if i >= len(order) || order[i] != e.ID {
			t.Fatalf("the page lists %q; the history, newest first, %v", order, page.Entries)
		}
	}

	// By project: the bank's payment alone.
	setFilter(t, ctx, "history-project", "bank")
	waitJS(t, ctx, "the bank's", historyCount+` === 1 && !!document.querySelector('#history li[data-entry="`+payment.ID+`"]')`)
	// By agent: the other agent's task alone.
	setFilter(t, ctx, "history-project", "")
	setFilter(t, ctx, "history-agent", "other.near")
	waitJS(t, ctx, "the other agent's", historyCount+` === 1 && !!document.querySelector('#history li[data-entry="`+rejected+`"]')`)
	setFilter(t, ctx, "history-project", "probe")
	waitJS(t, ctx, "nothing of both", historyCount+` === 0 && document.getElementById("history-empty").textContent.startsWith("Nothing in the history of this project and agent")`)
	setFilter(t, ctx, "history-project", "")
	setFilter(t, ctx, "history-agent", "")
	waitJS(t, ctx, "everyone's", historyCount+` === 20`)

	// A task that ends while the page is open joins the history at once.
	if _, err := w.Owner.Client.Reject(ctxb, waiting, nil); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rejected task joins", `document.querySelector("#history > li")?.dataset.entry === "`+waiting+`" && document.querySelectorAll("#tasks > li").length === 0`)
	signOut(t, ctx)
}

// TestEndingWordsAsGo: the page says how a task or a write ended, when the
// connector told nothing, in the Go device's words (device.Ending), for
// every state and failure reason.
func TestEndingWordsAsGo(t *testing.T) {
	t.Parallel()
	type end struct {
		State  string `json:"state"`
		Reason string `json:"reason"`
	}
	var ends []end
	for _, s := range []countersign.State{countersign.StateDone, countersign.StateRejected, countersign.StateCancelled, countersign.StateExpired,
		countersign.StateVoid, countersign.StateApproved, countersign.StateAnswering} {
		ends = append(ends, end{State: string(s)})
	}
	for _, r := range []countersign.FailureReason{"", countersign.FailRunUnfinished, countersign.FailRunNotStarted, countersign.FailPreparerKeyUnavailable,
		countersign.FailOperationUnknown, countersign.FailOperationPriced, countersign.FailOperationLimitReached, countersign.FailQueueUnavailable,
		"run_refused:conflict", "run_refused:policy_denied", "run_refused:", "something_new"} {
		ends = append(ends, end{State: string(countersign.StateFailed), Reason: string(r)})
	}
	in, _ := json.Marshal(ends)
	ctx := tab(t)
	got := run(t, ctx, "the words", chromedp.Evaluate[[]string](`(async () => {
  const cs = await import(window.BUNDLE);
  return `+string(in)+`.map((e) => cs.endingWords(e.state, e.reason));
})()`, chromedp.EvalAwaitPromise))
	for i, e := range ends {
		if want := device.Ending(e.State, e.Reason); i >= len(got) || got[i] != want {
			t.Errorf("%s %s: the page says %q, the Go device %q", e.State, e.Reason, got, want)
		}
	}
}
