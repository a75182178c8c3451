package agentmcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTag(t *testing.T) {
	t.Parallel()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"probe__guess_start","arguments":{"max":10},"_meta":{"` + metaKey + `":"mine","other":1}}}`
	tagged := Tag([]byte(call), "s1")
	var m struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]any  `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(tagged, &m); err != nil {
		t.Fatal(err)
	}
	key := m.Params.Meta[metaKey]
	if key != IdempotencyKey("s1", json.RawMessage("7")) || m.Params.Meta["other"] != float64(1) || string(m.Params.Arguments) != `{"max":10}` {
		t.Fatalf("tagged %s", tagged)
	}
	for _, other := range []struct{ scope, id string }{{"s2", "7"}, {"s1", "8"}, {"s1", `"7"`}} {
		if IdempotencyKey(other.scope, json.RawMessage(other.id)) == key {
			t.Errorf("scope %s id %s has the same key", other.scope, other.id)
		}
	}
	if IdempotencyKey("s1", json.RawMessage(" 7 ")) != key || len(key.(string)) > 128 {
		t.Errorf("key %v", key)
	}
	// Anything but a tools/call request is left as it is.
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":7}}`,
		`not JSON`,
	} {
		if got := string(Tag([]byte(msg), "s1")); got != msg {
			t.Errorf("%s became %s", msg, got)
		}
	}
}

func TestCallBody(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		`{}`:                    `{"operation":"pay"}`,
		` { } `[1:]:             `{"operation":"pay"}`,
		`{"amount":1}`:          `{"operation":"pay","amount":1}`,
		`{ "memo": "a\"b" }`:    `{"operation":"pay","memo": "a\"b" }`,
		`{"operation":"other"}`: `{"operation":"pay","operation":"other"}`,
	} {
		if got := string(callBody("pay", []byte(strings.TrimSpace(args)))); got != want {
			t.Errorf("%s: %s, want %s", args, got, want)
		}
	}
}
