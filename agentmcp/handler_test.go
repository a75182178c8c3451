package agentmcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
)

type fakeDoor struct{ calls int }

func (d *fakeDoor) Grants(context.Context) ([]countersign.Grant, error) {
	return []countersign.Grant{{Owner: "alice.near", Project: "ledger", Connector: "ledger"}}, nil
}

func (d *fakeDoor) Call(context.Context, string, string, string, []byte) ([]byte, error) {
	d.calls++
	return []byte(`{"ok":true}`), nil
}

// TestToolRefusals: a tool call whose arguments are not an object, or a
// task tool's whose project is not owner/project, is refused before the
// door is called.
func TestToolRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	door := &fakeDoor{}
	s := New(Config{Door: door, Catalogue: Catalogue{"ledger": {{Name: "pay", Kind: "write", Schema: []byte(`{"type":"object"}`)}}}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"alice.near__ledger__pay", []int{1}, "invalid_request: the call is not a JSON object"},
		{"task_status", map[string]any{"project": "ledger", "task_id": "t-1"}, "invalid_request: `project` names the task's project as owner/project"},
		{"task_status", map[string]any{"project": "/ledger", "task_id": "t-1"}, "invalid_request: `project` names the task's project as owner/project"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if !res.IsError || Text(res) != c.want {
			t.Errorf("%s %v: %v %q, want the refusal %q", c.tool, c.args, res.IsError, Text(res), c.want)
		}
	}
	if door.calls != 0 {
		t.Errorf("the door was called %d times", door.calls)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alice.near__ledger__pay", Arguments: map[string]any{"amount": 1}})
	if err != nil || res.IsError || door.calls != 1 {
		t.Fatalf("a good call: %v %v, %d calls", err, res, door.calls)
	}
}

// keysDoor records the Idempotency-Keys its calls carry.
type keysDoor struct {
	fakeDoor
	keys []string
}

func (d *keysDoor) Call(ctx context.Context, owner, project, key string, body []byte) ([]byte, error) {
	d.keys = append(d.keys, key)
	return d.fakeDoor.Call(ctx, owner, project, key, body)
}

// TestClientKeyRefused: an idempotency key that reaches a tool call (the
// transports put their own, but a message they cannot read is passed on)
// obeys /call's rule, or the call is refused before the door.
func TestClientKeyRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	door := &keysDoor{}
	s := New(Config{Door: door, Catalogue: Catalogue{"ledger": {{Name: "pay", Kind: "write", Schema: []byte(`{"type":"object"}`)}}}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		key  any
		want string
	}{
		{"k\x00", "invalid_request: the Idempotency-Key may hold only visible ASCII characters (! to ~)"},
		{strings.Repeat("k", 129), "invalid_request: the Idempotency-Key is longer than 128 characters"},
		{"clé", "invalid_request: the Idempotency-Key may hold only visible ASCII characters (! to ~)"},
		{"a key", "invalid_request: the Idempotency-Key may hold only visible ASCII characters (! to ~)"},
		{"k\n", "invalid_request: the Idempotency-Key may hold only visible ASCII characters (! to ~)"},
		{7, "invalid_request: the Idempotency-Key is not a string"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alice.near__ledger__pay", Arguments: map[string]any{"amount": 1},
			Meta: mcp.Meta{metaKey: c.key}})
		if err != nil {
			t.Fatalf("%q: %v", c.key, err)
		}
		if !res.IsError || Text(res) != c.want {
			t.Errorf("%q: %v %q, want the refusal %q", c.key, res.IsError, Text(res), c.want)
		}
	}
	if len(door.keys) != 0 {
		t.Fatalf("the door was called with %q", door.keys)
	}
	for _, key := range []string{strings.Repeat("k", 128), "mcp-0123abcd", ""} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alice.near__ledger__pay", Arguments: map[string]any{"amount": 1}, Meta: mcp.Meta{metaKey: key}})
		if err != nil || res.IsError {
			t.Fatalf("%q: %v %v", key, err, Text(res))
		}
	}
	if len(door.keys) != 3 || door.keys[0] != strings.Repeat("k", 128) || door.keys[2] != "" {
		t.Fatalf("the door was called with %q", door.keys)
	}
}

// TestMaxSessions: initializing one session more than MaxSessions closes
// the oldest; the others stay open.
func TestMaxSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(Config{Door: &fakeDoor{}, Catalogue: Catalogue{}, MaxSessions: 3, SupportedProtocolVersions: []string{"2025-11-25"}})
	var sessions []*mcp.ServerSession
	for range 5 {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.MCP().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		sessions = append(sessions, ss)
	}
	for _, ss := range sessions[:2] {
		ended := make(chan struct{})
		go func() { _ = ss.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("one of the two oldest sessions is still open")
		}
	}
	open := map[*mcp.ServerSession]bool{}
	for ss := range s.MCP().Sessions() {
		open[ss] = true
	}
	for i, ss := range sessions {
		if open[ss] != (i >= 2) {
			t.Errorf("session %d of 5 open: %v", i+1, open[ss])
		}
	}
	// One that ended is counted out: a new one closes no other.
	_ = sessions[4].Close()
	_ = sessions[4].Wait()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	n := 0
	for range s.MCP().Sessions() {
		n++
	}
	if n != 3 {
		t.Errorf("%d sessions open, want sessions 3, 4 and the new one", n)
	}
}
