package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/tetratelabs/wazero/api"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/wasm/abi"
	"countersign/policy"
)

func runtimeCPUs() int { return runtime.GOMAXPROCS(0) }

// stateKey keys a call's state in the context its host calls receive.
type stateKey struct{}

// callState is one call's side of the host functions: the run it serves,
// the answer held for take, and what its requests did.
type callState struct {
	module *Module
	call   *connectors.Call       // a read's or a write's run
	answer *connectors.AnswerCall // an answer run
	creds  []byte                 // the project's credentials, never given to the module

	mu       sync.Mutex
	held     []byte // the answer take copies
	requests int    // http_do calls made
	sent     bool   // a request may have reached a host
}

func stateOf(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// runFunc serves a read or a write by the module.
func (m *Module) runFunc(name string) func(ctx context.Context, c *connectors.Call) (any, error) {
	return func(ctx context.Context, c *connectors.Call) (any, error) {
		op, _ := m.Connector.Operation(name)
		req := abi.Request{Kind: abi.KindRun, Operation: name, Args: c.Args, Agent: c.Agent, Owner: c.Owner,
			Project: c.Project, ProjectUUID: c.ProjectUUID, Run: c.Run, Now: c.Now.Format(abi.TimeFormat),
			Policy: m.policyView(c.Policy)}
		st := &callState{call: c, creds: c.Credentials}
		resp, _, err := m.call(ctx, st, req, op.ComputeLimit())
		if err != nil {
			return nil, countersign.Errorf(countersign.Internal, "%s", err.Error())
		}
		if resp.Did != nil {
			c.Did(connectors.Did{Title: resp.Did.Title, Summary: resp.Did.Summary,
				Outcome: connectors.Outcome{Text: resp.Did.Outcome.Text, URL: resp.Did.Outcome.URL}})
		}
		if resp.Error != nil {
			return nil, moduleError(resp.Error)
		}
		if len(resp.Result) == 0 || resp.Result[0] != '{' || !json.Valid(resp.Result) {
			return nil, countersign.Errorf(countersign.Internal, "the operation's output is not a JSON object")
		}
		return resp.Result, nil
	}
}

// answerFunc serves an answer operation by the module.
func (m *Module) answerFunc(name string) func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	return func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		op, _ := m.Connector.Operation(name)
		var env []byte
		if a.Envelope.ID != "" {
			var err error
			if env, err = a.Envelope.Canonical(); err != nil {
				return connectors.Report{}, connectors.Refused(countersign.Internal, false, "The task's envelope cannot be written for the connector's module.")
			}
		}
		req := abi.Request{Kind: abi.KindAnswer, Operation: name, Agent: a.Agent, Owner: a.Owner, Project: a.Project,
			ProjectUUID: a.ProjectUUID, Run: a.Run, Now: a.Now.Format(abi.TimeFormat), Policy: m.policyView(a.Policy),
			Task: taskWire(a.Task), Envelope: env, State: a.State, Supplied: a.Supplied, Note: a.Note, Files: a.Files}
		st := &callState{answer: a, creds: a.Credentials}
		resp, st, err := m.call(ctx, st, req, op.ComputeLimit())
		if err != nil {
			// Whether the write happened: only if a request may have left.
			if st.wasSent() {
				return connectors.Report{}, connectors.RefusedUnknown(countersign.Internal, "%s.", capital(err.Error()))
			}
			return connectors.Report{}, connectors.Refused(countersign.Internal, false, "%s.", capital(err.Error()))
		}
		switch {
		case resp.Refusal != nil:
			r := resp.Refusal
			return connectors.Report{}, &connectors.Refusal{Code: codeOf(r.Code), Sentence: r.Sentence, Wrote: r.Wrote, Unknown: r.Unknown}
		case resp.Error != nil:
			return connectors.Report{}, moduleError(resp.Error)
		case resp.Report == nil:
			return connectors.Report{}, countersign.Errorf(countersign.Internal, "the connector's module reported nothing")
		}
		return connectors.Report{Result: resp.Report.Result,
			Outcome: connectors.Outcome{Text: resp.Report.Outcome.Text, URL: resp.Report.Outcome.URL}}, nil
	}
}

// moduleError is a module's error as the platform reads it: a refusal
// with a contract code stays one; internal_error without a sentence is a
// failure of the module's own, which the agent reads as internal_error.
func moduleError(e *abi.Error) error {
	code := codeOf(e.Code)
	if code == countersign.Internal && e.Message == "" {
		return errModuleFailed
	}
	return &countersign.Error{Code: code, Message: e.Message}
}

// errModuleFailed is a module's own failure; its words stay in the module.
var errModuleFailed = fmt.Errorf("the connector's module failed")

// codeOf is a module's code if the contract has it, else internal_error.
func codeOf(c string) countersign.Code {
	for _, k := range countersign.Codes() {
		if string(k) == c {
			return k
		}
	}
	return countersign.Internal
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func taskWire(t connectors.Task) *abi.Task {
	return &abi.Task{ID: t.ID, Kind: string(t.Kind), Hash: t.Hash, Thread: t.Thread,
		ExpiresAt: t.ExpiresAt.UTC().Format(abi.TimeFormat), Link: t.Link}
}

func (st *callState) wasSent() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sent
}

// policyView is what the module may read of the project's policy.
func (m *Module) policyView(p *policy.Policy) *abi.Policy {
	if p == nil {
		return nil
	}
	v := &abi.Policy{Mode: string(p.Mode()), Sentence: p.Sentence(), Hash: p.Hash()}
	if p.Mode() != policy.OK {
		return v
	}
	v.Decisions = map[string]abi.Decision{}
	for _, op := range m.Manifest.Operations {
		if op.Kind != string(connectors.Write) {
			continue
		}
		if p.Asks(op.Name) {
			v.Asks = append(v.Asks, op.Name)
		}
		d := p.Decide(op.Name, policy.Facts{})
		v.Decisions[op.Name] = abi.Decision{Outcome: d.Outcome.String(), Rule: d.Rule, Code: d.Code, Sentence: d.Sentence}
	}
	for k, kind := range m.Manifest.PolicyKeys {
		var kv abi.KeyValue
		switch keyKinds[kind] {
		case policy.Count:
			if n, ok := p.Count(k); ok {
				kv.Count = &n
			}
		case policy.Amount:
			if a, ok := p.Amount(k); ok {
				c := int64(a)
				kv.Amount = &c
			}
		case policy.Text:
			if s, ok := p.Text(k); ok {
				kv.Text = &s
			}
		default:
			if l, ok := p.List(k); ok {
				kv.List = append([]string{}, l...)
			}
		}
		if kv.Count != nil || kv.Amount != nil || kv.Text != nil || kv.List != nil {
			if v.Keys == nil {
				v.Keys = map[string]abi.KeyValue{}
			}
			v.Keys[k] = kv
		}
	}
	return v
}

// readMessage copies a module's message at (ptr, size) out of its memory.
func readMessage(mod api.Module, ptr, size uint32) ([]byte, bool) {
	if size > MaxMessageBytes {
		return nil, false
	}
	b, ok := mod.Memory().Read(ptr, size)
	if !ok {
		return nil, false
	}
	return append([]byte(nil), b...), true
}

// hold keeps an answer for take and returns its length.
func (st *callState) hold(v any) uint32 {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":{"code":"internal_error","message":"the host's answer does not write"}}`)
	}
	st.mu.Lock()
	st.held = b
	st.mu.Unlock()
	return uint32(len(b))
}

// hostTake copies the answer held into the module's memory.
func hostTake(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil {
		panic("countersign.take outside a call")
	}
	st.mu.Lock()
	b := st.held
	st.held = nil
	st.mu.Unlock()
	if !mod.Memory().Write(api.DecodeU32(stack[0]), b) {
		panic("countersign.take: the buffer is outside the module's memory")
	}
}

// hostPlatform serves the platform's operations: open a task, count a
// write, count or forget a payment.
func hostPlatform(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil {
		panic("countersign.platform outside a call")
	}
	b, ok := readMessage(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	if !ok {
		panic("countersign.platform: the message is outside the module's memory or too large")
	}
	stack[0] = api.EncodeU32(st.hold(st.platform(ctx, b)))
}

func (st *callState) platform(ctx context.Context, b []byte) abi.PlatformResponse {
	var req abi.PlatformRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return abi.PlatformResponse{Error: &abi.Error{Code: string(countersign.InvalidRequest), Message: "the platform request does not read"}}
	}
	fail := func(err error) abi.PlatformResponse { return abi.PlatformResponse{Error: abi.ErrorOf(err)} }
	var p connectors.Platform
	switch {
	case st.call != nil:
		p = st.call.Platform
	case st.answer != nil:
		p = st.answer.Platform
	default:
		return fail(countersign.Errorf(countersign.InvalidRequest, "no run is under way"))
	}
	switch req.Op {
	case abi.OpOpenTask:
		if req.Spec == nil {
			return fail(countersign.Errorf(countersign.InvalidRequest, "a task needs its spec"))
		}
		spec := connectors.TaskSpec{Kind: countersign.Kind(req.Spec.Kind), Display: req.Spec.Display.Domain(),
			AnswerBy: req.Spec.By(), Life: req.Spec.Life(), State: req.Spec.State}
		for _, f := range req.Spec.Files {
			spec.Files = append(spec.Files, connectors.File{Name: f.Name, ContentType: f.ContentType, Data: f.Data})
		}
		var t connectors.Task
		var err error
		switch {
		case req.Turn == abi.TurnFirst && st.call != nil:
			t, err = st.call.OpenTask(ctx, spec)
		case req.Turn == abi.TurnNext && st.answer != nil:
			t, err = st.answer.Next(ctx, spec)
		case req.Turn == abi.TurnNotice && st.answer != nil:
			t, err = st.answer.Notice(ctx, spec)
		default:
			err = countersign.Errorf(countersign.InvalidRequest, "a read or a write opens a first turn; an answer run opens the next turn or a notice")
		}
		if err != nil {
			return fail(err)
		}
		return abi.PlatformResponse{Task: taskWire(t)}
	case abi.OpReserve:
		kind := map[string]policy.Kind{"direct": policy.Direct, "confirmed": policy.Confirmed}[req.Count]
		if kind == 0 {
			return fail(countersign.Errorf(countersign.InvalidRequest, "a write counts as direct or confirmed"))
		}
		if st.answer != nil {
			kind = policy.Confirmed
		}
		ok, err := p.Reserve(ctx, kind, req.Limit)
		if err != nil {
			return fail(err)
		}
		return abi.PlatformResponse{OK: ok}
	case abi.OpSpend:
		ok, err := p.Spend(ctx, req.Key, policy.Cents(req.Amount), policy.Cents(req.SpendLimit))
		if err != nil {
			return fail(err)
		}
		return abi.PlatformResponse{OK: ok}
	case abi.OpUnspend:
		if err := p.Unspend(ctx, req.Key); err != nil {
			return fail(err)
		}
		return abi.PlatformResponse{OK: true}
	}
	return fail(countersign.Errorf(countersign.InvalidRequest, "the platform has no operation %q", req.Op))
}
