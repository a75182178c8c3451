package guest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"countersign"
	"countersign/connectors/wasm/abi"
	"countersign/policy"
)

var registered *Connector

// Register makes c the connector this module serves. Call it once, from an
// init function: a module is a reactor, whose main never runs.
func Register(c *Connector) {
	if registered != nil {
		panic("guest: Register is called once")
	}
	registered = c
}

// callHost sends a message to one of the host's functions and returns its
// answer; the module's build sets it (hostcall_wasip1.go). Elsewhere there
// is no host.
var callHost = func(fn string, req []byte) ([]byte, error) {
	return nil, fmt.Errorf("guest: %s is served only inside a module", fn)
}

// errNoHost is a host call that could not be made or read.
func errNoHost(what string, err error) error {
	return fmt.Errorf("guest: %s: %w", what, err)
}

func platform(req abi.PlatformRequest) (abi.PlatformResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return abi.PlatformResponse{}, err
	}
	out, err := callHost(abi.ImportPlatform, b)
	if err != nil {
		return abi.PlatformResponse{}, err
	}
	var resp abi.PlatformResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return abi.PlatformResponse{}, errNoHost("the platform's answer does not read", err)
	}
	if resp.Error != nil {
		return resp, resp.Error.Err()
	}
	return resp, nil
}

func openTask(turn string, s TaskSpec) (Task, error) {
	files := make([]abi.File, 0, len(s.Files))
	for _, f := range s.Files {
		files = append(files, abi.File{Name: f.Name, ContentType: f.ContentType, Data: f.Data})
	}
	resp, err := platform(abi.PlatformRequest{Op: abi.OpOpenTask, Turn: turn,
		Spec: abi.SpecOf(s.Kind, s.Display, files, s.AnswerBy, s.Life, s.State)})
	if err != nil {
		return Task{}, err
	}
	if resp.Task == nil {
		return Task{}, errNoHost("the platform opened no task", errors.New("no task in its answer"))
	}
	return taskOf(*resp.Task)
}

func taskOf(t abi.Task) (Task, error) {
	exp, err := abi.ParseTime(t.ExpiresAt)
	if err != nil {
		return Task{}, err
	}
	return Task{ID: t.ID, Kind: countersign.Kind(t.Kind), Hash: t.Hash, Thread: t.Thread, ExpiresAt: exp, Link: t.Link}, nil
}

func reserve(kind policy.Kind, limit int) (bool, error) {
	resp, err := platform(abi.PlatformRequest{Op: abi.OpReserve, Count: kind.String(), Limit: limit})
	return resp.OK, err
}

func spend(key string, amount, limit policy.Cents) (bool, error) {
	resp, err := platform(abi.PlatformRequest{Op: abi.OpSpend, Key: key, Amount: int64(amount), SpendLimit: int64(limit)})
	return resp.OK, err
}

func unspend(key string) error {
	_, err := platform(abi.PlatformRequest{Op: abi.OpUnspend, Key: key})
	return err
}

// handle serves one request of the host and returns the response, as JSON.
func handle(in []byte) []byte {
	var req abi.Request
	resp := func() (resp abi.Response) {
		defer func() {
			if r := recover(); r != nil {
				// A panic's value may quote what the run read: it is not
				// passed on.
				resp = abi.Response{Error: &abi.Error{Code: string(countersign.Internal)}}
			}
		}()
		if err := json.Unmarshal(in, &req); err != nil {
			return abi.Response{Error: &abi.Error{Code: string(countersign.Internal), Message: "the module cannot read the host's request"}}
		}
		return serve(&req)
	}()
	out, err := marshal(resp)
	if err != nil {
		out, _ = json.Marshal(abi.Response{Error: &abi.Error{Code: string(countersign.Internal)}})
	}
	return out
}

func serve(req *abi.Request) abi.Response {
	c := registered
	if c == nil {
		return abi.Response{Error: &abi.Error{Code: string(countersign.Internal), Message: "the module registered no connector"}}
	}
	if req.Kind == abi.KindDescribe {
		ops := []abi.Operation{}
		for _, op := range c.Operations {
			ops = append(ops, abi.Operation{Name: op.Name, Kind: string(op.Kind)})
		}
		return abi.Response{Operations: ops}
	}
	op, ok := c.Operation(req.Operation)
	if !ok {
		return abi.Response{Error: &abi.Error{Code: string(countersign.Internal), Message: "the module has no operation " + req.Operation}}
	}
	now, err := abi.ParseTime(req.Now)
	if err != nil {
		return failed(err)
	}
	pol := &Policy{}
	if req.Policy != nil {
		pol.p = *req.Policy
	}
	ctx := context.Background()
	switch {
	case req.Kind == abi.KindRun && op.Run != nil:
		call := &Call{Operation: op.Name, Args: req.Args, Agent: req.Agent, Owner: req.Owner, Project: req.Project,
			ProjectUUID: req.ProjectUUID, Run: req.Run, Policy: pol, Now: now, Platform: hostPlatform{}}
		out, err := op.Run(ctx, call)
		resp := abi.Response{}
		if d := call.Done(); d != nil {
			resp.Did = &abi.Did{Title: d.Title, Summary: d.Summary, Outcome: abi.Outcome{Text: d.Outcome.Text, URL: d.Outcome.URL}}
		}
		if err != nil {
			resp.Error = errorOf(err)
			return resp
		}
		if resp.Result, err = marshal(out); err != nil {
			return failed(err)
		}
		return resp
	case req.Kind == abi.KindAnswer && op.Answer != nil && req.Task != nil:
		task, err := taskOf(*req.Task)
		if err != nil {
			return failed(err)
		}
		var env countersign.Envelope
		if len(req.Envelope) > 0 {
			if env, err = countersign.ParseEnvelope(req.Envelope); err != nil {
				return failed(err)
			}
		}
		a := &AnswerCall{Operation: op.Name, Task: task, Envelope: env, State: req.State, Supplied: req.Supplied, Note: req.Note,
			Files: req.Files, Agent: req.Agent, Owner: req.Owner, Project: req.Project, ProjectUUID: req.ProjectUUID,
			Run: req.Run, Policy: pol, Now: now, Platform: hostPlatform{answer: true}}
		rep, err := op.Answer(ctx, a)
		if err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				return abi.Response{Refusal: &abi.Refusal{Code: string(r.Code), Sentence: r.Sentence, Wrote: r.Wrote, Unknown: r.Unknown}}
			}
			return abi.Response{Error: errorOf(err)}
		}
		res, err := marshal(rep.Result)
		if err != nil {
			return failed(err)
		}
		return abi.Response{Report: &abi.Report{Result: res, Outcome: abi.Outcome{Text: rep.Outcome.Text, URL: rep.Outcome.URL}}}
	}
	return abi.Response{Error: &abi.Error{Code: string(countersign.Internal), Message: "the module does not serve " + req.Kind + " for " + op.Name}}
}

// errorOf is a run's error on the wire: a refusal's code and sentence; any
// other error is internal_error with no sentence, since its text may quote
// what the run read.
func errorOf(err error) *abi.Error {
	var e *countersign.Error
	if errors.As(err, &e) {
		return &abi.Error{Code: string(e.Code), Message: e.Message}
	}
	return &abi.Error{Code: string(countersign.Internal)}
}

func failed(error) abi.Response {
	return abi.Response{Error: &abi.Error{Code: string(countersign.Internal)}}
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
