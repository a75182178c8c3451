package mercury_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/connectors/connectortest"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/egress/egresstest"
)

// A project's base_url is checked by the egress rules before any request;
// nothing reaches the loopback listener it names, and nothing is paid.
func TestBaseURLRefusals(t *testing.T) {
	t.Parallel()
	f := mercurytest.New()
	srv := egresstest.NewServer(t, true, f)
	port := mustPort(t, srv.URL)
	const fix = ": the owner must correct the project's credentials"
	for _, tt := range []struct{ base, want string }{
		{"http://api.mercury.com/api/v1", "must use https"},
		{"https://user:pass@api.mercury.com/api/v1", "must not contain a user name or password"},
		{"https://api.mercury.com/api/v1?x=1", "must not have a query (?…)"},
		{"https://api.mercury.com/api/v1#x", "must not have a fragment (#…)"},
		{"https://api.mercury.com/api/../v1", "'s path must not have empty, . or .. segments"},
		{"https://127.0.0.1:" + port + "/api/v1", "must name a public host"},
		{"https://[::1]:" + port + "/api/v1", "must name a public host"},
		{"https://localhost:" + port + "/api/v1", "must name a public host"},
		{"https://10.0.0.1/api/v1", "must name a public host"},
		{"https://192.168.1.1/api/v1", "must name a public host"},
		{"https://169.254.169.254/latest", "must name a public host"},
		{"https://[fd00::1]/api/v1", "must name a public host"},
	} {
		for _, body := range []string{`{"operation": "accounts"}`, pay(mercurytest.AcmeID, "5", "ach")} {
			h := connectortest.New(t, mercury.New(mercury.Config{}))
			h.Credentials = []byte(`{"token": "` + mercurytest.Token + `", "base_url": "` + tt.base + `"}`)
			_, err := h.Call(ctx, body)
			want := "invalid_request: the project's Mercury base_url " + strings.TrimPrefix(tt.want, "'s ") + fix
			if strings.HasPrefix(tt.want, "'s") {
				want = "invalid_request: the project's Mercury base_url" + tt.want + fix
			}
			if got := connectortest.Text(err); got != want {
				t.Errorf("%s:\n got %q\nwant %q", tt.base, got, want)
			}
		}
	}
	if srv.Conns() != 0 || f.Payments() != 0 {
		t.Fatalf("the loopback listener got %d connections, %d payments", srv.Conns(), f.Payments())
	}
}

// Names that resolve to addresses that are not public are refused when
// dialed, on every address, whatever they resolved to before: a payment
// is then certainly not made, so it is neither retried nor counted.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	f := mercurytest.New()
	srv := egresstest.NewServer(t, true, f)
	port := mustPort(t, srv.URL)
	dns := egresstest.NewDNS(t, egresstest.Hostile)
	if first, err := dns.Resolver().LookupNetIP(context.Background(), "ip4", "rebind.example.com"); err != nil || first[0].String() != "1.1.1.1" {
		t.Fatalf("the rebinding name's first answer: %v, %v", first, err)
	}
	conn := mercury.New(mercury.Config{Egress: egress.Options{Resolver: dns.Resolver(), Timeout: 5 * time.Second}})
	const notPublic = "the project's Mercury base_url leads to an address that is not public (loopback, private, link-local or reserved), so Mercury was not asked: the owner must correct the project's credentials"
	for _, host := range egresstest.Refused {
		h := connectortest.New(t, conn)
		h.Credentials = []byte(`{"token": "` + mercurytest.Token + `", "base_url": "https://` + host + `:` + port + `/api/v1"}`)
		_, err := h.Call(ctx, `{"operation": "accounts"}`)
		if got := connectortest.Text(err); got != "invalid_request: "+notPublic {
			t.Errorf("%s: accounts: %q", host, got)
		}
		// A payment to a saved payee: read the payee, then pay.
		_, err = h.Call(ctx, pay(mercurytest.AcmeID, "5", "ach"))
		if got := connectortest.Text(err); !strings.HasPrefix(got, "invalid_request: ") || !strings.Contains(got, "leads to an address that is not public") {
			t.Errorf("%s: pay_invoice: %q", host, got)
		}
		if h.Paid() != 0 {
			t.Errorf("%s: the refused payment is counted: %d", host, h.Paid())
		}
	}
	if n := dns.Count("rebind.example.com", egresstest.TypeA); n < 2 {
		t.Fatalf("the rebinding name was looked up %d times", n)
	}
	// The service's own base URL goes through the same guard.
	h := connectortest.New(t, mercury.New(mercury.Config{BaseURL: "https://loopback.example.com:" + port + "/api/v1", Egress: egress.Options{Resolver: dns.Resolver()}}))
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	_, err := h.Call(ctx, `{"operation": "accounts"}`)
	if got := connectortest.Text(err); got != "internal_error: Mercury's host resolves to an address that is not public, so it was not asked" {
		t.Errorf("the default base: %q", got)
	}
	if srv.Conns() != 0 || f.Payments() != 0 {
		t.Fatalf("the loopback listener got %d connections, %d payments", srv.Conns(), f.Payments())
	}
}

// A redirect is not followed, to another host least of all, even where
// loopback may be reached (serve --dev): the other listener hears nothing.
func TestNoRedirect(t *testing.T) {
	t.Parallel()
	other := egresstest.NewServer(t, false, http.NotFoundHandler())
	to := "http://localhost:" + mustPort(t, other.URL) + "/api/v1/accounts"
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	}))
	h := connectortest.New(t, mercury.New(mercury.Config{BaseURL: srv.URL + "/api/v1", Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	_, err := h.Call(ctx, `{"operation": "accounts"}`)
	if got := connectortest.Text(err); got != "upstream_unavailable: Mercury answered 307 (temporary redirect); try again later" {
		t.Fatalf("%q", got)
	}
	if srv.Requests() != 1 || other.Conns() != 0 {
		t.Fatalf("%d requests; the other host got %d connections", srv.Requests(), other.Conns())
	}
}

// What goes on the wire: the base's path, then escaped segments, and a
// query encoded as RFC 3986 requires.
func TestRequestsOnTheWire(t *testing.T) {
	t.Parallel()
	f := mercurytest.New()
	var mu sync.Mutex
	var uris []string
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.Method+" "+r.RequestURI)
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	h := connectortest.New(t, mercury.New(mercury.Config{BaseURL: srv.URL + "/api/v1/", Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = []byte(`{"token": "` + mercurytest.Token + `"}`)
	out, err := h.Call(ctx, `{"operation": "transactions", "limit": 7}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /api/v1/accounts", "GET /api/v1/account/a1a1a1a1-0000-4000-8000-000000000001/transactions?limit=7"}
	if strings.Join(uris, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent %q (%s)", uris, out)
	}
}

func mustPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
