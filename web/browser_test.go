package web_test

// The page's crypto in a real Chromium, driven by chromedp: the shipped
// bundle, loaded by a test-only harness page (testdata/harness.js) that the
// test serves on loopback (a secure context, so WebCrypto is there), checked
// against the contract's vectors and against the Go side both ways. One
// browser serves every test of the binary, one tab each.

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"countersign/servicetest"
	"countersign/web"
)

// browserNames are the executables chromedp can drive, Debian's first.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell", "headless_shell"}

var shared struct {
	once   sync.Once
	ctx    context.Context // the browser's; tabs are made from it
	cancel func()
	srv    *httptest.Server
	err    error
	skip   string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// harnessPage loads the harness, which loads the shipped bundle.
const harnessPage = `<!doctype html><html><head><meta charset="utf-8"><title>harness</title></head><body>
<script>window.BUNDLE = %q;</script>
<script type="module" src="/harness.js"></script>
</body></html>`

func startBrowser() {
	path := ""
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		msg := "no Chromium found (" + strings.Join(browserNames, ", ") + "); install Debian's chromium"
		if os.Getenv("CI") != "" {
			shared.err = errors.New(msg)
		} else {
			shared.skip = msg
			fmt.Fprintln(os.Stderr, "web: "+msg+": the browser tests skip (under CI they fail)")
		}
		return
	}
	mux := http.NewServeMux()
	mux.Handle(web.Prefix, web.Assets())
	mux.HandleFunc("/harness.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeFile(w, r, "testdata/harness.js")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, harnessPage, web.Script())
	})
	shared.srv = httptest.NewServer(mux)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	shared.ctx = ctx
	shared.cancel = func() { cancelCtx(); cancelAlloc() }
	// The first run starts the browser, which lives as long as its context:
	// it takes no timeout.
	if err := chromedp.Do(ctx); err != nil {
		shared.err = fmt.Errorf("start %s: %w", path, err)
	}
}

// tab opens the harness in a new tab of the shared browser.
func tab(t testing.TB) context.Context {
	t.Helper()
	ctx := blankTab(t, 30*time.Second)
	load(t, ctx)
	return ctx
}

// blankTab opens a new tab of the shared browser, to be closed after
// timeout at the latest.
func blankTab(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	shared.once.Do(startBrowser)
	if shared.skip != "" {
		t.Skip(shared.skip + " (under CI=true this fails)")
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	// A browser context of its own: its own cookies, storage and IndexedDB,
	// so the tests' sessions and device keys never meet.
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	// Tabs side by side: each behaves as the focused one, so focus and keys
	// work in every test at once.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// siblingTab opens the harness in a new tab beside ctx's, in the same
// browser context (the same cookies, storage and IndexedDB).
func siblingTab(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	sib, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	load(t, sib)
	return sib
}

// load (re)loads the harness in the tab.
func load(t testing.TB, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(shared.srv.URL+"/"),
		chromedp.Poll[chromedp.Void](`window.harness !== undefined`, chromedp.WithPollingTimeout(20*time.Second)),
	); err != nil {
		t.Fatalf("the harness did not load: %v", err)
	}
}

// call runs harness.fn(arg) in the tab and decodes its answer into out.
func call(t testing.TB, ctx context.Context, fn string, arg, out any) {
	t.Helper()
	b, err := json.Marshal(arg)
	if err != nil {
		t.Fatal(err)
	}
	expr := fmt.Sprintf("harness.%s(%s)", fn, b)
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("harness.%s: %v", fn, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("harness.%s answered %s: %v", fn, raw, err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newP256(t testing.TB) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// followClock keeps the world's clock at this machine's time while the test
// runs. The page dates its approvals and confirmations by the real clock,
// and the service refuses one dated more than a minute ahead of its own: a
// slow test (a loaded machine) would otherwise be refused for its slowness.
func followClock(t testing.TB, w *servicetest.World) {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if d := time.Since(w.Clock.Now()); d > 0 {
					w.Clock.Add(d)
				}
			}
		}
	}()
}
