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
	"countersign/store"
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

	want := []string{"ledger__collect", "ledger__pay", "ledger__tell", "probe__guess_start", "task_cancel", "task_status", "task_wait", "tasks"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	tools, _ := cs.ListTools(ctx, nil)
	for _, tl := range tools.Tools {
		schema, _ := json.Marshal(tl.InputSchema)
		switch tl.Name {
		case "probe__guess_start":
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
	res := callTool(t, cs, "probe__guess_start", map[string]any{"max": 2})
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
		{"probe__guess_start", map[string]any{"max": 1}, "invalid_request: `max` is a whole number from 2 to 1000"},
		{"probe__guess_start", map[string]any{"maximum": 5}, "invalid_request: the call has an unknown member `maximum`"},
		{"ledger__pay", map[string]any{}, "invalid_request: `amount` is required"},
		{"ledger__pay", map[string]any{"amount": 1, "memo": strings.Repeat("m", 70<<10)}, "invalid_request: the call is larger than 65536 bytes"},
		{"task_status", map[string]any{"project": w.Owner.Account + "/probe"}, "invalid_request: task_status takes {task_id}; `task_id` is required"},
		{"task_status", map[string]any{"project": w.Owner.Account + "/probe", "task_id": "nosuch-1"}, "task_not_found: no such task of this agent in this project"},
	} {
		res := callTool(t, cs, tc.tool, tc.args)
		if !res.IsError || agentmcp.Text(res) != tc.want {
			t.Errorf("%s %v: %v %q, want %q", tc.tool, tc.args, res.IsError, agentmcp.Text(res), tc.want)
		}
	}
	// An unknown tool is a protocol error naming it.
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe__guess_stop", Arguments: map[string]any{}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "probe__guess_stop") {
		t.Fatalf("an unknown tool: %v", err)
	}

	// The owner takes the agent off the ledger: the session is told, and
	// its tools are gone.
	select {
	case <-changed:
	default:
	}
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, "ledger")
		if err != nil {
			return err
		}
		p.Agents, p.UpdatedAt = nil, w.Clock.Now()
		return tx.PutProject(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a grant was removed")
	}
	want = []string{"probe__guess_start", "task_cancel", "task_status", "task_wait", "tasks"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools after the grant was removed %v, want %v", got, want)
	}
	// And granted again: told again, the tools are back.
	select {
	case <-changed:
	default:
	}
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, "ledger")
		if err != nil {
			return err
		}
		p.Agents, p.UpdatedAt = []string{w.Agent}, w.Clock.Now()
		return tx.PutProject(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a project was granted")
	}
	if got := toolNames(t, cs); !slices.Contains(got, "ledger__pay") {
		t.Fatalf("tools after the grant came back %v", got)
	}

	// A revoked key: every later request is refused unauthorized.
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.RevokeAgentKeys(ctx, w.Agent, w.Clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe__guess_start", Arguments: map[string]any{}}); err == nil ||
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
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"probe__guess_start","arguments":{"max":10}}}`
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
