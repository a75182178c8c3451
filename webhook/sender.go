package webhook

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
	"net/url"
	"syscall"
	"time"

	"countersign/egress"
)

// DefaultTimeout bounds one attempt from dialing to the end of reading the
// answer.
const DefaultTimeout = 15 * time.Second

// MaxResponseBody is how much of a receiver's answer is read (20 KiB); the
// rest is dropped with the connection.
const MaxResponseBody = 20 << 10

// maxResponseHeader bounds a receiver's answer headers.
const maxResponseHeader = 16 << 10

// Attempt is the outcome of one delivery, as logged for the owner. It holds
// no secret, signature or body.
type Attempt struct {
	Number     int           // the attempt's number, from 1
	StatusCode int           // the receiver's HTTP status; 0 when none arrived
	Error      string        // empty when delivered; else a short sentence for the owner
	RetryAfter time.Duration // the receiver's Retry-After, if it sent a readable one
	At         time.Time     // when the attempt started
	Duration   time.Duration // how long it took
	Final      bool          // refused before sending, for a reason retrying cannot change
}

// Delivered reports whether the receiver accepted the event (HTTP 2xx).
func (a Attempt) Delivered() bool {
	return a.Error == "" && a.StatusCode >= 200 && a.StatusCode <= 299
}

// Option adjusts a Sender.
type Option func(*settings)

type settings struct {
	resolver *net.Resolver
	timeout  time.Duration
	rootCAs  *x509.CertPool
}

// WithResolver makes the sender resolve host names with r instead of the
// system resolver. Every address r returns is still checked when dialed.
func WithResolver(r *net.Resolver) Option { return func(s *settings) { s.resolver = r } }

// WithTimeout replaces DefaultTimeout. Values of zero or less are ignored.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithRootCAs makes the sender trust pool instead of the system's roots,
// for development receivers with their own certificate authority.
func WithRootCAs(pool *x509.CertPool) Option { return func(s *settings) { s.rootCAs = pool } }

// Sender delivers events to owners' receivers. It connects through the
// egress guard: only to public addresses (loopback and private ones too
// when made with allowPrivate), checking every address it dials, after
// resolution, so a name that changes its answer between a check and the
// connection gains nothing. It uses no proxy and follows no redirect. A Sender is safe for concurrent
// use.
type Sender struct {
	client       *http.Client
	allowPrivate bool
	timeout      time.Duration
}

// NewSender returns a Sender. allowPrivate is for development and tests
// only (SPEC §10): it admits http URLs and loopback and private receivers,
// nothing else.
func NewSender(allowPrivate bool, opts ...Option) *Sender {
	cfg := settings{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	o := egress.Options{AllowPrivate: allowPrivate, Resolver: cfg.resolver, RootCAs: cfg.rootCAs, Timeout: cfg.timeout}
	transport := egress.NewTransport(o)
	transport.MaxResponseHeaderBytes = maxResponseHeader
	transport.MaxIdleConnsPerHost = 2
	return &Sender{
		client: &http.Client{
			Transport:     transport,
			Timeout:       cfg.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		allowPrivate: allowPrivate,
		timeout:      cfg.timeout,
	}
}

// Deliver sends ev, signed with key (the 32 bytes of DecodeSecret), to
// target as attempt number attempt, and reports how it went. target is
// checked again with ValidateURL under the sender's rules. A 2xx answer is
// a delivery; anything else, a redirect included, is a failed attempt. At
// most MaxResponseBody bytes of the answer are read.
func (s *Sender) Deliver(ctx context.Context, target *url.URL, key []byte, ev Event, attempt int) Attempt {
	start := time.Now()
	a := Attempt{Number: attempt, At: start}
	finish := func(sentence string, final bool) Attempt {
		a.Error, a.Final, a.Duration = sentence, final, time.Since(start)
		return a
	}
	if attempt < 1 || attempt > MaxAttempts {
		return finish("no attempts are left for this event", true)
	}
	if target == nil {
		return finish(ErrURLEmpty.Error(), true)
	}
	u, err := ValidateURL(target.String(), s.allowPrivate)
	if err != nil {
		return finish(err.Error(), true)
	}
	if len(key) != KeySize {
		return finish("the webhook secret is unusable", true)
	}
	body, header, err := Sign(key, ev, start)
	if err != nil {
		return finish("the event could not be encoded", true)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return finish(ErrURLSyntax.Error(), true)
	}
	req.Header = header

	resp, err := s.client.Do(req)
	if err != nil {
		return finish(s.describe(ctx, err), false)
	}
	// Drain a bounded part of the answer so a short one lets the
	// connection be reused; closing drops the rest with the connection.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	_ = resp.Body.Close()

	a.StatusCode = resp.StatusCode
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		a.RetryAfter = d
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		return finish("", false)
	case code >= 300 && code <= 399:
		return finish(fmt.Sprintf("the receiver answered with a redirect (HTTP %d), which is not followed", code), false)
	case code == http.StatusGone:
		return finish("the receiver answered HTTP 410: the endpoint is gone, so no further attempts are made", false)
	default:
		return finish(fmt.Sprintf("the receiver answered HTTP %d", code), false)
	}
}

// describe turns a transport error into a sentence for the owner. The
// error's own text is not used: it holds the URL, which may carry a token
// in its path or query.
func (s *Sender) describe(ctx context.Context, err error) string {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		netErr  net.Error
	)
	switch {
	case ctx.Err() != nil:
		return "the delivery was cancelled"
	case egress.Refused(err):
		return "the webhook host resolves to an address that is not public"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "the webhook host's name does not exist"
	case errors.As(err, &dnsErr):
		return "the webhook host's name could not be resolved"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("the receiver did not answer within %s", s.timeout)
	case errors.As(err, &certErr):
		return "the receiver's TLS certificate could not be verified"
	case errors.As(err, &recErr):
		return "the receiver does not speak TLS"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the receiver refused the connection"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "the receiver closed the connection without answering"
	default:
		return "the connection to the receiver failed"
	}
}
