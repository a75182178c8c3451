package httpapi

import (
	"container/list"
	"crypto/sha256"
	"net"
	"net/http"
	"net/netip"
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
	// AgentCallsPerMinute is per agent key, counted once the key is known
	// good; default 600, 120 at once.
	AgentCallsPerMinute int
	// FailedAuthPerMinute is per client address: calls to the agent API
	// with no key or one that does not authenticate (agent keys are looked
	// up in the store, so this bounds guessing them and the look-ups it
	// costs); default 30, with as many at once. Once an address has used
	// them up, only keys that authenticated lately are looked up from it.
	// Owners' session tokens spend none of it: a token the inbox did not
	// make is refused by its tag before any look-up.
	FailedAuthPerMinute int
}

// Every map a limiter keeps is bounded: it remembers at most maxTracked
// keys, forgetting the least recently seen first, and forgets a key idle
// for idleForget.
const (
	maxTracked = 10_000
	idleForget = 10 * time.Minute
)

// recent remembers up to max keys, each with a value, least recently seen
// forgotten first; the caller holds its lock.
type recent[V any] struct {
	max   int
	idle  time.Duration
	order list.List // of *entry[V], most recently seen at the front
	keys  map[string]*list.Element
}

type entry[V any] struct {
	key  string
	val  V
	seen time.Time
}

func newRecent[V any](max int, idle time.Duration) *recent[V] {
	return &recent[V]{max: max, idle: idle, keys: map[string]*list.Element{}}
}

// expire forgets the keys idle too long.
func (c *recent[V]) expire(now time.Time) {
	for e := c.order.Back(); e != nil && now.Sub(e.Value.(*entry[V]).seen) > c.idle; e = c.order.Back() {
		c.order.Remove(e)
		delete(c.keys, e.Value.(*entry[V]).key)
	}
}

// get finds key, marking it seen.
func (c *recent[V]) get(key string, now time.Time) (V, bool) {
	c.expire(now)
	el, ok := c.keys[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*entry[V])
	e.seen = now
	c.order.MoveToFront(el)
	return e.val, true
}

// put remembers key with val, forgetting the least recently seen key when
// full.
func (c *recent[V]) put(key string, val V, now time.Time) {
	if el, ok := c.keys[key]; ok {
		e := el.Value.(*entry[V])
		e.val, e.seen = val, now
		c.order.MoveToFront(el)
		return
	}
	for c.order.Len() >= c.max {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.keys, e.Value.(*entry[V]).key)
	}
	c.keys[key] = c.order.PushFront(&entry[V]{key: key, val: val, seen: now})
}

func (c *recent[V]) len() int { return c.order.Len() }

// limiter is a token bucket per key, in a bounded map.
type limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	buckets *recent[*rate.Limiter]
}

func newLimiter(perMinute, burst int) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst,
		buckets: newRecent[*rate.Limiter](maxTracked, idleForget)}
}

func (l *limiter) bucket(key string, now time.Time) *rate.Limiter {
	b, ok := l.buckets.get(key, now)
	if !ok {
		b = rate.NewLimiter(l.every, l.burst)
		l.buckets.put(key, b, now)
	}
	return b
}

// allow takes a token for key, or says how long until one is free.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.bucket(key, now).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// ready says whether key has a token left, without taking it, or how long
// until it has.
func (l *limiter) ready(key string) (bool, time.Duration) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets.get(key, now)
	if !ok {
		return true, 0
	}
	if tokens := b.TokensAt(now); tokens < 1 {
		return false, time.Duration((1 - tokens) / float64(l.every) * float64(time.Second))
	}
	return true, 0
}

// size is how many keys the limiter remembers.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buckets.len()
}

// credentials remembers the hashes of agent keys that authenticated lately
// (bounded like a limiter's buckets): they are looked up even from an
// address that has used up its failed attempts, so that one bad client does
// not lock out the good ones behind the same address.
type credentials struct {
	mu   sync.Mutex
	seen *recent[struct{}]
}

func newCredentials() *credentials {
	return &credentials{seen: newRecent[struct{}](maxTracked, idleForget)}
}

func credentialKey(cred string) string {
	h := sha256.Sum256([]byte(cred))
	return string(h[:])
}

func (c *credentials) known(cred string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen.get(credentialKey(cred), time.Now())
	return ok
}

func (c *credentials) add(cred string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen.put(credentialKey(cred), struct{}{}, time.Now())
}

func rateLimited(wait time.Duration) error {
	return &countersign.Error{Code: countersign.RateLimited, Message: "too many requests; try again shortly", RetryAfter: wait}
}

// clientAddr is the address the request came from, as the limits per
// address count it: an IPv4 address, or the /64 an IPv6 address is in (one
// host usually holds the whole /64). A proxy in front of the service makes
// every client one address: set the limits with that in mind.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
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

// mayLookUp is asked before a credential is looked up in the store: one that
// authenticated lately always may be; any other only while its client's
// address has failed attempts left.
func (s *Server) mayLookUp(r *http.Request, cred string) error {
	if cred != "" && s.goodCredentials.known(cred) {
		return nil
	}
	if ok, wait := s.failedAuth.ready(clientAddr(r)); !ok {
		return rateLimited(wait)
	}
	return nil
}

// failedAttempt counts a request without a good credential against its
// client's address; past the budget it is answered 429 instead of err.
func (s *Server) failedAttempt(r *http.Request, err error) error {
	if ok, wait := s.failedAuth.allow(clientAddr(r)); !ok {
		return rateLimited(wait)
	}
	return err
}

// limitCalls bounds an agent key's calls.
func (s *Server) limitCalls(key string) error {
	if ok, wait := s.agentCalls.allow(credentialKey(key)); !ok {
		return rateLimited(wait)
	}
	return nil
}
