package connectortest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/policy"
)

// anyArgs is a schema that takes any arguments.
var anyArgs = json.RawMessage(`{"type": "object"}`)

var ctx = context.Background()

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// hooks lets each test decide what the hook connector's operations do.
type hooks struct {
	run    func(ctx context.Context, c *connectors.Call) (any, error)
	answer func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error)
}

// hookConnector has a read, two writes and three answer operations (the
// "slow" ones with a 50 ms compute limit), all running the hooks.
func hookConnector(hk *hooks) *connectors.Connector {
	run := func(ctx context.Context, c *connectors.Call) (any, error) { return hk.run(ctx, c) }
	answer := func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		return hk.answer(ctx, a)
	}
	return &connectors.Connector{
		Name: "hook", Version: "0.1.0", Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{"max_per_day": policy.Count},
		Conditions: []policy.Condition{policy.AmountRange("amount", "min_usd", "max_usd")},
		Operations: []connectors.Operation{
			{Name: "read", Kind: connectors.Read, Description: "read in a test.", Schema: anyArgs, Run: run},
			{Name: "open", Kind: connectors.Write, Description: "open in a test.", Schema: anyArgs, Price: 7, Run: run, Carries: []string{"amount"}},
			{Name: "slow", Kind: connectors.Write, Description: "slow in a test.", Schema: anyArgs, Price: 3, Limit: 50 * time.Millisecond, Run: run},
			{Name: "confirm_it", Kind: connectors.Answer, Description: "confirm_it in a test.", Answer: answer},
			{Name: "type_it", Kind: connectors.Answer, Description: "type_it in a test.", Answer: answer},
			{Name: "slow_answer", Kind: connectors.Answer, Description: "slow_answer in a test.", Limit: 50 * time.Millisecond, Answer: answer},
		},
	}
}

// newHook returns a harness on a fixed clock for a hook connector.
func newHook(t testing.TB, hk *hooks) *connectortest.Harness {
	h := connectortest.New(t, hookConnector(hk))
	h.Now = func() time.Time { return t0 }
	return h
}

// opener is a run hook that opens each spec in turn and answers with the
// last task, as a connector does.
func opener(specs ...connectors.TaskSpec) func(context.Context, *connectors.Call) (any, error) {
	return func(ctx context.Context, c *connectors.Call) (any, error) {
		var last connectors.Task
		for _, s := range specs {
			t, err := c.OpenTask(ctx, s)
			if err != nil {
				return nil, err
			}
			last = t
		}
		if last.Kind == countersign.KindNotice {
			return connectors.Notified(last), nil
		}
		return connectors.AwaitingOwner(last), nil
	}
}

func field(label, value string) countersign.Field {
	return countersign.Field{Kind: countersign.FieldText, Label: label, Values: []string{value}, WrittenBy: countersign.WrittenByProject}
}

func confirmSpec(title string) connectors.TaskSpec {
	return connectors.TaskSpec{
		Kind:     countersign.KindConfirm,
		Display:  countersign.Display{Title: title, Summary: "confirm a test", Fields: []countersign.Field{field("What", "a test")}},
		AnswerBy: &countersign.AnswerBy{Operation: "confirm_it", Supplies: countersign.SuppliesNone},
		State:    []byte(`{"write":"the sealed one"}`),
	}
}

func inputSpec(title string, supplies countersign.Supplies) connectors.TaskSpec {
	return connectors.TaskSpec{
		Kind:     countersign.KindInput,
		Display:  countersign.Display{Title: title, Summary: "give the test what it asks for"},
		AnswerBy: &countersign.AnswerBy{Operation: "type_it", Supplies: supplies},
		State:    []byte("input state"),
	}
}

func noticeSpec(title string) connectors.TaskSpec {
	return connectors.TaskSpec{Kind: countersign.KindNotice, Display: countersign.Display{Title: title}}
}

// openOne opens spec through a call of "open" and returns the task.
func openOne(t *testing.T, h *connectortest.Harness, hk *hooks, spec connectors.TaskSpec) connectortest.Opened {
	t.Helper()
	hk.run = opener(spec)
	out, err := h.Call(ctx, `{"operation":"open"}`)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	o, err := h.Awaiting(out)
	if err != nil {
		t.Fatalf("awaiting: %v", err)
	}
	return o
}

// wantRefusal checks err is a refusal with code, and with sentence when it is
// not empty.
func wantRefusal(t *testing.T, err error, code countersign.Code, sentence string) {
	t.Helper()
	var e *countersign.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a %s refusal", err, code)
	}
	if e.Code != code {
		t.Fatalf("got %q, want code %s", err, code)
	}
	if sentence != "" && e.Message != sentence {
		t.Fatalf("got sentence %q, want %q", e.Message, sentence)
	}
}

// recorder is a testing.TB that records failures instead of failing, to test
// the harness's own reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
}

func (r *recorder) said() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errors, "\n")
}
