package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/migrations"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// syncBuffer is a buffer the service may write to while a test reads it,
// and awaits what is written to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed at the next write (nil: nobody is waiting).
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// next is what the buffer holds and a channel closed at its next write.
func (s *syncBuffer) next() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote == nil {
		s.wrote = make(chan struct{})
	}
	return s.b.String(), s.wrote
}

// await waits until cond holds of what the buffer holds, looking again at
// every write, for at most limit; it reports whether cond held.
func (s *syncBuffer) await(cond func(string) bool, limit time.Duration) bool {
	deadline := time.After(limit)
	for {
		text, wrote := s.next()
		if cond(text) {
			return true
		}
		select {
		case <-wrote:
		case <-deadline:
			return false
		}
	}
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs the binary's main in process with only the given environment.
func run(t testing.TB, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code := a.main(ctx, args)
	return result{code, out.String(), errb.String()}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := run(t, context.Background(), nil, "version")
	if r.code != 0 || r.stdout != "countersign "+version+"\n" {
		t.Fatalf("version: %+v", r)
	}
	if r := run(t, context.Background(), nil, "nosuch"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "nosuch"`) {
		t.Fatalf("unknown command: %+v", r)
	}
}

// pgURL is the test database with a schema of its own.
func pgURL(t testing.TB) string {
	schema := storetest.NewSchema(t)
	sep := "?"
	if strings.Contains(storetest.PostgresURL(), "?") {
		sep = "&"
	}
	return storetest.PostgresURL() + sep + "search_path=" + schema
}

func newKey(t testing.TB) string {
	r := run(t, context.Background(), nil, "keys", "new")
	if r.code != 0 || !regexp.MustCompile(`^1:[0-9a-f]{64}\n$`).MatchString(r.stdout) {
		t.Fatalf("keys new: %+v", r)
	}
	return strings.TrimSpace(r.stdout)
}

// TestServeRefusesBadSettings: each bad setting is one line naming the
// setting and the fix, a non-zero exit, and nothing written.
func TestServeRefusesBadSettings(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	migrated := pgURL(t)
	if r := run(t, context.Background(), map[string]string{"COUNTERSIGN_DATABASE_URL": migrated}, "migrate"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	ahead := pgURL(t)
	if r := run(t, context.Background(), map[string]string{"COUNTERSIGN_DATABASE_URL": ahead}, "migrate"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	bumpSchema(t, ahead)
	behind := pgURL(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()

	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"no master key", nil, nil, []string{"COUNTERSIGN_MASTER_KEY is not set", "countersign keys new"}},
		{"short master key", map[string]string{"COUNTERSIGN_MASTER_KEY": "abcd"}, nil, []string{"COUNTERSIGN_MASTER_KEY:", "keys new"}},
		{"garbled master key", map[string]string{"COUNTERSIGN_MASTER_KEY": strings.Repeat("zz", 32)}, nil, []string{"COUNTERSIGN_MASTER_KEY:", "keys new"}},
		{"unreadable key file", map[string]string{"COUNTERSIGN_MASTER_KEY_FILE": "/nonexistent/master.key"}, nil, []string{"COUNTERSIGN_MASTER_KEY_FILE: cannot read the file"}},
		{"malformed listen", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_LISTEN": "nowhere"}, nil, []string{"COUNTERSIGN_LISTEN: expected host:port"}},
		{"malformed flag", map[string]string{"COUNTERSIGN_MASTER_KEY": key}, []string{"--near-rpc", "sometimes"}, []string{"--near-rpc: expected an http(s) URL or off"}},
		{"database not postgres", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_DATABASE_URL": "mysql://db/x"}, nil, []string{"COUNTERSIGN_DATABASE_URL: expected postgres://"}},
		{"unreachable database", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_DATABASE_URL": "postgres://postgres@127.0.0.1:1/x?connect_timeout=2"}, nil, []string{"cannot reach the database named by COUNTERSIGN_DATABASE_URL", "check that PostgreSQL runs"}},
		{"schema behind", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_DATABASE_URL": behind}, nil, []string{"schema is at version 0", "run `countersign migrate`"}},
		{"schema ahead", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_DATABASE_URL": ahead}, nil, []string{"newer than this binary", "run a newer countersign"}},
		{"no embedded store", map[string]string{"COUNTERSIGN_MASTER_KEY": key}, nil, []string{"there is no embedded store", "countersign migrate"}},
		{"metrics address taken", map[string]string{"COUNTERSIGN_MASTER_KEY": key, "COUNTERSIGN_DATABASE_URL": migrated, "COUNTERSIGN_METRICS_LISTEN": taken.Addr().String()}, nil,
			[]string{"cannot listen on " + taken.Addr().String() + " for /metrics (COUNTERSIGN_METRICS_LISTEN)", "or off"}},
		{"malformed metrics address", map[string]string{"COUNTERSIGN_MASTER_KEY": key}, []string{"--metrics-listen", "9090"}, []string{"--metrics-listen: expected host:port"}},
	}
	// The refusals run side by side; the group ends when they all have.
	t.Run("refusals", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "data")
				env := map[string]string{"COUNTERSIGN_DATA_DIR": dir, "COUNTERSIGN_LISTEN": "127.0.0.1:0"}
				for k, v := range tc.env {
					env[k] = v
				}
				r := run(t, context.Background(), env, append([]string{"serve"}, tc.args...)...)
				if r.code == 0 {
					t.Fatalf("serve started: %+v", r)
				}
				if strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("not one line: %q", r.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("stderr %q does not say %q", r.stderr, w)
					}
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("the data directory was written: %v", err)
				}
			})
		}
	})
	// The refusals changed nothing: the schema behind is still empty.
	if n := tableCount(t, behind); n != 0 {
		t.Errorf("a refused serve created %d tables", n)
	}
}

func bumpSchema(t testing.TB, url string) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "INSERT INTO countersign_migrations (version, name, applied_at) VALUES (999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
}

func tableCount(t testing.TB, url string) int {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// serve starts the service and returns its base URL and a stop function
// that returns its exit code and stderr.
func serve(t testing.TB, env map[string]string, args ...string) (string, func() result) {
	t.Helper()
	s := startServe(t, env, args...)
	return s.base, s.stop
}

// serving is a serve running in process.
type serving struct {
	base string
	// metrics is the URL of its /metrics ("" when off).
	metrics string
	// db is the store it serves and log what it writes to standard
	// error, for awaiting what the service does.
	db   *sqlstore.DB
	log  *syncBuffer
	stop func() result
}

// startServe starts the service and waits until it listens.
func startServe(t testing.TB, env map[string]string, args ...string) serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	type listening struct {
		addr string
		db   *sqlstore.DB
	}
	up := make(chan listening, 1)
	// /metrics listens on any free loopback port unless the test says
	// otherwise, so that services of tests running side by side do not
	// meet on the default port.
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "COUNTERSIGN_METRICS_LISTEN" {
			return v
		}
		return "127.0.0.1:0"
	}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: getenv,
		listening: func(addr string, db *sqlstore.DB) { up <- listening{addr, db} }}
	done := make(chan int, 1)
	go func() { done <- a.main(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)) }()
	select {
	case l := <-up:
		if !strings.Contains(errb.String(), "listening on http://"+l.addr+"\n") {
			cancel()
			t.Fatalf("serve listens on %s without saying so: %s", l.addr, errb.String())
		}
		stop := func() result {
			cancel()
			select {
			case code := <-done:
				return result{code, out.String(), errb.String()}
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not stop")
				return result{}
			}
		}
		t.Cleanup(func() {
			cancel()
			if t.Failed() {
				t.Logf("serve's log:\n%s", errb.String())
			}
		})
		var metrics string
		if _, rest, ok := strings.Cut(errb.String(), "metrics on "); ok {
			metrics, _, _ = strings.Cut(rest, "\n")
		}
		return serving{base: "http://" + l.addr, metrics: metrics, db: l.db, log: &errb, stop: stop}
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d: %s", code, errb.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve did not start: %s", errb.String())
	}
	return serving{}
}

func getJSON(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v in %s", url, err, b)
		}
	}
	return resp.StatusCode
}

// TestServePprof: with PPROF the metrics listener serves Go's profiler
// beside /metrics, and the public listener still does not.
func TestServePprof(t *testing.T) {
	t.Parallel()
	srv := startServe(t, map[string]string{"COUNTERSIGN_DATA_DIR": filepath.Join(t.TempDir(), "data")}, "--dev", "--pprof", "true")
	metricsBase := strings.TrimSuffix(srv.metrics, "/metrics")
	resp, err := http.Get(metricsBase + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	heap, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(heap), "heap profile:") {
		t.Errorf("the metrics listener's /debug/pprof/heap: %d %.200s", resp.StatusCode, heap)
	}
	if code := getJSON(t, srv.metrics, nil); code != 200 {
		t.Errorf("/metrics beside the profiler answered %d", code)
	}
	if code := getJSON(t, srv.base+"/debug/pprof/", nil); code != 404 {
		t.Errorf("the public listener answered /debug/pprof/ %d", code)
	}
	if r := srv.stop(); r.code != 0 {
		t.Fatalf("serve exited %d: %s", r.code, r.stderr)
	}
}

// TestServeDev is the README's first command: nothing set, the service
// answers /healthz, says what it filled in, and stops cleanly.
func TestServeDev(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	srv := startServe(t, map[string]string{"COUNTERSIGN_DATA_DIR": dir}, "--dev")
	base, stop := srv.base, srv.stop
	var health map[string]any
	if code := getJSON(t, base+"/healthz", &health); code != 200 {
		t.Fatalf("/healthz answered %d", code)
	}
	if len(health) != 3 || health["service"] != "countersign" || health["version"] != version || health["schema"] != float64(migrations.Latest()) {
		t.Fatalf("/healthz = %v", health)
	}
	if code := getJSON(t, base+"/readyz", nil); code != 200 {
		t.Fatalf("/readyz answered %d", code)
	}
	// /metrics is served on its own listener, not the public one.
	if code := getJSON(t, base+"/metrics", nil); code != 404 {
		t.Errorf("the public listener answered /metrics %d", code)
	}
	if !strings.HasSuffix(srv.metrics, "/metrics") || srv.metrics == base+"/metrics" {
		t.Fatalf("metrics at %q", srv.metrics)
	}
	resp, err := http.Get(srv.metrics)
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(scraped), `countersign_http_requests_total{code="200",route="/healthz"} 1`) {
		t.Errorf("the metrics listener: %d %s", resp.StatusCode, scraped)
	}
	// Go's profiler is served nowhere unless PPROF says so.
	for _, u := range []string{srv.metrics[:len(srv.metrics)-len("/metrics")], base} {
		if code := getJSON(t, u+"/debug/pprof/", nil); code != 404 {
			t.Errorf("%s/debug/pprof/ answered %d without PPROF", u, code)
		}
	}
	// The binary serves the page's service worker at the root of its scope.
	if resp, err := http.Get(base + "/sw.js"); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("/sw.js: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	r := stop()
	if r.code != 0 {
		t.Fatalf("serve exited %d: %s", r.code, r.stderr)
	}
	recipient := strings.TrimPrefix(base, "http://")
	for _, want := range []string{"dev: storage: the embedded store", "dev: master key: generated", "dev: NEAR RPC: off", "dev: webhooks: loopback", "dev: pushes: endpoints on any host",
		`dev: recipient: owners sign for "` + recipient + `" (the public origin ` + base + `; COUNTERSIGN_RECIPIENT sets another)`} {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr does not say %q once:\n%s", want, r.stderr)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "master.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("master key file: %v %v", info, err)
	}
	key, _ := os.ReadFile(filepath.Join(dir, "master.key"))
	if strings.Contains(r.stderr, strings.TrimSpace(strings.SplitN(string(key), ":", 2)[1])) {
		t.Fatal("the master key was printed")
	}

	// A second start reuses the key and says so; an explicit setting wins.
	_, stop = serve(t, map[string]string{"COUNTERSIGN_DATA_DIR": dir, "COUNTERSIGN_NEAR_RPC": "http://127.0.0.1:1"}, "--dev")
	r = stop()
	if strings.Contains(r.stderr, "generated") || !strings.Contains(r.stderr, "dev: master key: "+filepath.Join(dir, "master.key")) ||
		strings.Contains(r.stderr, "NEAR RPC: off") {
		t.Fatalf("second start:\n%s", r.stderr)
	}
}

// TestMigrateServeDoctorOnPostgres is the production path.
func TestMigrateServeDoctorOnPostgres(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"COUNTERSIGN_DATABASE_URL": pgURL(t),
		"COUNTERSIGN_MASTER_KEY":   newKey(t),
		"COUNTERSIGN_NEAR_RPC":     "off",
	}
	if r := run(t, context.Background(), env, "doctor"); r.code != 1 || !strings.Contains(r.stdout, fmt.Sprintf("FAIL schema (version 0, binary needs %d): the database schema is at version 0", migrations.Latest())) {
		t.Fatalf("doctor before migrate: %+v", r)
	}
	r := run(t, context.Background(), env, "migrate")
	if r.code != 0 || !strings.Contains(r.stdout, "applied migrations [1 2") {
		t.Fatalf("migrate: %+v", r)
	}
	if r := run(t, context.Background(), env, "migrate"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("schema is current (version %d)", migrations.Latest())) {
		t.Fatalf("second migrate: %+v", r)
	}
	if r := run(t, context.Background(), env, "doctor"); r.code != 0 || strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "ok   webhook egress: https to public") ||
		!strings.Contains(r.stdout, "ok   push egress: the push services' hosts only") ||
		!strings.Contains(r.stdout, `ok   public origin http://127.0.0.1:8080: owners sign for the recipient "127.0.0.1:8080"`) ||
		!strings.Contains(r.stdout, "ok   metrics: /metrics on 127.0.0.1:9090, apart from the public listener") {
		t.Fatalf("doctor after migrate: %+v", r)
	}
	env["COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE"] = "true"
	if r := run(t, context.Background(), env, "doctor"); r.code != 1 || !strings.Contains(r.stdout, "FAIL webhook egress: COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE is on") {
		t.Fatalf("doctor with private webhooks: %+v", r)
	}
	delete(env, "COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE")
	env["COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT"] = "true"
	if r := run(t, context.Background(), env, "doctor"); r.code != 1 || !strings.Contains(r.stdout, "FAIL push egress: COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT is on") {
		t.Fatalf("doctor with pushes to any host: %+v", r)
	}
	delete(env, "COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT")
	base, stop := serve(t, env)
	var health map[string]any
	if code := getJSON(t, base+"/healthz", &health); code != 200 || health["schema"] != float64(migrations.Latest()) {
		t.Fatalf("/healthz %d %v", code, health)
	}
	r = stop()
	if r.code != 0 {
		t.Fatalf("serve: %+v", r)
	}
	if strings.Contains(r.stderr, env["COUNTERSIGN_MASTER_KEY"][2:]) {
		t.Fatal("the master key reached the log")
	}
}
