package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrNotPublic is what a dial to an address the guard refuses fails with
// (wrapped, with code.dny.dev/ssrf's reason). Callers tell the owner in
// their own words: the error's text, like every transport error's, may
// quote the URL.
var ErrNotPublic = errors.New("the host resolves to an address that is not public")

// Guards deciding which addresses may be connected to. CheckURL checks
// literal addresses with the same guard the dialer applies to every
// resolved address, so the two can never disagree.
var (
	// publicGuard refuses every special-purpose address in the IANA
	// registries: loopback, private, link-local, shared (CGNAT),
	// documentation, benchmarking, reserved, multicast, broadcast, and every
	// IPv6 address outside 2000::/3 (ULA, link-local, IPv4-mapped and
	// IPv4-compatible forms, NAT64), plus 6to4 and Teredo.
	publicGuard = ssrf.New(ssrf.WithAnyPort())
	// privateGuard is publicGuard that also lets loopback and private
	// networks through. Link-local (cloud metadata at 169.254.169.254),
	// CGNAT and the other special ranges stay refused.
	privateGuard = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(
			netip.MustParsePrefix("127.0.0.0/8"),
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("172.16.0.0/12"),
			netip.MustParsePrefix("192.168.0.0/16"),
		),
		ssrf.WithAllowedV6Prefixes(
			netip.MustParsePrefix("::1/128"),
			netip.MustParsePrefix("fc00::/7"),
		),
	)
)

func guardFor(allowPrivate bool) *ssrf.Guardian {
	if allowPrivate {
		return privateGuard
	}
	return publicGuard
}

// Allowed reports whether the guard lets a connects to a: a public address,
// or with allowPrivate also a loopback or private one.
func Allowed(a netip.Addr, allowPrivate bool) bool { return guardFor(allowPrivate).SafeAddr(a) == nil }

// Options say how a client reaches hosts. The zero value is the
// production rule: public addresses only, the system's resolver and roots.
type Options struct {
	// AllowPrivate also admits http URLs and loopback and private
	// addresses. It is for development (serve --dev, whose fakes listen on
	// loopback) and tests only, and never a default: wiring sets it.
	AllowPrivate bool
	// Resolver resolves host names (default: the system's). Every address
	// it answers is still checked when dialed.
	Resolver *net.Resolver
	// RootCAs replaces the system's roots, for development hosts with
	// their own certificate authority.
	RootCAs *x509.CertPool
	// Timeout bounds a request from dialing to the end of the answer
	// (default DefaultTimeout).
	Timeout time.Duration
	// Redirects is how many redirects to the same scheme, host and port a
	// client follows (default 0: none). A redirect elsewhere is never
	// followed: the 3xx is answered as received.
	Redirects int
	// Wrap, when set, wraps the guarded transport (tests record requests
	// with it); what it returns carries every request.
	Wrap func(http.RoundTripper) http.RoundTripper
}

// DefaultTimeout bounds a request when Options sets no timeout.
const DefaultTimeout = 20 * time.Second

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Dialer is a dialer whose every connection is to an address the guard
// allows: its Control runs after resolution, on the very address being
// connected to, for every address tried, so a name whose answer changes
// between a check and the connection gains nothing.
func Dialer(o Options) *net.Dialer {
	g := guardFor(o.AllowPrivate)
	return &net.Dialer{
		Timeout:   o.timeout(),
		KeepAlive: 30 * time.Second,
		Resolver:  o.Resolver,
		Control: func(network, address string, c syscall.RawConn) error {
			if err := g.Safe(network, address, c); err != nil {
				return fmt.Errorf("%w: %w", ErrNotPublic, err)
			}
			return nil
		},
	}
}

// NewTransport is a transport that dials through the guard, uses no proxy
// (a proxy would connect in its stead, unchecked), speaks TLS 1.2 or later
// and asks for no compression. Callers may tune its limits; they must not
// replace its dialer or proxy.
func NewTransport(o Options) *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            Dialer(o).DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs},
		TLSHandshakeTimeout:    o.timeout(),
		ForceAttemptHTTP2:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
	}
}

// NewClient is a client over NewTransport(o) (wrapped by o.Wrap) that
// follows at most o.Redirects redirects, and those only to the same
// scheme, host and port, and refuses every request whose context is
// InProcess.
func NewClient(o Options) *http.Client {
	var rt http.RoundTripper = NewTransport(o)
	if o.Wrap != nil {
		rt = o.Wrap(rt)
	}
	return &http.Client{Transport: inProcessGuard{rt}, Timeout: o.timeout(), CheckRedirect: func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if len(via) > o.Redirects || req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// Refused reports whether err is a dial the guard refused.
func Refused(err error) bool { return errors.Is(err, ErrNotPublic) }

// ErrInProcess is what a client from NewClient answers a request made with
// an InProcess context: nothing is dialed and nothing is sent.
var ErrInProcess = errors.New("this run was declared to reach nothing outside the service")

type inProcessKey struct{}

// InProcess marks ctx as the context of work that promised to reach
// nothing outside the service (a connector's operation declared
// InProcess, whose run the platform keeps in one transaction): a client
// from NewClient refuses every request made with it or with a context
// derived from it.
func InProcess(ctx context.Context) context.Context {
	return context.WithValue(ctx, inProcessKey{}, true)
}

// IsInProcess reports whether ctx was marked by InProcess.
func IsInProcess(ctx context.Context) bool { return ctx.Value(inProcessKey{}) != nil }

// inProcessGuard refuses requests with an InProcess context before they
// reach the transport (or a connection kept alive from an earlier one).
type inProcessGuard struct{ next http.RoundTripper }

func (g inProcessGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if IsInProcess(r.Context()) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, ErrInProcess
	}
	return g.next.RoundTrip(r)
}
