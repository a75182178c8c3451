package agentmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign"
	"countersign/connectors"
)

// answersDoor answers each operation with a scripted answer, or a
// transport refusal.
type answersDoor struct{ answers map[string]string }

func (d *answersDoor) Grants(context.Context) ([]countersign.Grant, error) {
	return []countersign.Grant{{Owner: "alice.near", Project: "bank", Connector: "bank"}}, nil
}

func (d *answersDoor) Call(_ context.Context, _, _, _ string, body []byte) ([]byte, error) {
	var call struct{ Operation string }
	_ = json.Unmarshal(body, &call)
	a, ok := d.answers[call.Operation]
	if !ok {
		return nil, countersign.Errorf(countersign.Unauthorized, "a valid agent key is needed")
	}
	return []byte(a), nil
}

// TestToolsDeclareWhatTheyAnswer: every tool carries an output schema of
// "type": "object", and each result's structured content — an output, a
// task opened, a refusal by the service or by the transport — fits its
// tool's; an output the operation does not declare does not.
func TestToolsDeclareWhatTheyAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const awaiting = `{"ok":true,"status":"awaiting_owner","task_id":"r1-1","task_hash":"` +
		"abababababababababababababababababababababababababababababababab" + `","thread":"r1-1","expires_at":"2026-01-02T03:04:05Z","link":"https://inbox.example/#/tasks/r1-1"}`
	door := &answersDoor{answers: map[string]string{
		"balance":     `{"usd":5}`,
		"pay":         awaiting,
		"note":        `{"anything":["goes"]}`,
		"task_status": `{"task_id":"r1-1","kind":"confirm","state":"open","thread":"r1-1","created_at":"2026-01-01T03:04:05Z","expires_at":"2026-01-02T03:04:05Z"}`,
		"task_cancel": `{"success":false,"error":"task_closed: the task is done"}`,
	}}
	cat := Catalogue{"bank": {
		{Name: "balance", Kind: "read", Schema: json.RawMessage(`{"type":"object"}`), Tasks: true,
			Result: json.RawMessage(`{"type":"object","properties":{"usd":{"type":"number"}},"required":["usd"],"additionalProperties":false}`)},
		{Name: "pay", Kind: "write", Schema: json.RawMessage(`{"type":"object"}`), Tasks: true, Result: connectors.TaskOnly},
		{Name: "note", Kind: "write", Schema: json.RawMessage(`{"type":"object"}`)},
		{Name: "refund", Kind: "write", Schema: json.RawMessage(`{"type":"object"}`), Result: json.RawMessage(`{"type":"object"}`)},
	}}
	s := New(Config{Door: door, Catalogue: cat})
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
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range list.Tools {
		raw, _ := json.Marshal(tl.OutputSchema)
		var top struct{ Type string }
		if json.Unmarshal(raw, &top) != nil || top.Type != "object" {
			t.Fatalf("%s's output schema %s", tl.Name, raw)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("urn:"+tl.Name, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tl.Name], err = c.Compile("urn:" + tl.Name); err != nil {
			t.Fatalf("%s's output schema does not compile: %v", tl.Name, err)
		}
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		isError bool
		fits    bool
	}{
		{"alice.near__bank__balance", nil, false, true},
		{"alice.near__bank__pay", nil, false, true},
		{"alice.near__bank__note", nil, false, true},
		{"alice.near__bank__refund", nil, true, true}, // the transport refused it
		{"task_status", map[string]any{"project": "alice.near/bank", "task_id": "r1-1"}, false, true},
		{"task_cancel", map[string]any{"project": "alice.near/bank", "task_id": "r1-1"}, true, true},
		{"task_status", map[string]any{"project": "bank", "task_id": "r1-1"}, true, true}, // refused before the door
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != tc.isError || res.StructuredContent == nil {
			t.Errorf("%s: isError %v, structured %v", tc.tool, res.IsError, res.StructuredContent)
			continue
		}
		if err := schemas[tc.tool].Validate(res.StructuredContent); (err == nil) != tc.fits {
			t.Errorf("%s: %v does not fit its tool's output schema: %v", tc.tool, res.StructuredContent, err)
		}
	}
	// An answer the operation does not declare, or a direct answer of an
	// operation that answers only with a task, does not fit.
	for tool, answer := range map[string]string{"alice.near__bank__balance": `{"usd":"five"}`, "alice.near__bank__pay": `{"ok":true}`} {
		op := strings.TrimPrefix(tool, "alice.near__bank__")
		door.answers[op] = answer
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas[tool].Validate(res.StructuredContent); err == nil {
			t.Errorf("%s: %s fits the tool's output schema", tool, answer)
		}
	}
}
