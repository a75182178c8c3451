package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
	"countersign/agentmcp"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// bearer adds an agent key to every request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's own client to POST /mcp with the world's
// agent key; changed is told of each notifications/tools/list_changed.
func mcpSession(t *testing.T, w *servicetest.World, changed chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: w.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{w.AgentKey}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

var taskIDIn = regexp.MustCompile(`"task_id":"([a-z0-9-]+)"`)

// TestMCPOverHTTP plays a guessing game with the MCP SDK's client over the
// streamable HTTP transport: the tools of the granted projects and the task
// operations, the awaiting-owner result in words, the owner's approval with
// device and wallet, task_wait's verdict; a schema refusal; an unknown
// tool; an oversized call; a removed grant announced and its tools gone; a
// revoked key refused.
func TestMCPOverHTTP(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithMCPGrantPoll(50*time.Millisecond))
	w.StartJobs()
	changed := make(chan struct{}, 1)
	cs := mcpSession(t, w, changed)

	tool := func(project, op string) string { return w.Owner.Account + "__" + project + "__" + op }
	want := []string{tool("ledger", "collect"), tool("ledger", "pay"), tool("ledger", "tell"), tool("probe", "guess_start"), "task_cancel", "task_status", "task_wait", "tasks"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	tools, _ := cs.ListTools(ctx, nil)
	for _, tl := range tools.Tools {
		schema, _ := json.Marshal(tl.InputSchema)
		switch tl.Name {
		case tool("probe", "guess_start"):
			if !strings.Contains(string(schema), `"max":{`) || !strings.Contains(tl.Description, "guessing game") || !strings.Contains(tl.Description, w.Owner.Account) {
				t.Fatalf("guess_start's tool: %s %s", tl.Description, schema)
			}
		case "task_wait":
			if !strings.Contains(string(schema), `"project":{`) || !strings.Contains(string(schema), w.Owner.Account+"/probe") {
				t.Fatalf("task_wait's tool: %s", schema)
			}
		}
	}

	// The game: the call opens a task and says so in words.
	res := callTool(t, cs, tool("probe", "guess_start"), map[string]any{"max": 2})
	words := agentmcp.Text(res)
	m := taskIDIn.FindStringSubmatch(words)
	if res.IsError || m == nil || !strings.Contains(words, "must approve") || !strings.Contains(words, "task_wait") ||
		!strings.Contains(words, w.URL+"/#/tasks/"+m[1]) || !strings.Contains(words, "until 20") {
		t.Fatalf("guess_start answered %v: %s", res.IsError, words)
	}
	task := m[1]
	// The owner answers 1 on the device; the number is 1 or 2.
	w.Approve(task, []byte("1"))
	res = callTool(t, cs, "task_wait", map[string]any{"project": w.Owner.Account + "/probe", "task_id": task, "timeout_s": 30})
	for strings.Contains(agentmcp.Text(res), `"state":"approved"`) || strings.Contains(agentmcp.Text(res), `"state":"answering"`) {
		res = callTool(t, cs, "task_wait", map[string]any{"project": w.Owner.Account + "/probe", "task_id": task, "timeout_s": 30})
	}
	var st struct {
		State  string `json:"state"`
		Result struct {
			Verdict string `json:"verdict"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(agentmcp.Text(res)), &st); err != nil || res.IsError || st.State != "done" || (st.Result.Verdict != "right" && st.Result.Verdict != "higher") {
		t.Fatalf("task_wait answered %s (%v)", agentmcp.Text(res), err)
	}

	// Refusals are error results, "code: sentence"; nothing is charged.
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{tool("probe", "guess_start"), map[string]any{"max": 1}, "invalid_request: `max` is a whole number from 2 to 1000"},
		{tool("probe", "guess_start"), map[string]any{"maximum": 5}, "invalid_request: the call has an unknown member `maximum`"},
		{tool("ledger", "pay"), map[string]any{}, "invalid_request: `amount` is required"},
		{tool("ledger", "pay"), map[string]any{"amount": 1, "memo": strings.Repeat("m", 70<<10)}, "invalid_request: the call is larger than 65536 bytes"},
		{"task_status", map[string]any{"project": w.Owner.Account + "/probe"}, "invalid_request: task_status takes {task_id}; `task_id` is required"},
		{"task_status", map[string]any{"project": w.Owner.Account + "/probe", "task_id": "nosuch-1"}, "task_not_found: no such task of this agent in this project"},
	} {
		res := callTool(t, cs, tc.tool, tc.args)
		if !res.IsError || agentmcp.Text(res) != tc.want {
			t.Errorf("%s %v: %v %q, want %q", tc.tool, tc.args, res.IsError, agentmcp.Text(res), tc.want)
		}
	}
	// An unknown tool is a protocol error naming it.
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool("probe", "guess_stop"), Arguments: map[string]any{}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tool("probe", "guess_stop")) {
		t.Fatalf("an unknown tool: %v", err)
	}

	// The owner takes the agent off the ledger: the session is told, and
	// its tools are gone.
	select {
	case <-changed:
	default:
	}
	w.Grant("ledger")
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a grant was removed")
	}
	want = []string{tool("probe", "guess_start"), "task_cancel", "task_status", "task_wait", "tasks"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools after the grant was removed %v, want %v", got, want)
	}
	// And granted again: told again, the tools are back.
	select {
	case <-changed:
	default:
	}
	w.Grant("ledger", w.Agent)
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a project was granted")
	}
	if got := toolNames(t, cs); !slices.Contains(got, tool("ledger", "pay")) {
		t.Fatalf("tools after the grant came back %v", got)
	}

	// A revoked key: every later request is refused unauthorized.
	w.RevokeAgent()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool("probe", "guess_start"), Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "Unauthorized") && !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("a revoked key's call: %v", err)
	}
	if n := countTasks(t, w); n != 2 {
		t.Fatalf("%d tasks opened, want the game's first turn and its second (or its notice)", n)
	}
}

// countTasks counts the owner's tasks, waiting and closed.
func countTasks(t *testing.T, w *servicetest.World) int {
	t.Helper()
	n := 0
	for _, show := range []string{"waiting", "closed"} {
		page, err := w.Owner.Client.Tasks(ctx, show, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Tasks)
	}
	return n
}

// TestMCPRetryIsOneCall: a tools/call sent again with the same request id
// in the same session returns the first answer and opens no second task;
// another id is another call; the same id in another session is another
// call too.
func TestMCPRetryIsOneCall(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	cs := mcpSession(t, w, nil)
	other := mcpSession(t, w, nil)
	post := func(session, id string) string {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + w.Owner.Account + `__probe__guess_start","arguments":{"max":10}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.URL+"/mcp", bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+w.AgentKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`\\"task_id\\":\\"([a-z0-9-]+)\\"`).FindSubmatch(raw)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("tools/call %s: %d %s", id, resp.StatusCode, raw)
		}
		return string(m[1])
	}
	first := post(cs.ID(), `"retry-7"`)
	if again := post(cs.ID(), `"retry-7"`); again != first {
		t.Fatalf("the retry opened %s beside %s", again, first)
	}
	if next := post(cs.ID(), `8`); next == first {
		t.Fatal("another request id was taken for the retry")
	}
	if elsewhere := post(other.ID(), `"retry-7"`); elsewhere == first {
		t.Fatal("the same id in another session was taken for the retry")
	}
	if n := countTasks(t, w); n != 3 {
		t.Fatalf("%d tasks, want 3", n)
	}
	if got := w.Task(first); got.State != countersign.StateOpen {
		t.Fatalf("the first task is %s", got.State)
	}
}

// rawMCP opens an MCP session on POST /mcp by hand, speaking the protocol
// version given, and returns a function that posts one body in it: the
// status, and the JSON-RPC messages of the answer (an event stream's data
// or a JSON body).
func rawMCP(t *testing.T, w *servicetest.World, version string) func(body string) (int, []string) {
	t.Helper()
	session := ""
	post := func(body string) (int, []string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+w.AgentKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if session == "" {
			session = resp.Header.Get("Mcp-Session-Id")
		}
		var msgs []string
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for line := range strings.Lines(string(raw)) {
				if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok && strings.TrimSpace(data) != "" {
					msgs = append(msgs, strings.TrimSpace(data))
				}
			}
		} else if len(bytes.TrimSpace(raw)) > 0 {
			msgs = append(msgs, string(bytes.TrimSpace(raw)))
		}
		return resp.StatusCode, msgs
	}
	if st, msgs := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); st != http.StatusOK || session == "" || len(msgs) != 1 || !strings.Contains(msgs[0], `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %d %v (session %q)", st, msgs, session)
	}
	if st, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`); st != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", st)
	}
	return post
}

// jsonrpcError is the error of a JSON-RPC answer.
func jsonrpcError(t *testing.T, msg string) (id string, code int64) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", msg)
	}
	return string(m.ID), m.Error.Code
}

// TestMCPBatchRefused: a JSON-RPC batch (which the 2025-03-26 revision
// allowed) is refused as a whole, -32600, so sending it twice neither runs
// nor charges anything, and a key a member carries never reaches the store.
func TestMCPBatchRefused(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	tool := w.Owner.Account + "__probe__guess_start"
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		post := rawMCP(t, w, version)
		for _, batch := range []string{
			`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"max":10}}}]`,
			` [{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"max":10}}}]`,
			`[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"max":10},"_meta":{"countersign/idempotency-key":"\u0000"}}},
			  {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}]`,
		} {
			for range 2 {
				st, msgs := post(batch)
				if st != http.StatusBadRequest || len(msgs) != 1 {
					t.Fatalf("%s: a batch answered %d %v", version, st, msgs)
				}
				if id, code := jsonrpcError(t, msgs[0]); id != "null" || code != -32600 {
					t.Fatalf("%s: a batch answered %s", version, msgs[0])
				}
			}
		}
		// The session still serves single messages.
		if st, msgs := post(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`); st != http.StatusOK || len(msgs) != 1 || !strings.Contains(msgs[0], tool) {
			t.Fatalf("%s: tools/list after the batches: %d %v", version, st, msgs)
		}
	}
	if n := countTasks(t, w); n != 0 {
		t.Fatalf("%d tasks opened by refused batches", n)
	}
	if logs := w.Logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Fatalf("errors logged:\n%s", logs)
	}
}

// TestMCPUnknownMethod: a request for a method MCP does not define is
// answered JSON-RPC error -32601, and the session goes on.
func TestMCPUnknownMethod(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*mcp.PingParams, *mcp.CompleteResult](c, "acme/search"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: w.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{w.AgentKey}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = mcp.CallCustomMethod[*mcp.PingParams, *mcp.CompleteResult](ctx, cs, "acme/search", &mcp.PingParams{})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(je.Message, "acme/search") {
		t.Fatalf("an unknown method: %v", err)
	}
	if got := toolNames(t, cs); len(got) == 0 {
		t.Fatal("no tools after an unknown method")
	}
	// By hand, as a string id, in both revisions the door speaks with
	// sessions; a notification of an unknown method is left to the SDK.
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		post := rawMCP(t, w, version)
		st, msgs := post(`{"jsonrpc":"2.0","id":"x-1","method":"tools/frobnicate","params":{}}`)
		if st != http.StatusOK || len(msgs) != 1 {
			t.Fatalf("%s: %d %v", version, st, msgs)
		}
		if id, code := jsonrpcError(t, msgs[0]); id != `"x-1"` || code != -32601 {
			t.Fatalf("%s: %s", version, msgs[0])
		}
	}
}

// inSession posts a tools/list in the session named, by hand: the status
// and the body.
func inSession(t *testing.T, w *servicetest.World, session string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+w.AgentKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestMCPSessionsBounded: one key opens 20 sessions; the 16 newest stay
// open and the 4 oldest are closed, answered session not found.
func TestMCPSessionsBounded(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	var sessions []*mcp.ClientSession
	for range 20 {
		sessions = append(sessions, mcpSession(t, w, nil))
	}
	for i, cs := range sessions {
		st, body := inSession(t, w, cs.ID())
		if i < 4 && (st != http.StatusNotFound || !strings.Contains(body, "session not found")) {
			t.Errorf("session %d of 20 is still open: %d %.80s", i+1, st, body)
		}
		if i >= 4 && st != http.StatusOK {
			t.Errorf("session %d of 20 was closed: %d %.80s", i+1, st, body)
		}
	}
	if _, err := sessions[0].ListTools(ctx, nil); err == nil {
		t.Error("the oldest session still lists its tools")
	}
	if got := toolNames(t, sessions[19]); len(got) == 0 {
		t.Error("the newest session has no tools")
	}
}

// TestMCPIdleSessionEnds: a session without requests for the idle time
// ends; one in use goes on.
func TestMCPIdleSessionEnds(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithMCPSessionIdle(time.Second))
	idle := mcpSession(t, w, nil)
	busy := mcpSession(t, w, nil)
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got := toolNames(t, busy); len(got) == 0 {
			t.Fatal("the busy session has no tools")
		}
	}
	if st, body := inSession(t, w, idle.ID()); st != http.StatusNotFound || !strings.Contains(body, "session not found") {
		t.Fatalf("the idle session: %d %.80s", st, body)
	}
	if st, body := inSession(t, w, busy.ID()); st != http.StatusOK {
		t.Fatalf("the busy session: %d %.80s", st, body)
	}
}
