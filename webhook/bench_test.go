package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func BenchmarkValidateURL(b *testing.B) {
	for _, c := range []struct{ name, raw string }{
		{"name", "https://hooks.example.com/countersign/alice?token=abc"},
		{"ipv6", "https://[2606:4700:4700::1111]:8443/hook"},
		{"refused-hex", "https://0x7f.1/"},
	} {
		raw := c.raw
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = ValidateURL(raw, false)
			}
		})
	}
}

func BenchmarkSign(b *testing.B) {
	key := make([]byte, KeySize)
	ev := approvedEvent()
	now := time.Now()
	for b.Loop() {
		if _, _, err := Sign(key, ev, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeliverLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	u, err := ValidateURL(srv.URL+"/hook", true)
	if err != nil {
		b.Fatal(err)
	}
	s := NewSender(true)
	key := make([]byte, KeySize)
	ev := approvedEvent()
	for b.Loop() {
		if a := s.Deliver(context.Background(), u, key, ev, 1); !a.Delivered() {
			b.Fatal(a.Error)
		}
	}
}

func BenchmarkNextAttempt(b *testing.B) {
	last := Attempt{StatusCode: 503, Error: "x", RetryAfter: time.Minute}
	for b.Loop() {
		_, _ = NextAttempt(3, last, nil)
	}
}
