package wasm_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/abi"
	"countersign/connectors/wasm/wasmtest"
	"countersign/egress"
	"countersign/egress/egresstest"
)

// run calls one of the hostile module's operations directly, as the
// platform does, with no limit of the platform's own around it.
func run(t *testing.T, m *wasm.Module, op, args string) (any, error) {
	t.Helper()
	o, ok := m.Connector.Operation(op)
	if !ok {
		t.Fatalf("no operation %s", op)
	}
	return o.Run(ctx, &connectors.Call{Operation: op, Args: json.RawMessage(args), Owner: "alice.near", Agent: "agent.near",
		Project: "hostile", Now: time.Now(), Policy: m.Connector.ParsePolicy([]byte("{}"))})
}

// TestModulesThatMisbehaveAreStopped: a module that loops forever is
// stopped at its compute limit; one that allocates without bound at its
// memory limit; one that traps, exits or panics ends its call. Each is a
// failure the agent reads (internal_error with a sentence naming no
// content), and the host serves the next call as before.
func TestModulesThatMisbehaveAreStopped(t *testing.T) {
	t.Parallel()
	m := wasmtest.Load(t, hostile, wasm.Options{})
	for _, tc := range []struct {
		op, want string
		within   time.Duration
	}{
		{"spin", "internal_error: the connector's module ran past its compute limit of 1s and was stopped", 10 * time.Second},
		{"hog", "internal_error: the connector's module ran out of memory (at most 64 MiB) and was stopped", 90 * time.Second},
		{"trap", "internal_error: the connector's module failed: it trapped: out of bounds memory access", 10 * time.Second},
		{"exit", "internal_error: the connector's module exited with code 3", 10 * time.Second},
	} {
		t.Run(tc.op, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, m, tc.op, `{}`)
			if connectortest.Text(err) != tc.want {
				t.Fatalf("got %q, want %q", connectortest.Text(err), tc.want)
			}
			if took := time.Since(start); took > tc.within {
				t.Fatalf("stopped after %s", took)
			}
			// The host goes on: the next call runs.
			if _, err := run(t, m, "reach", `{"url": "https://elsewhere.example/"}`); countersign.ErrorCode(err) != countersign.Internal ||
				!strings.Contains(err.Error(), "host its manifest does not name") {
				t.Fatalf("the next call: %v", err)
			}
		})
	}

	// A panic is the module's own failure: internal_error, its value not
	// passed on.
	h := connectortest.New(t, m.Connector)
	_, err := h.Call(ctx, `{"operation": "boom"}`)
	if connectortest.Text(err) != "internal_error: internal error" || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a panic: %v", err)
	}
}

// TestConcurrentCallsAreBounded: more calls than instances wait for a
// free one, and every one is answered.
func TestConcurrentCallsAreBounded(t *testing.T) {
	t.Parallel()
	m := wasmtest.Load(t, hostile, wasm.Options{Instances: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := run(t, m, "reach", `{"url": "https://elsewhere.example/"}`)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !strings.Contains(connectortest.Text(err), "host its manifest does not name") {
			t.Fatal(err)
		}
	}
}

// TestEgressRefusals: a module reaches only its manifest's hosts, over
// https, at public addresses: a host outside the manifest, another scheme,
// a loopback address named in the manifest, and a name that resolves to
// loopback are refused, and nothing reaches the server behind them.
func TestEgressRefusals(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	dns := egresstest.NewDNS(t, egresstest.Fixed(map[string][]string{"allowed.example": {"127.0.0.1"}, "reachable.example": {"127.0.0.1"}}))
	dir := connectorDir(t, hostile, func(m *abi.Manifest) {
		m.Egress.Hosts = append(m.Egress.Hosts, "allowed.example:"+port, "127.0.0.1:"+port)
	}, nil)
	m := wasmtest.Load(t, dir, wasm.Options{Egress: egress.Options{Resolver: dns.Resolver(), Timeout: 5 * time.Second}})
	h := connectortest.New(t, m.Connector)
	h.Credentials = []byte(`{"token": "t0k3n", "key": "k3y"}`)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"a host outside the manifest", "https://elsewhere.example/", "a host its manifest does not name"},
		{"a port outside the manifest", "https://allowed.example:8443/", "a host its manifest does not name"},
		{"http", "http://allowed.example:" + port + "/", "https to one of its manifest's hosts"},
		{"userinfo", "https://me@allowed.example:" + port + "/", "https to one of its manifest's hosts"},
		{"a loopback address in the manifest", "https://127.0.0.1:" + port + "/", "https to one of its manifest's hosts, at a public address"},
		{"a name resolving to loopback", "https://allowed.example:" + port + "/", "resolves to an address that is not public"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Call(ctx, `{"operation": "reach", "url": "`+tc.url+`"}`)
			if countersign.ErrorCode(err) != countersign.Internal || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want internal_error saying %q", err, tc.want)
			}
		})
	}
	if srv.Conns() != 0 {
		t.Fatalf("%d connections reached the server", srv.Conns())
	}

	// The same module, wired for development (private hosts allowed, its
	// host sent to the server): the request goes through, so the refusals
	// above were the rules', not a server out of reach.
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	dev := wasmtest.Load(t, connectorDir(t, hostile, nil, nil), wasm.Options{
		Egress:   egress.Options{AllowPrivate: true, RootCAs: roots, Timeout: 5 * time.Second},
		Redirect: map[string]string{"allowed.example": "https://127.0.0.1:" + port}})
	dh := connectortest.New(t, dev.Connector)
	dh.Credentials = h.Credentials
	out, err := dh.Call(ctx, `{"operation": "reach", "url": "https://allowed.example/"}`)
	if err != nil || string(out) != `{"status":204}` || srv.Conns() == 0 {
		t.Fatalf("the development call: %s %v (%d connections)", out, err, srv.Conns())
	}
}

// TestCredentialsNeverReachTheModule: the host attaches the project's
// credentials as the manifest says (a header and a query member), the
// upstream receives them, and the module — which echoes everything it can
// see: its call, its environment, files, and an upstream that echoes
// every request back in its body and headers — holds them nowhere, in
// its answer or anywhere in its memory. A module asking for them (its
// environment, files) gets nothing.
func TestCredentialsNeverReachTheModule(t *testing.T) {
	t.Parallel()
	const token, key = "tok-CANARY-5d1c2f9a", "key CANARY/7e3b+01"
	var seen struct {
		sync.Mutex
		auth, key string
	}
	echo := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Lock()
		seen.auth, seen.key = r.Header.Get("Authorization"), r.URL.Query().Get("key")
		seen.Unlock()
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		w.Header().Set("Location", r.URL.String())
		// Echoed as Go writes JSON, and as servers that escape "/" as
		// "\/" (PHP's default) do.
		_ = json.NewEncoder(w).Encode(map[string]any{"header": r.Header, "url": r.URL.String(), "raw_query": r.URL.RawQuery,
			"slashes": json.RawMessage(`"` + strings.ReplaceAll(r.URL.Query().Get("key"), "/", `\/`) + `"`)})
	}))
	var mu sync.Mutex
	var memories int
	leaked := ""
	m := wasmtest.Load(t, hostile, wasm.Options{
		Egress:   egress.Options{AllowPrivate: true, Timeout: 5 * time.Second},
		Redirect: map[string]string{"allowed.example": echo.URL},
		Inspect: func(mem []byte) {
			mu.Lock()
			defer mu.Unlock()
			memories++
			for _, s := range []string{token, key, url.QueryEscape(key), "CANARY"} {
				if strings.Contains(string(mem), s) {
					leaked = s
				}
			}
		},
	})
	h := connectortest.New(t, m.Connector)
	h.Credentials = []byte(`{"token": "` + token + `", "key": "` + key + `"}`)
	out, err := h.Call(ctx, `{"operation": "echo", "url": "https://allowed.example/v1/echo?q=1"}`)
	if err != nil {
		t.Fatal(err)
	}
	seen.Lock()
	if seen.auth != "Bearer "+token || seen.key != key {
		t.Fatalf("the upstream saw Authorization %q and key %q: the credentials were not attached", seen.auth, seen.key)
	}
	seen.Unlock()
	if strings.Contains(string(out), "CANARY") {
		t.Fatalf("the module's answer holds a credential: %s", out)
	}
	if !strings.Contains(string(out), "Bearer [credential]") {
		t.Fatalf("the echo's answer did not come through, redacted: %s", out)
	}
	mu.Lock()
	if memories == 0 || leaked != "" {
		t.Fatalf("memory inspected %d times; a credential (%q) was in it", memories, leaked)
	}
	mu.Unlock()
	var got struct {
		Environ []string          `json:"environ"`
		Argv    []string          `json:"argv"`
		Files   map[string]string `json:"-"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Environ) != 0 || len(got.Argv) != 0 {
		t.Fatalf("the module saw an environment %q and arguments %q", got.Environ, got.Argv)
	}
	var all map[string]any
	_ = json.Unmarshal(out, &all)
	for _, f := range []string{"/etc/passwd", "/proc/self/environ", "."} {
		if all["file "+f] != "" || all["file error "+f] == nil {
			t.Fatalf("the module read %s: %v", f, all["file "+f])
		}
	}
}

// TestNoCredentialsNoRequest: a project without the credentials the
// manifest declares is refused before any request, in words for the owner.
func TestNoCredentialsNoRequest(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.NotFoundHandler())
	m := wasmtest.Load(t, hostile, wasm.Options{Egress: egress.Options{AllowPrivate: true},
		Redirect: map[string]string{"allowed.example": srv.URL}})
	h := connectortest.New(t, m.Connector)
	for _, creds := range []string{"", `{"token": "t"}`, `{"token": "t", "key": "k", "other": "o"}`, `{"token": 5, "key": "k"}`, `[]`} {
		h.Credentials = []byte(creds)
		_, err := h.Call(context.Background(), `{"operation": "reach", "url": "https://allowed.example/"}`)
		if countersign.ErrorCode(err) != countersign.InvalidRequest || !strings.Contains(err.Error(), `{"key": …, "token": …}`) {
			t.Fatalf("credentials %s: %v", creds, err)
		}
	}
	if srv.Requests() != 0 {
		t.Fatalf("%d requests left", srv.Requests())
	}
}

// TestAnswerRunsThatMisbehave: an answer run whose module traps or
// overruns ends its task failed with a refusal the agent reads, saying
// nothing was written — or, when a request had left, that it is not known.
func TestAnswerRunsThatMisbehave(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	m := wasmtest.Load(t, hostile, wasm.Options{Egress: egress.Options{AllowPrivate: true},
		Redirect: map[string]string{"allowed.example": srv.URL}})
	h := connectortest.New(t, m.Connector)
	h.Policy = []byte(`{"confirm": ["ask"]}`)
	h.Credentials = []byte(`{"token": "t", "key": "k"}`)
	for _, tc := range []struct{ then, want string }{
		{"trap", "internal_error: The connector's module failed: it trapped: out of bounds memory access. Nothing was written."},
		// The platform's compute limit and the module's are one: which
		// of them words the failure is a race (the platform's reads
		// "internal_error: internal error", its task run_unfinished).
		{"spin", ""},
		{"reach", "internal_error: The connector's module failed: it trapped: out of bounds memory access. Whether the write happened is not known."},
	} {
		out, err := h.Call(ctx, `{"operation": "ask", "then": "`+tc.then+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		task, err := h.Awaiting(out)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, _, err = h.Answer(ctx, task, nil, "")
		got := connectortest.Text(err)
		s, _ := h.Status(task.Task.ID)
		if tc.want == "" {
			if !strings.HasPrefix(got, "internal_error: ") || s.State != countersign.StateFailed || time.Since(start) > 10*time.Second {
				t.Errorf("%s: got %q after %s, the task %+v", tc.then, got, time.Since(start), s)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.then, got, tc.want)
		}
		if s.State != countersign.StateFailed || s.FailureReason != "run_refused:internal_error" {
			t.Errorf("%s: the task ended %+v", tc.then, s)
		}
	}
	if srv.Requests() != 1 {
		t.Fatalf("%d requests reached the host", srv.Requests())
	}
}
