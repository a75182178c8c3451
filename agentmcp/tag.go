package agentmcp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// metaKey is the _meta member of a tools/call request in which the
// transport puts the Idempotency-Key it derived; whatever a client put
// there itself is replaced.
const metaKey = "countersign/idempotency-key"

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

// Tag puts the Idempotency-Key of a tools/call request into its _meta;
// any other message comes back as it was.
func Tag(msg []byte, scope string) []byte {
	trimmed := bytes.TrimSpace(msg)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(trimmed, &m) != nil {
		return msg
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method != "tools/call" || len(m["id"]) == 0 {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || params == nil {
		return msg
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return msg
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	key, _ := json.Marshal(IdempotencyKey(scope, m["id"]))
	meta[metaKey] = key
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return msg
	}
	if m["params"], err = json.Marshal(params); err != nil {
		return msg
	}
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// TagLines tags each newline-delimited message read from r (the stdio
// transport), under scope. A line longer than maxLine ends the stream.
func TagLines(r io.Reader, scope string, maxLine int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := readLine(br, maxLine)
			if len(line) > 0 {
				out := Tag(bytes.TrimRight(line, "\r\n"), scope)
				out = append(out, '\n')
				if _, werr := pw.Write(out); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

var errLineTooLong = errors.New("agentmcp: a message is longer than the most a line may hold")

func readLine(br *bufio.Reader, maxLine int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// TagHTTP tags the tools/call request a streamable HTTP POST carries,
// under the session it names (Mcp-Session-Id), reading at most limit bytes
// of its body; a longer body is refused 413 by next's own reading.
func TagHTTP(next http.Handler, limit int64) http.Handler {
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
		body = Tag(body, r.Header.Get("Mcp-Session-Id"))
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}
