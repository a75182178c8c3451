package webhook

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func fixed(r float64) func() float64 { return func() float64 { return r } }

func failed(status int) Attempt {
	return Attempt{StatusCode: status, Error: "the receiver answered HTTP 500"}
}

func TestNextAttemptSchedule(t *testing.T) {
	t.Parallel()
	// The delay before attempt n+1 for r = 0, 0.5 and 0.99: factors 0.8,
	// 1.0 and 1.196.
	tests := []struct {
		after          int
		low, mid, high time.Duration
	}{
		{1, 4 * time.Second, 5 * time.Second, 5980 * time.Millisecond},
		{2, 4 * time.Minute, 5 * time.Minute, 358800 * time.Millisecond},
		{3, 24 * time.Minute, 30 * time.Minute, 2152800 * time.Millisecond},
		{4, 96 * time.Minute, 2 * time.Hour, 8611200 * time.Millisecond},
		{5, 4 * time.Hour, 5 * time.Hour, 21528 * time.Second},
		{6, 8 * time.Hour, 10 * time.Hour, 43056 * time.Second},
		{7, 8 * time.Hour, 10 * time.Hour, 43056 * time.Second},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			r    float64
			want time.Duration
		}{{0, tt.low}, {0.5, tt.mid}, {0.99, tt.high}} {
			d, retry := NextAttempt(tt.after, failed(500), fixed(c.r))
			if !retry || d != c.want {
				t.Errorf("NextAttempt(%d, 500, r=%v) = %v, %v; want %v, true", tt.after, c.r, d, retry, c.want)
			}
		}
	}
	// Eight attempts in all.
	if d, retry := NextAttempt(8, failed(500), fixed(0.5)); retry || d != 0 {
		t.Errorf("NextAttempt(8) = %v, %v; want no ninth attempt", d, retry)
	}
}

func TestNextAttemptJitterBounds(t *testing.T) {
	t.Parallel()
	for after := 1; after < MaxAttempts; after++ {
		base := schedule[after]
		lo := time.Duration(float64(base) * 0.8)
		hi := time.Duration(float64(base) * 1.2)
		for range 2000 {
			d, retry := NextAttempt(after, failed(503), nil)
			if !retry || d < lo || d > hi {
				t.Fatalf("NextAttempt(%d) = %v, %v; want within [%v, %v]", after, d, retry, lo, hi)
			}
		}
	}
}

func TestNextAttemptStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		attempt int
		last    Attempt
	}{
		{"delivered 200", 1, Attempt{StatusCode: 200}},
		{"delivered 204", 3, Attempt{StatusCode: 204}},
		{"410 Gone", 1, Attempt{StatusCode: http.StatusGone, Error: "gone", RetryAfter: time.Minute}},
		{"final refusal", 1, Attempt{Error: "the webhook URL must use https", Final: true}},
		{"eighth attempt", 8, failed(500)},
		{"beyond the schedule", 12, failed(500)},
		{"attempt 0", 0, failed(500)},
		{"negative attempt", -1, failed(500)},
	}
	for _, tt := range tests {
		if d, retry := NextAttempt(tt.attempt, tt.last, fixed(0.5)); retry || d != 0 {
			t.Errorf("%s: NextAttempt = %v, %v; want no retry", tt.name, d, retry)
		}
	}
}

func TestNextAttemptRetries(t *testing.T) {
	t.Parallel()
	for _, last := range []Attempt{
		failed(500), failed(400), failed(401), failed(404), failed(429), failed(301),
		{Error: "the receiver refused the connection"},
		{Error: "the webhook host resolves to an address that is not public"},
		{StatusCode: 200, Error: "inconsistent"}, // an error means not delivered
	} {
		if d, retry := NextAttempt(1, last, fixed(0.5)); !retry || d != 5*time.Second {
			t.Errorf("NextAttempt(1, %+v) = %v, %v; want 5s, true", last, d, retry)
		}
	}
}

func TestNextAttemptRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		after      int
		retryAfter time.Duration
		r          float64
		want       time.Duration
	}{
		{"longer than the step", 1, 2 * time.Minute, 0.5, 2 * time.Minute},
		{"shorter than the step is ignored", 4, time.Minute, 0.5, 2 * time.Hour},
		{"zero is ignored", 3, 0, 0.5, 30 * time.Minute},
		{"between jitter bounds lengthens", 1, 5500 * time.Millisecond, 0, 5500 * time.Millisecond},
		{"below jittered delay ignored", 1, 5500 * time.Millisecond, 1, 6 * time.Second},
		{"capped at 10 h", 1, 48 * time.Hour, 0.5, 10 * time.Hour},
		{"exactly 10 h", 2, 10 * time.Hour, 0.5, 10 * time.Hour},
		{"cap below a long step keeps the step", 6, 48 * time.Hour, 1, 12 * time.Hour},
	}
	for _, tt := range tests {
		last := failed(503)
		last.RetryAfter = tt.retryAfter
		d, retry := NextAttempt(tt.after, last, fixed(tt.r))
		if !retry || d != tt.want {
			t.Errorf("%s: NextAttempt = %v, %v; want %v", tt.name, d, retry, tt.want)
		}
	}
}

func TestNextAttemptClampsRandomness(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    float64
		want time.Duration
	}{
		{-3, 4 * time.Second}, {math.NaN(), 4 * time.Second}, {math.Inf(-1), 4 * time.Second},
		{1, 6 * time.Second}, {7, 6 * time.Second}, {math.Inf(1), 6 * time.Second},
	} {
		if d, _ := NextAttempt(1, failed(500), fixed(c.r)); d != c.want {
			t.Errorf("r=%v: delay %v, want %v", c.r, d, c.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{" 30 ", 30 * time.Second, true},
		{"007", 7 * time.Second, true},
		{"99999999999999999999999", maxRetryAfterSeconds * time.Second, true},
		{"Sun, 29 Nov 2026 14:00:00 GMT", 2 * time.Hour, true},    // IMF-fixdate
		{"Sunday, 29-Nov-26 12:05:00 GMT", 5 * time.Minute, true}, // RFC 850
		{"Sun Nov 29 12:00:30 2026", 30 * time.Second, true},      // asctime
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true},                // in the past
		{"", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{"2026-11-29T14:00:00Z", 0, false},
	}
	for _, tt := range tests {
		d, ok := parseRetryAfter(tt.in, now)
		if d != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, d, ok, tt.want, tt.ok)
		}
	}
}
