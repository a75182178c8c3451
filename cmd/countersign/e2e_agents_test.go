package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/store/sqlstore"
)

// service is a migrated database, operator commands and a running serve,
// all through the binary's own main.
type service struct {
	t    testing.TB
	env  map[string]string
	base string
	rpc  *neartest.Server
	// db is the running serve's store, log what it wrote to standard
	// error.
	db  *sqlstore.DB
	log *syncBuffer
}

func newService(t testing.TB) *service {
	t.Helper()
	rpc := neartest.New()
	t.Cleanup(rpc.Close)
	s := &service{t: t, rpc: rpc, env: map[string]string{
		"COUNTERSIGN_DATABASE_URL": pgURL(t),
		"COUNTERSIGN_MASTER_KEY":   newKey(t),
		"COUNTERSIGN_NEAR_RPC":     rpc.URL(),
	}}
	s.run("migrate")
	return s
}

// run runs an operator command and fails the test if it fails.
func (s *service) run(args ...string) string {
	s.t.Helper()
	r := run(s.t, context.Background(), s.env, args...)
	if r.code != 0 {
		s.t.Fatalf("countersign %s: %+v", strings.Join(args, " "), r)
	}
	return r.stdout
}

func (s *service) start() {
	s.t.Helper()
	srv := startServe(s.t, s.env)
	s.base, s.db, s.log = srv.base, srv.db, srv.log
}

// awaitSubscriber waits until the store serves a subscription to owner's
// task events: a task_wait (or an event stream) is listening. Nothing
// announces a subscription, so this looks again every few milliseconds.
func awaitSubscriber(t testing.TB, db *sqlstore.DB, owner string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for db.Subscribers(owner) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens to the task events of %s", owner)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var keyLine = regexp.MustCompile(`(?m)^ak_\S+$`)

func (s *service) agent(account string, microUSD int64) *client.Client {
	s.t.Helper()
	key := keyLine.FindString(s.run("agent", "create", "--account", account))
	if key == "" {
		s.t.Fatal("agent create printed no key")
	}
	if microUSD > 0 {
		s.run("agent", "credit", "--account", account, "--micro-usd", fmt.Sprint(microUSD))
	}
	return &client.Client{BaseURL: s.base, AgentKey: key}
}

func (s *service) project(owner, name, policy string, agents ...string) {
	s.t.Helper()
	file := filepath.Join(s.t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		s.t.Fatal(err)
	}
	args := []string{"project", "put", "--owner", owner, "--name", name, "--connector", "probe", "--policy", file}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	s.run(args...)
}

// balance reads an agent's balance from `agent list`.
func (s *service) balance(account string) int64 {
	s.t.Helper()
	for _, line := range strings.Split(s.run("agent", "list"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == account {
			var b int64
			fmt.Sscan(f[1], &b)
			return b
		}
	}
	s.t.Fatalf("agent %s is not listed", account)
	return 0
}

func refusalCode(err error) string {
	var r *client.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return "not a refusal: " + fmt.Sprint(err)
}

// TestAgentsCallProbe is an agent's end-to-end journey over HTTP on
// PostgreSQL, from operator commands to task operations.
func TestAgentsCallProbe(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	bot := s.agent("bot.near", 200_000)
	other := s.agent("other.near", 100_000)
	s.project("alice.near", "probe", "{}", "bot.near")
	ctx := context.Background()

	// A guess_start opens a task and costs 10,000 µUSD.
	raw, err := bot.Call(ctx, "alice.near", "probe", "guess_start", map[string]any{"max": 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first client.Awaiting
	if err := json.Unmarshal(raw, &first); err != nil || !first.OK || first.Status != "awaiting_owner" ||
		first.Thread != first.TaskID || len(first.TaskHash) != 64 || !strings.HasSuffix(first.Link, "/#/tasks/"+first.TaskID) {
		t.Fatalf("guess_start answered %s", raw)
	}
	if b := s.balance("bot.near"); b != 190_000 {
		t.Fatalf("balance after one guess_start: %d", b)
	}
	st, err := bot.Status(ctx, "alice.near", "probe", first.TaskID, 0)
	if err != nil || st.State != string(countersign.StateOpen) || st.Kind != "input" || st.Thread != first.TaskID {
		t.Fatalf("task_status: %+v %v", st, err)
	}

	// Another agent: not granted, then granted but not the preparer.
	if _, err := other.Status(ctx, "alice.near", "probe", first.TaskID, 0); refusalCode(err) != "not_granted" {
		t.Fatalf("an agent not granted: %v", err)
	}
	s.project("alice.near", "probe", "{}", "bot.near", "other.near")
	if _, err := other.Status(ctx, "alice.near", "probe", first.TaskID, 0); refusalCode(err) != "task_not_found" {
		t.Fatalf("another agent's task_status: %v", err)
	}
	if _, err := other.Call(ctx, "alice.near", "probe", "task_cancel", map[string]any{"task_id": first.TaskID}, nil); refusalCode(err) != "task_not_found" {
		t.Fatalf("another agent's task_cancel: %v", err)
	}

	// Idempotency: same key and body → the first answer, charged once;
	// same key, other body → conflict.
	opts := &client.CallOptions{IdempotencyKey: "start-1"}
	a1, err := bot.Call(ctx, "alice.near", "probe", "guess_start", map[string]any{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := bot.Call(ctx, "alice.near", "probe", "guess_start", map[string]any{}, opts)
	if err != nil || string(a1) != string(a2) {
		t.Fatalf("replay answered %s (%v), first %s", a2, err, a1)
	}
	if b := s.balance("bot.near"); b != 180_000 {
		t.Fatalf("a replay was charged: balance %d", b)
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", map[string]any{"max": 5}, opts); refusalCode(err) != "conflict" {
		t.Fatalf("the key with other arguments: %v", err)
	}

	// Up to 10 open tasks from one preparer; the 11th is inbox_full (and,
	// its run having started, charged).
	for i := 3; i <= 10; i++ {
		if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", nil, nil); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", nil, nil); refusalCode(err) != "inbox_full" {
		t.Fatalf("the 11th open task: %v", err)
	}
	if b := s.balance("bot.near"); b != 200_000-11*10_000 {
		t.Fatalf("balance after 11 runs: %d", b)
	}
	// Another preparer still has room.
	if _, err := other.Call(ctx, "alice.near", "probe", "guess_start", nil, nil); err != nil {
		t.Fatalf("another preparer: %v", err)
	}

	// tasks lists the preparer's own; cancel then delete.
	raw, err = bot.Call(ctx, "alice.near", "probe", "tasks", map[string]any{"state": countersign.StateOpen}, nil)
	var list struct{ Tasks []client.TaskStatus }
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Tasks) != 10 {
		t.Fatalf("tasks: %s %v", raw, err)
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "task_delete", map[string]any{"task_id": first.TaskID}, nil); refusalCode(err) != "invalid_request" {
		t.Fatalf("deleting an open task: %v", err)
	}
	raw, err = bot.Call(ctx, "alice.near", "probe", "task_cancel", map[string]any{"task_id": first.TaskID}, nil)
	if err != nil || !strings.Contains(string(raw), `"state":"cancelled"`) {
		t.Fatalf("task_cancel: %s %v", raw, err)
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "task_cancel", map[string]any{"task_id": first.TaskID}, nil); refusalCode(err) != "task_closed" {
		t.Fatalf("cancelling twice: %v", err)
	}
	st, _ = bot.Status(ctx, "alice.near", "probe", first.TaskID, 0)
	if st.State != string(countersign.StateCancelled) || st.OutcomeClass != "observed" {
		t.Fatalf("after cancel: %+v", st)
	}
	// A closed task changes no more: task_wait answers at once.
	began := time.Now()
	if st, err := bot.Status(ctx, "alice.near", "probe", first.TaskID, 30); err != nil || st.State != string(countersign.StateCancelled) || time.Since(began) > 5*time.Second {
		t.Fatalf("task_wait on a closed task: %+v %v after %s", st, err, time.Since(began))
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "task_delete", map[string]any{"task_id": first.TaskID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Status(ctx, "alice.near", "probe", first.TaskID, 0); refusalCode(err) != "task_not_found" {
		t.Fatalf("a deleted task: %v", err)
	}
	raw, _ = bot.Call(ctx, "alice.near", "probe", "tasks", map[string]any{"state": countersign.StateDone}, nil)
	if string(raw) != `{"tasks":[]}` {
		t.Fatalf("an empty list is %s", raw)
	}

	// task_wait answers early when the state changes.
	raw, _ = bot.Call(ctx, "alice.near", "probe", "tasks", map[string]any{"state": countersign.StateOpen}, nil)
	_ = json.Unmarshal(raw, &list)
	waited := list.Tasks[0].TaskID
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	var woke client.TaskStatus
	go func() {
		defer wg.Done()
		woke, err = bot.Status(ctx, "alice.near", "probe", waited, 30)
	}()
	awaitSubscriber(t, s.db, "alice.near")
	if _, err := bot.Call(ctx, "alice.near", "probe", "task_cancel", map[string]any{"task_id": waited}, nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err != nil || woke.State != string(countersign.StateCancelled) || time.Since(start) > 10*time.Second {
		t.Fatalf("task_wait: %+v %v after %s", woke, err, time.Since(start))
	}
}

// TestAgentCallRefusals: each refusal has its status and code, and nothing
// refused before the run starts is charged.
func TestAgentCallRefusals(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	bot := s.agent("bot.near", 25_000)
	revoked := s.agent("gone.near", 100_000)
	s.project("alice.near", "probe", "{}", "bot.near", "gone.near")
	s.project("alice.near", "broken", `{"confirm":["guess"]}`, "bot.near")
	s.run("agent", "revoke", "--account", "gone.near")
	ctx := context.Background()

	post := func(key, path, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(resp))
		return resp.StatusCode, b.String()
	}
	transport := []struct {
		name, key, body string
		status          int
		code            string
	}{
		{"no key", "", `{"operation":"guess_start"}`, 401, "unauthorized"},
		{"unknown key", "ak_" + strings.Repeat("x", 43), `{"operation":"guess_start"}`, 401, "unauthorized"},
		{"revoked key", revoked.AgentKey, `{"operation":"guess_start"}`, 401, "unauthorized"},
		{"not JSON", bot.AgentKey, `{"operation":`, 400, "invalid_request"},
		{"not an object", bot.AgentKey, `["guess_start"]`, 400, "invalid_request"},
		{"over 64 KiB", bot.AgentKey, `{"operation":"guess_start","pad":"` + strings.Repeat("x", 64<<10) + `"}`, 400, "invalid_request"},
	}
	for _, tc := range transport {
		status, body := post(tc.key, "/call/alice.near/probe", tc.body)
		if status != tc.status || !strings.Contains(body, `"success":false`) || !strings.Contains(body, `"error":"`+tc.code+": ") {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, body, tc.status, tc.code)
		}
	}
	refusals := []struct {
		name, project, op string
		args              map[string]any
		code              string
	}{
		{"project not granted", "nosuch", "guess_start", nil, "not_granted"},
		{"unknown operation", "probe", "guess_stop", nil, "invalid_request"},
		{"answer operation called", "probe", "guess", nil, "invalid_request"},
		{"unreadable policy", "broken", "guess_start", nil, "policy_unreadable"},
		{"task_status without an id", "probe", "task_status", nil, "invalid_request"},
		{"task_wait too long", "probe", "task_wait", map[string]any{"task_id": "abc-1", "timeout_s": 61}, "invalid_request"},
		{"tasks with a bad state", "probe", "tasks", map[string]any{"state": "pending"}, "invalid_request"},
		{"unknown task", "probe", "task_status", map[string]any{"task_id": "nosuch-1"}, "task_not_found"},
	}
	for _, tc := range refusals {
		_, err := bot.Call(ctx, "alice.near", tc.project, tc.op, tc.args, nil)
		if refusalCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if b := s.balance("bot.near"); b != 25_000 {
		t.Fatalf("refusals before a run started were charged: balance %d", b)
	}
	// Arguments that break the operation's schema are refused before the
	// run starts: free.
	if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", map[string]any{"max": 1}, nil); refusalCode(err) != "invalid_request" {
		t.Fatalf("max 1: %v", err)
	}
	if b := s.balance("bot.near"); b != 25_000 {
		t.Fatalf("a call its schema refuses was charged: balance %d", b)
	}
	for range 2 {
		if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b := s.balance("bot.near"); b != 5_000 {
		t.Fatalf("balance after two runs: %d", b)
	}
	if _, err := bot.Call(ctx, "alice.near", "probe", "guess_start", nil, nil); refusalCode(err) != "payment_required" {
		t.Fatalf("a balance that does not cover the price: %v", err)
	}
	if b := s.balance("bot.near"); b != 5_000 {
		t.Fatalf("payment_required charged: balance %d", b)
	}
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestDevSandboxDemoAgent: serve --dev makes a demo agent on its first start
// and prints its key once; with a probe project it opens tasks on the
// embedded store.
func TestDevSandboxDemoAgent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"COUNTERSIGN_DATA_DIR": dir}
	_, stop := serve(t, env, "--dev")
	r := stop()
	m := regexp.MustCompile(`dev: demo agent demo-agent\.near with 1 USD; its key \(shown once\): (ak_\S+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no demo agent key printed:\n%s", r.stderr)
	}
	policy := filepath.Join(t.TempDir(), "policy.json")
	_ = os.WriteFile(policy, []byte("{}"), 0o600)
	if r := run(t, context.Background(), env, "project", "put", "--owner", "alice.near", "--name", "probe",
		"--connector", "probe", "--policy", policy, "--agent", DemoAgent); r.code != 0 {
		t.Fatalf("project put: %+v", r)
	}
	_, stop = serve(t, env, "--dev")
	if r := stop(); strings.Contains(r.stderr, "demo agent") {
		t.Fatalf("the demo key was printed again:\n%s", r.stderr)
	}
	srv := startServe(t, env, "--dev")
	stop = srv.stop
	bot := &client.Client{BaseURL: srv.base, AgentKey: m[1]}
	raw, err := bot.Call(context.Background(), "alice.near", "probe", "guess_start", nil, nil)
	if err != nil || !strings.Contains(string(raw), `"status":"awaiting_owner"`) {
		t.Fatalf("guess_start on the sandbox: %s %v", raw, err)
	}
	// A long poll in flight does not hold shutdown up: it is answered.
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	waited := make(chan error, 1)
	go func() {
		_, err := bot.Status(context.Background(), "alice.near", "probe", a.TaskID, 60)
		waited <- err
	}()
	awaitSubscriber(t, srv.db, "alice.near")
	began := time.Now()
	if r := stop(); r.code != 0 {
		t.Fatalf("serve: %+v", r)
	}
	if err := <-waited; err != nil || time.Since(began) > 15*time.Second {
		t.Fatalf("the long poll at shutdown: %v after %s", err, time.Since(began))
	}
}
