package webhook

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// MaxAttempts is how many times one event is sent at most.
const MaxAttempts = 8

// schedule[n-1] is the delay before attempt n, counted from the end of
// attempt n-1 (attempt 1 goes at once).
var schedule = [MaxAttempts]time.Duration{
	0,
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// Jitter is the spread of each scheduled delay: it is multiplied by a
// factor drawn uniformly from [1-Jitter, 1+Jitter).
const Jitter = 0.2

// MaxRetryAfter bounds how long a receiver's Retry-After may push the next
// attempt back: the schedule's longest gap.
const MaxRetryAfter = 10 * time.Hour

// NextAttempt decides, after attempt number attempt (1-based) ended as
// last, whether to send the event again and after how long.
//
// There is no next attempt when last was delivered (2xx), when the
// receiver answered 410 Gone (it says the endpoint is gone for good), when
// last is Final (refused before sending for a reason a retry cannot
// change), or when attempt was the MaxAttempts-th. Otherwise the delay is
// the schedule's delay before attempt+1 times a jitter factor between 0.8
// and 1.2, rounded to the millisecond. A Retry-After from the receiver
// lengthens it, never shortens it, and counts for at most MaxRetryAfter.
//
// rnd returns a number in [0, 1) that picks the jitter factor
// (0.8 + 0.4·rnd()); nil means math/rand/v2's Float64. Values outside
// [0, 1] are clamped.
func NextAttempt(attempt int, last Attempt, rnd func() float64) (time.Duration, bool) {
	if attempt < 1 || attempt >= MaxAttempts || last.Delivered() || last.Final ||
		last.StatusCode == http.StatusGone {
		return 0, false
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	r := rnd()
	if !(r >= 0) { // also catches NaN
		r = 0
	}
	r = min(r, 1)
	base := schedule[attempt]
	delay := time.Duration(float64(base) * (1 - Jitter + 2*Jitter*r)).Round(time.Millisecond)
	if ra := min(last.RetryAfter, MaxRetryAfter); ra > delay {
		delay = ra
	}
	return delay, true
}

// maxRetryAfterSeconds bounds the digits parseRetryAfter reads, far above
// MaxRetryAfter, so the product with time.Second cannot overflow.
const maxRetryAfterSeconds = 1 << 31

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number
// of seconds, or an HTTP date taken relative to now. A date in the past
// means zero. Anything else is ignored (ok false).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		var n int64
		for i := 0; i < len(v); i++ {
			n = n*10 + int64(v[i]-'0')
			if n > maxRetryAfterSeconds {
				return maxRetryAfterSeconds * time.Second, true
			}
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}
