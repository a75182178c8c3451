package connectortest

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/policy"
)

// Defaults of a new Harness.
const (
	DefaultOwner       = "alice.near"
	DefaultAgent       = "agent.near"
	DefaultProjectUUID = "0b6f3c2e-8d4a-4f1b-9c7e-5a2d1e3f4b6c"
	DefaultPolicy      = "{}"
	DefaultPublicURL   = "http://127.0.0.1:8080"
)

// MaxBodyBytes is the largest agent call body the service reads (SPEC §5).
const MaxBodyBytes = 64 << 10

// sealOverhead is what sealing to a P-256 key adds to a plaintext: version
// byte, ephemeral point, nonce and tag (SPEC §9).
const sealOverhead = 1 + 65 + 12 + 16

// Harness plays the platform for one connector. Set its fields before a call,
// or between calls, never while a call runs. Its methods are safe for
// concurrent use.
type Harness struct {
	// Owner is the project's owner (default DefaultOwner); Agent is the
	// agent that calls (default DefaultAgent), the preparer of the tasks
	// its runs open.
	Owner, Agent string
	// Project is the project's name (default: the connector's name) and
	// ProjectUUID its uuid (default DefaultProjectUUID).
	Project, ProjectUUID string
	// Policy is the project's policy as stored (default DefaultPolicy).
	Policy []byte
	// Credentials are the project's credentials, handed to every run.
	Credentials []byte
	// Now is the platform's clock (default time.Now).
	Now func() time.Time
	// PublicURL is the service's origin, the base of task links (default
	// DefaultPublicURL).
	PublicURL string

	// FailOpen, when set, is asked first by every OpenTask; an error it
	// returns is OpenTask's answer. It plays refusals that depend on the
	// owner's inbox (inbox_full, muted, task_store_unavailable).
	FailOpen func(spec connectors.TaskSpec) error
	// NoVoid skips the void check of Answer: a task whose policy or build
	// changed is answered anyway, with the policy as it is now.
	NoVoid bool
	// SupplyLimit, when positive, replaces the inbox's bound on a supply's
	// and a note's plaintext bytes.
	SupplyLimit int

	t       testing.TB // nil when built by NewHarness
	conn    *connectors.Connector
	schemas *argschema.Set
	counts  policy.MemoryCounter

	mu    sync.Mutex
	tasks []*record
	byID  map[string]*record
	spent int64
	// payments are the payments counted against the project's spending.
	payments map[string]payment
}

// record is a task the harness opened and where it stands.
type record struct {
	opened Opened
	owner  string
	status Status
}

// Opened is a task a run opened, as the platform recorded it.
type Opened struct {
	// Task is what the run was told.
	Task connectors.Task
	// Spec is a copy of what the connector asked.
	Spec connectors.TaskSpec
	// Envelope is the task's canonical envelope; Task.Hash is its SHA-256.
	Envelope []byte
	// Run is the id of the run that opened the task, and Operation the
	// operation it served.
	Run, Operation string
	// Preparer is the agent whose run opened the task.
	Preparer string
}

// Status is where a task stands.
type Status struct {
	State countersign.State
	// FailureReason says why a failed task failed.
	FailureReason countersign.FailureReason
	// Result is what the answer run reported, for a done task.
	Result json.RawMessage
}

// New returns a harness for c, failing t when c does not validate. A
// connector's run that panics fails t. In a fuzz target, build the harness
// inside the fuzz function, with its *testing.T.
func New(t testing.TB, c *connectors.Connector) *Harness {
	t.Helper()
	h, err := NewHarness(c)
	if err != nil {
		t.Fatalf("connectortest: %v", err)
		return nil
	}
	h.t = t
	return h
}

// NewHarness returns a harness for c, or why c does not validate. It is for
// examples and other code without a testing.TB; tests use New.
func NewHarness(c *connectors.Connector) (*Harness, error) {
	if c == nil {
		return nil, errors.New("no connector")
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("connector does not validate: %w", err)
	}
	schemas, err := argschema.NewSet(connectors.Catalogue{c.Name: c})
	if err != nil {
		return nil, fmt.Errorf("connector's schemas do not hold: %w", err)
	}
	return &Harness{
		schemas: schemas,
		Owner:   DefaultOwner, Agent: DefaultAgent,
		Project: c.Name, ProjectUUID: DefaultProjectUUID,
		Policy:    []byte(DefaultPolicy),
		Now:       time.Now,
		PublicURL: DefaultPublicURL,
		conn:      c,
		byID:      map[string]*record{},
	}, nil
}

// Call plays an agent's POST /call with body, exactly as sent. It returns
// the operation's output as JSON, or the refusal the agent is answered with
// (a *countersign.Error), or the run's own error (the agent would read
// internal_error). A read or write that runs is charged its price (Spent),
// unless it is refused for its own arguments (connectors.Uncharged) without
// having opened a task or done its write.
//
// The output is checked against what the operation declares: an
// awaiting_owner or notified answer naming a task the run opened against
// the platform's schema of it, any other output against the operation's
// Result (when it declares one), and a refusal against the refusal's
// schema. An answer that does not fit fails the test, and Call returns
// why.
func (h *Harness) Call(ctx context.Context, body string) (json.RawMessage, error) {
	op, err := h.operation(body)
	if err != nil {
		return nil, err
	}
	pol := h.conn.ParsePolicy(h.Policy)
	if op.Kind == connectors.Write && pol.Mode() != policy.OK {
		return nil, countersign.Errorf(countersign.PolicyUnreadable, "%s", pol.Sentence())
	}
	r := h.newRun(op.Name, h.Owner, h.Agent, h.Project, h.ProjectUUID, pol)
	h.mu.Lock()
	h.spent += op.Price
	h.mu.Unlock()
	call := &connectors.Call{
		Operation: op.Name, Args: json.RawMessage(body),
		Agent: h.Agent, Owner: h.Owner, Project: h.Project, ProjectUUID: h.ProjectUUID,
		Run: r.id, Policy: pol, Credentials: bytes.Clone(h.Credentials),
		Now: h.now(), Platform: r,
	}
	out, err := h.within(ctx, r, op, func(ctx context.Context) (any, error) { return op.Run(ctx, call) })
	if err != nil {
		if connectors.Uncharged(err) && len(r.tasks()) == 0 && call.Done() == nil {
			h.mu.Lock()
			h.spent -= op.Price
			h.mu.Unlock()
		}
		if isRefusal(err) {
			var e *countersign.Error
			if errors.As(err, &e) {
				if bad := argschema.CheckRefusal(refusalBody(e)); bad != nil {
					return nil, h.drift(fmt.Errorf("%s run: %w", op.Name, bad))
				}
			}
			return nil, err
		}
		return nil, fmt.Errorf("%s run: %w", op.Name, err)
	}
	b, err := marshal(out)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s run: its output does not marshal: %w", op.Name, err)
	case len(b) == 0 || b[0] != '{':
		return nil, fmt.Errorf("%s run: its output is not a JSON object", op.Name)
	}
	if err := h.checkOutput(op, r.tasks(), b); err != nil {
		return nil, h.drift(fmt.Errorf("%s run: %w", op.Name, err))
	}
	return b, nil
}

// checkOutput checks a read's or a write's output against what it
// declares: a task answer against the platform's schema of it, any other
// against the operation's Result.
func (h *Harness) checkOutput(op *connectors.Operation, opened []Opened, out json.RawMessage) error {
	var a struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(out, &a)
	if len(opened) > 0 && (a.Status == "awaiting_owner" || a.Status == "notified") {
		return argschema.CheckTaskAnswer(out, a.Status == "notified")
	}
	if r, ok := h.schemas.ResultFor(h.conn.Name, op.Name); ok {
		return r.Check(out)
	}
	return nil
}

// drift fails the test with an answer that does not fit its declaration,
// and returns the reason.
func (h *Harness) drift(err error) error {
	if h.t != nil {
		h.t.Errorf("connectortest: %v", err)
	}
	return err
}

// refusalBody is a refusal as the agent reads it.
func refusalBody(e *countersign.Error) []byte {
	b, _ := marshal(map[string]any{"success": false, "error": string(e.Code) + ": " + e.Message})
	return b
}

// CheckResults tells which of c's reads, writes and answer operations
// declare no result schema (Operation.Result): nil when every one does.
// The platform will require them all; until then a connector's tests call
// it to hold their own declarations whole.
func CheckResults(c *connectors.Connector) error {
	var missing []string
	for _, op := range c.Operations {
		if op.Result == nil {
			missing = append(missing, op.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: operations without a result schema: %s", c.Name, strings.Join(missing, ", "))
	}
	return nil
}

// operation reads the operation a call body names, as the service does.
func (h *Harness) operation(body string) (*connectors.Operation, error) {
	if len(body) > MaxBodyBytes {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the call is larger than %d bytes", MaxBodyBytes)
	}
	var object map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &object); err != nil || object == nil {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	}
	var call struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal([]byte(body), &call); err != nil || call.Operation == "" {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the call needs an `operation`, a string")
	}
	if slices.Contains(connectors.TaskOperations, call.Operation) {
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s is answered by the platform, which this harness does not play", call.Operation)
	}
	op, ok := h.conn.Operation(call.Operation)
	if !ok || op.Kind == connectors.Answer {
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s has no operation %q an agent may call", h.conn.Name, call.Operation)
	}
	if sch, ok := h.schemas.For(h.conn.Name, op.Name); ok {
		if err := sch.Check([]byte(body)); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// within runs fn under op's compute limit. A run that outlives it is
// abandoned; a run that panics fails the test.
func (h *Harness) within(ctx context.Context, r *run, op *connectors.Operation, fn func(context.Context) (any, error)) (any, error) {
	limit := op.ComputeLimit()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type answer struct {
		v   any
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if !r.end() && h.t != nil {
					h.t.Errorf("connectortest: %s panicked: %v\n%s", op.Name, p, debug.Stack())
				}
				done <- answer{err: fmt.Errorf("%s panicked: %v", op.Name, p)}
			}
		}()
		v, err := fn(ctx)
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		r.end()
		return a.v, a.err
	case <-ctx.Done():
		r.end()
		select {
		case a := <-done:
			return a.v, a.err
		default:
		}
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s did not finish within its compute limit of %s", op.Name, limit)
		}
		return nil, fmt.Errorf("%s was abandoned: %w", op.Name, context.Cause(ctx))
	}
}

// Tasks lists every task the harness opened, in order.
func (h *Harness) Tasks() []Opened {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Opened, len(h.tasks))
	for i, r := range h.tasks {
		out[i] = r.opened.clone()
	}
	return out
}

// Task returns a task the harness opened, by id.
func (h *Harness) Task(id string) (Opened, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.byID[id]
	if !ok {
		return Opened{}, false
	}
	return r.opened.clone(), true
}

// Status says where a task the harness opened stands.
func (h *Harness) Status(id string) (Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.byID[id]
	if !ok {
		return Status{}, false
	}
	s := r.status
	s.Result = bytes.Clone(s.Result)
	return s, true
}

// Awaiting returns the task an awaiting_owner or notified answer names,
// after checking that the answer describes it truly: its hash, thread,
// expiry and link, and a status that fits its kind.
func (h *Harness) Awaiting(out json.RawMessage) (Opened, error) {
	var a struct {
		OK        bool   `json:"ok"`
		Status    string `json:"status"`
		TaskID    string `json:"task_id"`
		TaskHash  string `json:"task_hash"`
		Thread    string `json:"thread"`
		ExpiresAt string `json:"expires_at"`
		Link      string `json:"link"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return Opened{}, fmt.Errorf("the answer is not a task answer: %w", err)
	}
	o, ok := h.Task(a.TaskID)
	if !ok {
		return Opened{}, fmt.Errorf("the answer names task %q, which was not opened here", a.TaskID)
	}
	want := "awaiting_owner"
	if o.Task.Kind == countersign.KindNotice {
		want = "notified"
	}
	t := o.Task
	switch {
	case !a.OK || a.Status != want:
		return Opened{}, fmt.Errorf("the answer for a %s task says ok=%v, status %q; want ok, %q", t.Kind, a.OK, a.Status, want)
	case a.TaskHash != t.Hash:
		return Opened{}, fmt.Errorf("the answer's task_hash %q is not the task's %q", a.TaskHash, t.Hash)
	case a.Thread != t.Thread:
		return Opened{}, fmt.Errorf("the answer's thread %q is not the task's %q", a.Thread, t.Thread)
	case a.ExpiresAt != t.ExpiresAt.UTC().Format(countersign.TimeFormat):
		return Opened{}, fmt.Errorf("the answer's expires_at %q is not the task's", a.ExpiresAt)
	case a.Link != t.Link:
		return Opened{}, fmt.Errorf("the answer's link %q is not the task's %q", a.Link, t.Link)
	}
	return o, nil
}

// Spent is the sum of the prices charged so far, in micro-USD.
func (h *Harness) Spent() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.spent
}

// Paid is the sum of the payments counted against the project's spending
// (Platform.Spend), whatever their age.
func (h *Harness) Paid() policy.Cents {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sum policy.Cents
	for _, p := range h.payments {
		sum += p.amount
	}
	return sum
}

// Count is today's number of writes of kind counted for the harness's owner,
// project and agent.
func (h *Harness) Count(kind policy.Kind) int {
	return h.counts.Count(policy.Key{Owner: h.Owner, Project: h.ProjectUUID, Agent: h.Agent, Day: policy.Day(h.now())}, kind)
}

// Text is a call's error as the agent reads it: "<code>: <sentence>" for a
// refusal, the refusal's own text for an answer run's *connectors.Refusal,
// and "internal_error: internal error" for anything else.
func Text(err error) string {
	var r *connectors.Refusal
	if errors.As(err, &r) {
		return r.Error()
	}
	return string(countersign.ErrorCode(err)) + ": " + countersign.ErrorMessage(err)
}

func (h *Harness) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

// isRefusal reports whether err is one the agent reads as it is.
func isRefusal(err error) bool {
	var e *countersign.Error
	var r *connectors.Refusal
	return errors.As(err, &e) || errors.As(err, &r)
}

// marshal writes JSON without HTML escaping, as the service answers.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// replyPubkey is the one reply key of every task the harness opens.
var replyPubkey = func() string {
	seed := sha256.Sum256([]byte("countersign connectortest reply key"))
	k, err := ecdh.P256().NewPrivateKey(seed[:])
	if err != nil {
		panic("connectortest: the fixed reply key is not a P-256 scalar: " + err.Error())
	}
	return "p256:" + base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes())
}()

func (o Opened) clone() Opened {
	o.Envelope = bytes.Clone(o.Envelope)
	o.Spec = cloneSpec(o.Spec)
	return o
}

func cloneSpec(s connectors.TaskSpec) connectors.TaskSpec {
	s.Display.Fields = slices.Clone(s.Display.Fields)
	for i := range s.Display.Fields {
		s.Display.Fields[i].Values = slices.Clone(s.Display.Fields[i].Values)
	}
	s.Files = slices.Clone(s.Files)
	for i := range s.Files {
		s.Files[i].Data = bytes.Clone(s.Files[i].Data)
	}
	if s.AnswerBy != nil {
		a := *s.AnswerBy
		s.AnswerBy = &a
	}
	s.State = bytes.Clone(s.State)
	return s
}
