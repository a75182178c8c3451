package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"countersign/client"
)

// BenchmarkTaskOpensHTTP measures probe tasks opened over HTTP against
// PostgreSQL by parallel agents (each open is followed by its cancel, so the
// per-preparer limit never stops the run). It reports opens per second.
func BenchmarkTaskOpensHTTP(b *testing.B) {
	s := newService(b)
	s.env["COUNTERSIGN_AGENT_CALLS_PER_MINUTE"] = "1000000"
	s.start()
	const agents = 8
	var clients []*client.Client
	var names []string
	for i := 0; i < agents; i++ {
		name := "bot" + string(rune('a'+i)) + ".near"
		names = append(names, name)
		clients = append(clients, s.agent(name, 1<<50))
	}
	s.project("alice.near", "probe", "{}", names...)
	ctx := context.Background()
	next := make(chan *client.Client, agents)
	for _, c := range clients {
		next <- c
	}
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		c := <-next
		for pb.Next() {
			raw, err := c.Call(ctx, "alice.near", "probe", "guess_start", nil, nil)
			if err != nil {
				b.Error(err)
				return
			}
			var a client.Awaiting
			_ = json.Unmarshal(raw, &a)
			if _, err := c.Call(ctx, "alice.near", "probe", "task_cancel", map[string]any{"task_id": a.TaskID}, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "opens/s")
}
