package egress_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/egress"
	"countersign/egress/egresstest"
)

// Every dial goes through the guard: names and literals that lead to an
// address that is not public get no connection, whatever they resolved to
// before, and the client's error says so.
func TestClientRefusesAtDialTime(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	port := mustURL(t, srv.URL).Port()
	dns := egresstest.NewDNS(t, egresstest.Hostile)
	// The rebinding name looks public to a check made before the request.
	first, err := dns.Resolver().LookupNetIP(context.Background(), "ip4", "rebind.example.com")
	if err != nil || len(first) != 1 || first[0] != netip.MustParseAddr("1.1.1.1") {
		t.Fatalf("first lookup = %v, %v", first, err)
	}
	public := egress.NewClient(egress.Options{Resolver: dns.Resolver(), Timeout: 5 * time.Second})
	dev := egress.NewClient(egress.Options{AllowPrivate: true, Resolver: dns.Resolver(), Timeout: 5 * time.Second})
	for _, tt := range []struct {
		name   string
		client *http.Client
		host   string
	}{
		{"loopback literal", public, "127.0.0.1"},
		{"other loopback literal", public, "127.0.0.2"},
		{"v6 loopback literal", public, "[::1]"},
		{"localhost", public, "localhost"},
		{"name to loopback", public, "loopback.example.com"},
		{"rebinding", public, "rebind.example.com"},
		{"10/8", public, "ten.example.com"},
		{"192.168/16", public, "home.example.com"},
		{"v6 loopback", public, "v6loopback.example.com"},
		{"ULA", public, "ula.example.com"},
		{"metadata", public, "metadata.example.com"},
		{"metadata literal", public, "169.254.169.254"},
		{"v4-mapped loopback", public, "mapped.example.com"},
		{"metadata with AllowPrivate", dev, "metadata.example.com"},
		{"metadata literal with AllowPrivate", dev, "169.254.169.254"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.client.Get("http://" + tt.host + ":" + port + "/secret-path")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("answered %d", resp.StatusCode)
			}
			if !egress.Refused(err) || !errors.Is(err, egress.ErrNotPublic) {
				t.Fatalf("error %v is not a refusal of the guard", err)
			}
		})
	}
	if n := srv.Conns(); n != 0 {
		t.Fatalf("the loopback server got %d connections", n)
	}
	if n := dns.Count("rebind.example.com", egresstest.TypeA); n < 2 {
		t.Fatalf("rebind.example.com was looked up %d times: the client did not resolve it", n)
	}
	// With AllowPrivate the same names do reach it: the refusals above
	// come from the address check, not from the resolver seam.
	for _, host := range []string{"127.0.0.1", "loopback.example.com"} {
		resp, err := dev.Get("http://" + host + ":" + port + "/")
		if err != nil {
			t.Fatalf("%s with AllowPrivate: %v", host, err)
		}
		resp.Body.Close()
	}
	if srv.Conns() == 0 {
		t.Fatal("the control requests did not arrive")
	}
}

// TLS is verified against the roots given, and dialed through the guard.
func TestClientTLS(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	dns := egresstest.NewDNS(t, egresstest.Hostile)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	u := "https://example.com:" + mustURL(t, srv.URL).Port() + "/"
	resp, err := egress.NewClient(egress.Options{AllowPrivate: true, Resolver: dns.Resolver(), RootCAs: pool}).Get(u)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("%v, %v", resp, err)
	}
	resp.Body.Close()
	if _, err := egress.NewClient(egress.Options{AllowPrivate: true, Resolver: dns.Resolver()}).Get(u); err == nil || egress.Refused(err) {
		t.Fatalf("an unknown authority: %v", err)
	}
}

// A redirect is followed only to the same scheme, host and port, and only
// as many as allowed; else the 3xx is the answer.
func TestClientRedirects(t *testing.T) {
	t.Parallel()
	other := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	var srv *egresstest.Server
	srv = egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/twice":
			http.Redirect(w, r, "/same", http.StatusFound)
		case "/other-port":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/other-host":
			http.Redirect(w, r, "http://localhost:"+mustURL(t, srv.URL).Port()+"/final", http.StatusTemporaryRedirect)
		case "/final":
			w.WriteHeader(200)
		}
	}))
	none := egress.NewClient(egress.Options{AllowPrivate: true})
	one := egress.NewClient(egress.Options{AllowPrivate: true, Redirects: 1})
	for _, tt := range []struct {
		client *http.Client
		path   string
		want   int
	}{
		{none, "/same", 302},
		{one, "/same", 200},
		{one, "/twice", 302},
		{one, "/other-port", 302},
		{one, "/other-host", 307},
	} {
		resp, err := tt.client.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
	}
	if other.Conns() != 0 {
		t.Fatal("a redirect to another port was followed")
	}
}

// A proxy named in the environment is never used: the request would leave
// through a host that is not the one checked.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	// A name, since proxies are never used for loopback literals anyway.
	dns := egresstest.NewDNS(t, egresstest.Fixed(map[string][]string{"api.example.com": {"127.0.0.1"}}))
	resp, err := egress.NewClient(egress.Options{AllowPrivate: true, Resolver: dns.Resolver()}).Get("http://api.example.com:" + mustURL(t, srv.URL).Port() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if srv.Requests() != 1 || proxy.Requests() != 0 {
		t.Fatalf("server %d, proxy %d requests", srv.Requests(), proxy.Requests())
	}
}

// Wrap sees every request, and the guard stays beneath it.
func TestClientWrap(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var seen []string
	c := egress.NewClient(egress.Options{Wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			seen = append(seen, r.URL.Path)
			return rt.RoundTrip(r)
		})
	}})
	_, err := c.Get(srv.URL + "/x")
	if !egress.Refused(err) || len(seen) != 1 || seen[0] != "/x" || srv.Conns() != 0 {
		t.Fatalf("%v, %v, %d connections", err, seen, srv.Conns())
	}
	if strings.Contains(egress.ErrNotPublic.Error(), "127.0.0.1") {
		t.Fatal("the sentence names an address")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A client refuses every request made with an InProcess context — the
// first, and one that could reuse a connection kept alive — before any
// wrapper or dial: the server sees nothing. The same client still serves
// other contexts.
func TestClientRefusesInProcess(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	wrapped := 0
	c := egress.NewClient(egress.Options{AllowPrivate: true, Wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			wrapped++
			return rt.RoundTrip(r)
		})
	}})
	get := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/write", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	inProcess := egress.InProcess(context.Background())
	if !egress.IsInProcess(inProcess) || egress.IsInProcess(context.Background()) {
		t.Fatal("IsInProcess does not tell the marked context")
	}
	if err := get(inProcess); !errors.Is(err, egress.ErrInProcess) || srv.Conns() != 0 || wrapped != 0 {
		t.Fatalf("a first request in process: %v, %d connections, %d through the wrapper", err, srv.Conns(), wrapped)
	}
	if err := get(context.Background()); err != nil || srv.Requests() != 1 {
		t.Fatalf("an ordinary request: %v, %d requests", err, srv.Requests())
	}
	derived, cancel := context.WithTimeout(inProcess, time.Minute)
	defer cancel()
	if err := get(derived); !errors.Is(err, egress.ErrInProcess) || srv.Requests() != 1 {
		t.Fatalf("a request in process with a connection kept alive: %v, %d requests", err, srv.Requests())
	}
}
