package enclave

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what the enclave counts for /metrics: how long answer runs
// take, and how webhook and push attempts end. Labels carry connector names and
// outcomes only: never an owner, an agent or anything a task shows.
type metrics struct {
	answerRuns      *prometheus.HistogramVec
	webhookAttempts *prometheus.CounterVec
	pushAttempts    *prometheus.CounterVec
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
		pushAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "countersign_push_attempts_total",
			Help: "Web Push attempts by outcome: delivered (2xx), retry (no answer, 408, 413, 429, 5xx), gone (the push service ended the subscription, which is deleted), unsendable (refused before sending).",
		}, []string{"outcome"}),
	}
	// Every outcome has a series from the start, so a rate over it works
	// before the first attempt of its kind.
	for _, o := range []string{"delivered", "refused", "unreachable", "unusable"} {
		m.webhookAttempts.WithLabelValues(o)
	}
	for _, o := range []string{"delivered", "retry", "gone", "unsendable"} {
		m.pushAttempts.WithLabelValues(o)
	}
	return m
}

// Collectors are the enclave's metrics, to register where /metrics is served.
func (e *Enclave) Collectors() []prometheus.Collector {
	return []prometheus.Collector{e.metrics.answerRuns, e.metrics.webhookAttempts, e.metrics.pushAttempts}
}

func (e *Enclave) observeAnswer(connector string, since time.Time) {
	e.metrics.answerRuns.WithLabelValues(connector).Observe(time.Since(since).Seconds())
}
