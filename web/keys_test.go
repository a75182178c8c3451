package web_test

// The web inbox from the keyboard in a real Chromium against the whole
// service (servicetest on PostgreSQL): j/k move between tasks with visible
// focus, Enter opens, a approves, r rejects, ? lists the keys, and each
// button shows its key.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"countersign"
	"countersign/servicetest"
	"countersign/store/storetest"
)

func TestInboxPageKeyboard(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	first := w.Pay()
	second := w.Pay()

	ctx := blankTab(t, 90*time.Second)
	signInPage(t, ctx, w)
	waitJS(t, ctx, "two tasks listed", `document.querySelectorAll("#tasks button.task-open").length === 2`)
	focused := func() string {
		return run(t, ctx, "the focused task", chromedp.Evaluate[string](`document.activeElement?.dataset?.task ?? ""`))
	}
	order := run(t, ctx, "the order", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#tasks button.task-open")].map((l) => l.dataset.task)`))
	do(t, ctx, "j", chromedp.KeyEvent("j"))
	if got := focused(); got != order[0] {
		t.Fatalf("j focuses %q, want %q", got, order[0])
	}
	do(t, ctx, "j", chromedp.KeyEvent("j"))
	if got := focused(); got != order[1] {
		t.Fatalf("j again focuses %q, want %q", got, order[1])
	}
	do(t, ctx, "k", chromedp.KeyEvent("k"))
	if got := focused(); got != order[0] {
		t.Fatalf("k focuses %q, want %q", got, order[0])
	}
	// The focus is visible: an outline is drawn on the focused task.
	if o := run(t, ctx, "the focus ring", chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`)); o == "none" || o == "" {
		t.Fatalf("the focused task has no outline (%q)", o)
	}

	// ? lists the keys; Escape hides them.
	do(t, ctx, "?", chromedp.KeyEvent("?"))
	waitJS(t, ctx, "the keys", `!document.getElementById("keys").hidden`)
	keys := run(t, ctx, "the keys", chromedp.TextContent(chromedp.ID("keys")))
	for _, k := range []string{"j", "k", "Enter", "a", "r", "?"} {
		if !strings.Contains(keys, k) {
			t.Errorf("the keys list lacks %q: %q", k, keys)
		}
	}
	screen(t, ctx, "inbox-keys")
	do(t, ctx, "Escape", chromedp.KeyEvent(kb.Escape))
	waitJS(t, ctx, "the keys hidden", `document.getElementById("keys").hidden`)

	// Enter opens the focused task; its buttons show their keys and keep
	// their names; r rejects it.
	do(t, ctx, "focus the first", chromedp.Focus(chromedp.CSS(`button.task-open[data-task="`+order[0]+`"]`)), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, "the card", `!document.getElementById("card").hidden && document.getElementById("card-title") !== null`)
	waitJS(t, ctx, "the receipt check", `!document.getElementById("receipt").textContent.startsWith("Checking")`)
	hints := run(t, ctx, "the key hints", chromedp.Evaluate[map[string]string](
		`Object.fromEntries([...document.querySelectorAll("#card-actions button[aria-keyshortcuts]")].map((b) => [b.textContent.trim(), b.getAttribute("aria-keyshortcuts") + "|" + (b.nextElementSibling?.textContent ?? "")]))`))
	approve := ""
	for name, hint := range hints {
		if strings.HasPrefix(name, "Approve") {
			approve = hint
		}
	}
	if approve != "a|a" || hints["Reject"] != "r|r" {
		t.Fatalf("the buttons' keys: %v", hints)
	}
	// r asks once more, with the reason box focused; the second Reject sends it.
	do(t, ctx, "r", chromedp.Focus(chromedp.ID("card-title")), chromedp.KeyEvent("r"))
	waitJS(t, ctx, "the reason", `document.activeElement?.id === "reason"`)
	do(t, ctx, "reject for good", chromedp.Click(named("Reject this task")))
	waitJS(t, ctx, "rejected", `document.getElementById("status").textContent.startsWith("Rejected")`)
	if st := w.WaitState(order[0], countersign.StateRejected); st.State != countersign.StateRejected {
		t.Fatalf("the task r rejected is %s", st.State)
	}

	// a approves the other: the approval sentence is shown to sign.
	other := first
	if order[0] == first {
		other = second
	}
	openCard(t, ctx, other)
	do(t, ctx, "a", chromedp.Focus(chromedp.ID("card-title")), chromedp.KeyEvent("a"))
	waitJS(t, ctx, "the approval sentence", `document.getElementById("approval-sentence") !== null`)
	sentence := run(t, ctx, "the approval sentence", chromedp.TextContent(chromedp.ID("approval-sentence")))
	do(t, ctx, "send the approval", chromedp.SetValue(chromedp.ID("approval-signed"), walletSign(t, ctx, w, sentence, "approval-nonce")),
		chromedp.Click(named("Send approval")))
	if st := w.WaitState(other, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the task a approved is %s", st.State)
	}

	signOut(t, ctx)
}
