package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"countersign"
	"countersign/policy"
)

// OpKind says what an operation is.
type OpKind string

// The kinds of operation.
const (
	Read   OpKind = "read"
	Write  OpKind = "write"
	Answer OpKind = "answer"
)

// Compute limits of a run.
const (
	DefaultLimit = 30 * time.Second
	MaxLimit     = 120 * time.Second
)

// Operation is a named entry point of a connector.
type Operation struct {
	Name  string // [a-z0-9_]{1,64}
	Kind  OpKind
	Price int64 // micro-USD, charged when the run starts (see Uncharged); answers cost 0
	// Description says in one line what the operation does, for agents:
	// the catalogue, the OpenAPI document and the MCP tools show it.
	Description string
	// Schema is the JSON Schema (2020-12) of a read's or a write's
	// arguments: an object schema ("type": "object") of the call's members
	// besides "operation", self-contained (no $ref outside itself). The
	// platform validates every call against it before Run is called, so Run
	// sees only arguments the schema accepts. An answer operation, which
	// only the platform starts, has none.
	Schema json.RawMessage
	// Examples are argument objects the schema accepts (without
	// "operation"); the connectortest harness checks each.
	Examples []json.RawMessage
	// Result is the JSON Schema (2020-12) of what the operation answers
	// when it does not open a task: for a read or a write, the object Run
	// returns (the agent's answer; the platform adds the awaiting_owner
	// and notified answers and refusals, AwaitingOwnerSchema, …); TaskOnly
	// for one that always opens a task; for an answer operation,
	// Report.Result (what task_status carries as `result`). It is
	// self-contained and refers to nothing ($ref, $id): the OpenAPI
	// document and the MCP tools' output schemas embed it (SPEC §14, wave
	// 3). The platform compiles it as it compiles Schema, and the
	// connectortest harness checks every answer a test gets against it.
	// nil: not declared.
	Result json.RawMessage
	// SuppliedText is, for an answer operation whose tasks take text from
	// the owner (answer_by supplies "text", SPEC §8), the shape of that
	// text (see TextShape): a small JSON Schema (2020-12) of a string, with
	// a description in plain words of what is expected and examples. The
	// catalogue publishes it, and the web page and the terminal inbox check
	// the owner's text against it before the wallet is asked (the service
	// cannot: the text is sealed to the task's reply key). Answer must
	// still judge whatever text reaches it. nil: any text.
	SuppliedText json.RawMessage
	// Limit is the run's compute limit (0: DefaultLimit; at most MaxLimit).
	Limit time.Duration
	// Carries names the rule conditions a write carries (policy.Schema).
	Carries []string
	// Noun is what a refusal by rule calls one such write ("payment").
	Noun string
	// InProcess declares that the operation's handler (Run, or Answer)
	// reaches nothing outside the service: no request to any host, by any
	// means; what it does, it does through the Platform. The platform
	// then keeps each of its runs in one transaction — the run's start and
	// charge, the tasks it opens, its counts and its end (for an answer,
	// the claim and the task's end too) — kept together or not at all,
	// and a run of which nothing was kept may run again. A request through
	// an egress client from such a handler is refused
	// (egress.ErrInProcess). Leave it false for a handler that reaches a
	// host: its run's start is then kept before it runs.
	InProcess bool
	// Run serves a read or a write.
	Run func(ctx context.Context, c *Call) (any, error)
	// Answer serves an answer operation.
	Answer func(ctx context.Context, a *AnswerCall) (Report, error)
}

// Uncharged tells whether a run that ended refused with err is not charged
// its price: a call refused for its own arguments (invalid_request,
// display_invalid) is not, wherever in the connector the refusal arose
// (SPEC §14) — unless the run opened a task or did its write
// (Call.Did), which the platform checks besides. Any other refusal keeps
// the charge.
func Uncharged(err error) bool {
	switch countersign.ErrorCode(err) {
	case countersign.InvalidRequest, countersign.DisplayInvalid:
		return true
	}
	return false
}

// ComputeLimit is the operation's compute limit.
func (o *Operation) ComputeLimit() time.Duration {
	if o.Limit <= 0 {
		return DefaultLimit
	}
	return o.Limit
}

// Connector is what a connector author declares.
type Connector struct {
	Name    string // [a-z0-9][a-z0-9_-]*
	Version string
	// Tasks declares that the connector opens tasks; one that does not is
	// refused tasks_not_declared when it tries.
	Tasks bool
	// PolicyKeys are the connector's own policy members besides confirm and
	// rules, with their shape.
	PolicyKeys map[string]policy.KeyKind
	// Conditions are what rules may test (policy.AmountRange, AnyOf,
	// Equals, Names).
	Conditions []policy.Condition
	// TaskFacts reads, from a confirm task the owner's device opened, the
	// write it asks about and that write's facts, as the connector decided
	// it (the agent's request as sealed, whose "operation" names the
	// write, and the envelope the connector built): what "Always allow
	// this" (SPEC §13) builds its rule from. nil: the connector offers no
	// "Always allow this".
	TaskFacts func(request []byte, env countersign.Envelope) (op string, facts policy.Facts, err error)
	// Allowed names the policy key listing the writes allowed at all, and
	// Caps the owner's maximum amounts (policy.Schema): the policy decides
	// both, and tells the owner of them, with the rest of what it decides.
	Allowed    string
	Caps       []policy.Cap
	Operations []Operation
}

// AlwaysAllow is "Always allow this" (SPEC §13) for a confirm task of c
// that the owner's device opened (its request and envelope): the write's
// facts (TaskFacts) and the narrow rule allowing writes like it, inserted
// first in policyText, the project's policy as stored. It refuses, with a
// sentence for the owner, a task that is not a confirm task, a connector
// that declares no rule conditions or no TaskFacts, and whatever
// policy.AlwaysAllow refuses.
func (c *Connector) AlwaysAllow(policyText, request []byte, env countersign.Envelope) (string, policy.Allowance, error) {
	if env.Kind != countersign.KindConfirm {
		return "", policy.Allowance{}, fmt.Errorf("only a yes-or-no (confirm) task can be always allowed, and task %s is a %s task", env.ID, env.Kind)
	}
	if len(c.Conditions) == 0 || c.TaskFacts == nil {
		return "", policy.Allowance{}, fmt.Errorf("%s declares no rule conditions, so none of its writes can be always allowed", c.Name)
	}
	op, facts, err := c.TaskFacts(request, env)
	if err != nil {
		return "", policy.Allowance{}, fmt.Errorf("the write of task %s cannot be read: %w", env.ID, err)
	}
	a, err := policy.AlwaysAllow(policyText, c.Schema(), op, facts)
	return op, a, err
}

// RequestOperation is the "operation" member of an agent's request.
func RequestOperation(request []byte) (string, error) {
	var r struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal(request, &r); err != nil || !opName.MatchString(r.Operation) {
		return "", errors.New("the request names no operation")
	}
	return r.Operation, nil
}

// Build is the connector's build as envelopes name it: name@version.
func (c *Connector) Build() string { return c.Name + "@" + c.Version }

// CanOpen refuses a task c may not open: c does not declare tasks, or the
// task is answered by an operation c does not have as an answer.
func (c *Connector) CanOpen(spec TaskSpec) error {
	if !c.Tasks {
		return countersign.Errorf(countersign.TasksNotDeclared, "%s does not declare tasks", c.Name)
	}
	if spec.AnswerBy != nil {
		op, ok := c.Operation(spec.AnswerBy.Operation)
		if !ok || op.Kind != Answer {
			return countersign.Errorf(countersign.InvalidRequest, "%s has no answer operation %q", c.Name, spec.AnswerBy.Operation)
		}
	}
	return nil
}

// Operation finds an operation by name.
func (c *Connector) Operation(name string) (*Operation, bool) {
	for i := range c.Operations {
		if c.Operations[i].Name == name {
			return &c.Operations[i], true
		}
	}
	return nil, false
}

// Schema is the connector's policy schema, derived from its operations.
func (c *Connector) Schema() policy.Schema {
	s := policy.Schema{Keys: c.PolicyKeys, Conditions: c.Conditions, Carries: map[string][]string{}, Nouns: map[string]string{},
		Allowed: c.Allowed, Caps: c.Caps}
	for _, op := range c.Operations {
		switch op.Kind {
		case Write:
			s.Writes = append(s.Writes, op.Name)
			if len(op.Carries) > 0 {
				s.Carries[op.Name] = op.Carries
			}
			if op.Noun != "" {
				s.Nouns[op.Name] = op.Noun
			}
		case Read:
			s.Reads = append(s.Reads, op.Name)
		}
	}
	return s
}

// ParsePolicy reads a project's policy with the connector's schema.
func (c *Connector) ParsePolicy(raw []byte) *policy.Policy { return policy.Parse(raw, c.Schema()) }

var (
	opName        = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	connectorName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	version       = regexp.MustCompile(`^[0-9A-Za-z.+-]{1,64}$`)
)

// TaskOperations are the operations the platform answers for every project;
// a connector may not declare them.
var TaskOperations = []string{"task_status", "task_cancel", "task_delete", "tasks", "task_wait"}

// taskIDSchema is a task id's schema (countersign.ValidTaskID).
const taskIDSchema = `{"type": "string", "pattern": "^[a-z0-9-]{1,80}$", "description": "the task's id, as the call that opened it answered"}`

// PlatformOperations declare the task operations of SPEC §5 as connectors
// declare theirs, their results included: priced 0, served by the platform
// for every project, for the preparer of the task only.
var PlatformOperations = []Operation{
	{Name: "task_status", Kind: Read, Description: "How one of this agent's tasks stands: its state and, once it ended, the result or the owner's reason.",
		Schema:   json.RawMessage(`{"type": "object", "properties": {"task_id": ` + taskIDSchema + `}, "required": ["task_id"], "additionalProperties": false}`),
		Examples: []json.RawMessage{json.RawMessage(`{"task_id": "r0a1b2c3d4e5f6a7b8c9d0e1f2-1"}`)},
		Result:   json.RawMessage(taskStatusResult)},
	{Name: "task_wait", Kind: Read, Description: "Waits up to timeout_s seconds (default 30, at most 60) for one of this agent's tasks to move, then answers as task_status.",
		Schema: json.RawMessage(`{"type": "object", "properties": {"task_id": ` + taskIDSchema + `, ` +
			`"timeout_s": {"type": "integer", "minimum": 0, "maximum": 60, "description": "how long to wait, in seconds (default 30)"}}, "required": ["task_id"], "additionalProperties": false}`),
		Examples: []json.RawMessage{json.RawMessage(`{"task_id": "r0a1b2c3d4e5f6a7b8c9d0e1f2-1", "timeout_s": 60}`)},
		Result:   json.RawMessage(taskStatusResult)},
	{Name: "tasks", Kind: Read, Description: "Lists this agent's tasks in the project, newest first, optionally only those in one state.",
		Schema: json.RawMessage(`{"type": "object", "properties": {"state": {"type": "string", ` +
			`"enum": ["open", "approved", "answering", "done", "failed", "rejected", "cancelled", "expired", "void"]}}, "additionalProperties": false}`),
		Examples: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"state": "open"}`)},
		Result:   json.RawMessage(tasksResult)},
	{Name: "task_cancel", Kind: Write, Description: "Cancels one of this agent's tasks while it is still open; the owner is no longer asked.",
		Schema:   json.RawMessage(`{"type": "object", "properties": {"task_id": ` + taskIDSchema + `}, "required": ["task_id"], "additionalProperties": false}`),
		Examples: []json.RawMessage{json.RawMessage(`{"task_id": "r0a1b2c3d4e5f6a7b8c9d0e1f2-1"}`)},
		Result:   json.RawMessage(taskCancelResult)},
	{Name: "task_delete", Kind: Write, Description: "Forgets one of this agent's closed tasks.",
		Schema:   json.RawMessage(`{"type": "object", "properties": {"task_id": ` + taskIDSchema + `}, "required": ["task_id"], "additionalProperties": false}`),
		Examples: []json.RawMessage{json.RawMessage(`{"task_id": "r0a1b2c3d4e5f6a7b8c9d0e1f2-1"}`)},
		Result:   json.RawMessage(taskDeleteResult)},
}

// PlatformOperation finds a task operation's declaration by name.
func PlatformOperation(name string) (*Operation, bool) {
	for i := range PlatformOperations {
		if PlatformOperations[i].Name == name {
			return &PlatformOperations[i], true
		}
	}
	return nil, false
}

// MaxDescription is the longest operation description, in characters.
const MaxDescription = 200

// oneLine tells whether d is one line of at most MaxDescription
// characters, not blank.
func oneLine(d string) bool {
	return strings.TrimSpace(d) != "" && utf8.ValidString(d) && utf8.RuneCountInString(d) <= MaxDescription &&
		strings.IndexFunc(d, unicode.IsControl) < 0
}

// CheckDeclaration checks what an operation declares for agents: a
// description of one line; a result schema, when declared, that is one
// JSON object (never TaskOnly for an answer operation); for a read or a
// write a schema that is one JSON object saying "type": "object" and not
// naming "operation", with examples that are JSON objects; and the shape
// of supplied text only on an answer operation, as ReadTextShape reads it.
// Whether the schemas compile, and the examples fit, the platform checks
// (it holds the validator).
func (o *Operation) CheckDeclaration() error {
	d := o.Description
	switch {
	case strings.TrimSpace(d) == "":
		return fmt.Errorf("operation %s has no description", o.Name)
	case !oneLine(d):
		return fmt.Errorf("operation %s: its description is not one line of at most %d characters", o.Name, MaxDescription)
	}
	if o.SuppliedText != nil {
		if o.Kind != Answer {
			return fmt.Errorf("operation %s: only an answer operation declares the shape of the text the owner supplies", o.Name)
		}
		if _, err := ReadTextShape(o.SuppliedText); err != nil {
			return fmt.Errorf("answer operation %s: %w", o.Name, err)
		}
	}
	if o.Result != nil && !isObject(o.Result) {
		return fmt.Errorf("operation %s: its result schema is not a JSON object", o.Name)
	}
	if o.Kind == Answer && o.Result != nil && IsTaskOnly(o.Result) {
		return fmt.Errorf("answer operation %s always reports a result: its result schema cannot be TaskOnly", o.Name)
	}
	if o.Kind == Answer {
		if o.Schema != nil || o.Examples != nil {
			return fmt.Errorf("answer operation %s takes no arguments from agents: it declares no schema or examples", o.Name)
		}
		return nil
	}
	var top struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if !isObject(o.Schema) || json.Unmarshal(o.Schema, &top) != nil || top.Type != "object" {
		return fmt.Errorf("operation %s: its schema is not a JSON object schema (\"type\": \"object\")", o.Name)
	}
	for name := range top.Properties {
		if strings.EqualFold(name, "operation") {
			return fmt.Errorf("operation %s: its schema names the member operation, which the call itself holds", o.Name)
		}
	}
	for i, ex := range o.Examples {
		if !isObject(ex) {
			return fmt.Errorf("operation %s: example %d is not a JSON object", o.Name, i+1)
		}
	}
	return nil
}

// TextShape is the shape of the text an owner supplies to an answer
// operation (Operation.SuppliedText), a JSON Schema (2020-12) of a string
// that uses these keywords only, so that every checker (the platform's
// validator, the web page, the terminal inbox) reads it alike:
//
//	{"type": "string", "pattern": "^[0-9]+$", "minLength": 1, "maxLength": 4,
//	 "description": "a whole number in digits, such as 7", "examples": ["7", "42"]}
//
// The description, required, says in plain words what is expected: the
// page shows it beside the answer box, and "Expected: " and it when the
// text does not fit. The examples, at least one, must fit the shape. The
// pattern is searched for in the text as JSON Schema says (anchor it with
// ^ and $ to hold the whole text), in the subset of regular expressions
// Go and ECMAScript read alike: the platform refuses escapes other than
// \d, \D, \w, \W, \t, \n, \r and an escaped ^$\.*+?()[]{}|/, groups
// other than ( and (?:, POSIX classes, and a brace or a bracket that
// stands for itself. Lengths count characters (Unicode code points).
type TextShape struct {
	Type        string   `json:"type"`
	Pattern     string   `json:"pattern,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Description string   `json:"description"`
	Examples    []string `json:"examples"`
}

// ReadTextShape reads a declared shape of supplied text by the one strict
// rule for JSON (countersign.DecodeStrict): only TextShape's keywords,
// "type" "string", a description of one line, lengths that are whole
// numbers from 0 with the least not above the most, and at least one
// example. Whether the pattern compiles and the examples fit, the
// platform checks.
func ReadTextShape(raw json.RawMessage) (TextShape, error) {
	var s TextShape
	if err := countersign.DecodeStrict(raw, &s); err != nil {
		var je *countersign.JSONError
		if errors.As(err, &je) && je.Problem == countersign.JSONUnknown {
			return TextShape{}, fmt.Errorf("the shape of its supplied text uses a keyword other than type, pattern, minLength, maxLength, description and examples (%s)", je.Member)
		}
		return TextShape{}, fmt.Errorf("the shape of its supplied text does not read: %s", err)
	}
	switch {
	case s.Type != "string":
		return TextShape{}, errors.New(`the shape of its supplied text is not a string's ("type": "string")`)
	case !oneLine(s.Description):
		return TextShape{}, fmt.Errorf("the shape of its supplied text has no description of what is expected, in one line of at most %d characters", MaxDescription)
	case s.MinLength != nil && *s.MinLength < 0, s.MaxLength != nil && *s.MaxLength < 0:
		return TextShape{}, errors.New("the shape of its supplied text has a negative length")
	case s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength:
		return TextShape{}, errors.New("the shape of its supplied text asks for at least more characters than it allows")
	case len(s.Examples) == 0:
		return TextShape{}, errors.New("the shape of its supplied text has no examples (at least one text it accepts)")
	}
	return s, nil
}

// isObject tells whether b is one JSON object.
func isObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) && json.Unmarshal(b, &m) == nil
}

// Validate checks a connector's declaration: names, kinds, prices (answers
// are free), limits, handlers, descriptions and schemas (CheckDeclaration)
// and its policy schema.
func (c *Connector) Validate() error {
	if !connectorName.MatchString(c.Name) || !version.MatchString(c.Version) {
		return fmt.Errorf("connector %q@%q: name or version is not well formed", c.Name, c.Version)
	}
	seen := map[string]bool{}
	for _, t := range TaskOperations {
		seen[t] = true
	}
	for _, op := range c.Operations {
		switch {
		case !opName.MatchString(op.Name):
			return fmt.Errorf("%s: operation %q is not [a-z0-9_]{1,64}", c.Name, op.Name)
		case seen[op.Name]:
			return fmt.Errorf("%s: operation %s is declared twice or is a task operation", c.Name, op.Name)
		case op.Price < 0:
			return fmt.Errorf("%s: operation %s has a negative price", c.Name, op.Name)
		case op.Limit < 0 || op.Limit > MaxLimit:
			return fmt.Errorf("%s: operation %s has a compute limit outside 0 to %s", c.Name, op.Name, MaxLimit)
		case op.Kind == Answer && !c.Tasks:
			return fmt.Errorf("%s: answer operation %s, but the connector does not declare tasks", c.Name, op.Name)
		case op.Kind == Answer && (op.Answer == nil || op.Run != nil):
			return fmt.Errorf("%s: answer operation %s needs an Answer function only", c.Name, op.Name)
		case op.Kind == Answer && op.Price != 0:
			return fmt.Errorf("%s: answer operation %s must be priced 0", c.Name, op.Name)
		case (op.Kind == Read || op.Kind == Write) && (op.Run == nil || op.Answer != nil):
			return fmt.Errorf("%s: operation %s needs a Run function only", c.Name, op.Name)
		case op.Kind != Read && op.Kind != Write && op.Kind != Answer:
			return fmt.Errorf("%s: operation %s has no kind", c.Name, op.Name)
		case op.Result != nil && IsTaskOnly(op.Result) && !c.Tasks:
			return fmt.Errorf("%s: operation %s answers only with a task, but the connector does not declare tasks", c.Name, op.Name)
		}
		if err := op.CheckDeclaration(); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		seen[op.Name] = true
	}
	s := c.Schema()
	return s.Validate()
}

// Catalogue is the set of connectors a service runs, by name.
type Catalogue map[string]*Connector

// NewCatalogue validates connectors and indexes them by name.
func NewCatalogue(cs ...*Connector) (Catalogue, error) {
	out := Catalogue{}
	for _, c := range cs {
		if c == nil {
			return nil, fmt.Errorf("a nil connector")
		}
		if err := c.Validate(); err != nil {
			return nil, err
		}
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("connector %s is listed twice", c.Name)
		}
		out[c.Name] = c
	}
	return out, nil
}

// Names lists the catalogue's connectors, sorted.
func (c Catalogue) Names() []string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PolicyMode reads a policy with a connector's schema: "ok", "unreadable"
// or "broken" with a sentence; known is false when there is no such
// connector.
func (c Catalogue) PolicyMode(connector string, raw []byte) (mode, sentence string, known bool) {
	e, known := c.ExplainPolicy(connector, raw)
	return string(e.Mode), e.Sentence, known
}

// ExplainPolicy reads a policy with a connector's schema and says what it
// does with each write (policy.Policy.Explain); known is false when there
// is no such connector.
func (c Catalogue) ExplainPolicy(connector string, raw []byte) (policy.Explanation, bool) {
	conn, ok := c[connector]
	if !ok {
		return policy.Explanation{}, false
	}
	return conn.ParsePolicy(raw).Explain(), true
}

// PolicyWidened reports whether updated is exactly what "Always allow
// this" makes of old for a connector's write (policy.WidenedBy): it decides
// every write as old did but the ones its first rule allows.
func (c Catalogue) PolicyWidened(connector string, old, updated []byte) bool {
	conn, ok := c[connector]
	return ok && policy.WidenedBy(old, updated, conn.Schema())
}

// AlwaysAllow is policy.AlwaysAllowWhen with a connector's schema: the
// policy raw with the rule allowing the write when names inserted first;
// known is false for no such connector.
func (c Catalogue) AlwaysAllow(connector string, raw, when []byte) (a policy.Allowance, known bool, err error) {
	conn, ok := c[connector]
	if !ok {
		return policy.Allowance{}, false, nil
	}
	a, err = policy.AlwaysAllowWhen(raw, conn.Schema(), when)
	return a, true, err
}
