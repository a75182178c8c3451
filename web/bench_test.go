package web_test

// The page's speed, measured in Chromium against the service on PostgreSQL
// on loopback, and its size (reported, never asserted; docs/benchmarks.md):
//
//   - the bundle's size, gzipped;
//   - from navigation to 20 waiting tasks listed, each opened on the device
//     (its device copy unwrapped, its content opened and hashed), timed by
//     the page's own clock from the navigation's start;
//   - from the Approve click on a guessing-game turn to the task shown as
//     done in the history, the injected test wallet signing at once.
//
//	go test ./web -run '^$' -bench . -benchtime 20x

import (
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"countersign/servicetest"
	"countersign/store/storetest"
	"countersign/web"
)

func BenchmarkBundleSize(b *testing.B) {
	name := strings.TrimPrefix(web.Script(), web.Prefix)
	raw, err := fs.ReadFile(os.DirFS("dist"), name)
	if err != nil {
		b.Fatal(err)
	}
	var gz bytes.Buffer
	for b.Loop() {
		gz.Reset()
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(raw)
		zw.Close()
	}
	b.ReportMetric(float64(len(raw)), "bytes")
	b.ReportMetric(float64(gz.Len()), "gzip-bytes")
}

// listedAt has each document note when it first lists n waiting tasks.
const listedAt = `new MutationObserver((_, obs) => {
  if (document.querySelectorAll("#tasks button.task-open").length >= 20) {
    window.listedAt = performance.now();
    obs.disconnect();
  }
}).observe(document, {subtree: true, childList: true});`

func BenchmarkInboxPageList20(b *testing.B) {
	w := servicetest.New(b, storetest.Postgres(b))
	ctx := blankTab(b, 10*time.Minute)
	injectWallet(b, ctx, w)
	signInWithWallet(b, ctx, w)
	// Ten from each of two agents: an agent has at most ten waiting.
	other := w.NewAgent("other.near", "ak_other-agent-key-0123456789abcdefghijklmn")
	for range 10 {
		w.Pay()
		if _, err := other.Call(context.Background(), w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: listedAt}); err != nil {
		b.Fatal(err)
	}
	var total float64
	for b.Loop() {
		do(b, ctx, "navigate", chromedp.Navigate(w.URL+"/"),
			chromedp.Poll[chromedp.Void](`window.listedAt !== undefined`, chromedp.WithPollingTimeout(30*time.Second)))
		total += run(b, ctx, "listed at", chromedp.Evaluate[float64](`window.listedAt`))
	}
	b.ReportMetric(total/float64(b.N), "ms-to-20-listed")
	b.ReportMetric(0, "ns/op")
}

// approveToDone clicks Approve on the open card and resolves with the
// milliseconds until the history shows the task done.
const approveToDone = `new Promise((resolve) => {
  const sel = '#history li[data-entry="%s"][data-state="done"]';
  const t0 = performance.now();
  const obs = new MutationObserver(() => {
    if (document.querySelector(sel)) {
      obs.disconnect();
      resolve(performance.now() - t0);
    }
  });
  obs.observe(document, {subtree: true, childList: true, attributes: true});
  [...document.querySelectorAll("#card-actions button")].find((b) => /^Approve(: |$)/.test(b.textContent.trim())).click();
})`

func BenchmarkInboxPageApproveToDone(b *testing.B) {
	w := servicetest.New(b, storetest.Postgres(b))
	w.StartJobs()
	ctx := blankTab(b, 10*time.Minute)
	injectWallet(b, ctx, w)
	signInWithWallet(b, ctx, w)
	var total float64
	for b.Loop() {
		b.StopTimer()
		id := w.Guess()
		openCard(b, ctx, id)
		do(b, ctx, "answer", chromedp.SetValue(chromedp.ID("answer"), "11"))
		b.StartTimer()
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ms, err := chromedp.Run(actx, chromedp.Evaluate[float64](strings.Replace(approveToDone, "%s", id, 1), chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		total += ms
		b.StopTimer()
		// The game's next turn is not played: an agent has at most ten waiting.
		if _, err := w.Owner.Client.CancelMatching(context.Background(), w.Agent, "probe"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	click := total / float64(b.N)
	floor := commitFloor(b, w)
	b.ReportMetric(click, "ms-click-to-done")
	b.ReportMetric(floor, "ms-commit-floor")
	b.ReportMetric(click/floor, "x-commit-floor")
	b.ReportMetric(0, "ns/op")
}

// commitFloor is the database's own floor in the same run: the mean
// milliseconds of a one-row INSERT committed on its own, over 50.
func commitFloor(b *testing.B, w *servicetest.World) float64 {
	b.Helper()
	ctx := context.Background()
	db := w.DB.Postgres()
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_commit_floor (n int)`); err != nil {
		b.Fatal(err)
	}
	const n = 50
	start := time.Now()
	for i := range n {
		if _, err := db.Exec(ctx, `INSERT INTO bench_commit_floor VALUES ($1)`, i); err != nil {
			b.Fatal(err)
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000 / n
}
