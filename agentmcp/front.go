package agentmcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Both transports read each message through screen before the SDK does
// (SPEC §16): a JSON-RPC batch is refused whole, a request for a method
// MCP does not define is answered -32601, and a tools/call request gets
// its Idempotency-Key.

// metaKey is the _meta member of a tools/call request in which the
// transport puts the Idempotency-Key it derived; whatever a client put
// there itself is replaced.
const metaKey = "countersign/idempotency-key"

// JSON-RPC error codes the transports answer with themselves.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
)

// sdkMethods are the methods the MCP SDK's server takes (requests and
// notifications). Another one is answered -32601 by screen, as the SDK
// answers it over stdio; its HTTP transport would answer a plain-text 400.
var sdkMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true, "logging/setLevel": true,
	"server/discover": true, "subscriptions/listen": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// IdempotencyKey is the Idempotency-Key of a tools/call: a hash of the
// connection's scope and the request's id (its JSON text), so a client's
// retry of one request is one call, and requests of other connections
// (whose ids count from 1 again) are other calls.
func IdempotencyKey(scope string, id json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		compact.Reset()
		compact.Write(id)
	}
	h := sha256.New()
	h.Write([]byte("countersign-mcp-idempotency:v1\x00"))
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write(compact.Bytes())
	return "mcp-" + hex.EncodeToString(h.Sum(nil))[:48]
}

// rpcError is a JSON-RPC error answer a transport gives itself.
type rpcError struct {
	status int // over HTTP
	answer []byte
}

func newRPCError(status int, id json.RawMessage, code int, message string) *rpcError {
	answer, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return &rpcError{status: status, answer: answer}
}

// screen is what a transport does with one message it read, under its
// connection's scope: the message to hand to the SDK, or the answer to give
// instead.
//
// A batch is refused whole, as the MCP revisions after 2025-03-26 refuse
// it: its members would bypass the Idempotency-Key (and ask the owner again
// when the batch is sent again). A message that is not one JSON object is
// refused too, and the SDK is handed the object as read here, written
// afresh: so it never reads a message otherwise than screen did (a member
// named twice, bytes after the object), which could carry a tools/call
// past its tagging.
func screen(msg []byte, scope string) ([]byte, *rpcError) {
	null := json.RawMessage("null")
	if trimmed := bytes.TrimLeft(msg, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, newRPCError(http.StatusBadRequest, null, codeInvalidRequest,
			"JSON-RPC batches are not accepted: send each message on its own")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil || m == nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, newRPCError(http.StatusBadRequest, null, codeParseError, "the message is not JSON")
		}
		return nil, newRPCError(http.StatusBadRequest, null, codeInvalidRequest, "the message is not a JSON-RPC object")
	}
	var method string
	_ = json.Unmarshal(m["method"], &method)
	// A request (an id that is a string or a number) for a method the SDK
	// does not take; notifications and answers are left to the SDK.
	id := bytes.TrimSpace(m["id"])
	request := len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
	if _, named := m["method"]; named && request && !sdkMethods[method] {
		return nil, newRPCError(http.StatusOK, id, codeMethodNotFound, fmt.Sprintf("method not found: %q is not an MCP method", method))
	}
	if method == "tools/call" && request {
		tag(m, scope)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, newRPCError(http.StatusBadRequest, null, codeParseError, "the message is not JSON")
	}
	return out, nil
}

// tag puts the Idempotency-Key of a tools/call request into its _meta,
// replacing the client's. Params or a _meta that are not objects are left
// for the SDK to refuse.
func tag(m map[string]json.RawMessage, scope string) {
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || params == nil {
		return
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaKey], _ = json.Marshal(IdempotencyKey(scope, m["id"]))
	params["_meta"], _ = json.Marshal(meta)
	m["params"], _ = json.Marshal(params)
}

// Stdio is the MCP stdio transport over in and out, each message read
// screened under scope; a refused one is answered on out, between the
// server's own messages. A message is a JSON value, on one line or more,
// as the SDK reads one; one larger than maxMessage ends the stream. out is
// not closed with the transport.
func Stdio(in io.Reader, out io.Writer, scope string, maxMessage int) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{Reader: screenStream(in, w, scope, maxMessage), Writer: w}
}

func screenStream(in io.Reader, w io.Writer, scope string, maxMessage int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		frame := &frameReader{r: in, max: maxMessage}
		dec := json.NewDecoder(frame)
		for {
			var msg json.RawMessage
			if err := dec.Decode(&msg); err != nil {
				pw.CloseWithError(err)
				return
			}
			frame.n = 0
			pass, refused := screen(msg, scope)
			var err error
			if refused != nil {
				_, err = w.Write(append(refused.answer, '\n'))
			} else {
				_, err = pw.Write(append(pass, '\n'))
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

var errMessageTooLong = errors.New("agentmcp: a message is longer than the most one may hold")

// frameReader reads at most max bytes for one message (n counts them).
type frameReader struct {
	r      io.Reader
	max, n int
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.n >= f.max {
		return 0, errMessageTooLong
	}
	if len(p) > f.max-f.n {
		p = p[:f.max-f.n]
	}
	n, err := f.r.Read(p)
	f.n += n
	return n, err
}

// lockedWriter writes whole messages one at a time, the server's and the
// transport's own answers; closing it leaves the writer open.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// GuardHTTP screens the message a streamable HTTP POST carries, under the
// session it names (Mcp-Session-Id), reading at most limit bytes of its
// body; a longer body is refused 413 by next's own reading. A refused
// message is answered with its JSON-RPC error: a batch 400, an unknown
// method 200 (a request's answer).
func GuardHTTP(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			http.Error(w, "the body could not be read", http.StatusBadRequest)
			return
		}
		if int64(len(body)) > limit {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			next.ServeHTTP(w, r)
			return
		}
		body, refused := screen(body, r.Header.Get("Mcp-Session-Id"))
		if refused != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refused.status)
			_, _ = w.Write(refused.answer)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}
