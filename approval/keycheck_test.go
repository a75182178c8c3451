package approval_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/approval"
	"countersign/approval/neartest"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newChecker(t *testing.T, url string, clock *fakeClock, client *http.Client) *approval.RPCChecker {
	t.Helper()
	cfg := approval.RPCConfig{URL: url, Client: client}
	if clock != nil {
		cfg.Now = clock.Now
	}
	c, err := approval.NewRPCChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newFake(t *testing.T) *neartest.Server {
	t.Helper()
	f := neartest.New()
	t.Cleanup(f.Close)
	return f
}

func TestRPCCheckerOutcomes(t *testing.T) {
	t.Parallel()
	full, _ := approval.GenerateKey()
	limited, _ := approval.GenerateKey()
	stranger, _ := approval.GenerateKey()
	own, _ := approval.GenerateKey()
	ownEth := secpKey(t, 40)
	implicit := approval.ImplicitAccountID(own.PublicKey())
	ethImplicit := approval.ImplicitAccountID(ownEth.PublicKey())
	existingImplicitKey, _ := approval.GenerateKey()
	existingImplicit := approval.ImplicitAccountID(existingImplicitKey.PublicKey())

	shapes := []neartest.MissingShape{neartest.MissingLegacy, neartest.MissingStructured, neartest.MissingAccountStructured}
	for _, shape := range shapes {
		t.Run(fmt.Sprintf("shape %d", shape), func(t *testing.T) {
			f := newFake(t)
			f.SetMissingShape(shape)
			f.AddKey("alice.near", full.PublicKey().String(), neartest.FullAccess())
			f.AddKey("alice.near", limited.PublicKey().String(), neartest.FunctionCall("app.near", "vote"))
			// An implicit account that exists on chain and no longer has
			// its own key (the owner rotated it away).
			f.AddKey(existingImplicit, full.PublicKey().String(), neartest.FullAccess())
			c := newChecker(t, f.URL(), nil, nil)
			cases := []struct {
				name    string
				account string
				key     approval.PublicKey
				want    approval.KeyStatus
			}{
				{"full access", "alice.near", full.PublicKey(), approval.KeyFullAccess},
				{"function call", "alice.near", limited.PublicKey(), approval.KeyLimited},
				{"unknown key", "alice.near", stranger.PublicKey(), approval.KeyUnknown},
				{"unknown account", "nobody.near", full.PublicKey(), approval.KeyUnknown},
				{"implicit, not on chain", implicit, own.PublicKey(), approval.KeyImplicit},
				{"eth implicit, not on chain", ethImplicit, ownEth.PublicKey(), approval.KeyImplicit},
				{"implicit, other key", implicit, stranger.PublicKey(), approval.KeyUnknown},
				{"implicit on chain, own key removed", existingImplicit, existingImplicitKey.PublicKey(), approval.KeyUnknown},
				{"implicit on chain, its full-access key", existingImplicit, full.PublicKey(), approval.KeyFullAccess},
			}
			for _, tc := range cases {
				got, err := c.CheckKey(context.Background(), tc.account, tc.key)
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if got != tc.want {
					t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
				}
			}
			for _, r := range f.Log() {
				if r.Method != "query" || r.Finality != "final" {
					t.Fatalf("request %+v is not a query at finality final", r)
				}
			}
		})
	}
}

func TestRPCCheckerAsksViewAccessKeyWithTheKey(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	k, _ := approval.GenerateKey()
	f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
	c := newChecker(t, f.URL(), nil, nil)
	if _, err := c.CheckKey(context.Background(), "alice.near", k.PublicKey()); err != nil {
		t.Fatal(err)
	}
	log := f.Log()
	if len(log) != 1 {
		t.Fatalf("%d requests", len(log))
	}
	want := neartest.Request{Method: "query", RequestType: "view_access_key", Finality: "final", AccountID: "alice.near", PublicKey: k.PublicKey().String()}
	if log[0] != want {
		t.Fatalf("got %+v", log[0])
	}
}

func TestRPCCheckerCache(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	k, _ := approval.GenerateKey()
	f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
	clock := &fakeClock{now: t0}
	c := newChecker(t, f.URL(), clock, nil)
	ctx := context.Background()
	check := func(want approval.KeyStatus) {
		t.Helper()
		got, err := c.CheckKey(ctx, "alice.near", k.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	check(approval.KeyFullAccess)
	if n := f.Requests(); n != 1 {
		t.Fatalf("first check made %d requests", n)
	}
	// The key goes away on chain; within 5 minutes the cached answer stands
	// and no request is made.
	f.RemoveKey("alice.near", k.PublicKey().String())
	clock.Advance(5*time.Minute - time.Second)
	check(approval.KeyFullAccess)
	if n := f.Requests(); n != 1 {
		t.Fatalf("a check within 5 minutes made a request (%d in all)", n)
	}
	// At 5 minutes the answer is stale: one request, the new answer.
	clock.Advance(time.Second)
	check(approval.KeyUnknown)
	if n := f.Requests(); n != 2 {
		t.Fatalf("a check after 5 minutes made %d requests in all, want 2", n)
	}
	// Negative answers are cached too.
	check(approval.KeyUnknown)
	if n := f.Requests(); n != 2 {
		t.Fatalf("a cached negative answer made a request (%d in all)", n)
	}
	// Failures are not cached: the RPC goes down after the cache expires,
	// then comes back.
	clock.Advance(6 * time.Minute)
	f.SetMode(neartest.Down500)
	if _, err := c.CheckKey(ctx, "alice.near", k.PublicKey()); !errors.Is(err, approval.ErrUpstreamUnavailable) {
		t.Fatalf("down: %v", err)
	}
	f.SetMode(neartest.Up)
	f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
	check(approval.KeyFullAccess)
	if n := f.Requests(); n != 4 {
		t.Fatalf("%d requests in all, want 4", n)
	}
	// Another key of the same account is its own cache entry.
	other, _ := approval.GenerateKey()
	if s, err := c.CheckKey(ctx, "alice.near", other.PublicKey()); err != nil || s != approval.KeyUnknown {
		t.Fatalf("other key: %v %v", s, err)
	}
	if n := f.Requests(); n != 5 {
		t.Fatalf("%d requests in all, want 5", n)
	}
}

func TestRPCCheckerCacheBound(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	clock := &fakeClock{now: t0}
	c, err := approval.NewRPCChecker(approval.RPCConfig{URL: f.URL(), Now: clock.Now, MaxCacheEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := make([]approval.PrivateKey, 5)
	for i := range keys {
		keys[i], _ = approval.GenerateKey()
		if _, err := c.CheckKey(ctx, "alice.near", keys[i].PublicKey()); err != nil {
			t.Fatal(err)
		}
	}
	// With room for 3, at least 2 of the 5 answers were dropped: asking all
	// five again makes at least 2 new requests, and never more than 5.
	before := f.Requests()
	for _, k := range keys {
		if _, err := c.CheckKey(ctx, "alice.near", k.PublicKey()); err != nil {
			t.Fatal(err)
		}
	}
	if d := f.Requests() - before; d < 2 || d > 5 {
		t.Fatalf("%d new requests", d)
	}
}

func TestRPCCheckerUnavailable(t *testing.T) {
	t.Parallel()
	k, _ := approval.GenerateKey()
	modes := map[string]neartest.Mode{
		"HTTP 500":          neartest.Down500,
		"closed connection": neartest.DownClose,
		"HTML page":         neartest.DownGarbage,
		"hang":              neartest.DownHang,
	}
	for name, mode := range modes {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
			f.SetMode(mode)
			c := newChecker(t, f.URL(), nil, &http.Client{Timeout: 300 * time.Millisecond})
			s, err := c.CheckKey(context.Background(), "alice.near", k.PublicKey())
			if !errors.Is(err, approval.ErrUpstreamUnavailable) || s != 0 {
				t.Fatalf("want upstream unavailable and no status, got %v %v", s, err)
			}
			if strings.Contains(err.Error(), f.URL()) || strings.Contains(fmt.Sprint(errors.Unwrap(err)), f.URL()) {
				t.Fatal("the error names the RPC URL")
			}
		})
	}
	t.Run("context cancelled", func(t *testing.T) {
		f := newFake(t)
		f.SetMode(neartest.DownHang)
		c := newChecker(t, f.URL(), nil, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := c.CheckKey(ctx, "alice.near", k.PublicKey()); !errors.Is(err, approval.ErrUpstreamUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c := newChecker(t, url, nil, nil)
		if _, err := c.CheckKey(context.Background(), "alice.near", k.PublicKey()); !errors.Is(err, approval.ErrUpstreamUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("implicit account, view_account down", func(t *testing.T) {
		// view_access_key answers, then the node goes down before
		// view_account: no verdict.
		own, _ := approval.GenerateKey()
		var calls int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls > 1 {
				http.Error(w, "down", http.StatusBadGateway)
				return
			}
			id := requestID(t, r)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%q,"result":{"error":"access key %s does not exist while viewing","logs":[],"block_height":1,"block_hash":"x"}}`, id, own.PublicKey())
		}))
		defer srv.Close()
		c := newChecker(t, srv.URL, nil, nil)
		acct := approval.ImplicitAccountID(own.PublicKey())
		if _, err := c.CheckKey(context.Background(), acct, own.PublicKey()); !errors.Is(err, approval.ErrUpstreamUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
}

// requestID reads the JSON-RPC id of a request.
func requestID(t *testing.T, r *http.Request) string {
	var req struct {
		ID string `json:"id"`
	}
	if err := jsonDecode(r, &req); err != nil {
		t.Errorf("decoding request: %v", err)
	}
	return req.ID
}

// TestRPCCheckerAnswers feeds the checker hand-written RPC answers: each
// that is not a trustworthy answer must be UpstreamUnavailable.
func TestRPCCheckerAnswers(t *testing.T) {
	t.Parallel()
	k, _ := approval.GenerateKey()
	ok := func(result string) string { return `{"jsonrpc":"2.0","id":ID,"result":` + result + `}` }
	handlerErr := func(cause string) string {
		return `{"jsonrpc":"2.0","id":ID,"error":{"name":"HANDLER_ERROR","cause":{"name":"` + cause + `","info":{}},"code":-32000,"message":"Server error","data":"x"}}`
	}
	cases := []struct {
		name   string
		status int
		body   string
		want   approval.KeyStatus // 0: UpstreamUnavailable
	}{
		{"full access", 200, ok(`{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}`), approval.KeyFullAccess},
		{"function call", 200, ok(`{"nonce":5,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"a.near","method_names":[]}},"block_height":1,"block_hash":"h"}`), approval.KeyLimited},
		{"other permission object", 200, ok(`{"nonce":5,"permission":{"GasKeyFunctionCall":{}},"block_height":1,"block_hash":"h"}`), approval.KeyLimited},
		{"other permission string", 200, ok(`{"nonce":5,"permission":"fullaccess","block_height":1,"block_hash":"h"}`), approval.KeyLimited},
		{"legacy missing key", 200, ok(`{"error":"access key ed25519:x does not exist while viewing","logs":[],"block_height":1,"block_hash":"h"}`), approval.KeyUnknown},
		{"legacy missing account", 200, ok(`{"error":"account alice.near does not exist while viewing","logs":[],"block_height":1,"block_hash":"h"}`), approval.KeyUnknown},
		{"structured missing key", 200, handlerErr("UNKNOWN_ACCESS_KEY"), approval.KeyUnknown},
		{"structured missing account", 200, handlerErr("UNKNOWN_ACCOUNT"), approval.KeyUnknown},
		{"legacy other error string", 200, ok(`{"error":"wasm execution failed","logs":[],"block_height":1,"block_hash":"h"}`), 0},
		{"unknown block", 200, handlerErr("UNKNOWN_BLOCK"), 0},
		{"no synced blocks", 200, handlerErr("NO_SYNCED_BLOCKS"), 0},
		{"unavailable shard", 200, handlerErr("UNAVAILABLE_SHARD"), 0},
		{"internal error", 200, `{"jsonrpc":"2.0","id":ID,"error":{"name":"INTERNAL_ERROR","cause":{"name":"INTERNAL_ERROR","info":{}}}}`, 0},
		{"timeout error", 408, `{"jsonrpc":"2.0","id":ID,"error":{"name":"HANDLER_ERROR","cause":{"name":"TIMEOUT_ERROR"}}}`, 0},
		{"missing key on HTTP 500", 500, handlerErr("UNKNOWN_ACCESS_KEY"), 0},
		{"full access on HTTP 503", 503, ok(`{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}`), 0},
		{"legacy error without cause", 200, `{"jsonrpc":"2.0","id":ID,"error":{"code":-32000,"message":"Server error","data":"access key does not exist while viewing"}}`, 0},
		{"handler error without cause", 200, `{"jsonrpc":"2.0","id":ID,"error":{"name":"HANDLER_ERROR"}}`, 0},
		{"wrong id", 200, strings.Replace(ok(`{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}`), "ID", `"other"`, 1), 0},
		{"numeric id", 200, strings.Replace(ok(`{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}`), "ID", `1`, 1), 0},
		{"no jsonrpc", 200, `{"id":ID,"result":{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}}`, 0},
		{"jsonrpc 1.0", 200, `{"jsonrpc":"1.0","id":ID,"result":{"nonce":5,"permission":"FullAccess","block_height":1}}`, 0},
		{"no result", 200, `{"jsonrpc":"2.0","id":ID}`, 0},
		{"null result", 200, ok(`null`), 0},
		{"array result", 200, ok(`[]`), 0},
		{"result without permission", 200, ok(`{"nonce":5,"block_height":1,"block_hash":"h"}`), 0},
		{"result without nonce", 200, ok(`{"permission":"FullAccess","block_height":1,"block_hash":"h"}`), 0},
		{"result without block height", 200, ok(`{"nonce":5,"permission":"FullAccess"}`), 0},
		{"permission number", 200, ok(`{"nonce":5,"permission":7,"block_height":1}`), 0},
		{"permission empty object", 200, ok(`{"nonce":5,"permission":{},"block_height":1}`), 0},
		{"nonce as string", 200, ok(`{"nonce":"5","permission":"FullAccess","block_height":1}`), 0},
		{"not JSON", 200, `<html>bad gateway</html>`, 0},
		{"empty body", 200, ``, 0},
		{"truncated", 200, ok(`{"nonce":5,"permission":"FullAcc`), 0},
		{"too large", 200, ok(`{"nonce":5,"permission":"FullAccess","block_height":1,"pad":"` + strings.Repeat("x", 300<<10) + `"}`), 0},
		{"redirect", 302, ``, 0},
		{"not found", 404, ``, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id := requestID(t, r)
				if tc.status == 302 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, strings.Replace(tc.body, "ID", fmt.Sprintf("%q", id), 1))
			}))
			defer srv.Close()
			c := newChecker(t, srv.URL, nil, nil)
			got, err := c.CheckKey(context.Background(), "alice.near", k.PublicKey())
			if tc.want == 0 {
				if !errors.Is(err, approval.ErrUpstreamUnavailable) {
					t.Fatalf("want upstream unavailable, got %v %v", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestRPCCheckerRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c := newChecker(t, f.URL(), nil, nil)
	k, _ := approval.GenerateKey()
	if _, err := c.CheckKey(context.Background(), "Alice", k.PublicKey()); approval.KindOf(err) != approval.Malformed {
		t.Fatalf("bad account: %v", err)
	}
	if _, err := c.CheckKey(context.Background(), "alice.near", approval.PublicKey{}); approval.KindOf(err) != approval.Malformed {
		t.Fatalf("zero key: %v", err)
	}
	if f.Requests() != 0 {
		t.Fatal("bad input reached the RPC")
	}
	for _, u := range []string{"", "ftp://x", "localhost:3030", "http://", "::"} {
		if _, err := approval.NewRPCChecker(approval.RPCConfig{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}

func TestOffChecker(t *testing.T) {
	t.Parallel()
	own, _ := approval.GenerateKey()
	other, _ := approval.GenerateKey()
	eth := secpKey(t, 50)
	implicit := approval.ImplicitAccountID(own.PublicKey())
	var c approval.OffChecker
	ctx := context.Background()
	if s, err := c.CheckKey(ctx, implicit, own.PublicKey()); err != nil || s != approval.KeyImplicit {
		t.Fatalf("own key: %v %v", s, err)
	}
	if s, err := c.CheckKey(ctx, approval.ImplicitAccountID(eth.PublicKey()), eth.PublicKey()); err != nil || s != approval.KeyImplicit {
		t.Fatalf("own eth key: %v %v", s, err)
	}
	if s, err := c.CheckKey(ctx, implicit, other.PublicKey()); err != nil || s != approval.KeyUnknown {
		t.Fatalf("other key: %v %v", s, err)
	}
	_, err := c.CheckKey(ctx, "alice.near", own.PublicKey())
	if approval.KindOf(err) != approval.UnknownKey || !strings.Contains(err.Error(), "NEAR RPC is off") {
		t.Fatalf("named account: %v", err)
	}
}

func TestKeyStatusNames(t *testing.T) {
	t.Parallel()
	for s, want := range map[approval.KeyStatus]string{
		approval.KeyFullAccess: "full access", approval.KeyImplicit: "implicit",
		approval.KeyLimited: "limited", approval.KeyUnknown: "unknown", 0: "invalid",
	} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
	if !approval.KeyFullAccess.MayAct() || !approval.KeyImplicit.MayAct() || approval.KeyLimited.MayAct() || approval.KeyUnknown.MayAct() {
		t.Error("MayAct")
	}
}

func TestRPCCheckerConcurrent(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	keys := make([]approval.PrivateKey, 8)
	for i := range keys {
		keys[i], _ = approval.GenerateKey()
		if i%2 == 0 {
			f.AddKey("alice.near", keys[i].PublicKey().String(), neartest.FullAccess())
		}
	}
	c := newChecker(t, f.URL(), nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range keys {
				s, err := c.CheckKey(context.Background(), "alice.near", k.PublicKey())
				want := approval.KeyUnknown
				if i%2 == 0 {
					want = approval.KeyFullAccess
				}
				if err != nil || s != want {
					errs <- fmt.Errorf("key %d: %v %v", i, s, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
