package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// /metrics tells an operator what the service holds and does: tasks by
// state, jobs waiting, answer runs by connector, the store answering.
func TestMetricsSeries(t *testing.T) {
	t.Parallel()
	began := time.Now()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	done := w.Pay()
	w.Approve(done, nil)
	w.WaitState(done, countersign.StateDone)
	w.Pay() // one left open
	metrics := httptest.NewServer(w.API.Metrics())
	defer metrics.Close()
	resp, err := http.Get(metrics.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(b)
	for _, want := range []string{
		`countersign_tasks{state="done"} 1`,
		`countersign_tasks{state="open"} 1`,
		`countersign_answer_run_seconds_count{connector="ledger"} 1`,
		"countersign_store_up 1",
		`countersign_queued_jobs{kind="answer_run"} 0`,
		`countersign_queued_jobs{kind="webhook_delivery"} 0`,
		`countersign_webhook_attempts_total{outcome="delivered"} 0`,
		"countersign_store_grouped_alone_total 0",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The approval and its answer run were grouped transactions, each
	// committed (alone: nothing else waited).
	// The lanes were busy while they ran them: some time, far less than
	// the test's.
	for _, c := range []struct {
		series      string
		least, most float64
	}{
		{"countersign_store_group_lanes", 1, 1e9}, // half the pool's connections
		{"countersign_store_group_commits_total", 2, 1e9},
		{"countersign_store_grouped_kept_total", 2, 1e9},
		{"countersign_store_group_busy_seconds_total", 1e-6, time.Since(began).Seconds()},
	} {
		_, rest, ok := strings.Cut(m, "\n"+c.series+" ")
		n, err := strconv.ParseFloat(strings.SplitN(rest, "\n", 2)[0], 64)
		if !ok || err != nil || n < c.least || n > c.most {
			t.Errorf("/metrics: %s %q, want from %g to %g", c.series, strings.SplitN(rest, "\n", 2)[0], c.least, c.most)
		}
	}
	for _, secret := range []string{w.Owner.Account, w.Agent, done} {
		if strings.Contains(m, secret) {
			t.Errorf("/metrics names %s", secret)
		}
	}
}
