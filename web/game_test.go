package web_test

// Whole games in the page, in Chromium against the service on PostgreSQL:
// the guessing game played to its notice, each next turn arriving through
// the event stream without a reload and told in the live region; and a
// task locked on this device, unlocked from the keyboard.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// field is the value the open card shows for a field's label ("" if none).
func field(t testing.TB, ctx context.Context, label string) string {
	t.Helper()
	return run(t, ctx, "the field "+label, chromedp.Evaluate[string](fmt.Sprintf(
		`[...document.querySelectorAll("#fields dt")].find((d) => d.textContent.includes(%q))?.nextElementSibling?.textContent ?? ""`, label)))
}

// waitingIDs are the ids of the tasks the page lists as waiting.
func waitingIDs(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "the waiting tasks", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#tasks button.task-open")].map((b) => b.dataset.task)`))
}

func TestInboxPageGuessingGame(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	// Marks this document: a reload would lose it.
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))

	turn := w.Guess()
	waitJS(t, ctx, "the first turn told", `document.getElementById("status").textContent.includes("New task from `+w.Agent+`: Guess my number")`)
	low, high := 1, 10
	for attempt := 1; ; attempt++ {
		if attempt > 5 {
			t.Fatal("no win in 5 attempts between 1 and 10")
		}
		openCard(t, ctx, turn)
		if attempt > 1 {
			if got := field(t, ctx, "Attempts"); got != fmt.Sprint(attempt-1) {
				t.Fatalf("turn %d shows %q attempts", attempt, got)
			}
		}
		g := (low + high) / 2
		do(t, ctx, fmt.Sprintf("guess %d", g), chromedp.SetValue(chromedp.ID("answer"), fmt.Sprint(g)), chromedp.Click(approveButton()))
		waitApproved(t, ctx)
		if st := w.WaitState(turn, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
			t.Fatalf("turn %d is %s", attempt, st.State)
		}
		// The next task (a turn or the notice) arrives without a reload.
		waitJS(t, ctx, "the next task", `document.querySelectorAll("#tasks button.task-open").length === 1 && !document.querySelector('#tasks li[data-task="`+turn+`"]')`)
		turn = waitingIDs(t, ctx)[0]
		openCard(t, ctx, turn)
		if title := run(t, ctx, "the title", chromedp.TextContent(chromedp.ID("card-title"))); strings.HasPrefix(title, "You guessed it: ") {
			if title != fmt.Sprintf("You guessed it: %d, in %d attempt", g, attempt) && title != fmt.Sprintf("You guessed it: %d, in %d attempts", g, attempt) {
				t.Fatalf("the notice says %q after guessing %d in %d", title, g, attempt)
			}
			do(t, ctx, "got it, by its key", chromedp.KeyEvent("g"))
			break
		}
		switch answer := field(t, ctx, "Answer"); answer {
		case "Higher":
			low = g + 1
		case "Lower":
			high = g - 1
		default:
			t.Fatalf("turn %d answers %q to %d", attempt+1, answer, g)
		}
		do(t, ctx, "back", chromedp.Click(named("Back to the list")))
	}
	waitJS(t, ctx, "closed", `document.getElementById("status").textContent.startsWith("Closed")`)
	if st := w.WaitState(turn, countersign.StateDone); st.State != countersign.StateDone {
		t.Fatalf("the notice is %s", st.State)
	}
	if same := run(t, ctx, "the same document", chromedp.Evaluate[bool](`window.sameDocument === true`)); !same {
		t.Fatal("the page was reloaded during the game")
	}
}

func TestInboxPageUnlock(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	ctx := blankTab(t, 90*time.Second)
	signInPage(t, ctx, w)
	// A task that carries no key for this device, as one opened while the
	// device's sign-in was being made would.
	id := w.Pay()
	tag, err := w.DB.Postgres().Exec(context.Background(), `DELETE FROM device_copies WHERE task_id = $1`, id)
	if err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("drop the device copies: %v (%d rows)", err, tag.RowsAffected())
	}
	do(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(named("Sign out")))
	waitJS(t, ctx, "the locked task", `document.querySelector('#tasks li[data-task="`+id+`"]')?.textContent.includes("Locked on this device") === true`)
	if n := run(t, ctx, "open buttons", chromedp.Evaluate[int](`document.querySelectorAll('#tasks li[data-task="`+id+`"] button.task-open').length`)); n != 0 {
		t.Fatal("a locked task can be opened")
	}
	screen(t, ctx, "inbox-locked")
	do(t, ctx, "unlock by its key", chromedp.KeyEvent("u"))
	waitJS(t, ctx, "unlocked", `!!document.querySelector('#tasks li[data-task="`+id+`"] button.task-open')`)
	openCard(t, ctx, id)
	if got := run(t, ctx, "the title", chromedp.TextContent(chromedp.ID("card-title"))); got != "Pay" {
		t.Fatalf("the unlocked task's card is titled %q", got)
	}
}

// The links the service gives out (PUBLIC_URL/#/tasks/{id}, in agents'
// answers and webhooks) open that task's card: after signing in when the
// page is not signed in yet, at once when it is; a closed task's link says
// how it ended.
func TestInboxPageLink(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	first, second := w.Pay(), w.Pay()
	ctx := blankTab(t, 90*time.Second)
	injectWallet(t, ctx, w)
	item := `#wallet-picker button[data-wallet="test-wallet"]`
	do(t, ctx, "follow the link, then sign in", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/#/tasks/"+first),
		chromedp.WaitVisible(named("Sign in")), chromedp.Click(named("Sign in")),
		chromedp.WaitVisible(chromedp.CSS(item)), chromedp.Click(chromedp.CSS(item)))
	walletClosed(t, ctx)
	waitJS(t, ctx, "the linked card", `document.getElementById("card")?.hidden === false && document.getElementById("card-task-id")?.textContent === "`+first+`"`)

	do(t, ctx, "another link", chromedp.Navigate(w.URL+"/#/tasks/"+second))
	waitJS(t, ctx, "the other card", `document.getElementById("card")?.hidden === false && document.getElementById("card-task-id")?.textContent === "`+second+`"`)
	do(t, ctx, "back", chromedp.Click(named("Back to the list")))
	waitJS(t, ctx, "the bare address", `location.hash === "" && !document.getElementById("list").hidden`)

	if _, err := w.Owner.Client.Reject(context.Background(), first, nil); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the closed task's link", chromedp.Navigate(w.URL+"/#/tasks/"+first))
	waitJS(t, ctx, "how it ended", `document.getElementById("status").textContent.includes("Task `+first+` is closed: Rejected by you.")`)
}
