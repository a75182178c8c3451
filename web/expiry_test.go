package web_test

// The task card at its expiry in a real Chromium against the whole service
// (servicetest on PostgreSQL): when the countdown reaches expires_at the
// card turns read-only and says so; the service refuses an answer then too.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store/storetest"
)

func TestInboxPageCardExpires(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	id := w.Pay()
	expiresAt := w.Task(id).ExpiresAt

	ctx := blankTab(t, 90*time.Second)
	signInPage(t, ctx, w)
	openCard(t, ctx, id)
	if approveDisabled(t, ctx) {
		t.Fatal("Approve is off before the task expires")
	}
	if n := run(t, ctx, "the expired sentence", chromedp.Evaluate[int](`document.querySelectorAll("#expired").length`)); n != 0 {
		t.Fatal("the card says expired before its time")
	}

	// The page's clock is moved to a second past expires_at (test code
	// injected from here): at the next tick the card is read-only.
	shift := `(() => {
  const real = Date.now.bind(Date);
  const shift = Date.parse("` + expiresAt.UTC().Format(time.RFC3339) + `") + 1000 - real();
  Date.now = () => real() + shift;
  return true;
})()`
	do(t, ctx, "move the page's clock", chromedp.Evaluate[chromedp.Void](shift))
	waitJS(t, ctx, "the card expires", `document.getElementById("expired") !== null`)
	if got := run(t, ctx, "the expired sentence", chromedp.TextContent(chromedp.ID("expired"))); !strings.Contains(got, "expired") {
		t.Fatalf("the expired sentence %q", got)
	}
	if got := run(t, ctx, "the countdown", chromedp.TextContent(chromedp.ID("countdown"))); !strings.Contains(got, "expired") {
		t.Fatalf("the countdown at zero %q", got)
	}
	off := run(t, ctx, "the card's buttons", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#card-actions button")].filter((b) => !b.disabled).map((b) => b.textContent)`))
	if len(off) != 0 {
		t.Fatalf("buttons still on after expiry: %q", off)
	}
	if n := run(t, ctx, "the boxes", chromedp.Evaluate[int](`[...document.querySelectorAll("#card textarea")].filter((t) => !t.readOnly).length`)); n != 0 {
		t.Fatalf("%d boxes still writable after expiry", n)
	}
	if !approveDisabled(t, ctx) {
		t.Fatal("Approve is on after expiry")
	}
	screen(t, ctx, "inbox-card-expired")

	// The service refuses too once its clock passes expires_at.
	w.Clock.Add(expiresAt.Sub(w.Clock.Now()) + time.Second)
	_, err := w.Owner.Client.Reject(context.Background(), id, nil)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 409 || e.Reason != "task_expired" {
		t.Fatalf("a rejection after expiry: %v", err)
	}

	signOut(t, ctx)
}
