package connectortest_test

import (
	"context"
	"testing"

	"countersign/connectors"
)

// BenchmarkCallRead is the harness's own cost around a read.
func BenchmarkCallRead(b *testing.B) {
	h := newHook(b, &hooks{run: func(context.Context, *connectors.Call) (any, error) {
		return map[string]bool{"ok": true}, nil
	}})
	for b.Loop() {
		if _, err := h.Call(ctx, `{"operation":"read"}`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallOpenTask is a write that opens a confirm task: the checks,
// the canonical envelope and the task hash.
func BenchmarkCallOpenTask(b *testing.B) {
	h := newHook(b, &hooks{run: opener(confirmSpec("Send the report"))})
	for b.Loop() {
		if _, err := h.Call(ctx, `{"operation":"open"}`); err != nil {
			b.Fatal(err)
		}
	}
}
