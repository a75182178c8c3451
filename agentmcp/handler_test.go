package agentmcp

import (
	"context"
	"testing"

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
