package guest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"countersign"
	"countersign/connectors/wasm/abi"
	"countersign/policy"
)

// Call is one call of a read or write operation by an agent. Unlike
// connectors.Call it carries no credentials: the host attaches them to
// the module's requests (Fetch).
type Call struct {
	Operation   string
	Args        json.RawMessage // the agent's body, exactly as sent
	Agent       string
	Owner       string
	Project     string
	ProjectUUID string
	Run         string
	Policy      *Policy
	Now         time.Time
	Platform    Platform

	did *Did
}

// Platform is what the service does for a running operation, as
// connectors.Platform: here through the host.
type Platform interface {
	// OpenTask opens a task in thread ("" starts one; an answer run
	// continues its own).
	OpenTask(ctx context.Context, spec TaskSpec, thread string) (Task, error)
	// Reserve counts one write of a kind against a daily limit.
	Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error)
	// Spend counts a payment against the project's spending.
	Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error)
	// Unspend forgets a payment that certainly did not happen.
	Unspend(ctx context.Context, key string) error
}

// hostPlatform is the Platform of a run: answer tells an answer run's.
type hostPlatform struct{ answer bool }

func (p hostPlatform) OpenTask(_ context.Context, spec TaskSpec, thread string) (Task, error) {
	switch {
	case !p.answer:
		return openTask(abi.TurnFirst, spec)
	case spec.Kind == countersign.KindNotice:
		return openTask(abi.TurnNotice, spec)
	}
	return openTask(abi.TurnNext, spec)
}

func (p hostPlatform) Reserve(_ context.Context, kind policy.Kind, limit int) (bool, error) {
	return reserve(kind, limit)
}

func (p hostPlatform) Spend(_ context.Context, key string, amount, limit policy.Cents) (bool, error) {
	return spend(key, amount, limit)
}

func (p hostPlatform) Unspend(_ context.Context, key string) error { return unspend(key) }

// Did records what a write carried out at once did, for the owner's
// history. A write calls it once, after the write happened.
func (c *Call) Did(d Did) { c.did = &d }

// Done is what the write told with Did, if anything.
func (c *Call) Done() *Did { return c.did }

// Decode reads the call's arguments into v, refusing members v does not
// have (besides "operation"), as connectors.Call.Decode does.
func (c *Call) Decode(v any) error { return decodeArgs(c.Args, v) }

// OpenTask opens a task, starting a thread.
func (c *Call) OpenTask(ctx context.Context, spec TaskSpec) (Task, error) {
	return openTask(abi.TurnFirst, spec)
}

// Decide asks the policy about this write.
func (c *Call) Decide(facts policy.Facts) policy.Decision { return c.Policy.Decide(c.Operation, facts) }

// Reserve counts this write against a daily limit just before it happens;
// false means the day's number is reached.
func (c *Call) Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error) {
	return reserve(kind, limit)
}

// Spend counts this payment against the project's spending.
func (c *Call) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	return spend(key, amount, limit)
}

// AnswerCall is the run the platform starts, as the agent, when the owner
// approves a task.
type AnswerCall struct {
	Operation   string
	Task        Task
	Envelope    countersign.Envelope
	State       []byte
	Supplied    []byte // the owner's text or file; nil for a confirm task
	Note        string
	Files       [][]byte
	Agent       string
	Owner       string
	Project     string
	ProjectUUID string
	Run         string
	Policy      *Policy // as it is now
	Now         time.Time
	Platform    Platform
}

// Decide asks the policy, as it is now, about the sealed write.
func (a *AnswerCall) Decide(write string, facts policy.Facts) policy.Decision {
	return a.Policy.Decide(write, facts)
}

// Reserve counts the confirmed write against the day's number of the agent
// that prepared it.
func (a *AnswerCall) Reserve(ctx context.Context, limit int) (bool, error) {
	return reserve(policy.Confirmed, limit)
}

// Spend counts the confirmed payment against the project's spending.
func (a *AnswerCall) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	return spend(key, amount, limit)
}

// Next opens the next turn of the task's thread (a confirm or input task).
func (a *AnswerCall) Next(ctx context.Context, spec TaskSpec) (Task, error) {
	if !spec.Kind.Asks() {
		return Task{}, countersign.Errorf(countersign.InvalidRequest, "the next turn asks the owner something; use Notice to tell")
	}
	return openTask(abi.TurnNext, spec)
}

// Notice tells the owner something in the task's thread.
func (a *AnswerCall) Notice(ctx context.Context, spec TaskSpec) (Task, error) {
	spec.Kind, spec.AnswerBy = countersign.KindNotice, nil
	return openTask(abi.TurnNotice, spec)
}

// Policy is the project's policy as the host read it with the connector's
// declaration: its mode, what it decides for each write, and the
// connector's own keys. It has policy.Policy's methods.
type Policy struct{ p abi.Policy }

// Mode is the policy's mode.
func (p *Policy) Mode() policy.Mode { return policy.Mode(p.p.Mode) }

// Sentence says why a policy is not OK.
func (p *Policy) Sentence() string { return p.p.Sentence }

// Hash is the policy's hash.
func (p *Policy) Hash() string { return p.p.Hash }

// Asks tells whether confirm names op.
func (p *Policy) Asks(op string) bool { return slices.Contains(p.p.Asks, op) }

// Count is a count key's value.
func (p *Policy) Count(key string) (int, bool) {
	v, ok := p.p.Keys[key]
	if !ok || v.Count == nil {
		return 0, false
	}
	return *v.Count, true
}

// Amount is an amount key's value.
func (p *Policy) Amount(key string) (policy.Cents, bool) {
	v, ok := p.p.Keys[key]
	if !ok || v.Amount == nil {
		return 0, false
	}
	return policy.Cents(*v.Amount), true
}

// Text is a text key's value.
func (p *Policy) Text(key string) (string, bool) {
	v, ok := p.p.Keys[key]
	if !ok || v.Text == nil {
		return "", false
	}
	return *v.Text, true
}

// List is a list key's value.
func (p *Policy) List(key string) ([]string, bool) {
	v, ok := p.p.Keys[key]
	if !ok || v.List == nil {
		return nil, false
	}
	return slices.Clone(v.List), true
}

var outcomes = map[string]policy.Outcome{"allow": policy.Allow, "ask": policy.Ask, "refuse": policy.Refuse}

// Decide answers for one write, as the host's reading of the policy does;
// the facts are not read (a WebAssembly connector declares no rule
// conditions).
func (p *Policy) Decide(op string, _ policy.Facts) policy.Decision {
	if p.p.Mode != string(policy.OK) {
		return policy.Decision{Outcome: policy.Refuse, Code: "policy_unreadable", Sentence: p.p.Sentence}
	}
	d, ok := p.p.Decisions[op]
	if !ok {
		return policy.Decision{Outcome: policy.Refuse, Code: "internal_error",
			Sentence: fmt.Sprintf("the policy was asked about %q, which is not one of this connector's writes", op)}
	}
	return policy.Decision{Outcome: outcomes[d.Outcome], Rule: d.Rule, Code: d.Code, Sentence: d.Sentence}
}

// decodeArgs decodes an agent's call body strictly, ignoring "operation",
// by the service's one rule for JSON bodies (countersign.DecodeStrict).
func decodeArgs(raw json.RawMessage, v any) error {
	var members map[string]json.RawMessage
	if err := countersign.DecodeStrict(raw, &members); err != nil {
		return argsRefusal(err)
	}
	delete(members, "operation")
	rest, err := json.Marshal(members)
	if err != nil {
		return err
	}
	if err := countersign.DecodeStrict(rest, v); err != nil {
		return argsRefusal(err)
	}
	return nil
}

// argsRefusal words DecodeStrict's refusal of a call, as the compiled-in
// SDK does.
func argsRefusal(err error) error {
	var je *countersign.JSONError
	if !errors.As(err, &je) {
		return err
	}
	switch je.Problem {
	case countersign.JSONMalformed, countersign.JSONNotObject:
		return countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	case countersign.JSONUnknown:
		return countersign.Errorf(countersign.InvalidRequest, "the call's arguments are not this operation's (unknown member %s)", je.Member)
	}
	return countersign.Errorf(countersign.InvalidRequest, "%s", je.Sentence("the call"))
}
