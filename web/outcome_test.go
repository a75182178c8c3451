package web_test

// The outcome of an approval, told to the owner, in a real Chromium against
// the whole service (servicetest on PostgreSQL) with GitHub on its fake:
// once the task ends, a banner above the list and the live region say what
// happened, from the task's history entry. A file_put whose file changed
// after the owner saw it fails after the approval, and the page says so
// loudly, with GitHub's reason and that nothing was written; it never
// leaves "Approved: the service carries it out" standing. A file_put that
// goes through says the commit it made.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// banner is the text of the outcome banner of task id ("" when none).
func banner(t testing.TB, ctx context.Context, id string) string {
	t.Helper()
	return textOf(t, ctx, "the banner of "+id, `#outcomes .outcome[data-outcome="`+id+`"]`)
}

func TestInboxPageOutcome(t *testing.T) {
	t.Parallel()
	fake := githubtest.New(githubToken, "octocat").Start()
	t.Cleanup(fake.Close)
	repo := fake.Seed()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true}})))
	followClock(t, w)
	w.PutProject("gh", "github", `{"actions": ["file_put"], "confirm": ["file_put"]}`, []byte(`{"token": "`+githubToken+`"}`))
	w.StartJobs()
	readme := githubCall(t, w, "file_put", map[string]any{"repo": repo, "path": "README.md", "message": "Reword", "content": "# hello\n\nReworded.\n"})
	usage := githubCall(t, w, "file_put", map[string]any{"repo": repo, "path": "docs/usage.md", "message": "Usage", "content": "# Usage\n\nRun it.\n"})

	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)

	// The owner reads the README change; meanwhile someone else pushes a
	// change to the README. Approved, the write fails: GitHub refuses it.
	openCard(t, ctx, readme)
	title := textOf(t, ctx, "the card's title", "#card-title")
	fake.Push(repo, "main", "Someone else's change", map[string]string{"README.md": "# hello\n\nChanged elsewhere.\n"})
	do(t, ctx, "approve", chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	if st := w.WaitState(readme, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateFailed {
		t.Fatalf("the file_put of a changed file is %s", st.State)
	}
	waitJS(t, ctx, "the failure told", `document.querySelector('#outcomes .outcome[data-outcome="`+readme+`"]')?.dataset.state === "failed"`)
	got := banner(t, ctx, readme)
	for _, s := range []string{"Failed after your approval: " + title, "README.md changed on main after it was shown for approval", "Nothing was written."} {
		if !strings.Contains(got, s) {
			t.Errorf("the banner reads %q, without %q", got, s)
		}
	}
	if strings.Contains(got, "carries it out") {
		t.Errorf("the banner still says the service carries it out: %q", got)
	}
	// Loudly: in the warning colour, with a thick edge, and said in the
	// live region as an error.
	if loud := run(t, ctx, "loud", chromedp.Evaluate[bool](`(() => {
  const b = document.querySelector('#outcomes .outcome[data-outcome="`+readme+`"]');
  const cs = getComputedStyle(b);
  const s = document.getElementById("status");
  return b.classList.contains("failure") && parseFloat(cs.borderLeftWidth) >= 6 && cs.borderLeftColor === getComputedStyle(b.querySelector(".outcome-text")).color &&
    s.classList.contains("error") && s.textContent.includes("Failed after your approval") && s.textContent.includes("Nothing was written") && !s.textContent.includes("carries it out");
})()`)); !loud {
		t.Errorf("the failure is not told loudly; the page says %q", textOf(t, ctx, "the status", "#status"))
	}
	// The history says the same.
	waitJS(t, ctx, "in the history", `document.querySelector('#history li[data-entry="`+readme+`"]')?.classList.contains("entry-failed")`)
	if h := textOf(t, ctx, "the history's entry", `#history li[data-entry="`+readme+`"] .entry-outcome`); !strings.HasPrefix(h, "Failed: README.md changed on main after it was shown for approval") || !strings.HasSuffix(h, "Nothing was written.") {
		t.Errorf("the history says %q", h)
	}
	if content, _ := fake.File(repo, "main", "README.md"); content != "# hello\n\nChanged elsewhere.\n" {
		t.Fatalf("the README on GitHub reads %q", content)
	}
	screen(t, ctx, "inbox-outcome-failed")

	// The other file goes through: the banner says the commit GitHub made.
	openCard(t, ctx, usage)
	do(t, ctx, "approve the usage", chromedp.Click(approveButton()))
	if st := w.WaitState(usage, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the file_put of docs/usage.md is %s", st.State)
	}
	waitJS(t, ctx, "the commit told", `document.querySelector('#outcomes .outcome[data-outcome="`+usage+`"]')?.dataset.state === "done"`)
	if got := banner(t, ctx, usage); !strings.Contains(got, "Done: ") || !strings.Contains(got, "Committed ") || !strings.Contains(got, `"docs/usage.md"`) {
		t.Errorf("the banner of the commit reads %q", got)
	}
	if s := textOf(t, ctx, "the status", "#status"); !strings.HasPrefix(s, "Done: ") || !strings.Contains(s, "Committed ") {
		t.Errorf("the live region says %q", s)
	}

	// Dismissed by its name, the failure's banner goes; the commit's stays.
	do(t, ctx, "dismiss", chromedp.Click(chromedp.Search(`//button[starts-with(@aria-label, "Dismiss: Failed after your approval")]`)))
	waitJS(t, ctx, "dismissed", `!document.querySelector('#outcomes .outcome[data-outcome="`+readme+`"]') && !!document.querySelector('#outcomes .outcome[data-outcome="`+usage+`"]')`)
	signOut(t, ctx)
}
