package agentmcp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScreen: what each kind of message becomes before the SDK reads it.
func TestScreen(t *testing.T) {
	t.Parallel()
	batch := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not accepted: send each message on its own"}}`
	notObject := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the message is not a JSON-RPC object"}}`
	notJSON := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the message is not JSON"}}`
	for _, c := range []struct {
		msg    string
		status int    // of a refusal; 0: passed on
		answer string // the refusal, or what is passed on
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]`, 400, batch},
		{" \r\n\t[]", 400, batch},
		{`not JSON`, 400, notJSON},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}} {}`, 400, notJSON},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}0`, 400, notJSON},
		{`7`, 400, notObject},
		{`null`, 400, notObject},
		{`{"jsonrpc":"2.0","id":"a-1","method":"acme/search","params":{}}`, 200, `{"jsonrpc":"2.0","id":"a-1","error":{"code":-32601,"message":"method not found: \"acme/search\" is not an MCP method"}}`},
		{`{"jsonrpc":"2.0","id":-3,"method":"Tools/List"}`, 200, `{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"method not found: \"Tools/List\" is not an MCP method"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":7}`, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"\" is not an MCP method"}}`},
		// Passed on, written afresh.
		{`{"jsonrpc":"2.0","method":"notifications/acme"}`, 0, `{"jsonrpc":"2.0","method":"notifications/acme"}`},
		{`{"jsonrpc":"2.0","id":null,"method":"acme/search"}`, 0, `{"id":null,"jsonrpc":"2.0","method":"acme/search"}`},
		{` {"jsonrpc":"2.0", "id":1, "method":"tools/list", "method":"tools/list"} `, 0, `{"id":1,"jsonrpc":"2.0","method":"tools/list"}`},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, `{"id":1,"jsonrpc":"2.0","result":{}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":7}}`, 0, `{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":7}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`, 0, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`},
	} {
		pass, refused := screen([]byte(c.msg), "s")
		switch {
		case c.status == 0 && refused != nil:
			t.Errorf("%s was refused: %s", c.msg, refused.answer)
		case c.status == 0 && string(pass) != c.answer:
			t.Errorf("%s became %s", c.msg, pass)
		case c.status != 0 && (refused == nil || refused.status != c.status || string(refused.answer) != c.answer):
			t.Errorf("%s: %v", c.msg, refused)
		}
	}

	// A tools/call request gets the key, in place of the client's, beside
	// the rest of its _meta.
	for _, call := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"max":10},"_meta":{"` + metaKey + `":"mine","other":1}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"max":10},"_meta":{"` + metaKey + `":"\u0000","other":1,"` + metaKey + `":"again"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"` + metaKey + `":"mine","other":1},"arguments":{"max":10},"_meta":{"other":1}}}`,
	} {
		pass, refused := screen([]byte(call), "s1")
		var m struct {
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
				Meta      map[string]any  `json:"_meta"`
			} `json:"params"`
		}
		if refused != nil || json.Unmarshal(pass, &m) != nil {
			t.Fatalf("%s: %s %v", call, pass, refused)
		}
		if key := m.Params.Meta[metaKey]; key != IdempotencyKey("s1", json.RawMessage("7")) || m.Params.Meta["other"] != float64(1) || string(m.Params.Arguments) != `{"max":10}` {
			t.Errorf("%s became %s", call, pass)
		}
	}
	key := IdempotencyKey("s1", json.RawMessage("7"))
	for _, other := range []struct{ scope, id string }{{"s2", "7"}, {"s1", "8"}, {"s1", `"7"`}} {
		if IdempotencyKey(other.scope, json.RawMessage(other.id)) == key {
			t.Errorf("scope %s id %s has the same key", other.scope, other.id)
		}
	}
	if IdempotencyKey("s1", json.RawMessage(" 7 ")) != key || len(key) > 128 {
		t.Errorf("key %v", key)
	}
}

// TestSDKMethods: every method screen lets through is one the SDK takes
// (the SDK refuses a custom method of a standard name).
func TestSDKMethods(t *testing.T) {
	t.Parallel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	for m := range sdkMethods {
		if err := mcp.AddSendingCustomMethod[*mcp.PingParams, *mcp.CompleteResult](c, m); err == nil {
			t.Errorf("%s is not a method of the SDK", m)
		}
	}
	if err := mcp.AddSendingCustomMethod[*mcp.PingParams, *mcp.CompleteResult](c, "acme/search"); err != nil {
		t.Fatal(err)
	}
}

// FuzzScreen: whatever the bytes, a message the SDK would read as a
// tools/call request reaches it with the transport's key and no other.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"` + metaKey + `":"mine"}}}`,
		`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":7}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"` + metaKey + `":"a","` + metaKey + `":"b"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{},"params":{"_meta":{"` + metaKey + `":"b"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"acme"}`,
		`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"_meta":{"` + metaKey + `":"mine"}}}0`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		pass, refused := screen(msg, "s")
		if refused != nil {
			var a struct {
				ID    json.RawMessage    `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(refused.answer, &a); err != nil || (a.Error.Code != codeParseError && a.Error.Code != codeInvalidRequest && a.Error.Code != codeMethodNotFound) {
				t.Fatalf("%q answered %s", msg, refused.answer)
			}
			return
		}
		m, err := jsonrpc.DecodeMessage(pass)
		req, ok := m.(*jsonrpc.Request)
		if err != nil || !ok || req.Method != "tools/call" || !req.IsCall() {
			return
		}
		// Params the SDK can read as an object carry the transport's key.
		var params map[string]json.RawMessage
		if json.Unmarshal(req.Params, &params) != nil || params == nil {
			return
		}
		var meta map[string]any
		if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
			return // the SDK refuses a _meta that is not an object
		}
		id, _ := json.Marshal(req.ID.Raw())
		if key := meta[metaKey]; key != IdempotencyKey("s", id) && key != IdempotencyKey("s", json.RawMessage(idText(pass))) {
			t.Fatalf("%q passed as %q", msg, pass)
		}
	})
}

// idText is a message's id as written.
func idText(msg []byte) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(msg, &m)
	return string(m["id"])
}

// TestStdioScreens: over stdio a batch is answered -32600 between the
// server's messages, an unknown method -32601, and a tools/call written
// over several lines is read as one message, with the transport's key.
func TestStdioScreens(t *testing.T) {
	t.Parallel()
	in := strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]
{"jsonrpc":"2.0","id":2,"method":"acme/search"}
{"jsonrpc":"2.0",
 "id":3, "method":"tools/call",
 "params":{"name":"x","_meta":{"` + metaKey + `":"\u0000"}}}
`)
	var out bytes.Buffer
	r := screenStream(in, &lockedWriter{w: &out}, "s", 1<<20)
	passed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not accepted: send each message on its own"}}
{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: \"acme/search\" is not an MCP method"}}
`
	if out.String() != want {
		t.Errorf("answered\n%s\nwant\n%s", out.String(), want)
	}
	if lines := strings.Split(strings.TrimSpace(string(passed)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], IdempotencyKey("s", json.RawMessage("3"))) || strings.Contains(lines[0], `\u0000`) {
		t.Errorf("passed on %q", passed)
	}
	// A message past the limit ends the stream.
	r = screenStream(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 2000)+`"}}`), &lockedWriter{w: io.Discard}, "s", 1024)
	if _, err := io.ReadAll(r); err == nil {
		t.Error("a message past the limit was read")
	}
}
