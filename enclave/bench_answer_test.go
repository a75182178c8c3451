package enclave_test

import (
	"sort"
	"testing"
	"time"

	"countersign/servicetest"
	"countersign/store/storetest"
)

// BenchmarkApproveToDone measures, on PostgreSQL with the job queue running,
// how long an approval takes to be carried out (approve → done, through the
// queue) and how many approvals a second the service carries out, one at a
// time and ten at once. It reports the median latency and approvals per
// second.
func BenchmarkApproveToDone(b *testing.B) {
	b.Run("one", func(b *testing.B) { benchApprovals(b, 1) })
	b.Run("ten", func(b *testing.B) { benchApprovals(b, 10) })
}

func benchApprovals(b *testing.B, batch int) {
	db := storetest.Postgres(b)
	w := servicetest.New(b, db)
	w.StartJobs()
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	done := 0
	for done < b.N {
		n := min(batch, b.N-done)
		var ids []string
		for i := 0; i < n; i++ {
			ids = append(ids, w.Pay())
		}
		approved := make([]time.Time, n)
		for i, id := range ids {
			w.Approve(id, nil)
			approved[i] = time.Now()
		}
		for i, id := range ids {
			waitDone(w, []string{id})
			lat = append(lat, time.Since(approved[i]))
		}
		done += n
	}
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median-approve-to-done")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "approvals/s")
}
