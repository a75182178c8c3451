package connectors

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"time"

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
	Price int64 // micro-USD, charged when the run starts; answers cost 0
	// Limit is the run's compute limit (0: DefaultLimit; at most MaxLimit).
	Limit time.Duration
	// Carries names the rule conditions a write carries (policy.Schema).
	Carries []string
	// Noun is what a refusal by rule calls one such write ("payment").
	Noun string
	// Run serves a read or a write.
	Run func(ctx context.Context, c *Call) (any, error)
	// Answer serves an answer operation.
	Answer func(ctx context.Context, a *AnswerCall) (Report, error)
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
	// Conditions are what rules may test (policy.AmountRange, AnyOf, Equals).
	Conditions []policy.Condition
	Operations []Operation
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
	s := policy.Schema{Keys: c.PolicyKeys, Conditions: c.Conditions, Carries: map[string][]string{}, Nouns: map[string]string{}}
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

// Validate checks a connector's declaration: names, kinds, prices (answers
// are free), limits, handlers and its policy schema.
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
	conn, ok := c[connector]
	if !ok {
		return "", "", false
	}
	p := conn.ParsePolicy(raw)
	return string(p.Mode()), p.Sentence(), true
}
