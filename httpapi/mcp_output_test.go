package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestMCPResultsFitTheirOutputSchemas: over POST /mcp, every tool carries
// an output schema, and the structured content of each result of a game —
// guess_start's awaiting_owner, a refusal of its arguments, an oversized
// call refused by the transport, task_status after the answer, tasks,
// task_cancel of a closed task — fits its tool's.
func TestMCPResultsFitTheirOutputSchemas(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	cs := mcpSession(t, w, nil)
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range list.Tools {
		raw, _ := json.Marshal(tl.OutputSchema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil || tl.OutputSchema == nil {
			t.Fatalf("%s's output schema %s: %v", tl.Name, raw, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("urn:"+tl.Name, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tl.Name], err = c.Compile("urn:" + tl.Name); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
	}
	start := w.Owner.Account + "__probe__guess_start"
	project := w.Owner.Account + "/probe"
	check := func(tool string, args map[string]any, isError bool) *mcp.CallToolResult {
		t.Helper()
		res := callTool(t, cs, tool, args)
		if res.IsError != isError {
			t.Fatalf("%s %v: isError %v", tool, args, res.IsError)
		}
		if err := schemas[tool].Validate(res.StructuredContent); err != nil {
			t.Fatalf("%s %v: %v does not fit the tool's output schema: %v", tool, args, res.StructuredContent, err)
		}
		return res
	}
	res := check(start, map[string]any{"max": 2}, false)
	task, _ := res.StructuredContent.(map[string]any)["task_id"].(string)
	check(start, map[string]any{"max": 1}, true)
	check(start, map[string]any{"max": 2, "pad": strings.Repeat("x", 70<<10)}, true)
	if err := w.Enclave.Answers.Answer(ctx, task, w.Approve(task, []byte("3"))); err != nil {
		t.Fatal(err)
	}
	status := check("task_status", map[string]any{"project": project, "task_id": task}, false)
	if got, _ := status.StructuredContent.(map[string]any)["result"].(map[string]any)["verdict"]; got != "lower" {
		t.Fatalf("task_status: %v", status.StructuredContent)
	}
	check("tasks", map[string]any{"project": project}, false)
	check("task_cancel", map[string]any{"project": project, "task_id": task}, true)
	check("task_wait", map[string]any{"project": project, "task_id": task, "timeout_s": 0}, false)
}
