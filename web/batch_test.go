package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// payTask asks the owner to confirm a ledger payment in project, with a
// summary, and returns the task's id.
func payTask(t testing.TB, w *servicetest.World, project string, amount int, title, summary string) string {
	t.Helper()
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, project, "pay", map[string]any{"amount": amount, "title": title, "summary": summary}, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.TaskID == "" {
		t.Fatalf("the pay call: %s, %v", raw, err)
	}
	return a.TaskID
}

// TestInboxPageBatchApprove: three ledger payments selected in the list
// (two by their check boxes, one by x) are approved with one wallet
// signature over the batch sentence naming each summary, and all three are
// carried out; a selection across two projects is refused by the page
// before the wallet is asked.
func TestInboxPageBatchApprove(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	w.PutProject("ledger2", "ledger", "{}", nil)
	summaries := []string{"pay $1.00 to Acme Corp by ACH", "pay $2.00 to Bolt Ltd by ACH", "pay $3.00 to Cog Inc by wire"}
	var ids []string
	for i, s := range summaries {
		ids = append(ids, payTask(t, w, "ledger", i+1, []string{"Pay Acme Corp", "Pay Bolt Ltd", "Pay Cog Inc"}[i], s))
	}
	other := payTask(t, w, "ledger2", 4, "Pay Dyn LLC", "pay $4.00 to Dyn LLC by ACH")

	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	pick := func(id string) string { return `input.task-pick[data-task="` + id + `"]` }
	for _, id := range append(append([]string{}, ids...), other) {
		do(t, ctx, "the check box of "+id, chromedp.WaitVisible(chromedp.CSS(pick(id))))
	}
	before := len(walletSigned(t, ctx))

	// One task: the button waits for another, and says so.
	do(t, ctx, "select the first", chromedp.Click(chromedp.CSS(pick(ids[0]))))
	if why := textOf(t, ctx, "why", "#batch-why"); !strings.Contains(why, "at least one more") {
		t.Fatalf("with one task selected, the page says %q", why)
	}
	// Across two projects: refused by the page, the wallet never asked.
	do(t, ctx, "select the other project's", chromedp.Click(chromedp.CSS(pick(other))))
	if got := run(t, ctx, "the button", chromedp.Evaluate[bool](`document.getElementById("batch-approve").disabled`)); !got {
		t.Fatal("Approve selected is enabled for tasks of two projects")
	}
	if why := textOf(t, ctx, "why", "#batch-why"); !strings.Contains(why, "2 projects") || !strings.Contains(why, "ledger2") {
		t.Fatalf("across two projects, the page says %q", why)
	}
	do(t, ctx, "click it anyway", chromedp.Evaluate[chromedp.Void](`document.getElementById("batch-approve").click()`))
	do(t, ctx, "unselect the other project's", chromedp.Click(chromedp.CSS(pick(other))))

	// x on the focused task selects it.
	do(t, ctx, "select the second", chromedp.Click(chromedp.CSS(pick(ids[1]))))
	do(t, ctx, "focus the third", chromedp.Focus(chromedp.CSS(`li[data-task="`+ids[2]+`"] button.task-open`)))
	do(t, ctx, "x", chromedp.KeyEvent("x"))
	waitJS(t, ctx, "x selects", `document.querySelector('`+pick(ids[2])+`').checked`)
	if text := textOf(t, ctx, "the button", "#batch-approve"); text != "Approve 3 selected" {
		t.Fatalf("the button reads %q", text)
	}
	if n := len(walletSigned(t, ctx)); n != before {
		t.Fatalf("the wallet signed %d sentences before Approve selected", n-before)
	}
	do(t, ctx, "the list at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, ctx, "inbox-batch-selected")

	// The sentence names the tasks in the list's order.
	order := run(t, ctx, "the list's order", chromedp.Evaluate[[]string](`[...document.querySelectorAll("input.task-pick:checked")].map((b) => b.dataset.task)`))
	bySummary := map[string]string{}
	for i, id := range ids {
		bySummary[id] = summaries[i]
	}
	var listed []string
	for _, id := range order {
		listed = append(listed, bySummary[id])
	}
	do(t, ctx, "approve selected", chromedp.Click(chromedp.CSS("#batch-approve")))
	waitJS(t, ctx, "approved", `document.getElementById("status").textContent.startsWith("Approved 3 tasks")`)
	signed := walletSigned(t, ctx)[before:]
	if len(signed) != 1 {
		t.Fatalf("the wallet signed %d sentences: %q", len(signed), signed)
	}
	p, err := approval.ParseBatchApproval(signed[0])
	if err != nil || p.Count != 3 || p.Project != "ledger" || p.Account != w.Owner.Account || len(order) != 3 || p.Listed != strings.Join(listed, "; ") {
		t.Fatalf("the wallet signed %q (%+v, %v)", signed[0], p, err)
	}
	for _, id := range ids {
		if st := w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
			t.Fatalf("task %s approved in the batch is %s", id, st.State)
		}
		waitJS(t, ctx, "the outcome of "+id, `document.querySelector('#outcomes .outcome[data-outcome="`+id+`"]')?.dataset.state === "done"`)
	}
	if st := w.Task(other); st.State != countersign.StateOpen {
		t.Fatalf("the other project's task is %s", st.State)
	}
}

// TestInboxPageBatchRefused: a batch the door refuses because of one task
// (here its task hash, altered on the way) is told naming that task, and
// no task of the batch is approved.
func TestInboxPageBatchRefused(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	a := payTask(t, w, "ledger", 1, "Pay Acme Corp", "pay $1.00 to Acme Corp by ACH")
	b := payTask(t, w, "ledger", 2, "Pay Bolt Ltd", "pay $2.00 to Bolt Ltd by ACH")

	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	for _, id := range []string{a, b} {
		do(t, ctx, "select "+id, chromedp.WaitVisible(chromedp.CSS(`input.task-pick[data-task="`+id+`"]`)), chromedp.Click(chromedp.CSS(`input.task-pick[data-task="`+id+`"]`)))
	}
	// The batch leaves the page with Bolt's task hash changed.
	do(t, ctx, "alter the batch on the way", chromedp.Evaluate[chromedp.Void](`(() => {
  const f = window.fetch;
  window.fetch = (url, init) => {
    if (String(url).endsWith("/inbox/tasks/approve") && init && init.body) {
      const body = JSON.parse(init.body);
      for (const l of body.tasks) if (l.id === "`+b+`") l.task_hash = "0".repeat(64);
      init = { ...init, body: JSON.stringify(body) };
    }
    return f(url, init);
  };
})()`))
	do(t, ctx, "approve selected", chromedp.Click(chromedp.CSS("#batch-approve")))
	waitJS(t, ctx, "refused", `document.getElementById("status").textContent.startsWith("The approval was refused")`)
	said := textOf(t, ctx, "the status", "#status")
	if !strings.Contains(said, `"Pay Bolt Ltd" (task `+b+`)`) || !strings.Contains(said, "None of these 2 tasks was approved") {
		t.Fatalf("the refusal reads %q", said)
	}
	for _, id := range []string{a, b} {
		if st := w.Task(id); st.State != countersign.StateOpen {
			t.Fatalf("task %s after the refused batch is %s", id, st.State)
		}
	}
}
