package web_test

// The page's speed, measured in Chromium against the service on PostgreSQL
// on loopback, and its size (reported, never asserted; docs/benchmarks.md):
//
//   - the bundle's size, gzipped;
//   - from navigation to 20 waiting tasks listed, each opened on the device
//     (its device copy unwrapped, its content opened and hashed), timed by
//     the page's own clock from the navigation's start;
//   - from the Approve click on a guessing-game turn to the task shown as
//     done in the history, the injected test wallet signing at once;
//   - ten payments approved through the page: from the Approve selected
//     click (all ten selected) to all ten shown done (the banner above the
//     list that tells each approved task's end),
//     beside ten single approvals, from the first card's Approve click,
//     each next card opened from the list and approved, to all ten done.
//
//	go test ./web -run '^$' -bench 'BundleSize|List20|ApproveToDone' -benchtime 20x
//	go test ./web -run '^$' -bench ApproveTen -benchtime 5x

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
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

// approveTenBatch selects the ten tasks (ids) in the list, clicks Approve
// selected, and resolves with [ms until the approval was accepted, ms
// until all ten are shown done (each one's banner above the list, drawn
// from the history, says it was carried out)].
const approveTenBatch = `(async (ids) => {
  const until = async (f) => { while (!f()) await new Promise((r) => setTimeout(r, 2)); };
  const done = (id) => document.querySelector('#outcomes .outcome[data-outcome="' + id + '"]')?.dataset.state === "done";
  const told = (id) => !!document.querySelector('#outcomes .outcome[data-outcome="' + id + '"]');
  window.benchStage = "selecting";
  for (const id of ids) {
    const box = document.querySelector('input.task-pick[data-task="' + id + '"]');
    if (!box.checked) box.click();
  }
  const b = document.getElementById("batch-approve");
  await until(() => !b.disabled && b.textContent === "Approve 10 selected");
  const t0 = performance.now();
  b.click();
  window.benchStage = "batch sent";
  await until(() => ids.every(told));
  const accepted = performance.now() - t0;
  window.benchStage = "batch accepted";
  await until(() => ids.every(done));
  return [accepted, performance.now() - t0];
})(%s)`

// approveTenSingly approves the ten tasks (ids) one by one: the first
// card is open; from its Approve click, each next card is opened from the
// list, its receipt checked, and approved. It resolves with [ms until the
// tenth approval was accepted, ms until all ten are shown done].
const approveTenSingly = `(async (ids) => {
  const until = async (f) => { while (!f()) await new Promise((r) => setTimeout(r, 2)); };
  const done = (id) => document.querySelector('#outcomes .outcome[data-outcome="' + id + '"]')?.dataset.state === "done";
  const approve = () => [...document.querySelectorAll("#card-actions button")].find((b) => /^Approve(: |$)/.test(b.textContent.trim()));
  const told = (id) => !!document.querySelector('#outcomes .outcome[data-outcome="' + id + '"]');
  const ready = (id) => !document.getElementById("card").hidden && document.getElementById("card-task-id")?.textContent === id && approve() && !approve().disabled;
  await until(() => ready(ids[0]));
  const t0 = performance.now();
  for (const [i, id] of ids.entries()) {
    window.benchStage = "single " + i;
    if (i > 0) {
      await until(() => !document.getElementById("list").hidden && document.querySelector('button.task-open[data-task="' + id + '"]'));
      document.querySelector('button.task-open[data-task="' + id + '"]').click();
      await until(() => ready(id));
    }
    approve().click();
    await until(() => document.getElementById("card").hidden && told(id));
  }
  const accepted = performance.now() - t0;
  window.benchStage = "singles accepted";
  await until(() => ids.every(done));
  return [accepted, performance.now() - t0];
})(%s)`

// BenchmarkInboxPageApproveTen: ten ledger payments approved through the
// page with one Approve selected (one signature), beside the same ten
// approved one card at a time (ten signatures); each iteration does both,
// in alternating order, on fresh tasks.
func BenchmarkInboxPageApproveTen(b *testing.B) {
	w := servicetest.New(b, storetest.Postgres(b))
	followClock(b, w)
	w.StartJobs()
	ctx := blankTab(b, 10*time.Minute)
	injectWallet(b, ctx, w)
	signInWithWallet(b, ctx, w)
	ten := func() []string {
		var ids []string
		for i := range 10 {
			ids = append(ids, payTask(b, w, "ledger", i+1, fmt.Sprintf("Pay Acme Corp %d", i+1), fmt.Sprintf("pay $%d.00 to Acme Corp by ACH", i+1)))
		}
		for _, id := range ids {
			do(b, ctx, "task "+id+" listed", chromedp.WaitVisible(chromedp.CSS(`input.task-pick[data-task="`+id+`"]`)))
		}
		return ids
	}
	timed := func(script string, ids []string) (accepted, done float64) {
		arg, _ := json.Marshal(ids)
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		got, err := chromedp.Run(actx, chromedp.Evaluate[[]float64](strings.Replace(script, "%s", string(arg), 1), chromedp.EvalAwaitPromise))
		if err != nil || len(got) != 2 {
			stage, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.benchStage + " | " + document.getElementById("status").textContent + " | " + JSON.stringify(`+string(arg)+`.map((id) => document.querySelector('#outcomes .outcome[data-outcome="' + id + '"]')?.dataset.state ?? "absent"))`))
			b.Fatalf("%v %v at %s", got, err, stage)
		}
		return got[0], got[1]
	}
	var batch, single, batchAccepted, singleAccepted []float64
	n := 0
	for b.Loop() {
		for _, singly := range []bool{n%2 == 1, n%2 == 0} {
			b.StopTimer()
			ids := ten()
			if singly {
				openCard(b, ctx, ids[0])
			}
			b.StartTimer()
			if singly {
				a, d := timed(approveTenSingly, ids)
				single, singleAccepted = append(single, d), append(singleAccepted, a)
			} else {
				a, d := timed(approveTenBatch, ids)
				batch, batchAccepted = append(batch, d), append(batchAccepted, a)
			}
		}
		n++
	}
	mean := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t / float64(len(xs))
	}
	b.ReportMetric(mean(batch), "ms-batch-to-done")
	b.ReportMetric(mean(batchAccepted), "ms-batch-accepted")
	b.ReportMetric(mean(single), "ms-10-singles-to-done")
	b.ReportMetric(mean(singleAccepted), "ms-10-singles-accepted")
	b.ReportMetric(mean(single)/mean(batch), "x-singles-over-batch")
	b.Logf("batch to done %.0f–%.0f ms, ten singles to done %.0f–%.0f ms over %d rounds", slices.Min(batch), slices.Max(batch), slices.Min(single), slices.Max(single), len(batch))
	b.ReportMetric(0, "ns/op")
}
