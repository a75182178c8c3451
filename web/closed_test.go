package web_test

// The closed list below the waiting list in a real Chromium against the
// whole service (servicetest on PostgreSQL): each closed task with its state
// and, for a failed one, its failure reason in plain words.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/servicetest"
	"countersign/store/storetest"
)

func TestInboxPageClosedList(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	ctxb := context.Background()
	waiting := w.Pay()
	done := w.Pay()
	w.Approve(done, nil)
	if st := w.WaitState(done, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the approved task is %s", st.State)
	}
	rejected := w.Pay()
	failed := w.Pay()
	for _, id := range []string{rejected, failed} {
		if _, err := w.Owner.Client.Reject(ctxb, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	// One closed task is made failed in the database, as a run that began
	// and did not report would leave it.
	tag, err := w.DB.Postgres().Exec(ctxb, `UPDATE tasks SET state = 'failed', failure_reason = 'run_unfinished', outcome_class = 'observed' WHERE id = $1`, failed)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("fail the task: %v (%d rows)", err, tag.RowsAffected())
	}

	ctx := blankTab(t, 90*time.Second)
	signInPage(t, ctx, w)
	waitJS(t, ctx, "the closed list", `document.querySelectorAll("#closed li").length === 3`)
	if n := run(t, ctx, "the waiting list", chromedp.Evaluate[int](`document.querySelectorAll("#tasks li").length`)); n != 1 {
		t.Fatalf("%d tasks waiting, want 1 (%s)", n, waiting)
	}
	// The closed list is below the waiting list.
	if below := run(t, ctx, "the order", chromedp.Evaluate[bool](
		`!!(document.getElementById("tasks").compareDocumentPosition(document.getElementById("closed")) & Node.DOCUMENT_POSITION_FOLLOWING)`)); !below {
		t.Fatal("the closed list is not below the waiting list")
	}
	text := func(id string) string {
		// Read in one evaluation: a listing drawn again between finding the
		// node and reading it would take the node away.
		return run(t, ctx, "closed task "+id, chromedp.Evaluate[string](`document.querySelector('#closed li[data-closed="`+id+`"]')?.textContent ?? ""`))
	}
	if got := text(done); !strings.HasPrefix(got, "Done") {
		t.Errorf("the done task reads %q", got)
	}
	if got := text(rejected); !strings.HasPrefix(got, "Rejected") || strings.Contains(got, "may or may not") {
		t.Errorf("the rejected task reads %q", got)
	}
	if got := text(failed); !strings.HasPrefix(got, "Failed") || !strings.Contains(got, "it may or may not have happened") || strings.Contains(got, "run_unfinished") {
		t.Errorf("the failed task reads %q", got)
	}
	screen(t, ctx, "inbox-closed")
	// A task that closes while the page is open moves to the closed list.
	if _, err := w.Owner.Client.Reject(ctxb, waiting, nil); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rejected task moves", `document.querySelectorAll("#closed li").length === 4 && document.querySelectorAll("#tasks li").length === 0`)
	signOut(t, ctx)
}
