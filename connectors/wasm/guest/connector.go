package guest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"countersign"
	"countersign/connectors/wasm/abi"
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

// Operation is a named entry point of a connector, declared as
// connectors.Operation declares one.
type Operation struct {
	Name        string
	Kind        OpKind
	Price       int64
	Description string
	Schema      json.RawMessage
	Examples    []json.RawMessage
	Result      json.RawMessage
	// SuppliedText is, for an answer operation, the shape of the text the
	// owner supplies (connectors.Operation's SuppliedText).
	SuppliedText json.RawMessage
	// Limit is the run's compute limit (0: the platform's default).
	Limit time.Duration
	// InProcess declares that the handler reaches no host
	// (connectors.Operation's InProcess).
	InProcess bool
	Run       func(ctx context.Context, c *Call) (any, error)
	Answer    func(ctx context.Context, a *AnswerCall) (Report, error)
}

// Credentials says how the host attaches the project's credentials to the
// module's requests: the project's credentials are a JSON object of the
// string Members; in Header and Query, "{member}" stands for a member's
// value ("Authorization": "Bearer {token}").
type Credentials struct {
	Members []string
	Header  map[string]string
	Query   map[string]string
}

// Connector is what a connector author declares.
type Connector struct {
	Name    string
	Version string
	Tasks   bool
	// PolicyKeys are the connector's own policy members besides confirm.
	PolicyKeys map[string]policy.KeyKind
	// Allowed names the WriteList key listing the writes allowed at all.
	Allowed    string
	Operations []Operation
	// Hosts are the only hosts Fetch reaches: "name" (https on port 443)
	// or "name:port".
	Hosts []string
	// Credentials, when set, says how the host attaches the project's
	// credentials to every request.
	Credentials *Credentials
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

var keyKinds = map[policy.KeyKind]string{policy.Count: "count", policy.Amount: "amount", policy.Text: "text",
	policy.List: "list", policy.WriteList: "write_list"}

// Manifest is the connector's declaration as the service reads it beside
// the module (manifest.json), naming the module file.
func (c *Connector) Manifest(module string) (abi.Manifest, error) {
	m := abi.Manifest{ABI: abi.Version, Name: c.Name, Version: c.Version, Module: module, Tasks: c.Tasks,
		Allowed: c.Allowed, Operations: []abi.ManifestOperation{}, Egress: abi.Egress{Hosts: c.Hosts}}
	if len(c.PolicyKeys) > 0 {
		m.PolicyKeys = map[string]string{}
		for k, kind := range c.PolicyKeys {
			name, ok := keyKinds[kind]
			if !ok {
				return abi.Manifest{}, fmt.Errorf("policy key %s has no kind", k)
			}
			m.PolicyKeys[k] = name
		}
	}
	for _, op := range c.Operations {
		m.Operations = append(m.Operations, abi.ManifestOperation{Name: op.Name, Kind: string(op.Kind), Price: op.Price,
			Description: op.Description, Schema: op.Schema, Examples: op.Examples, Result: op.Result, SuppliedText: op.SuppliedText, LimitMS: op.Limit.Milliseconds(),
			InProcess: op.InProcess})
	}
	if cr := c.Credentials; cr != nil {
		members := append([]string(nil), cr.Members...)
		sort.Strings(members)
		m.Egress.Credentials = &abi.Credentials{Members: members, Header: cr.Header, Query: cr.Query}
	}
	return m, nil
}

// Task is a task a run opened.
type Task struct {
	ID        string
	Kind      countersign.Kind
	Hash      string
	Thread    string
	ExpiresAt time.Time
	Link      string
}

// File is a file the owner is handed with a task.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// TaskSpec is what a connector asks to show its owner.
type TaskSpec struct {
	Kind     countersign.Kind
	Display  countersign.Display
	Files    []File
	AnswerBy *countersign.AnswerBy
	// Life is how long the task waits (0: 24 hours, the most).
	Life time.Duration
	// State is sealed with the task: only the answer run reads it.
	State []byte
}

// Report is what an answer run reports.
type Report struct {
	// Result is the JSON object the agent reads with task_status.
	Result  any
	Outcome Outcome
}

// Outcome tells the owner, in plain words, what a write did and where to
// see it.
type Outcome struct {
	Text string
	URL  string
}

// Did is what a write carried out at once tells the owner's history.
type Did struct {
	Title   string
	Summary string
	Outcome Outcome
}

// TaskOnly is the Result of a read or write that answers only by opening a
// task.
var TaskOnly = json.RawMessage(`{"not": {}, "description": "answers only by opening a task"}`)

// AwaitingOwner is the agent's answer when a task was opened.
func AwaitingOwner(t Task) any { return taskAnswer("awaiting_owner", t) }

// Notified is the agent's answer when a notice was opened.
func Notified(t Task) any { return taskAnswer("notified", t) }

func taskAnswer(status string, t Task) any {
	return map[string]any{
		"ok": true, "status": status, "task_id": t.ID, "task_hash": t.Hash, "thread": t.Thread,
		"expires_at": t.ExpiresAt.UTC().Format(countersign.TimeFormat), "link": t.Link,
	}
}

// Refuse is a refusal of a call: "<code>: <sentence>" to the agent.
func Refuse(code countersign.Code, format string, args ...any) error {
	return countersign.Errorf(code, format, args...)
}

// Refusal is an answer run's refusal after the owner's approval.
type Refusal struct {
	Code     countersign.Code
	Sentence string
	Wrote    bool
	Unknown  bool
}

func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message() }

// Message is the sentence with what happened to the write.
func (r *Refusal) Message() string {
	if r.Unknown {
		return r.Sentence + " Whether the write happened is not known."
	}
	if r.Wrote {
		return r.Sentence + " The write happened."
	}
	return r.Sentence + " Nothing was written."
}

// Refused builds an answer run's refusal.
func Refused(code countersign.Code, wrote bool, format string, args ...any) error {
	return &Refusal{Code: code, Sentence: fmt.Sprintf(format, args...), Wrote: wrote}
}

// RefusedUnknown builds an answer run's refusal when whether the write
// happened cannot be told.
func RefusedUnknown(code countersign.Code, format string, args ...any) error {
	return &Refusal{Code: code, Sentence: fmt.Sprintf(format, args...), Unknown: true}
}

// Uncharged tells whether a run that ended refused with err is not charged
// its price (connectors.Uncharged).
func Uncharged(err error) bool {
	switch countersign.ErrorCode(err) {
	case countersign.InvalidRequest, countersign.DisplayInvalid:
		return true
	}
	return false
}
