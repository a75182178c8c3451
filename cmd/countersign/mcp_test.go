package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/agentmcp"
	"countersign/client"
	"countersign/connectors"
	"countersign/device"
)

// buildBinary builds the countersign binary into the test's directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "countersign")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// mcpCommand is `countersign mcp --server base` with the agent key in
// COUNTERSIGN_AGENT_KEY.
func mcpCommand(bin, base, key string) *exec.Cmd {
	cmd := exec.Command(bin, "mcp", "--server", base)
	env := []string{"COUNTERSIGN_AGENT_KEY=" + key}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COUNTERSIGN_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

var mcpTaskID = regexp.MustCompile(`"task_id":"([a-z0-9-]+)"`)

// TestMCPOverStdio runs `countersign mcp` as a subprocess of the built
// binary against a real serve on PostgreSQL and plays with the MCP SDK's
// own client: the tools, a game started, the awaiting-owner result in
// words, the owner's approval on a device signed by the wallet, task_wait's
// verdict; schema and size refusals; a removed grant drops its tool; a
// request sent twice with one id is one call; a revoked key is refused.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	s.project("alice.near", "probe", "{}", "bot.near")
	s.project("alice.near", "second", "{}", "bot.near")
	alice := s.owner("alice.near")
	ctx := context.Background()

	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*mcp.PingParams, *mcp.CompleteResult](c, "acme/search"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(bin, s.base, agent.AgentKey)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"alice.near__probe__guess_start", "alice.near__second__guess_start", "task_cancel", "task_status", "task_wait", "tasks"}
	if got := names(); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	// The tools carry their output schemas, read from the catalogue.
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range listed.Tools {
		got, _ := json.Marshal(tl.OutputSchema)
		var want any
		switch tl.Name {
		case "alice.near__probe__guess_start":
			_ = json.Unmarshal(agentmcp.OutputSchema(connectors.TaskOnly, true), &want)
		case "task_status":
			op, _ := connectors.PlatformOperation("task_status")
			_ = json.Unmarshal(agentmcp.OutputSchema(op.Result, false), &want)
		default:
			continue
		}
		if w, _ := json.Marshal(want); string(got) != string(w) {
			t.Errorf("%s's output schema %s, want %s", tl.Name, got, w)
		}
	}
	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	res := call("alice.near__probe__guess_start", map[string]any{"max": 2})
	m := mcpTaskID.FindStringSubmatch(agentmcp.Text(res))
	if res.IsError || m == nil || !strings.Contains(agentmcp.Text(res), "must approve") || !strings.Contains(agentmcp.Text(res), "task_wait") {
		t.Fatalf("guess_start: %s", agentmcp.Text(res))
	}
	task := m[1]
	approve(t, alice, task, "1")
	var st client.TaskStatus
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		res = call("task_wait", map[string]any{"project": "alice.near/probe", "task_id": task, "timeout_s": 10})
		if res.IsError || json.Unmarshal([]byte(agentmcp.Text(res)), &st) != nil {
			t.Fatalf("task_wait: %s", agentmcp.Text(res))
		}
		if st.State != "open" && st.State != "approved" && st.State != "answering" {
			break
		}
	}
	if st.State != "done" || (!strings.Contains(string(st.Result), `"verdict":"right"`) && !strings.Contains(string(st.Result), `"verdict":"higher"`)) {
		t.Fatalf("the turn ended %+v %s", st, st.Result)
	}

	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"alice.near__probe__guess_start", map[string]any{"max": 1001}, "invalid_request: `max` is a whole number from 2 to 1000"},
		{"alice.near__probe__guess_start", map[string]any{"pad": strings.Repeat("x", 65<<10)}, "invalid_request: the call is larger than 65536 bytes"},
		{"task_wait", map[string]any{"project": "alice.near/probe", "task_id": task, "timeout_s": 61}, "invalid_request: task_wait takes {task_id, timeout_s?}; `timeout_s` is a whole number from 0 to 60"},
	} {
		res := call(tc.tool, tc.args)
		if !res.IsError || agentmcp.Text(res) != tc.want {
			t.Errorf("%s: %v %q, want %q", tc.tool, res.IsError, agentmcp.Text(res), tc.want)
		}
	}
	if b := s.balance("bot.near"); b != 1_000_000-10_000 {
		t.Fatalf("balance %d after one game and refusals", b)
	}

	// An unknown tool is a protocol error naming it.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alice.near__probe__guess_stop", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "alice.near__probe__guess_stop") || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("an unknown tool: %v", err)
	}

	// A method MCP does not define is JSON-RPC error -32601.
	_, err = mcp.CallCustomMethod[*mcp.PingParams, *mcp.CompleteResult](ctx, cs, "acme/search", &mcp.PingParams{})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(je.Message, "acme/search") {
		t.Fatalf("an unknown method: %v", err)
	}

	// The owner takes the agent off a project: its tool goes.
	s.project("alice.near", "second", "{}")
	want = []string{"alice.near__probe__guess_start", "task_cancel", "task_status", "task_wait", "tasks"}
	if got := names(); !slices.Equal(got, want) {
		t.Fatalf("tools after the grant was removed %v, want %v", got, want)
	}

	// A request sent twice with one id (a client's retry) is one call.
	first, again := rawRetry(t, mcpCommand(bin, s.base, agent.AgentKey))
	if first == "" || first != again {
		t.Fatalf("a retry with the same request id: %q then %q", first, again)
	}

	// A batch (which 2025-03-26 allowed) is refused whole, each time, and
	// charges nothing. A tools/call written over several lines, carrying a
	// key of the client's that /call would refuse, is read as one message
	// and given the transport's key: sent twice, it is one call.
	before := s.balance("bot.near")
	send, answer := rawStdio(t, mcpCommand(bin, s.base, agent.AgentKey), "2025-03-26")
	for range 2 {
		send(`[{"jsonrpc":"2.0","id":"b-1","method":"tools/call","params":{"name":"alice.near__probe__guess_start","arguments":{"max":50}}},` +
			`{"jsonrpc":"2.0","id":"b-2","method":"tools/list","params":{}}]`)
		if a := answer("null"); !strings.Contains(a, `"code":-32600`) {
			t.Fatalf("a batch: %s", a)
		}
	}
	if b := s.balance("bot.near"); b != before {
		t.Fatalf("balance %d after two refused batches, was %d", b, before)
	}
	multi := "{\"jsonrpc\":\"2.0\",\n \"id\":\"m-1\", \"method\":\"tools/call\",\n \"params\":{\"name\":\"alice.near__probe__guess_start\"," +
		"\"arguments\":{\"max\":50},\"_meta\":{\"countersign/idempotency-key\":\"\\u0000\"}}}"
	var tasks []string
	for range 2 {
		send(multi)
		a := answer(`"m-1"`)
		m := rawTaskID.FindStringSubmatch(a)
		if m == nil {
			t.Fatalf("a tools/call over several lines: %s", a)
		}
		tasks = append(tasks, m[1])
	}
	if tasks[0] != tasks[1] || s.balance("bot.near") != before-10_000 {
		t.Fatalf("sent twice, the call opened %v and left the balance %d (was %d)", tasks, s.balance("bot.near"), before)
	}

	s.run("agent", "revoke", "--account", "bot.near")
	res = call("alice.near__probe__guess_start", map[string]any{})
	if !res.IsError || !strings.HasPrefix(agentmcp.Text(res), "unauthorized: ") {
		t.Fatalf("a revoked key's call: %v %s", res.IsError, agentmcp.Text(res))
	}
}

// approve approves a task as its owner: opened on the device, the receipt
// checked, the approval signed by the wallet.
func approve(t *testing.T, owner *device.Device, id, supplied string) {
	t.Helper()
	ctx := context.Background()
	view, err := owner.Client.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Approve(ctx, opened, []byte(supplied), ""); err != nil {
		t.Fatal(err)
	}
}

// rawStdio speaks MCP to `countersign mcp` line by line, at the protocol
// version given: send writes a message, answer waits for the answer with
// the id given (its JSON text).
func rawStdio(t *testing.T, cmd *exec.Cmd, version string) (send func(string), answer func(id string) string) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	send = func(msg string) { _, _ = io.WriteString(in, msg+"\n") }
	answer = func(id string) string {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("no answer to %s: the output ended", id)
				}
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == id {
					return line
				}
			case <-timeout:
				t.Fatalf("no answer to %s", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := answer("1"); !strings.Contains(a, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %s", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	return send, answer
}

var rawTaskID = regexp.MustCompile(`\\"task_id\\":\\"([a-z0-9-]+)\\"`)

// rawRetry sends one tools/call twice with the same id; it returns the
// task id of each answer.
func rawRetry(t *testing.T, cmd *exec.Cmd) (string, string) {
	t.Helper()
	send, answer := rawStdio(t, cmd, "2025-11-25")
	ids := make([]string, 2)
	for i := range ids {
		send(`{"jsonrpc":"2.0","id":"call-5","method":"tools/call","params":{"name":"alice.near__probe__guess_start","arguments":{"max":50}}}`)
		if m := rawTaskID.FindStringSubmatch(answer(`"call-5"`)); m != nil {
			ids[i] = m[1]
		}
	}
	return ids[0], ids[1]
}
