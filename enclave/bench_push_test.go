package enclave_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"countersign/servicetest"
	"countersign/store/storetest"
	"countersign/webpush/webpushtest"
)

// BenchmarkCallToPush measures, on PostgreSQL with the job queue running,
// the time from an agent's call that opens a task to its push reaching a
// fake push service on loopback (through the outbox and the job queue,
// encrypted, signed and sent), one task at a time. It reports the median
// and the slowest.
//
//	go test ./enclave -run '^$' -bench CallToPush -benchtime 50x
func BenchmarkCallToPush(b *testing.B) {
	w := servicetest.New(b, storetest.Postgres(b))
	fake := webpushtest.New(b)
	key, err := w.Owner.Client.PushKey(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s := fake.Subscribe(key)
	if _, err := w.Owner.Client.PutPush(ctx, pushSub(s)); err != nil {
		b.Fatal(err)
	}
	w.StartJobs()
	var lat []time.Duration
	for b.Loop() {
		n := len(fake.Pushes())
		start := time.Now()
		id := w.Pay()
		got := fake.Wait(n+1, 30*time.Second)
		if len(got) != n+1 {
			b.Fatal("no push")
		}
		lat = append(lat, got[n].At.Sub(start))
		b.StopTimer()
		if _, err := w.Owner.Client.Cancel(context.Background(), id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median-call-to-push")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-slowest")
	b.ReportMetric(0, "ns/op")
}
