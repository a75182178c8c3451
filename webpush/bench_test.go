package webpush

import (
	"context"
	"crypto/ecdh"
	"net/url"
	"testing"
	"time"

	"countersign/webpush/webpushtest"
)

// The sender's cost and rate, reported in docs/benchmarks.md:
//
//	go test ./webpush -run '^$' -bench . -benchtime 2000x

func BenchmarkEncrypt(b *testing.B) {
	ua, _ := ecdh.P256().NewPublicKey(mustB64(vectorUAPublic))
	auth := mustB64(vectorAuth)
	for b.Loop() {
		if _, err := Encrypt([]byte{1}, ua, auth); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthorization(b *testing.B) {
	k, _ := GenerateKey()
	u, _ := url.Parse("https://fcm.googleapis.com/fcm/send/x")
	now := time.Now()
	for b.Loop() {
		if _, err := k.Authorization(u, "mailto:ops@example.com", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendLoopback sends pushes to the fake push service on loopback
// (which decrypts each and checks its JWT), one at a time and from 16
// senders at once, and reports pushes a second.
func BenchmarkSendLoopback(b *testing.B) {
	for _, c := range []struct {
		name string
		par  int
	}{{"serial", 1}, {"parallel16", 16}} {
		b.Run(c.name, func(b *testing.B) {
			fake := webpushtest.New(b)
			key, _ := GenerateKey()
			f := fake.Subscribe(key.PublicKey())
			var sub Subscription
			sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth = f.Endpoint, f.P256dh, f.Auth
			s := NewSender(true)
			m := Message{Payload: []byte{1}, TTL: time.Hour, Urgency: UrgencyHigh, Topic: "tasks-waiting"}
			b.SetParallelism(c.par)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if r := s.Send(context.Background(), sub, key, "mailto:ops@example.com", m); r.Outcome != Delivered {
						b.Error(r.Error)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pushes/s")
		})
	}
}

func mustB64(s string) []byte {
	b, err := decodeKey(s)
	if err != nil {
		panic(err)
	}
	return b
}
