package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"countersign/httpapi"
	"countersign/migrations"
	"countersign/store/storetest"
	"countersign/web"
)

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	var logs bytes.Buffer
	api := httpapi.New(httpapi.Options{Version: "1.2.3", Store: db,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	srv := httptest.NewServer(api)
	defer srv.Close()
	metricsSrv := httptest.NewServer(api.Metrics())
	defer metricsSrv.Close()

	body := get(t, srv.URL+"/healthz?token=os_secret", 200)
	var health map[string]any
	if err := json.Unmarshal(body, &health); err != nil {
		t.Fatal(err)
	}
	if len(health) != 3 || health["service"] != "countersign" || health["version"] != "1.2.3" || health["schema"] != float64(migrations.Latest()) {
		t.Fatalf("/healthz = %s", body)
	}
	get(t, srv.URL+"/readyz", 200)
	get(t, srv.URL+"/nosuch", 404)
	// /metrics is not public (SPEC §15): the public handler does not know
	// it; the metrics handler, served on a listener of its own, does, and
	// serves nothing else.
	get(t, srv.URL+"/metrics", 404)
	get(t, metricsSrv.URL+"/healthz", 404)
	metrics := string(get(t, metricsSrv.URL+"/metrics", 200))
	for _, want := range []string{`countersign_http_requests_total{code="200",route="/healthz"} 1`, `countersign_http_requests_total{code="404",route="unmatched"} 2`, "go_goroutines"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(logs.String(), "os_secret") || !strings.Contains(logs.String(), `"route":"/healthz"`) {
		t.Errorf("request log: %s", logs.String())
	}

	db.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/readyz with the store closed: %d", resp.StatusCode)
	}
}

func get(t *testing.T, url string, want int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, b, want)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.Contains(url, "metrics") {
		t.Fatalf("GET %s: content type %q", url, ct)
	}
	return b
}

func TestInboxPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "x", Store: storetest.SQLite(t), PublicURL: "https://Inbox.Example:443"}))
	defer srv.Close()
	fetch := func() (*http.Response, string) {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := fetch()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.HasPrefix(csp, "default-src 'none'") {
		t.Fatalf("GET /: %d %q %s", resp.StatusCode, csp, body)
	}
	// The page is the inbox: it loads the hashed bundle under the nonce its
	// CSP names, and tells the page the recipient owners sign for (the
	// public origin's host, SPEC §7).
	nonce, ok := strings.CutPrefix(strings.Fields(strings.SplitN(csp, "script-src ", 2)[1])[0], "'nonce-")
	nonce = strings.TrimSuffix(nonce, "';")
	nonce = strings.TrimSuffix(nonce, "'")
	if !ok || len(nonce) < 22 {
		t.Fatalf("the page's CSP %q names no script nonce", csp)
	}
	for _, want := range []string{`<script type="module" nonce="` + nonce + `" src="` + web.Script() + `">`,
		`<style>`, `<meta name="countersign-recipient" content="inbox.example">`, `<meta name="countersign-network" content="mainnet">`, `id="inbox-app"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
		t.Errorf("the page carries inline script or style attributes:\n%s", body)
	}
	for _, want := range []string{"script-src 'nonce-" + nonce + "'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the page's CSP %q lacks %s", csp, want)
		}
	}
	// Scripts run only under the nonce; styles may be inline (near-connect's
	// picker carries a style element without one); nothing is wildcarded.
	script := strings.SplitN(strings.SplitN(csp, "script-src ", 2)[1], ";", 2)[0]
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "strict-dynamic", "http"} {
		if strings.Contains(script, bad) {
			t.Errorf("the page's script-src %q allows %s", script, bad)
		}
	}
	if strings.Contains(csp, "*") || strings.Contains(csp, "unsafe-eval") || strings.Contains(body, "countersign-sandbox-wallet") {
		t.Errorf("the page's CSP %q or body allows too much:\n%s", csp, body)
	}
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
		"Cross-Origin-Opener-Policy": "same-origin-allow-popups", "X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if again, _ := fetch(); again.Header.Get("Content-Security-Policy") == csp {
		t.Errorf("two answers share the nonce of %q", csp)
	}

	// The bundle it names is served from /assets/, cached for good.
	a, err := http.Get(srv.URL + web.Script())
	if err != nil {
		t.Fatal(err)
	}
	a.Body.Close()
	if a.StatusCode != 200 || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/javascript") ||
		!strings.Contains(a.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("GET %s: %d %v", web.Script(), a.StatusCode, a.Header)
	}
	r, err := http.Get(srv.URL + web.Prefix + "nosuch.js")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Fatalf("an unknown asset: %d", r.StatusCode)
	}
}

// The page's CSP lets the page reach every host its wallets need, as
// web/src/wallet.ts lists them (each executor's host and the NEAR RPC), and
// the sandbox wallet only when offered.
func TestInboxPageCSPNamesTheWalletsHosts(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../web/src/wallet.ts")
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(https://[a-z0-9.-]+)/[^"]*(?:\.js|/repository/)"|"(https://rpc\.[a-z]+\.near\.org)"`).FindAllStringSubmatch(string(src), -1) {
		hosts[m[1]+m[2]] = true
	}
	if len(hosts) < 3 {
		t.Fatalf("found only %v in wallet.ts: the test reads it wrong", hosts)
	}
	for _, dev := range []bool{false, true} {
		srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "x", Store: storetest.SQLite(t), SandboxWallet: dev, NearNetwork: "testnet"}))
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		connect := strings.Fields(strings.SplitN(strings.SplitN(csp, "connect-src ", 2)[1], ";", 2)[0])
		for h := range hosts {
			if !slices.Contains(connect, h) {
				t.Errorf("connect-src %v lacks %s, which wallet.ts names", connect, h)
			}
		}
		if !strings.Contains(string(body), `<meta name="countersign-network" content="testnet">`) {
			t.Errorf("the page does not name the testnet:\n%s", body)
		}
		offered := strings.Contains(string(body), `<meta name="countersign-sandbox-wallet" content="`+web.SandboxWallet()+`">`)
		if offered != dev {
			t.Errorf("SandboxWallet %v: the page offers the sandbox wallet: %v", dev, offered)
		}
	}
}
