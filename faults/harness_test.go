package faults

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/connectors/github/githubtest"
	"countersign/device"
	"countersign/store/storetest"
)

// binary is the countersign binary TestMain builds once for every test.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "countersign-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "countersign")
	if out, err := exec.Command("go", "build", "-o", binary, "countersign/cmd/countersign").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requestLimit bounds every request a test sends: an answer slower than
// this is a hang.
const requestLimit = 10 * time.Second

// Where the comments every task makes go: the fake GitHub's seeded
// repository and its issue.
const (
	repo    = "sandbox/hello"
	issue   = 2
	project = "gh"
)

// world is one database with its settings, the fake GitHub the projects
// write to, and the operator commands of the built binary.
type world struct {
	t   *testing.T
	env []string // the COUNTERSIGN_* settings every command gets
	gh  *githubtest.Server
	tok string
}

// newWorld migrates the database at dbURL and starts the fake GitHub.
func newWorld(t *testing.T, dbURL string) *world {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	tok := make([]byte, 12)
	_, _ = rand.Read(tok)
	w := &world{t: t, tok: "faults_" + hex.EncodeToString(tok), env: []string{
		"COUNTERSIGN_DATABASE_URL=" + dbURL,
		"COUNTERSIGN_MASTER_KEY=" + hex.EncodeToString(key),
		"COUNTERSIGN_NEAR_RPC=off",
		"COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE=true",
		"COUNTERSIGN_AGENT_CALLS_PER_MINUTE=1000000",
		"COUNTERSIGN_LOG_LEVEL=warn",
		// Servers sharing a database are one deployment: owners sign for
		// one recipient whichever server they reach.
		"COUNTERSIGN_RECIPIENT=" + recipient,
	}}
	w.gh = githubtest.New(w.tok, "sandbox").Start()
	t.Cleanup(w.gh.Close)
	w.gh.Seed()
	w.run("migrate")
	return w
}

// testDatabase is a schema of the tests' PostgreSQL that is this test's own.
func testDatabase(t *testing.T) string {
	schema := storetest.NewSchema(t)
	sep := "?"
	if strings.Contains(storetest.PostgresURL(), "?") {
		sep = "&"
	}
	return storetest.PostgresURL() + sep + "search_path=" + schema
}

// environ is this process's environment without COUNTERSIGN_* and with the
// world's settings.
func (w *world) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COUNTERSIGN_") {
			env = append(env, kv)
		}
	}
	return append(env, w.env...)
}

// run runs an operator command to its end and returns what it printed.
func (w *world) run(args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = w.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("countersign %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

var keyLine = regexp.MustCompile(`(?m)^ak_\S+$`)

// agent creates an agent with plenty of credit and returns its key.
func (w *world) agent(account string) string {
	w.t.Helper()
	key := keyLine.FindString(w.run("agent", "create", "--account", account))
	if key == "" {
		w.t.Fatalf("agent create %s printed no key", account)
	}
	w.run("agent", "credit", "--account", account, "--micro-usd", "100000000")
	return key
}

// project gives owner the github project "gh" writing to the fake, asking
// the owner before every comment, granted to agents.
func (w *world) project(owner string, agents ...string) {
	w.t.Helper()
	dir := w.t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	creds := filepath.Join(dir, "creds.json")
	p, _ := json.Marshal(map[string]any{"actions": []string{"issue_comment"}, "confirm": []string{"issue_comment"},
		"repos": []string{"sandbox/*"}, "max_writes_per_day": 100000})
	c, _ := json.Marshal(map[string]string{"token": w.tok, "base_url": w.gh.URL})
	if err := os.WriteFile(policy, p, 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(creds, c, 0o600); err != nil {
		w.t.Fatal(err)
	}
	args := []string{"project", "put", "--owner", owner, "--name", project, "--connector", "github", "--policy", policy, "--credentials", creds}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	w.run(args...)
}

// comments counts the comments on the fake's issue by body: the side
// effects of the answer runs, as GitHub holds them.
func (w *world) comments() map[string]int {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/repos/%s/issues/%d/comments", w.gh.URL, repo, issue), nil)
	req.Header.Set("Authorization", "Bearer "+w.tok)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 {
		w.t.Fatalf("list comments: %d %v", resp.StatusCode, err)
	}
	n := map[string]int{}
	for _, c := range list {
		n[c.Body]++
	}
	return n
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// server is `countersign serve` running as a subprocess.
type server struct {
	t    *testing.T
	addr string
	base string
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{} // closed when the process has exited
	// listening: the process said it listens.
	listening bool
}

// lockedBuffer is standard error of a server, written while tests read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveFresh starts `countersign serve --dev` (as serve does) on a loopback
// address nothing listened on: the address is free when chosen, but a
// port the system hands out meanwhile (one of the sandbox's fakes in that
// very process) may take it, and the start is then made again on another.
func (w *world) serveFresh() *server {
	w.t.Helper()
	for attempt := 1; ; attempt++ {
		s, taken := w.start(freeAddr(w.t))
		if !taken || attempt == 3 {
			return s.ready()
		}
		w.t.Logf("the address %s was taken before serve listened on it: starting again on another", s.addr)
	}
}

// serve starts `countersign serve --dev` on addr with the world's settings
// (the database, master key and NEAR RPC given explicitly; --dev lets the
// GitHub connector reach the fake over plain http) and waits until it
// listens. The process is killed when the test ends, or when this test
// binary dies.
func (w *world) serve(addr string) *server {
	w.t.Helper()
	s, _ := w.start(addr)
	return s.ready()
}

// ready fails the test unless the server listens.
func (s *server) ready() *server {
	s.t.Helper()
	if !s.listening {
		s.t.Fatalf("serve exited: %s", s.log.String())
	}
	return s
}

// start starts serve on addr and waits until it listens (listening) or
// exits: taken says it exited because the address was in use.
func (w *world) start(addr string) (s *server, taken bool) {
	w.t.Helper()
	s = &server{t: w.t, addr: addr, base: "http://" + addr, log: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binary, "serve", "--dev", "--listen", addr, "--metrics-listen", "off", "--data-dir", filepath.Join(w.t.TempDir(), "data"))
	s.cmd.Env = w.environ()
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := storetest.StartOwned(s.cmd); err != nil {
		w.t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	w.t.Cleanup(func() {
		s.kill()
		if w.t.Failed() {
			w.t.Logf("the log of the server on %s (last 4000 bytes):\n%s", addr, tail(s.log.String(), 4000))
		}
	})
	deadline := time.After(60 * time.Second)
	for !strings.Contains(s.log.String(), "listening on http://"+addr) {
		select {
		case <-s.done:
			return s, strings.Contains(s.log.String(), "(COUNTERSIGN_LISTEN): listen tcp "+addr+": bind: address already in use")
		case <-deadline:
			w.t.Fatalf("serve did not listen within a minute: %s", s.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.listening = true
	return s, false
}

// kill ends the process with SIGKILL, at once, and waits for it to go.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.t.Errorf("the server on %s did not die of SIGKILL", s.addr)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// httpClient is a client bounded by requestLimit whose connections come
// from the loopback address local ("" for any).
func httpClient(local string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	return &http.Client{Timeout: requestLimit, Transport: &http.Transport{DialContext: d.DialContext,
		MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}
}

// loopback is the i-th of the addresses owners sign in from, so that no
// address signs in more than eight owners (sign-ins are limited per
// address).
func loopback(i int) string { return fmt.Sprintf("127.0.0.%d", 2+i/8) }

// recipient is the NEP-413 recipient of every server of a world.
const recipient = "countersign-faults"

// newOwner signs in a device of a new NEAR-implicit account at base, from
// the loopback address local.
func newOwner(t *testing.T, base, local string) *device.Device {
	t.Helper()
	wallet, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	key, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	d := &device.Device{Account: wallet.AccountID, Key: key, Signer: device.WalletSigner{Wallet: wallet}, Recipient: recipient,
		Client: &client.Client{BaseURL: base, HTTP: httpClient(local)}}
	ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
	defer cancel()
	sess, err := d.SignIn(ctx, 24*time.Hour)
	if err != nil {
		t.Fatalf("sign in %s: %v", d.Account, err)
	}
	d.Client.Session = sess.Token
	return d
}

// at is the same device speaking to another server.
func at(d *device.Device, base string) *device.Device {
	c := *d.Client
	c.BaseURL = base
	o := *d
	o.Client = &c
	return &o
}

// task is one task a test opened: who prepared it for whom, and the body
// of the comment it asks to post.
type task struct {
	id    string
	owner *device.Device
	agent *client.Client
	body  string
}

// openComment has agent ask to comment body on the fake's issue for owner.
func openComment(ctx context.Context, agent *client.Client, owner, body string) (string, error) {
	raw, err := agent.Call(ctx, owner, project, "issue_comment", map[string]any{"repo": repo, "number": issue, "body": body}, nil)
	if err != nil {
		return "", err
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "awaiting_owner" || a.TaskID == "" {
		return "", fmt.Errorf("issue_comment answered %s", raw)
	}
	return a.TaskID, nil
}

// approveRequest opens the task on its owner's device and signs its
// approval, ready to send.
func approveRequest(ctx context.Context, k *task) (client.ApproveRequest, error) {
	view, err := k.owner.Client.Task(ctx, k.id)
	if err != nil {
		return client.ApproveRequest{}, err
	}
	opened, err := k.owner.Open(view)
	if err != nil {
		return client.ApproveRequest{}, err
	}
	return k.owner.ApproveRequest(opened, nil, "")
}

// terminal reports whether a task state is final.
func terminal(state string) bool {
	switch state {
	case "done", "failed", "rejected", "cancelled", "expired", "void":
		return true
	}
	return false
}

// finalStates asks task_status of every task until each is terminal or the
// deadline passes, and returns each task's last status by id.
func finalStates(t *testing.T, tasks []*task, deadline time.Time) map[string]client.TaskStatus {
	t.Helper()
	last := map[string]client.TaskStatus{}
	pending := append([]*task(nil), tasks...)
	for len(pending) > 0 {
		var still []*task
		var mu sync.Mutex
		// A status that does not come back leaves its task pending.
		parallel(t, pending, 8, func(ctx context.Context, k *task) error {
			st, err := k.agent.Status(ctx, k.owner.Account, project, k.id, 0)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				last[k.id] = st
			}
			if err != nil || !terminal(st.State) {
				still = append(still, k)
			}
			return nil
		})
		pending = still
		if len(pending) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	return last
}

// parallel runs f on every task, n at a time, each bounded by
// requestLimit, and fails the test with the first error.
func parallel(t *testing.T, tasks []*task, n int, f func(context.Context, *task) error) {
	t.Helper()
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for _, k := range tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
			defer cancel()
			if err := f(ctx, k); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

// isTransport reports whether err is a failure to get any answer (as
// opposed to an answer that refuses).
func isTransport(err error) bool {
	var e *client.Error
	var r *client.Refusal
	return err != nil && !errors.As(err, &e) && !errors.As(err, &r)
}

// percentile is the p-th percentile (0–100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// summary is "n=…, p50=…, p99=…, max=…" of durations.
func summary(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d p50=%s p99=%s max=%s", len(s), percentile(s, 50).Round(100*time.Microsecond),
		percentile(s, 99).Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}
