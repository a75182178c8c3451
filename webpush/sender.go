package webpush

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"countersign/egress"
)

// DefaultTimeout bounds one push from dialing to the end of its answer.
const DefaultTimeout = 15 * time.Second

// MaxResponseBody is how much of a push service's answer is read (1 KB).
const MaxResponseBody = 1 << 10

// MaxTTL is the longest a push service is asked to keep a message.
const MaxTTL = 24 * time.Hour

// Urgency (RFC 8030 §5.3).
const (
	UrgencyHigh   = "high"
	UrgencyNormal = "normal"
)

// Message is one push: the payload to encrypt and the headers that tell
// the push service how to keep and deliver it.
type Message struct {
	Payload []byte
	// TTL is how long the push service may keep it undelivered, in whole
	// seconds, at most MaxTTL; zero or less is refused.
	TTL     time.Duration
	Urgency string
	// Topic, when set, replaces an undelivered earlier message of the
	// same topic (RFC 8030 §5.4): at most 32 of base64url's characters.
	Topic string
}

// Outcome is what a push's answer means for its subscription.
type Outcome int

const (
	// Delivered: the push service took the message (2xx).
	Delivered Outcome = iota
	// Retry: try again later (no answer, 408, 413, 429, 5xx, a redirect).
	Retry
	// Gone: the subscription is over (404, 410, any other 4xx); delete it.
	Gone
	// Unsendable: refused before sending, for a reason trying again cannot
	// change.
	Unsendable
)

func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Retry:
		return "retry"
	case Gone:
		return "gone"
	}
	return "unsendable"
}

// Result is how one push went. It holds no endpoint, key or payload.
type Result struct {
	Outcome    Outcome
	StatusCode int    // the push service's status; 0 when none arrived
	Error      string // empty when delivered; else a short sentence
	// RetryAfter is the push service's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Bytes is the size of the body sent (0 when nothing was sent).
	Bytes    int
	Duration time.Duration
}

// Option adjusts a Sender.
type Option func(*egress.Options)

// WithResolver makes the sender resolve names with r; every address is
// still checked when dialed.
func WithResolver(r *net.Resolver) Option { return func(o *egress.Options) { o.Resolver = r } }

// WithRootCAs makes the sender trust pool instead of the system's roots
// (fake push services in tests).
func WithRootCAs(pool *x509.CertPool) Option { return func(o *egress.Options) { o.RootCAs = pool } }

// WithTimeout replaces DefaultTimeout (values of zero or less are ignored).
func WithTimeout(d time.Duration) Option {
	return func(o *egress.Options) {
		if d > 0 {
			o.Timeout = d
		}
	}
}

// Sender sends pushes (RFC 8030) encrypted for their subscription (RFC
// 8291) and signed with the service's VAPID key (RFC 8292). It connects
// through the egress guard: public addresses only (loopback and private
// ones too under allowAny, with any endpoint host), each checked when
// dialed; no proxy, no redirect followed. It is safe for concurrent use.
type Sender struct {
	client   *http.Client
	allowAny bool
	timeout  time.Duration
	now      func() time.Time
}

// NewSender returns a Sender. allowAny is for development and tests only:
// endpoints on any host, over http too, loopback and private addresses.
func NewSender(allowAny bool, opts ...Option) *Sender {
	o := egress.Options{AllowPrivate: allowAny, Timeout: DefaultTimeout}
	for _, f := range opts {
		f(&o)
	}
	t := egress.NewTransport(o)
	t.MaxResponseHeaderBytes = 16 << 10
	return &Sender{
		client: &http.Client{Transport: t, Timeout: o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		allowAny: allowAny,
		timeout:  o.Timeout,
		now:      time.Now,
	}
}

// AllowAny reports whether the sender takes endpoints on any host.
func (s *Sender) AllowAny() bool { return s.allowAny }

// Send encrypts m for sub and sends it, with key's Authorization naming
// subject. sub's endpoint is checked again under the sender's rule.
func (s *Sender) Send(ctx context.Context, sub Subscription, key *Key, subject string, m Message) Result {
	start := time.Now()
	r := Result{}
	finish := func(o Outcome, sentence string) Result {
		r.Outcome, r.Error, r.Duration = o, sentence, time.Since(start)
		return r
	}
	t, err := sub.Check(s.allowAny)
	if err != nil {
		return finish(Unsendable, err.Error())
	}
	ttl := int64(m.TTL / time.Second)
	switch {
	case ttl <= 0:
		return finish(Unsendable, "the message's time to live is over")
	case m.TTL > MaxTTL:
		ttl = int64(MaxTTL / time.Second)
	}
	if m.Urgency != UrgencyHigh && m.Urgency != UrgencyNormal && m.Urgency != "very-low" && m.Urgency != "low" {
		return finish(Unsendable, "the urgency is not one of RFC 8030's")
	}
	if !validTopic(m.Topic) {
		return finish(Unsendable, "the topic must be at most 32 base64url characters")
	}
	body, err := Encrypt(m.Payload, t.UA, t.Auth)
	if err != nil {
		return finish(Unsendable, "the message cannot be encrypted for this subscription")
	}
	auth, err := key.Authorization(t.Endpoint, subject, s.now())
	if err != nil {
		return finish(Unsendable, "the message cannot be signed")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return finish(Unsendable, "the push endpoint is not a valid URL")
	}
	h := req.Header
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Encoding", "aes128gcm")
	h.Set("TTL", strconv.FormatInt(ttl, 10))
	h.Set("Urgency", m.Urgency)
	if m.Topic != "" {
		h.Set("Topic", m.Topic)
	}
	h.Set("Authorization", auth)
	r.Bytes = len(body)
	resp, err := s.client.Do(req)
	if err != nil {
		return finish(Retry, s.describe(ctx, err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	_ = resp.Body.Close()
	r.StatusCode = resp.StatusCode
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		r.RetryAfter = d
	}
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return finish(Delivered, "")
	case code == http.StatusRequestTimeout, code == http.StatusRequestEntityTooLarge, code == http.StatusTooManyRequests, code >= 500:
		return finish(Retry, fmt.Sprintf("the push service answered HTTP %d", code))
	case code >= 400 && code <= 499:
		return finish(Gone, fmt.Sprintf("the push service answered HTTP %d: the subscription is over", code))
	case code >= 300 && code <= 399:
		return finish(Retry, fmt.Sprintf("the push service answered with a redirect (HTTP %d), which is not followed", code))
	}
	return finish(Retry, fmt.Sprintf("the push service answered HTTP %d", code))
}

// validTopic: RFC 8030 §5.4, at most 32 characters of the URL- and
// filename-safe base64 alphabet.
func validTopic(t string) bool {
	if len(t) > 32 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// describe turns a transport error into a sentence; the error's own text
// is not used, as it quotes the endpoint (a capability).
func (s *Sender) describe(ctx context.Context, err error) string {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		netErr  net.Error
	)
	switch {
	case ctx.Err() != nil:
		return "the push was cancelled"
	case egress.Refused(err):
		return "the push service's host resolves to an address that is not public"
	case errors.As(err, &dnsErr):
		return "the push service's name could not be resolved"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("the push service did not answer within %s", s.timeout)
	case errors.As(err, &certErr):
		return "the push service's TLS certificate could not be verified"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the push service refused the connection"
	default:
		return "the connection to the push service failed"
	}
}

// maxRetryAfter bounds a Retry-After read, far above any schedule.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads Retry-After (RFC 9110 §10.2.3): seconds, or an
// HTTP date relative to now.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		if len(v) > 6 {
			return maxRetryAfter, true
		}
		n, _ := strconv.Atoi(v)
		return min(time.Duration(n)*time.Second, maxRetryAfter), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}
