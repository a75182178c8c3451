package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"countersign"
	"countersign/inbox"
)

// Limits bound how often one client may try the costly or state-changing
// requests. Zero values take the defaults.
type Limits struct {
	// SignInPerMinute is per client address (each sign-in may ask the
	// chain); default 10, with as many at once.
	SignInPerMinute int
	// OwnerWritesPerMinute is per owner, for every request that changes
	// something; default 120, 60 at once.
	OwnerWritesPerMinute int
	// AgentCallsPerMinute is per agent key; default 600, 120 at once.
	AgentCallsPerMinute int
}

// limiter is a token bucket per key, forgotten after ten idle minutes.
type limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(perMinute, burst int) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, buckets: map[string]*bucket{}}
}

// allow takes a token for key, or says how long until one is free.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func rateLimited(wait time.Duration) error {
	return &countersign.Error{Code: countersign.RateLimited, Message: "too many requests; try again shortly", RetryAfter: wait}
}

// clientAddr is the address the request came from. A proxy in front of the
// service makes every client one address: set the limits with that in mind.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limitSignIns bounds sign-ins per client address.
func (s *Server) limitSignIns(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := s.signIns.allow(clientAddr(r)); !ok {
			writeOwnerError(w, s.opts.Logger, rateLimited(wait))
			return
		}
		next(w, r)
	}
}

// limitWrites bounds an owner's state-changing requests.
func (s *Server) limitWrites(next ownerHandler) ownerHandler {
	return func(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
		if r.Method != http.MethodGet {
			if ok, wait := s.ownerWrites.allow(sess.AccountID); !ok {
				writeOwnerError(w, s.opts.Logger, rateLimited(wait))
				return
			}
		}
		next(w, r, sess)
	}
}

// limitCalls bounds an agent key's calls.
func (s *Server) limitCalls(key string) error {
	h := sha256.Sum256([]byte(key))
	if ok, wait := s.agentCalls.allow(hex.EncodeToString(h[:])); !ok {
		return rateLimited(wait)
	}
	return nil
}
