package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign/httpapi"
	"countersign/migrations"
	"countersign/store/storetest"
)

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	var logs bytes.Buffer
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "1.2.3", Store: db,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	defer srv.Close()

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
	metrics := string(get(t, srv.URL+"/metrics", 200))
	for _, want := range []string{`countersign_http_requests_total{code="200",route="/healthz"} 1`, `countersign_http_requests_total{code="404",route="unmatched"} 1`, "go_goroutines"} {
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

func TestLandingPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "x", Store: storetest.SQLite(t)}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "countersign inbox show") ||
		!strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, b)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the page's CSP %q lacks %s", csp, want)
		}
	}
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
		"Cross-Origin-Opener-Policy": "same-origin", "X-Frame-Options": "DENY"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
}
