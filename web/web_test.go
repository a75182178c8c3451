package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"countersign/web"
)

// TestAssets: the bundle is served at its hashed name with a year's
// immutable caching, its type and nosniff, for GET and HEAD only; any other
// name is 404.
func TestAssets(t *testing.T) {
	t.Parallel()
	script := web.Script()
	if !regexp.MustCompile(`^/assets/inbox-[A-Z0-9]{8}\.js$`).MatchString(script) {
		t.Fatalf("Script() = %q, want /assets/inbox-{hash}.js", script)
	}
	want, err := os.ReadFile("dist/" + path.Base(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Assets())
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + script)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != string(want) {
		t.Fatalf("GET %s: %d, %d bytes; want 200 and the %d bytes of dist/", script, resp.StatusCode, len(body), len(want))
	}
	for k, v := range map[string]string{
		"Content-Type":           "text/javascript; charset=utf-8",
		"Cache-Control":          "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("GET %s: %s is %q, want %q", script, k, got, v)
		}
	}

	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodHead, script, http.StatusOK},
		{http.MethodPost, script, http.StatusMethodNotAllowed},
		{http.MethodGet, "/assets/", http.StatusNotFound},
		{http.MethodGet, "/assets/inbox-00000000.js", http.StatusNotFound},
		{http.MethodGet, "/assets/../web.go", http.StatusNotFound},
		{http.MethodGet, "/assets/dist/" + path.Base(script), http.StatusNotFound},
		{http.MethodGet, "/" + path.Base(script), http.StatusNotFound},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
	}
}

// TestBundleHoldsNoTestCode: dist/ holds one page script, and the harness
// the browser tests load is not in what ships.
func TestBundleHoldsNoTestCode(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("dist")
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "inbox-") && strings.HasSuffix(e.Name(), ".js") {
			scripts++
		}
	}
	if scripts != 1 {
		t.Errorf("dist/ holds %d inbox-*.js; want the one the sources build (run go generate ./web)", scripts)
	}
	for _, e := range entries {
		b, err := os.ReadFile("dist/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"harness", "BUNDLE"} {
			if strings.Contains(string(b), s) {
				t.Errorf("dist/%s holds %q, which only the tests use", e.Name(), s)
			}
		}
	}
}
