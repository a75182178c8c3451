package wasm

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRedactEveryWrittenForm: an upstream may hand a credential back in
// any of the forms it is commonly written in — as sent, query- or
// path-escaped, or inside a JSON string as Go, PHP ("\/") or Python
// (non-ASCII as "\uXXXX") write it — and the module reads none of them.
func TestRedactEveryWrittenForm(t *testing.T) {
	t.Parallel()
	const secret = "k3y/CANARY+é<&>"
	forms := map[string]string{
		"as sent":        secret,
		"query":          "k3y%2FCANARY%2B%C3%A9%3C%26%3E",
		"query, %20":     "k3y%2FCANARY%2B%C3%A9%3C%26%3E",
		"path":           "k3y%2FCANARY+%C3%A9%3C&%3E",
		"go json":        `k3y/CANARY+é\u003c\u0026\u003e`,
		"json, no html":  `k3y/CANARY+é<&>`,
		"php json":       `k3y\/CANARY+\u00e9<&>`,
		"python json":    `k3y/CANARY+\u00e9<&>`,
		"upper hex json": `k3y\/CANARY+\u00E9\u003C\u0026\u003E`,
	}
	for name, form := range forms {
		body := []byte(`{"echo":"` + form + `","n":1}`)
		got := redact(body, map[string]string{"key": secret})
		if strings.Contains(string(got), "CANARY") {
			t.Errorf("%s: %s", name, got)
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil || v["echo"] != redacted {
			t.Errorf("%s: redacted to %s (%v)", name, got, err)
		}
	}
}
