package web_test

// Moving about the page as a person does, in a real Chromium against the
// whole service (servicetest on PostgreSQL): opening a card is a history
// entry (the browser's Back returns to the list, Forward reopens it), Esc
// closes a card, and after every move the focus is somewhere sensible and
// visible; tasks that look alike are told apart; the list is not drawn
// again under the pointer when nothing in it changed; the tab's title
// counts the tasks waiting; times are relative, with the exact time on
// hover and focus.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"countersign/servicetest"
	"countersign/store/storetest"
)

// focusShows is a script: whether the focused element shows that it has the
// focus, and how (an outline, or a heading's underline in the accent colour;
// never the browser's black ring on a heading).
const focusShows = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return "nothing has the focus";
  const cs = getComputedStyle(e);
  if (/^H[1-6]$/.test(e.tagName)) {
    return cs.outlineStyle === "none" && cs.textDecorationLine.includes("underline") ? "" : "a heading's focus is " + cs.outlineStyle + " " + cs.outlineColor + " " + cs.textDecorationLine;
  }
  return cs.outlineStyle !== "none" && cs.outlineWidth !== "0px" ? "" : e.tagName + " shows no focus";
})()`

func focusVisible(t testing.TB, ctx context.Context, where string) {
	t.Helper()
	if why := run(t, ctx, "the focus", chromedp.Evaluate[string](focusShows)); why != "" {
		t.Errorf("%s: %s", where, why)
	}
}

func TestInboxPageMoves(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	first, second := w.Pay(), w.Pay()

	ctx := blankTab(t, 120*time.Second)
	var mu sync.Mutex
	listed := 0
	listings := func() int {
		mu.Lock()
		defer mu.Unlock()
		return listed
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.HasSuffix(e.Request.URL, "/inbox/tasks?show=waiting") {
			mu.Lock()
			listed++
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	signInPage(t, ctx, w)
	waitJS(t, ctx, "both listed", `document.querySelectorAll("#tasks button.task-open").length === 2`)
	// The tab's title counts the tasks waiting.
	waitJS(t, ctx, "the title", `document.title === "(2) Countersign"`)

	// Two tasks alike (the same title, amount, agent and minute) are told
	// apart by what differs: when each was asked, to the second, and its
	// id. Each names its agent.
	names := run(t, ctx, "the names", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#tasks button.task-open")].map((b) => b.innerText.replace(/\s+/g, " ").trim())`))
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("two tasks read the same: %q", names)
	}
	for _, n := range names {
		if !strings.Contains(n, "Pay") || !strings.Contains(n, "pay $1 from the ledger") || !strings.Contains(n, "from "+w.Agent) || !strings.Contains(n, " at ") {
			t.Errorf("a task reads %q", n)
		}
	}

	// The pointer on the first task right after the list is drawn: the
	// listing the event stream asks for once it opens, with nothing changed,
	// leaves the items as they were (the pointer stays on the same one); a
	// task arriving adds its item and keeps the others.
	item := func(id string) string { return `#tasks button.task-open[data-task="` + id + `"]` }
	do(t, ctx, "mark the items", chromedp.Evaluate[chromedp.Void](`window.marked = document.querySelector('`+item(first)+`')`))
	box := run(t, ctx, "where the first task is", chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector('`+item(first)+`').getBoundingClientRect(); return [r.x + 20, r.y + 10]; })()`))
	if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: box[0], Y: box[1]}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); listings() < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page listed %d times after signing in; the event stream's listing never came", listings())
		}
	}
	time.Sleep(500 * time.Millisecond) // the listing's answer drawn
	if same := run(t, ctx, "the same item", chromedp.Evaluate[bool](`window.marked === document.querySelector('`+item(first)+`') && window.marked.matches(":hover")`)); !same {
		t.Fatal("the list was drawn anew under the pointer: the task under it is another element now")
	}
	third := w.Pay()
	waitJS(t, ctx, "the third arrives", `document.querySelectorAll("#tasks button.task-open").length === 3 && document.title === "(3) Countersign"`)
	if same := run(t, ctx, "the same item", chromedp.Evaluate[bool](`window.marked === document.querySelector('`+item(first)+`')`)); !same {
		t.Fatal("a task arriving drew the other items anew")
	}

	// Opening a card is a history entry; its heading has the focus, shown.
	do(t, ctx, "open", chromedp.Click(chromedp.CSS(item(second))))
	waitJS(t, ctx, "the card", `location.hash === "#/tasks/`+second+`" && document.getElementById("card-task-id")?.textContent === "`+second+`" && document.activeElement?.id === "card-title"`)
	focusVisible(t, ctx, "the card opened")
	waitJS(t, ctx, "the title", `document.title === "(3) Pay · Countersign"`)

	// Times read relative; the exact one is on hover (title) and focus.
	asked := run(t, ctx, "the asked time", chromedp.Evaluate[[]string](`(() => { const t = document.querySelector("#card-meta time"); t.focus(); return [t.textContent, t.title, getComputedStyle(t, "::after").content]; })()`))
	if !(asked[0] == "just now" || strings.HasSuffix(asked[0], " ago")) || !strings.Contains(asked[1], " UTC") || !strings.Contains(asked[2], " UTC") {
		t.Errorf("the asked time reads %q, its title %q, on focus %q", asked[0], asked[1], asked[2])
	}
	if got := textOf(t, ctx, "the countdown", "#countdown"); !strings.HasPrefix(got, "in 23 h ") && !strings.HasPrefix(got, "in 24 h ") {
		t.Errorf("the countdown reads %q", got)
	}

	// Back returns to the list, with the focus on the task that was open.
	do(t, ctx, "Back", chromedp.Evaluate[chromedp.Void](`history.back()`))
	waitJS(t, ctx, "the list", `location.hash === "" && !document.getElementById("list").hidden && document.getElementById("card").hidden && document.activeElement?.dataset?.task === "`+second+`"`)
	focusVisible(t, ctx, "back at the list")
	// Forward opens the card again.
	do(t, ctx, "Forward", chromedp.Evaluate[chromedp.Void](`history.forward()`))
	waitJS(t, ctx, "the card again", `document.getElementById("card-task-id")?.textContent === "`+second+`" && !document.getElementById("card").hidden && document.activeElement?.id === "card-title"`)
	// Esc closes it, back where the list was.
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape))
	waitJS(t, ctx, "the list", `location.hash === "" && !document.getElementById("list").hidden && document.activeElement?.dataset?.task === "`+second+`"`)
	focusVisible(t, ctx, "Esc")
	// Back from the list after Esc leaves the page's entries as they were:
	// the card's entry is gone, not doubled.
	if n := run(t, ctx, "the history", chromedp.Evaluate[int](`history.length`)); n > 4 {
		t.Errorf("the history holds %d entries after one card opened and closed", n)
	}

	// The card's Back button does as the browser's Back.
	do(t, ctx, "open the third", chromedp.Click(chromedp.CSS(item(third))))
	waitJS(t, ctx, "the third card", `document.getElementById("card-task-id")?.textContent === "`+third+`" && document.activeElement?.id === "card-title"`)
	do(t, ctx, "Back to the list", chromedp.Click(named("Back to the list")))
	waitJS(t, ctx, "the list", `location.hash === "" && document.activeElement?.dataset?.task === "`+third+`"`)

	// A task answered elsewhere leaves the list and the count.
	if _, err := w.Owner.Client.Reject(context.Background(), first, nil); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "two left", `document.querySelectorAll("#tasks button.task-open").length === 2 && document.title === "(2) Countersign"`)
}
