package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"countersign/egress/egresstest"
)

// pathToken stands for a token some receivers put in their URL's path: it
// must never reach an attempt's error.
const pathToken = "tok-9f8e7d6c"

// newKey returns a fresh secret and its key.
func newKey(t *testing.T) (string, []byte) {
	t.Helper()
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	key, err := DecodeSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) == 0 || secret == "" {
		t.Fatal("empty secret") // the Standard Webhooks library would accept one
	}
	return secret, key
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// received is what a receiver saw of one request.
type received struct {
	method string
	header http.Header
	body   []byte
}

// counting wraps a handler and counts the connections and requests that
// reach it.
type counting struct {
	conns, requests atomic.Int32
}

func (c *counting) server(t *testing.T, tls bool, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		h(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused TLS handshakes are expected
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestDeliverSignedToLoopbackReceiver(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			secret, key := newKey(t)
			got := make(chan received, 1)
			var c counting
			srv := c.server(t, useTLS, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got <- received{r.Method, r.Header.Clone(), b}
				w.WriteHeader(http.StatusNoContent)
			})
			opts := []Option{}
			if useTLS {
				pool := x509.NewCertPool()
				pool.AddCert(srv.Certificate())
				opts = append(opts, WithRootCAs(pool))
			}
			s := NewSender(true, opts...)
			ev := approvedEvent()
			a := s.Deliver(context.Background(), mustURL(t, srv.URL+"/hook/"+pathToken), key, ev, 1)
			if !a.Delivered() || a.StatusCode != http.StatusNoContent || a.Error != "" || a.Final {
				t.Fatalf("attempt = %+v", a)
			}
			if a.Number != 1 || a.At.IsZero() || a.Duration <= 0 {
				t.Fatalf("attempt bookkeeping = %+v", a)
			}
			r := <-got
			if r.method != http.MethodPost {
				t.Errorf("method %s", r.method)
			}
			want, _ := ev.Encode()
			if string(r.body) != string(want) {
				t.Errorf("body %s", r.body)
			}
			for k, v := range map[string]string{
				"Content-Type": "application/json",
				"User-Agent":   UserAgent,
				"X-Event-Type": "task_approved",
				"X-Wallet-Id":  "owner:alice.near",
				"webhook-id":   ev.ID,
			} {
				if r.header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, r.header.Get(k), v)
				}
			}
			// The Standard Webhooks verifier, with its timestamp tolerance.
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Errorf("standard webhooks verify: %v", err)
			}
			// The plain body HMAC.
			m := hmac.New(sha256.New, key)
			m.Write(r.body)
			sig, err := hex.DecodeString(r.header.Get("X-Webhook-Signature"))
			if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
				t.Errorf("X-Webhook-Signature does not verify")
			}
			if r.header.Get("X-Webhook-Signature") != strings.ToLower(r.header.Get("X-Webhook-Signature")) {
				t.Errorf("X-Webhook-Signature is not lowercase hex")
			}
		})
	}
}

func TestDeliverFailedAttempts(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	var target counting
	redirectTarget := target.server(t, false, func(w http.ResponseWriter, r *http.Request) {})
	httpDate := time.Now().Add(2 * time.Hour).UTC().Format(http.TimeFormat)

	tests := []struct {
		name       string
		handler    http.HandlerFunc
		status     int
		retryAfter time.Duration // exact, or a lower bound when approx
		approx     bool
		errHas     string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, 500, 0, false, "HTTP 500"},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, 404, 0, false, "HTTP 404"},
		{"410", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) }, 410, 0, false, "gone"},
		{"301 to loopback", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, redirectTarget.URL+"/internal", http.StatusMovedPermanently)
		}, 301, 0, false, "redirect"},
		{"307 to loopback", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, redirectTarget.URL+"/internal", http.StatusTemporaryRedirect)
		}, 307, 0, false, "redirect"},
		{"503 Retry-After seconds", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(503)
		}, 503, 120 * time.Second, false, "HTTP 503"},
		{"429 Retry-After date", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", httpDate)
			w.WriteHeader(429)
		}, 429, 2*time.Hour - time.Minute, true, "HTTP 429"},
		{"503 Retry-After garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "soon")
			w.WriteHeader(503)
		}, 503, 0, false, "HTTP 503"},
		{"1 MB answer, 500", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write(make([]byte, 1<<20))
		}, 500, 0, false, "HTTP 500"},
	}
	s := NewSender(true)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c counting
			srv := c.server(t, false, tt.handler)
			a := s.Deliver(context.Background(), mustURL(t, srv.URL+"/hook/"+pathToken), key, approvedEvent(), 3)
			if a.Delivered() || a.StatusCode != tt.status || a.Final || a.Number != 3 {
				t.Fatalf("attempt = %+v", a)
			}
			if !strings.Contains(a.Error, tt.errHas) {
				t.Errorf("error %q lacks %q", a.Error, tt.errHas)
			}
			if tt.approx {
				if a.RetryAfter < tt.retryAfter || a.RetryAfter > tt.retryAfter+2*time.Minute {
					t.Errorf("RetryAfter = %v, want about %v", a.RetryAfter, tt.retryAfter+time.Minute)
				}
			} else if a.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", a.RetryAfter, tt.retryAfter)
			}
			if c.requests.Load() != 1 {
				t.Errorf("receiver saw %d requests", c.requests.Load())
			}
		})
	}
	if n := target.requests.Load(); n != 0 {
		t.Fatalf("a redirect was followed: its target saw %d requests", n)
	}
}

// A 10 MB answer is read only up to MaxResponseBody; the delivery result
// stands on the status.
func TestDeliverLargeAnswer(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	const size = 10 << 20
	type outcome struct {
		written int
		err     error
	}
	done := make(chan outcome, 1)
	var c counting
	srv := c.server(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10485760")
		w.WriteHeader(http.StatusOK)
		chunk := make([]byte, 32<<10)
		n := 0
		var err error
		for n < size && err == nil {
			var k int
			k, err = w.Write(chunk)
			n += k
			if f, ok := w.(http.Flusher); ok && err == nil {
				f.Flush()
			}
		}
		done <- outcome{n, err}
	})
	a := NewSender(true).Deliver(context.Background(), mustURL(t, srv.URL), key, approvedEvent(), 1)
	if !a.Delivered() || a.StatusCode != 200 {
		t.Fatalf("attempt = %+v", a)
	}
	select {
	case o := <-done:
		if o.err == nil || o.written >= size {
			t.Fatalf("the receiver wrote %d bytes without error: the answer was read whole", o.written)
		}
		t.Logf("the receiver wrote %d bytes before the sender hung up", o.written)
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver is still writing: the sender did not close the connection")
	}
}

// hang answers nothing until the client goes away. It reads the request
// first: only then does the server watch the connection for the client
// closing it.
func hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

func TestDeliverTimeouts(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	s := NewSender(true, WithTimeout(300*time.Millisecond))

	t.Run("no answer", func(t *testing.T) {
		var c counting
		srv := c.server(t, false, hang)
		a := s.Deliver(context.Background(), mustURL(t, srv.URL), key, approvedEvent(), 2)
		if a.Delivered() || a.StatusCode != 0 || a.Final || a.Error != "the receiver did not answer within 300ms" {
			t.Fatalf("attempt = %+v", a)
		}
	})
	t.Run("status then a hanging body", func(t *testing.T) {
		var c counting
		srv := c.server(t, false, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		a := s.Deliver(context.Background(), mustURL(t, srv.URL), key, approvedEvent(), 2)
		if !a.Delivered() || a.StatusCode != http.StatusAccepted {
			t.Fatalf("attempt = %+v", a)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		var c counting
		srv := c.server(t, false, hang)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		a := NewSender(true).Deliver(ctx, mustURL(t, srv.URL), key, approvedEvent(), 1)
		if a.Delivered() || a.Final || a.Error != "the delivery was cancelled" {
			t.Fatalf("attempt = %+v", a)
		}
	})
}

func TestDeliverConnectionFailures(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + l.Addr().String() + "/hook/" + pathToken
	l.Close()

	// A receiver that reads the request and hangs up without answering.
	hangup, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hangup.Close()
	go func() {
		for {
			conn, err := hangup.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Read(make([]byte, 4096))
			conn.Close()
		}
	}()

	var c counting
	plain := c.server(t, false, func(w http.ResponseWriter, r *http.Request) {})
	untrusted := c.server(t, true, func(w http.ResponseWriter, r *http.Request) {})

	tests := []struct {
		name, url, want string
	}{
		{"refused", closedURL, "the receiver refused the connection"},
		{"hang-up", "http://" + hangup.Addr().String() + "/" + pathToken, "the receiver closed the connection without answering"},
		{"untrusted certificate", untrusted.URL + "/hook/" + pathToken, "the receiver's TLS certificate could not be verified"},
		{"plain HTTP on https", strings.Replace(plain.URL, "http:", "https:", 1) + "/" + pathToken, "the connection to the receiver failed"},
	}
	s := NewSender(true)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.Deliver(context.Background(), mustURL(t, tt.url), key, approvedEvent(), 1)
			if a.Delivered() || a.StatusCode != 0 || a.Final || a.Error != tt.want {
				t.Fatalf("attempt = %+v, want error %q", a, tt.want)
			}
		})
	}
	if c.requests.Load() != 0 {
		t.Fatalf("%d requests were answered", c.requests.Load())
	}
}

// Dial-time refusals: names that resolve to addresses that are not public
// never get a connection, whatever they resolved to before.
func TestDeliverDialTimeRefusals(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	var c counting
	srv := c.server(t, true, func(w http.ResponseWriter, r *http.Request) {})
	port := mustURL(t, srv.URL).Port()

	dns := egresstest.NewDNS(t, func(name string, qtype uint16, n int) ([]netip.Addr, bool) {
		one := func(s string) []netip.Addr { return []netip.Addr{netip.MustParseAddr(s)} }
		switch name {
		case "loopback.example.com", "example.com":
			return one("127.0.0.1"), true
		case "rebind.example.com":
			// Public at the first lookup, loopback from then on.
			if qtype == egresstest.TypeA && n == 0 {
				return one("1.1.1.1"), true
			}
			return one("127.0.0.1"), true
		case "private.example.com":
			return []netip.Addr{netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("192.168.1.1"), netip.MustParseAddr("127.0.0.1")}, true
		case "v6loopback.example.com":
			return one("::1"), true
		case "metadata.example.com":
			return one("169.254.169.254"), true
		case "mapped.example.com":
			return one("::ffff:127.0.0.1"), true
		case "nat64.example.com":
			return one("64:ff9b::7f00:1"), true
		}
		return nil, false
	})

	// The rebinding name looks public to a check made before the delivery.
	first, err := dns.Resolver().LookupNetIP(context.Background(), "ip4", "rebind.example.com")
	if err != nil || len(first) != 1 || first[0] != netip.MustParseAddr("1.1.1.1") {
		t.Fatalf("first lookup = %v, %v", first, err)
	}

	public := NewSender(false, WithResolver(dns.Resolver()), WithTimeout(5*time.Second))
	dev := NewSender(true, WithResolver(dns.Resolver()), WithTimeout(5*time.Second))
	notPublic := "the webhook host resolves to an address that is not public"
	tests := []struct {
		name   string
		sender *Sender
		host   string
		want   string
	}{
		{"loopback", public, "loopback.example.com", notPublic},
		{"rebinding", public, "rebind.example.com", notPublic},
		{"all private", public, "private.example.com", notPublic},
		{"v6 loopback", public, "v6loopback.example.com", notPublic},
		{"metadata", public, "metadata.example.com", notPublic},
		{"v4-mapped loopback", public, "mapped.example.com", notPublic},
		{"NAT64 loopback", public, "nat64.example.com", notPublic},
		{"metadata with allowPrivate", dev, "metadata.example.com", notPublic},
		{"NAT64 with allowPrivate", dev, "nat64.example.com", notPublic},
		{"missing name", public, "missing.example.com", "the webhook host's name does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := mustURL(t, "https://"+tt.host+":"+port+"/hook/"+pathToken)
			a := tt.sender.Deliver(context.Background(), u, key, approvedEvent(), 1)
			if a.Delivered() || a.StatusCode != 0 || a.Final || a.Error != tt.want {
				t.Fatalf("attempt = %+v, want error %q", a, tt.want)
			}
		})
	}
	if n := c.conns.Load(); n != 0 {
		t.Fatalf("the receiver got %d connections", n)
	}
	if n := dns.Count("rebind.example.com", egresstest.TypeA); n < 2 {
		t.Fatalf("rebind.example.com was looked up %d times: the sender did not resolve it", n)
	}

	// The same resolver with allowPrivate does reach the loopback receiver
	// (its test certificate names example.com): the refusals above come from
	// the address check, not from the resolver seam.
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	devTLS := NewSender(true, WithResolver(dns.Resolver()), WithRootCAs(pool))
	a := devTLS.Deliver(context.Background(), mustURL(t, "https://example.com:"+port+"/"), key, approvedEvent(), 1)
	if !a.Delivered() || c.conns.Load() != 1 || dns.Count("example.com", egresstest.TypeA) == 0 {
		t.Fatalf("control delivery = %+v (connections %d)", a, c.conns.Load())
	}
}

func TestDeliverRefusesBeforeSending(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	var c counting
	srv := c.server(t, false, func(w http.ResponseWriter, r *http.Request) {})
	good := mustURL(t, srv.URL+"/hook")
	badEvent := approvedEvent()
	badEvent.Run = ""

	tests := []struct {
		name    string
		sender  *Sender
		target  *url.URL
		key     []byte
		ev      Event
		attempt int
		want    string
	}{
		{"attempt 0", NewSender(true), good, key, approvedEvent(), 0, "no attempts are left for this event"},
		{"attempt 9", NewSender(true), good, key, approvedEvent(), 9, "no attempts are left for this event"},
		{"no URL", NewSender(true), nil, key, approvedEvent(), 1, ErrURLEmpty.Error()},
		{"loopback without allowPrivate", NewSender(false), good, key, approvedEvent(), 1, ErrURLScheme.Error()},
		{"loopback https without allowPrivate", NewSender(false), mustURL(t, strings.Replace(srv.URL, "http:", "https:", 1)), key, approvedEvent(), 1, ErrURLNotPublic.Error()},
		{"userinfo", NewSender(true), mustURL(t, strings.Replace(srv.URL, "//", "//u:p@", 1)), key, approvedEvent(), 1, ErrURLUserinfo.Error()},
		{"empty key", NewSender(true), good, nil, approvedEvent(), 1, "the webhook secret is unusable"},
		{"short key", NewSender(true), good, key[:31], approvedEvent(), 1, "the webhook secret is unusable"},
		{"invalid event", NewSender(true), good, key, badEvent, 1, "the event could not be encoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.sender.Deliver(context.Background(), tt.target, tt.key, tt.ev, tt.attempt)
			if a.Delivered() || !a.Final || a.StatusCode != 0 || a.Error != tt.want {
				t.Fatalf("attempt = %+v, want final %q", a, tt.want)
			}
			if _, retry := NextAttempt(1, a, nil); retry {
				t.Fatal("a final attempt is retried")
			}
		})
	}
	if n := c.conns.Load(); n != 0 {
		t.Fatalf("the receiver got %d connections", n)
	}
}

// A proxy named in the environment is never used: the request would leave
// through a host that is not the receiver, unchecked.
func TestDeliverIgnoresProxyEnvironment(t *testing.T) {
	_, key := newKey(t)
	var proxy, receiver counting
	proxySrv := proxy.server(t, false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	srv := receiver.server(t, false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	t.Setenv("HTTP_PROXY", proxySrv.URL)
	t.Setenv("HTTPS_PROXY", proxySrv.URL)
	t.Setenv("NO_PROXY", "")
	// A name, since proxies are never used for loopback literals anyway.
	dns := egresstest.NewDNS(t, egresstest.Fixed(map[string][]string{"hooks.example.com": {"127.0.0.1"}}))
	u := mustURL(t, "http://hooks.example.com:"+mustURL(t, srv.URL).Port()+"/")
	a := NewSender(true, WithResolver(dns.Resolver())).Deliver(context.Background(), u, key, approvedEvent(), 1)
	if !a.Delivered() || receiver.requests.Load() != 1 || proxy.requests.Load() != 0 {
		t.Fatalf("attempt %+v; receiver %d, proxy %d requests", a, receiver.requests.Load(), proxy.requests.Load())
	}
}
