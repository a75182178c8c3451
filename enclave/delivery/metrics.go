package delivery

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what delivery counts for /metrics: how webhook and push
// attempts end. Labels carry outcomes only: never an owner, an agent or
// anything a task shows.
type metrics struct {
	webhookAttempts *prometheus.CounterVec
	pushAttempts    *prometheus.CounterVec
}

func newMetrics() metrics {
	m := metrics{
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

// Collectors are delivery's metrics, to register where /metrics is served.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.metrics.webhookAttempts, s.metrics.pushAttempts}
}
