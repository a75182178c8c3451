package web_test

// A task's file on the card in a real Chromium against the whole service
// (servicetest on PostgreSQL): handed over as a download only after its size
// and SHA-256 match the envelope; a tampered file is refused.

import (
	"bytes"
	"context"
	"countersign"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/client"
	"countersign/connectors"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// payWithInvoice opens a ledger pay task with invoice attached as invoice.txt.
func payWithInvoice(t testing.TB, w *servicetest.World, invoice string) string {
	t.Helper()
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1, "invoice": invoice}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("the pay call answered %s (%v)", raw, err)
	}
	return a.TaskID
}

// watchDownloads records, in the page, each Blob handed to
// URL.createObjectURL and each download link clicked (test code injected
// from here; none of it is in the bundle).
const watchDownloads = `(() => {
  window.seen = { blobs: [], names: [] };
  const create = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (b) => { window.seen.blobs.push(b); return create(b); };
  HTMLAnchorElement.prototype.click = function () { window.seen.names.push(this.download); };
  return true;
})()`

type downloaded struct {
	Count int    `json:"count"`
	Type  string `json:"type"`
	Name  string `json:"name"`
	Text  string `json:"text"`
}

const readDownload = `(async () => {
  const s = window.seen;
  if (!s.blobs.length) return { count: 0, type: "", name: "", text: "" };
  const b = s.blobs[s.blobs.length - 1];
  return { count: s.blobs.length, type: b.type, name: s.names[s.names.length - 1] ?? "", text: await b.text() };
})()`

func TestInboxPageFileDownload(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	invoice := "Invoice 7\nOne widget, $1.\n"
	good := payWithInvoice(t, w, invoice)
	bad := payWithInvoice(t, w, invoice)

	// One task's file blob is changed in the database: it no longer opens.
	ctxb := context.Background()
	tag, err := w.DB.Postgres().Exec(ctxb, `UPDATE task_files SET blob = set_byte(blob, 20, get_byte(blob, 20) # 1) WHERE task_id = $1 AND n = 0`, bad)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("tamper with the file: %v (%d rows)", err, tag.RowsAffected())
	}

	ctx := blankTab(t, 120*time.Second)
	signInPage(t, ctx, w)

	openCard(t, ctx, good)
	files := run(t, ctx, "the files", chromedp.TextContent(chromedp.ID("files")))
	if !strings.Contains(files, "invoice.txt") || !strings.Contains(files, "text/plain") {
		t.Fatalf("the card's files: %q", files)
	}
	if got := run(t, ctx, "the button's name", chromedp.Evaluate[string](`document.querySelector('#files button[data-file="0"]').getAttribute("aria-label")`)); got != "Download invoice.txt" {
		t.Fatalf("the download button is named %q", got)
	}
	// Nothing of the file is drawn before or after.
	if n := run(t, ctx, "drawn", chromedp.Evaluate[int](`document.querySelectorAll("#card img, #card iframe, #card object, #card embed").length`)); n != 0 {
		t.Fatalf("the card draws %d elements for files", n)
	}
	do(t, ctx, "watch downloads", chromedp.Evaluate[chromedp.Void](watchDownloads))
	do(t, ctx, "download", chromedp.Click(chromedp.CSS(`#files button[data-file="0"]`)))
	waitJS(t, ctx, "downloaded", `document.getElementById("status").textContent.startsWith("Downloaded")`)
	got := run(t, ctx, "the download", chromedp.Evaluate[downloaded](readDownload, chromedp.EvalAwaitPromise))
	if got.Count != 1 || got.Type != "application/octet-stream" || got.Name != "invoice.txt" || got.Text != invoice {
		t.Fatalf("the download: %+v", got)
	}
	do(t, ctx, "show the RAW request", chromedp.Click(chromedp.CSS("#raw-request summary")), chromedp.ScrollIntoView(chromedp.ID("files")))
	screen(t, ctx, "inbox-card-file")
	do(t, ctx, "back", chromedp.Click(named("Back to the list")))

	// The tampered file: refused with a sentence, nothing handed over.
	openCard(t, ctx, bad)
	do(t, ctx, "download the tampered file", chromedp.Click(chromedp.CSS(`#files button[data-file="0"]`)))
	waitJS(t, ctx, "refused", `document.getElementById("status").textContent.includes("refused")`)
	if got := run(t, ctx, "after the refusal", chromedp.Evaluate[downloaded](readDownload, chromedp.EvalAwaitPromise)); got.Count != 1 {
		t.Fatalf("a tampered file was handed over: %+v", got)
	}
	if msg := run(t, ctx, "the refusal", chromedp.TextContent(chromedp.ID("status"))); !strings.Contains(msg, "invoice.txt") {
		t.Fatalf("the refusal %q", msg)
	}

	signOut(t, ctx)
}

// An input task that asks for a file: the owner picks one, the page seals
// its bytes to the reply key, and the connector's answer receives exactly
// them; a file too large for an answer is refused in the page, and the
// task still waits.
func TestInboxPageFileAnswer(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	got := make(chan []byte, 1)
	w.SetAnswer(func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		got <- a.Supplied
		return connectors.Report{Result: map[string]any{"ok": true}}, nil
	})
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "ledger", "collect", map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("collect answered %s: %v", raw, err)
	}
	dir := t.TempDir()
	small, big := filepath.Join(dir, "receipt.txt"), filepath.Join(dir, "big.bin")
	content := []byte("Receipt 7\nOne widget, $1.\n\x00\xff binary too")
	if err := os.WriteFile(small, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 9000), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx := blankTab(t, 90*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	openCard(t, ctx, a.TaskID)
	do(t, ctx, "a file too large", chromedp.SetUploadFiles(chromedp.ID("answer-file"), []string{big}), chromedp.Click(approveButton()))
	waitJS(t, ctx, "the refusal", `document.getElementById("status").textContent.includes("an answer holds at most")`)
	if st := w.Task(a.TaskID); st.State != countersign.StateOpen {
		t.Fatalf("after a refused file the task is %s", st.State)
	}
	if n := len(walletSigned(t, ctx)); n != 1 {
		t.Fatalf("the wallet was asked %d times, want only the sign-in", n)
	}
	do(t, ctx, "the file", chromedp.SetUploadFiles(chromedp.ID("answer-file"), []string{small}), chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	select {
	case b := <-got:
		if !bytes.Equal(b, content) {
			t.Fatalf("the connector received %q, want %q", b, content)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the answer never ran")
	}
	if st := w.WaitState(a.TaskID, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the task is %s", st.State)
	}
}
