package guest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/wasm/abi"
	"countersign/policy"
)

// request is a run request as the host writes it.
func request(op string, args string) []byte {
	b, _ := json.Marshal(abi.Request{Kind: abi.KindRun, Operation: op, Args: json.RawMessage(args),
		Now: time.Now().Format(abi.TimeFormat), Policy: &abi.Policy{Mode: "ok",
			Decisions: map[string]abi.Decision{"w": {Outcome: "ask"}}, Asks: []string{"w"},
			Keys: map[string]abi.KeyValue{"n": {Count: new(int)}}}})
	return b
}

func response(t *testing.T, b []byte) abi.Response {
	t.Helper()
	var r abi.Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServe: the SDK's side of the ABI, without a module: what an
// operation answers, refuses or opens reaches the host as the ABI says;
// a panic or an error of the connector's own is internal_error with no
// words of it; the policy reads as the host decided it.
func TestServe(t *testing.T) {
	var sent []abi.PlatformRequest
	callHost = func(fn string, req []byte) ([]byte, error) {
		var p abi.PlatformRequest
		_ = json.Unmarshal(req, &p)
		sent = append(sent, p)
		b, _ := json.Marshal(abi.PlatformResponse{Task: &abi.Task{ID: "r-1", Kind: "confirm", Hash: strings.Repeat("a", 64), Thread: "r-1",
			ExpiresAt: "2026-01-02T03:04:05Z", Link: "https://x/#/tasks/r-1"}})
		return b, nil
	}
	registered = nil
	Register(&Connector{Name: "t", Version: "1", Operations: []Operation{
		{Name: "r", Kind: Read, Run: func(ctx context.Context, c *Call) (any, error) {
			var args struct {
				X int `json:"x"`
			}
			if err := c.Decode(&args); err != nil {
				return nil, err
			}
			n, _ := c.Policy.Count("n")
			return map[string]any{"x": args.X, "asks": c.Policy.Asks("w"), "n": n, "decision": c.Policy.Decide("w", policy.Facts{}).Outcome.String()}, nil
		}},
		{Name: "w", Kind: Write, Run: func(ctx context.Context, c *Call) (any, error) {
			task, err := c.OpenTask(ctx, TaskSpec{Kind: countersign.KindConfirm, Display: countersign.Display{Title: "T", Summary: "S"},
				AnswerBy: &countersign.AnswerBy{Operation: "a", Supplies: countersign.SuppliesNone}, State: []byte("s")})
			if err != nil {
				return nil, err
			}
			return AwaitingOwner(task), nil
		}},
		{Name: "boom", Kind: Read, Run: func(context.Context, *Call) (any, error) { panic("secret words") }},
		{Name: "oops", Kind: Read, Run: func(context.Context, *Call) (any, error) { return nil, errors.New("secret words") }},
		{Name: "no", Kind: Read, Run: func(context.Context, *Call) (any, error) {
			return nil, Refuse(countersign.InvalidRequest, "not that")
		}},
	}})
	defer func() { registered = nil }()

	r := response(t, handle(request("r", `{"operation": "r", "x": 3}`)))
	if string(r.Result) != `{"asks":true,"decision":"ask","n":0,"x":3}` {
		t.Fatalf("r: %+v", r)
	}
	// Decode refuses as the compiled-in SDK does, word for word.
	compiled := (&connectors.Call{Args: json.RawMessage(`{"operation": "r", "y": 3}`)}).Decode(&struct {
		X int `json:"x"`
	}{})
	r = response(t, handle(request("r", `{"operation": "r", "y": 3}`)))
	if r.Error == nil || r.Error.Code+": "+r.Error.Message != compiled.Error() {
		t.Fatalf("an unknown member: %+v, compiled in %v", r.Error, compiled)
	}
	r = response(t, handle(request("w", `{}`)))
	var a map[string]any
	_ = json.Unmarshal(r.Result, &a)
	if a["status"] != "awaiting_owner" || a["task_id"] != "r-1" || a["expires_at"] != "2026-01-02T03:04:05Z" || len(sent) != 1 ||
		sent[0].Op != abi.OpOpenTask || sent[0].Turn != abi.TurnFirst || sent[0].Spec.Display.Summary != "S" || string(sent[0].Spec.State) != "s" {
		t.Fatalf("w: %+v, sent %+v", r, sent)
	}
	for _, op := range []string{"boom", "oops"} {
		out := handle(request(op, `{}`))
		if r := response(t, out); r.Error == nil || r.Error.Code != "internal_error" || r.Error.Message != "" || strings.Contains(string(out), "secret") {
			t.Fatalf("%s: %s", op, out)
		}
	}
	if r := response(t, handle(request("no", `{}`))); r.Error == nil || r.Error.Code != "invalid_request" || r.Error.Message != "not that" {
		t.Fatalf("no: %+v", r)
	}
	b, _ := json.Marshal(abi.Request{Kind: abi.KindDescribe})
	if r := response(t, handle(b)); len(r.Operations) != 5 || r.Operations[1] != (abi.Operation{Name: "w", Kind: "write"}) {
		t.Fatalf("describe: %+v", r)
	}
	if r := response(t, handle([]byte("{"))); r.Error == nil || r.Error.Code != "internal_error" {
		t.Fatalf("a request that does not read: %+v", r)
	}
}

// TestRefusalReadsAsTheCompiledIn: an answer run's refusal reads the same
// in both SDKs.
func TestRefusalReadsAsTheCompiledIn(t *testing.T) {
	for _, tc := range []struct{ wrote, unknown bool }{{false, false}, {true, false}, {false, true}} {
		g := &Refusal{Code: countersign.Conflict, Sentence: "It moved.", Wrote: tc.wrote, Unknown: tc.unknown}
		c := &connectors.Refusal{Code: countersign.Conflict, Sentence: "It moved.", Wrote: tc.wrote, Unknown: tc.unknown}
		if g.Error() != c.Error() {
			t.Fatalf("%q, compiled in %q", g.Error(), c.Error())
		}
	}
}
