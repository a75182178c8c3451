// Package agentmcp serves the agent API as MCP tools (SPEC §16), so an LLM
// agent calls connectors natively: one tool per operation of every project
// granted to the agent's key, named {owner}__{project}__{operation} (see
// [ToolName]), with the
// operation's argument schema as its input schema and what it answers as
// its output schema ([OutputSchema]), and the task operations task_status,
// task_wait, tasks and task_cancel.
//
// A tool call is a call of POST /call/{owner}/{project}, through a [Door]:
// the same prices, checks and refusals. Its answer is the tool's result:
// the connector's output as JSON; a task opened is explained in words an
// LLM acts on (the owner must approve it in their inbox; here are the task
// id, the link and the expiry; wait with task_wait); a refusal is an error
// result (isError) whose text is "code: sentence". Every result's
// structured content is the answer as JSON, which the output schema
// describes.
//
// A client retrying a call sends the same JSON-RPC request again, with the
// same id; the transports here ([Stdio], [GuardHTTP]) derive an
// Idempotency-Key from the id and the connection it came on, so the retry
// returns the first answer instead of opening a second task. They refuse
// JSON-RPC batches and answer methods MCP does not define with -32601.
package agentmcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
	"countersign/argschema"
	"countersign/connectors"
)

// MaxCallBytes is the largest call a tool call may make, as POST /call
// takes it (SPEC §5).
const MaxCallBytes = 64 << 10

// Operation is what agents may call of a connector's operation.
type Operation struct {
	Name        string
	Kind        string
	Price       int64 // micro-USD
	Description string
	Schema      json.RawMessage
	// Result is the operation's declared result schema (nil: none), and
	// Tasks tells whether its connector opens tasks: with the refusal,
	// they make the tool's output schema.
	Result json.RawMessage
	Tasks  bool
}

// Catalogue is the operations agents may call (reads and writes), by
// connector name.
type Catalogue map[string][]Operation

// FromConnectors is a catalogue of the service's own connectors.
func FromConnectors(cat connectors.Catalogue) Catalogue {
	out := Catalogue{}
	for name, c := range cat {
		for _, o := range c.Operations {
			if o.Kind == connectors.Answer {
				continue
			}
			out[name] = append(out[name], Operation{Name: o.Name, Kind: string(o.Kind), Price: o.Price, Description: o.Description,
				Schema: o.Schema, Result: o.Result, Tasks: c.Tasks})
		}
	}
	return out
}

// Door is the agent API as one agent key reaches it.
type Door interface {
	// Grants lists the projects granted to the key.
	Grants(ctx context.Context) ([]countersign.Grant, error)
	// Call is POST /call/{owner}/{project} with body: the answer the
	// service gives with HTTP 200 (an output or a refusal), or a
	// transport-level refusal (a *countersign.Error: unauthorized,
	// invalid_request, rate_limited, task_store_unavailable).
	Call(ctx context.Context, owner, project, idempotencyKey string, body []byte) ([]byte, error)
}

// Config is what a Server is built from.
type Config struct {
	Door      Door
	Catalogue Catalogue
	Version   string
	Logger    *slog.Logger // nil: nothing logged
	// SupportedProtocolVersions narrows the MCP revisions the server
	// speaks (nil: every revision the SDK knows).
	SupportedProtocolVersions []string
	// MaxSessions bounds the sessions open at once: opening one more
	// closes the oldest (0: no bound).
	MaxSessions int
}

// Server is the MCP server of one agent key.
type Server struct {
	cfg Config
	mcp *mcp.Server

	mu    sync.Mutex
	tools map[string]string // name → what it was added as
	used  time.Time
	// opened are the sessions initialized, oldest first.
	opened []*mcp.ServerSession
}

// The task operations offered as tools (SPEC §16).
var taskTools = []string{"task_status", "task_wait", "tasks", "task_cancel"}

// New returns the server; Sync fills in its tools.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, tools: map[string]string{}, used: time.Now()}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "countersign", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: "Countersign carries out what its connectors do for the owner of each project. " +
			"A write the owner asked to see first does not happen when you call it: the tool answers that the owner must approve a task " +
			"in their inbox. Then wait with task_wait (the project and the task id) until the task is done, failed, rejected or expired; " +
			"do not call the write again, which would ask the owner twice.",
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SupportedProtocolVersions: cfg.SupportedProtocolVersions,
	})
	// The tool list is looked at again before each list and call, so a
	// project granted or removed shows at once.
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				res, err := next(ctx, method, req)
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && err == nil {
					s.initialized(ss)
				}
				return res, err
			}
			if method == "tools/list" || method == "tools/call" {
				s.touch()
				if err := s.Sync(ctx); err != nil && method == "tools/list" {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// MCP is the server to serve over a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

func (s *Server) touch() {
	s.mu.Lock()
	s.used = time.Now()
	s.mu.Unlock()
}

// initialized counts a session in, closing the oldest beyond MaxSessions.
// Sessions closed since (ended, timed out) are counted out first.
func (s *Server) initialized(ss *mcp.ServerSession) {
	if s.cfg.MaxSessions <= 0 {
		return
	}
	live := map[*mcp.ServerSession]bool{}
	for o := range s.mcp.Sessions() {
		live[o] = true
	}
	s.mu.Lock()
	open := []*mcp.ServerSession{}
	for _, o := range s.opened {
		if live[o] && o != ss {
			open = append(open, o)
		}
	}
	open = append(open, ss)
	var closing []*mcp.ServerSession
	if n := len(open) - s.cfg.MaxSessions; n > 0 {
		closing, open = open[:n], open[n:]
	}
	s.opened = open
	s.mu.Unlock()
	for _, o := range closing {
		_ = o.Close()
	}
}

// idle is how long the server has had no list or call.
func (s *Server) idle() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.used)
}

// tool is a tool as Sync builds it, with what its calls go to.
type tool struct {
	def    *mcp.Tool
	target target
}

type target struct {
	owner, project, operation string
	task                      bool
}

// Sync makes the tool list the key's grants as they are now; each change
// is announced to the sessions with notifications/tools/list_changed. A
// refusal of the grants (a revoked key) leaves the list as it was.
func (s *Server) Sync(ctx context.Context) error {
	grants, err := s.cfg.Door.Grants(ctx)
	if err != nil {
		return toolError(err)
	}
	want := s.build(grants)
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for name := range s.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		s.mcp.RemoveTools(gone...)
		for _, n := range gone {
			delete(s.tools, n)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := want[n]
		sig, _ := json.Marshal(struct {
			Def    *mcp.Tool
			Target string
		}{t.def, fmt.Sprint(t.target)})
		if s.tools[n] == string(sig) {
			continue
		}
		s.mcp.AddTool(t.def, s.handler(t.target))
		s.tools[n] = string(sig)
	}
	return nil
}

// build makes the tools of a set of grants.
func (s *Server) build(grants []countersign.Grant) map[string]tool {
	out := map[string]tool{}
	var projects []any
	for _, g := range grants {
		projects = append(projects, g.Owner+"/"+g.Project)
		for _, op := range s.cfg.Catalogue[g.Connector] {
			name := ToolName(g.Owner, g.Project, op.Name)
			desc := fmt.Sprintf("%s (project %s of %s, connector %s; %s)", strings.TrimSuffix(op.Description, "."), g.Project, g.Owner, g.Connector, price(op.Price))
			out[name] = tool{def: &mcp.Tool{Name: name, Description: desc, InputSchema: op.Schema, OutputSchema: OutputSchema(op.Result, op.Tasks),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: op.Kind == "read"}},
				target: target{owner: g.Owner, project: g.Project, operation: op.Name}}
		}
	}
	if len(grants) == 0 {
		return out
	}
	for _, name := range taskTools {
		op, _ := connectors.PlatformOperation(name)
		schema, err := withProject(op.Schema, projects)
		if err != nil {
			s.cfg.Logger.Error("a task operation's schema does not read", "operation", name, "err", err)
			continue
		}
		out[name] = tool{def: &mcp.Tool{Name: name, Description: op.Description + " Free. Name the project as owner/project, as the call that opened the task was made.",
			InputSchema: schema, OutputSchema: OutputSchema(op.Result, false), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: op.Kind == connectors.Read}},
			target: target{operation: name, task: true}}
	}
	return out
}

// OutputSchema is a tool's output schema: its structured content is the
// answer POST /call gives — the operation's output (result; any object when
// it declares none, nothing when it answers only with a task), the task it
// opened when tasks, or a refusal (an isError result) — as an anyOf under
// "type": "object", which MCP asks of an output schema.
func OutputSchema(result json.RawMessage, tasks bool) json.RawMessage {
	var of []json.RawMessage
	switch {
	case result == nil:
		of = append(of, json.RawMessage(`{"type": "object", "description": "the operation's output; it declares no schema of it"}`))
	case !connectors.IsTaskOnly(result):
		of = append(of, result)
	}
	if tasks {
		of = append(of, connectors.AwaitingOwnerSchema, connectors.NotifiedSchema)
	}
	of = append(of, connectors.RefusalSchema)
	b, err := json.Marshal(map[string]any{"type": "object", "anyOf": of})
	if err != nil { // a declared result that is not JSON: the platform compiled it, so never
		return json.RawMessage(`{"type": "object"}`)
	}
	return b
}

// MaxToolName is the longest tool name MCP takes.
const MaxToolName = 128

// ToolName names the tool of an operation of a granted project, from the
// owner, the project and the operation alone, so no other grant changes it
// and no two operations share one:
//
//   - {owner}__{project}__{operation} when that is at most MaxToolName
//     characters and the operation neither begins with _ nor holds __.
//     Such a name reads back one way only: an account id never holds __
//     nor ends with _, so the first __ ends the owner; the operation holds
//     no __ and does not begin with _, so the last __ begins it.
//   - otherwise {project}__{operation} cut to fit, then __H and 32
//     characters of base32 (A–Z, 2–7) of 160 bits of SHA-256 over the
//     three. The H and the base32 letters are upper case, which no readable
//     name has, and 160 bits cannot be matched by trying names.
//
// The task tools (task_status, …) hold no __, so neither form is one of them.
func ToolName(owner, project, operation string) string {
	name := owner + "__" + project + "__" + operation
	if len(name) <= MaxToolName && !strings.HasPrefix(operation, "_") && !strings.Contains(operation, "__") {
		return name
	}
	h := sha256.New()
	for _, part := range []string{"countersign-mcp-tool:v1", owner, project, operation} {
		h.Write([]byte(part))
		h.Write([]byte{0}) // no part holds a NUL
	}
	suffix := "__H" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)[:20])
	head := project + "__" + operation
	if len(head) > MaxToolName-len(suffix) {
		head = head[:MaxToolName-len(suffix)]
	}
	return head + suffix
}

func price(microUSD int64) string {
	if microUSD == 0 {
		return "free"
	}
	return fmt.Sprintf("costs %d µUSD a call", microUSD)
}

// withProject is a task operation's schema with the project it asks about.
func withProject(schema json.RawMessage, projects []any) (json.RawMessage, error) {
	m, err := argschema.WithMember(schema, "project", map[string]any{"type": "string", "enum": projects,
		"description": "the project the task belongs to, as owner/project"})
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// handler serves calls of one tool.
func (s *Server) handler(t target) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = []byte("{}")
		}
		var members map[string]json.RawMessage
		if args[0] != '{' || json.Unmarshal(args, &members) != nil {
			return refused(countersign.InvalidRequest, "the call is not a JSON object"), nil
		}
		owner, project := t.owner, t.project
		if t.task {
			var named string
			_ = json.Unmarshal(members["project"], &named)
			var ok bool
			owner, project, ok = strings.Cut(named, "/")
			if !ok || owner == "" || project == "" {
				return refused(countersign.InvalidRequest, "`project` names the task's project as owner/project"), nil
			}
			args = withoutMember(args, "project")
		}
		body := callBody(t.operation, args)
		if len(body) > MaxCallBytes {
			return refused(countersign.InvalidRequest, fmt.Sprintf("the call is larger than %d bytes", MaxCallBytes)), nil
		}
		key, err := idempotencyKey(req.Params.Meta)
		if err != nil {
			return refused(countersign.InvalidRequest, err.Error()), nil
		}
		answer, err := s.cfg.Door.Call(ctx, owner, project, key, body)
		if err != nil {
			ce := toolError(err)
			return refused(ce.Code, ce.Message), nil
		}
		return result(answer, owner, project), nil
	}
}

// idempotencyKey is the Idempotency-Key a tool call carries in its _meta:
// the transport's, or, in a message the transport passed on unread, the
// client's, which then obeys /call's rule.
func idempotencyKey(meta mcp.Meta) (string, error) {
	raw, ok := meta[metaKey]
	if !ok {
		return "", nil
	}
	key, ok := raw.(string)
	if !ok {
		return "", errors.New("the Idempotency-Key is not a string")
	}
	return key, countersign.CheckIdempotencyKey(key)
}

// callBody is a call of op with the arguments of a tool call: the
// arguments' own text, exactly, after the operation (the owner is shown
// the call as sent).
func callBody(op string, args []byte) []byte {
	opJSON, _ := json.Marshal(op)
	rest := bytes.TrimSpace(args[1:])
	var b bytes.Buffer
	b.WriteString(`{"operation":`)
	b.Write(opJSON)
	if len(rest) > 0 && rest[0] != '}' {
		b.WriteByte(',')
	}
	b.Write(rest)
	return b.Bytes()
}

// withoutMember is an object without one of its members.
func withoutMember(obj []byte, name string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	delete(m, name)
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}

// toolError is a door's failure as a refusal.
func toolError(err error) *countersign.Error {
	var ce *countersign.Error
	if errors.As(err, &ce) {
		return ce
	}
	return &countersign.Error{Code: countersign.Internal, Message: "internal error"}
}

func refused(code countersign.Code, sentence string) *mcp.CallToolResult {
	text := string(code) + ": " + sentence
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"success": false, "error": text}}
}

// Text is a tool result's text, its text contents one after another: what
// an LLM reads of it.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// result is the tool result of the service's answer to a call.
func result(answer []byte, owner, project string) *mcp.CallToolResult {
	var a struct {
		Success   *bool  `json:"success"`
		Error     string `json:"error"`
		Status    string `json:"status"`
		TaskID    string `json:"task_id"`
		ExpiresAt string `json:"expires_at"`
		Link      string `json:"link"`
	}
	var structured map[string]any
	if json.Unmarshal(answer, &a) != nil || json.Unmarshal(answer, &structured) != nil {
		return refused(countersign.Internal, "the service's answer is not a JSON object")
	}
	if a.Success != nil && !*a.Success {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: a.Error}}, StructuredContent: structured}
	}
	text := string(answer)
	switch a.Status {
	case "awaiting_owner":
		text = fmt.Sprintf("Not done yet: the owner of %s must approve this first. "+
			"It waits as task %s in the owner's Countersign inbox (%s) until %s; nothing happens unless they approve it in time. "+
			"Do not call this tool again for the same request: that would ask the owner twice. "+
			"To learn the outcome, call task_wait with {\"project\": %q, \"task_id\": %q} "+
			"(it returns when the task moves, or after timeout_s seconds; call it again while the state is open, approved or answering). "+
			"The task is done when the owner approved it and it was carried out, and rejected, expired, cancelled, void or failed otherwise. "+
			"Answer: %s",
			owner+"/"+project, a.TaskID, a.Link, a.ExpiresAt, owner+"/"+project, a.TaskID, answer)
	case "notified":
		text = fmt.Sprintf("Done: the owner was told, as task %s in their Countersign inbox (%s); it asks them nothing. Answer: %s", a.TaskID, a.Link, answer)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}
