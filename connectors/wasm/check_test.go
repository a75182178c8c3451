package wasm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign/connectors/wasm"
	"countersign/connectors/wasm/abi"
	"countersign/connectors/wasm/wasmtest"
)

func findings(fs []wasm.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		mark := "FAIL"
		if f.OK {
			mark = "ok"
		}
		b.WriteString(mark + " " + f.What + ": " + f.Note + "\n")
	}
	return b.String()
}

// TestCheck: connector check passes the examples, each example prepared
// dry (a write's task checked as the platform checks it, no request
// leaving), and fails a connector whose example traps, overruns or opens a
// task the platform refuses, or that does not load.
func TestCheck(t *testing.T) {
	t.Parallel()
	h := wasmtest.Host(t, wasm.Options{})
	fs, m := h.Check(ctx, wasmtest.Example("todo"))
	got := findings(fs)
	if m == nil || strings.Contains(got, "FAIL") {
		t.Fatalf("the to-do example:\n%s", got)
	}
	for _, want := range []string{
		"ok module: todo.wasm, ",
		"; build " + m.Build,
		"ok egress: reaches api.todo.example; the project's credentials {token} go in header Authorization",
		"ok example todos_list #1: refused invalid_request: countersign connector check sends no requests",
		`ok example todo_add #1: awaiting_owner: a confirm task "Add a to-do" (Adds this to-do to your list; you can mark it done or delete it later.)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the findings do not say %q:\n%s", want, got)
		}
	}
	if fs, _ := h.Check(ctx, wasmtest.Example("probe")); strings.Contains(findings(fs), "FAIL") {
		t.Fatalf("the probe example:\n%s", findings(fs))
	}

	// The hostile module's examples: each that misbehaves fails the check.
	dir := connectorDir(t, hostile, func(m *abi.Manifest) {
		for i, op := range m.Operations {
			switch op.Name {
			case "spin", "trap", "boom", "echo":
				m.Operations[i].Examples = []json.RawMessage{json.RawMessage(`{}`)}
			}
		}
	}, nil)
	got = findings(func() []wasm.Finding { fs, _ := h.Check(ctx, dir); return fs }())
	for _, want := range []string{
		"FAIL example spin #1: failed: internal_error: the connector's module ran past its compute limit of 1s and was stopped",
		"FAIL example trap #1: failed: internal_error: the connector's module failed: it trapped: out of bounds memory access",
		"FAIL example boom #1: failed: the module reported an error of its own",
		"ok example echo #1: answered ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the findings do not say %q:\n%s", want, got)
		}
	}

	// One that does not load is one finding, failed.
	bad := connectorDir(t, wasmtest.Example("todo"), func(m *abi.Manifest) { m.ABI = 9 }, nil)
	if got := findings(func() []wasm.Finding { fs, _ := h.Check(ctx, bad); return fs }()); !strings.HasPrefix(got, "FAIL load: ") || strings.Count(got, "\n") != 1 {
		t.Fatalf("a manifest of abi 9:\n%s", got)
	}
}
