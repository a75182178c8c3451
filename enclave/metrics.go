package enclave

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what the enclave counts for /metrics: how long answer runs
// take, and how webhook attempts end. Labels carry connector names and
// outcomes only: never an owner, an agent or anything a task shows.
type metrics struct {
	answerRuns      *prometheus.HistogramVec
	webhookAttempts *prometheus.CounterVec
}

func newMetrics() metrics {
	m := metrics{
		answerRuns: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "countersign_answer_run_seconds",
			Help:    "Answer runs, from their claim to their recorded end, by connector.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"connector"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "countersign_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome: delivered (2xx), refused (another status), unreachable (no answer), unusable (the webhook's URL or secret no longer serves).",
		}, []string{"outcome"}),
	}
	// Every outcome has a series from the start, so a rate over it works
	// before the first attempt of its kind.
	for _, o := range []string{"delivered", "refused", "unreachable", "unusable"} {
		m.webhookAttempts.WithLabelValues(o)
	}
	return m
}

// Collectors are the enclave's metrics, to register where /metrics is served.
func (e *Enclave) Collectors() []prometheus.Collector {
	return []prometheus.Collector{e.metrics.answerRuns, e.metrics.webhookAttempts}
}

func (e *Enclave) observeAnswer(connector string, since time.Time) {
	e.metrics.answerRuns.WithLabelValues(connector).Observe(time.Since(since).Seconds())
}
