package httpapi

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"countersign/store"
)

// gauges reads what the service holds at each scrape of /metrics: its tasks
// by state and the jobs waiting in the queue by kind. A store that does not
// answer within two seconds gives no sample (and the scrape says so in
// countersign_store_up). Of the store's aggregates it reads Metrics alone.
type gauges struct {
	store  store.Port[store.Metrics]
	tasks  *prometheus.Desc
	queued *prometheus.Desc
	up     *prometheus.Desc
}

func newGauges(s store.Store) *gauges {
	return &gauges{store: store.Narrow(s, func(tx store.Tx) store.Metrics { return tx }),
		tasks:  prometheus.NewDesc("countersign_tasks", "Tasks held now, by state.", []string{"state"}, nil),
		queued: prometheus.NewDesc("countersign_queued_jobs", "Jobs waiting in the queue (to run now, scheduled, or to retry), by kind: answer_run, webhook_delivery, push_delivery.", []string{"kind"}, nil),
		up:     prometheus.NewDesc("countersign_store_up", "1 when the store answered the scrape's count, 0 when it did not.", nil, nil),
	}
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.tasks; ch <- g.queued; ch <- g.up }

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var got store.Gauges
	err := g.store.Tx(ctx, func(tx store.Metrics) (err error) { got, err = tx.Gauges(ctx); return err })
	if err != nil {
		ch <- prometheus.MustNewConstMetric(g.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(g.up, prometheus.GaugeValue, 1)
	for st, n := range got.Tasks {
		ch <- prometheus.MustNewConstMetric(g.tasks, prometheus.GaugeValue, float64(n), string(st))
	}
	// The queue's two kinds always have a sample, 0 when none waits.
	queued := map[string]int{store.AnswerJob{}.Kind(): 0, store.DeliveryJob{}.Kind(): 0}
	for kind, n := range got.Queued {
		queued[kind] = n
	}
	for kind, n := range queued {
		ch <- prometheus.MustNewConstMetric(g.queued, prometheus.GaugeValue, float64(n), kind)
	}
}

// groupingCounters count the store's grouped transactions (store.Grouped),
// when it groups them: the commits they shared, the transactions those
// kept, those tried again alone because their group kept nothing, and how
// busy the lanes that group them were.
func groupingCounters(s store.Store) []prometheus.Collector {
	g, ok := s.(interface{ Grouping() store.Grouping })
	if !ok {
		return nil
	}
	counter := func(name, help string, pick func(store.Grouping) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			return pick(g.Grouping())
		})
	}
	return []prometheus.Collector{
		counter("countersign_store_group_commits_total", "Commits of grouped transactions: different owners' actions sharing one transaction.",
			func(g store.Grouping) float64 { return float64(g.Commits) }),
		counter("countersign_store_grouped_kept_total", "Grouped transactions kept by those commits.",
			func(g store.Grouping) float64 { return float64(g.Kept) }),
		counter("countersign_store_grouped_alone_total", "Grouped transactions run alone instead: their group kept nothing, or their lane's member running had run longer than 50 ms.",
			func(g store.Grouping) float64 { return float64(g.Alone) }),
		counter("countersign_store_group_busy_seconds_total", "Time the lanes spent on groups, summed over the lanes: its rate divided by countersign_store_group_lanes is the share of the time they were busy.",
			func(g store.Grouping) float64 { return g.Busy.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "countersign_store_group_lanes", Help: "Lanes grouping transactions: each runs one group at a time on one connection."},
			func() float64 { return float64(g.Grouping().Lanes) }),
	}
}
