package gmail_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/connectors/connectortest"
	"countersign/connectors/gmail"
	"countersign/connectors/gmail/gmailtest"
	"countersign/egress"
	"countersign/egress/egresstest"
)

// credsAt are the fake's credentials naming base and token URLs.
func credsAt(base, token string) []byte {
	m := map[string]string{"client_id": gmailtest.ClientID, "client_secret": gmailtest.ClientSecret, "refresh_token": gmailtest.RefreshToken}
	if base != "" {
		m["base_url"] = base
	}
	if token != "" {
		m["token_url"] = token
	}
	b, _ := json.Marshal(m)
	return b
}

const (
	list = `{"operation": "messages_list"}`
	send = `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`
	// sent ends a refusal of a direct send.
	sent = "; nothing was sent. Nothing was written."
)

// A project's base_url and token_url are checked by the egress rules
// before any request, the token's included; nothing reaches the loopback
// listener they name, and nothing is sent.
func TestURLRefusals(t *testing.T) {
	t.Parallel()
	f := gmailtest.New()
	srv := egresstest.NewServer(t, true, f)
	port := mustPort(t, srv.URL)
	const fix = ": the owner must correct the project's credentials"
	for _, tt := range []struct{ base, token, want string }{
		{"http://gmail.googleapis.com", "", "The project's base_url must use https" + fix},
		{"", "http://oauth2.googleapis.com/token", "The project's token_url must use https" + fix},
		{"", "https://u:p@oauth2.googleapis.com/token", "The project's token_url must not contain a user name or password" + fix},
		{"https://gmail.googleapis.com?alt=json", "", "The project's base_url must not have a query (?…)" + fix},
		{"", "https://oauth2.googleapis.com/token#x", "The project's token_url must not have a fragment (#…)" + fix},
		{"https://gmail.googleapis.com/a/..", "", "The project's base_url's path must not have empty, . or .. segments" + fix},
		{"https://127.0.0.1:" + port, "", "The project's base_url must name a public host" + fix},
		{"", "https://127.0.0.1:" + port + "/token", "The project's token_url must name a public host" + fix},
		{"", "https://[::1]:" + port + "/token", "The project's token_url must name a public host" + fix},
		{"https://localhost:" + port, "", "The project's base_url must name a public host" + fix},
		{"https://10.0.0.1", "", "The project's base_url must name a public host" + fix},
		{"https://192.168.1.1", "", "The project's base_url must name a public host" + fix},
		{"", "https://169.254.169.254/computeMetadata/v1/token", "The project's token_url must name a public host" + fix},
		{"https://[fd00::1]", "", "The project's base_url must name a public host" + fix},
	} {
		h := connectortest.New(t, gmail.New(gmail.Config{}))
		h.Credentials = credsAt(tt.base, tt.token)
		for body, want := range map[string]string{list: "invalid_request: " + tt.want, send: "invalid_request: " + tt.want + sent} {
			_, err := h.Call(ctx, body)
			if got := connectortest.Text(err); got != want {
				t.Errorf("%s %s:\n got %q\nwant %q", tt.base, tt.token, got, want)
			}
		}
	}
	if srv.Conns() != 0 || len(f.Sent()) != 0 {
		t.Fatalf("the loopback listener got %d connections, %d messages", srv.Conns(), len(f.Sent()))
	}
}

// tokenHere answers requests to the host oauth2.example.net with the fake, in
// process, above the guard; every other request goes through the guard.
func tokenHere(f *gmailtest.Fake) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host != "oauth2.example.net" {
				return rt.RoundTrip(r)
			}
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, r)
			return rec.Result(), nil
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Names that resolve to addresses that are not public are refused when
// dialed, the token endpoint's and Gmail's, whatever they resolved to
// before.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	f := gmailtest.New()
	srv := egresstest.NewServer(t, true, f)
	port := mustPort(t, srv.URL)
	dns := egresstest.NewDNS(t, egresstest.Hostile)
	if first, err := dns.Resolver().LookupNetIP(context.Background(), "ip4", "rebind.example.com"); err != nil || first[0].String() != "1.1.1.1" {
		t.Fatalf("the rebinding name's first answer: %v, %v", first, err)
	}
	conn := gmail.New(gmail.Config{Egress: egress.Options{Resolver: dns.Resolver(), Timeout: 5 * time.Second, Wrap: tokenHere(f)}})
	const (
		token = "invalid_request: The project's token_url leads to an address that is not public (loopback, private, link-local or reserved), so Google was not asked: the owner must correct the project's credentials"
		base  = "invalid_request: The project's base_url leads to an address that is not public (loopback, private, link-local or reserved), so Gmail was not asked: the owner must correct the project's credentials"
	)
	for _, host := range egresstest.Refused {
		h := connectortest.New(t, conn)
		h.Credentials = credsAt("", "https://"+host+":"+port+"/token")
		for body, want := range map[string]string{list: token, send: token + sent} {
			if _, err := h.Call(ctx, body); connectortest.Text(err) != want {
				t.Errorf("token at %s: %q", host, connectortest.Text(err))
			}
		}
		// The token comes from the in-process fake; Gmail's host is dialed.
		h.Credentials = credsAt("https://"+host+":"+port, "https://oauth2.example.net/token")
		if _, err := h.Call(ctx, list); connectortest.Text(err) != base {
			t.Errorf("base at %s: %q", host, connectortest.Text(err))
		}
		if _, err := h.Call(ctx, send); connectortest.Text(err) != base+sent {
			t.Errorf("base at %s: %q", host, connectortest.Text(err))
		}
	}
	if n := dns.Count("rebind.example.com", egresstest.TypeA); n < 2 {
		t.Fatalf("the rebinding name was looked up %d times", n)
	}
	// The service's own URLs go through the same guard.
	h := connectortest.New(t, gmail.New(gmail.Config{TokenURL: "https://loopback.example.com:" + port + "/token", Egress: egress.Options{Resolver: dns.Resolver()}}))
	h.Credentials = credsAt("", "")
	if _, err := h.Call(ctx, list); connectortest.Text(err) != "internal_error: Google's token endpoint resolves to an address that is not public, so it was not asked" {
		t.Errorf("the default token URL: %q", connectortest.Text(err))
	}
	h = connectortest.New(t, gmail.New(gmail.Config{BaseURL: "https://loopback.example.com:" + port, TokenURL: "https://oauth2.example.net/token", Egress: egress.Options{Resolver: dns.Resolver(), Wrap: tokenHere(f)}}))
	h.Credentials = credsAt("", "")
	if _, err := h.Call(ctx, list); connectortest.Text(err) != "internal_error: Gmail's host resolves to an address that is not public, so it was not asked" {
		t.Errorf("the default base: %q", connectortest.Text(err))
	}
	if srv.Conns() != 0 || len(f.Sent()) != 0 {
		t.Fatalf("the loopback listener got %d connections, %d messages", srv.Conns(), len(f.Sent()))
	}
}

// No redirect is followed, to another host least of all, even where
// loopback may be reached (serve --dev): the other listener hears nothing.
func TestNoRedirect(t *testing.T) {
	t.Parallel()
	f := gmailtest.New()
	other := egresstest.NewServer(t, false, f)
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			f.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, "http://localhost:"+mustPort(t, other.URL)+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	h := connectortest.New(t, gmail.New(gmail.Config{BaseURL: srv.URL, TokenURL: srv.URL + "/token", Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = credsAt("", "")
	if _, err := h.Call(ctx, list); connectortest.Text(err) != "upstream_unavailable: Gmail answered 307 (temporary redirect); try again later" {
		t.Fatalf("list: %q", connectortest.Text(err))
	}
	if _, err := h.Call(ctx, send); !strings.HasPrefix(connectortest.Text(err), "upstream_unavailable: Gmail answered 307") {
		t.Fatalf("send: %q", connectortest.Text(err))
	}
	if other.Conns() != 0 || len(f.Sent()) != 0 {
		t.Fatalf("the other host got %d connections, %d messages", other.Conns(), len(f.Sent()))
	}
}

// What goes on the wire: the message id as an escaped segment, and query
// values encoded as RFC 3986 requires (a space as %20, "+" as %2B).
func TestRequestsOnTheWire(t *testing.T) {
	t.Parallel()
	f := gmailtest.New()
	var mu sync.Mutex
	var uris []string
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.Method+" "+r.RequestURI)
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	h := connectortest.New(t, gmail.New(gmail.Config{BaseURL: srv.URL + "/", TokenURL: srv.URL + "/token", Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = credsAt("", "")
	if _, err := h.Call(ctx, `{"operation": "messages_list", "q": "from:dana is:unread a+b&c=d é", "max_results": 5, "page_token": "x/y"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, `{"operation": "message_get", "id": "18c0000000000001", "format": "raw"}`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POST /token",
		"GET /gmail/v1/users/me/messages?maxResults=5&pageToken=x%2Fy&q=from%3Adana%20is%3Aunread%20a%2Bb%26c%3Dd%20%C3%A9",
		"POST /token",
		"GET /gmail/v1/users/me/messages/18c0000000000001?format=raw",
	}
	if strings.Join(uris, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent\n%s\nwant\n%s", strings.Join(uris, "\n"), strings.Join(want, "\n"))
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
