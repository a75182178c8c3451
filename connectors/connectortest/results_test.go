package connectortest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/gmail"
	"countersign/connectors/mercury"
	"countersign/connectors/probe"
)

// declared is the hook connector with results declared: "read" answers
// {n}, "open" answers only with a task, "confirm_it" reports {done}.
func declared(hk *hooks) *connectors.Connector {
	c := hookConnector(hk)
	for i := range c.Operations {
		switch op := &c.Operations[i]; op.Name {
		case "read":
			op.Result = json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}`)
		case "open", "slow":
			op.Result = connectors.TaskOnly
		default:
			op.Result = json.RawMessage(`{"type": "object", "properties": {"done": {"const": true}}, "required": ["done"]}`)
		}
	}
	return c
}

// TestCallHoldsAnswersToTheirDeclarations: an output that fits the
// operation's Result, and a task answer that fits the platform's, pass; an
// output that does not, a direct output of a TaskOnly operation, a task
// answer that is not the platform's and a refusal whose code is not one
// fail the test, with the reason.
func TestCallHoldsAnswersToTheirDeclarations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, op string
		run      func(context.Context, *connectors.Call) (any, error)
		says     string // "" when it fits
	}{
		{"a result that fits", "read", func(context.Context, *connectors.Call) (any, error) { return map[string]int{"n": 1}, nil }, ""},
		{"a task answer", "open", opener(confirmSpec("Pay")), ""},
		{"a notice answer", "open", opener(noticeSpec("Paid")), ""},
		{"a refusal", "read", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.Conflict, "the head moved")
		}, ""},
		{"a member too many", "read", func(context.Context, *connectors.Call) (any, error) {
			return map[string]any{"n": 1, "secret": "x"}, nil
		}, "read's result does not fit its schema"},
		{"a member of another type", "read", func(context.Context, *connectors.Call) (any, error) {
			return map[string]any{"n": "one"}, nil
		}, "at '/n'"},
		{"an output of a task-only write", "open", func(context.Context, *connectors.Call) (any, error) {
			return map[string]any{"ok": true}, nil
		}, "answers only by opening a task"},
		{"a task answer without its link", "open", func(ctx context.Context, c *connectors.Call) (any, error) {
			task, err := c.OpenTask(ctx, confirmSpec("Pay"))
			a := connectors.AwaitingOwner(task).(map[string]any)
			delete(a, "link")
			return a, err
		}, "the awaiting_owner answer does not fit"},
		{"a task answer naming no task opened", "open", func(context.Context, *connectors.Call) (any, error) {
			return map[string]any{"ok": true, "status": "awaiting_owner", "task_id": "r1-1"}, nil
		}, "answers only by opening a task"},
		{"a refusal whose code is not one", "read", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse("Bad Code", "no")
		}, "the refusal does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hk := &hooks{run: tc.run}
			rec := &recorder{TB: t}
			h := connectortest.New(rec, declared(hk))
			_, err := h.Call(ctx, `{"operation":"`+tc.op+`"}`)
			if tc.says == "" {
				if rec.said() != "" {
					t.Fatalf("the harness failed the test: %s", rec.said())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(rec.said(), tc.says) {
				t.Fatalf("got %v and the test was told %q; want both to say …%s…", err, rec.said(), tc.says)
			}
		})
	}
}

// TestAnswerHoldsResultsToTheirDeclarations: an answer run's report is
// checked against the answer operation's Result.
func TestAnswerHoldsResultsToTheirDeclarations(t *testing.T) {
	t.Parallel()
	for report, fits := range map[string]bool{`{"done": true}`: true, `{"done": false}`: false, `{}`: false} {
		hk := &hooks{run: opener(confirmSpec("Pay")), answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: json.RawMessage(report)}, nil
		}}
		rec := &recorder{TB: t}
		h := connectortest.New(rec, declared(hk))
		out, err := h.Call(ctx, `{"operation":"open"}`)
		if err != nil {
			t.Fatal(err)
		}
		task, err := h.Awaiting(out)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = h.Answer(ctx, task, nil, "")
		if fits != (err == nil) || fits != (rec.said() == "") {
			t.Errorf("report %s: %v, the test was told %q; want fits %v", report, err, rec.said(), fits)
		}
		if !fits && !strings.Contains(rec.said(), "confirm_it's result does not fit its schema") {
			t.Errorf("report %s: the test was told %q", report, rec.said())
		}
	}
}

// TestCallDoesNotChargeARefusalForItsArguments: a call refused for its own
// arguments costs nothing wherever the refusal arose — the schema, the
// run, the display its task would show — and any other refusal, or one
// after the run opened a task or did its write, keeps the charge.
func TestCallDoesNotChargeARefusalForItsArguments(t *testing.T) {
	t.Parallel()
	bad := confirmSpec("Pay\r\nBcc: everyone")
	for _, tc := range []struct {
		name, body string
		run        func(context.Context, *connectors.Call) (any, error)
		failOpen   countersign.Code
		code       countersign.Code
		charged    int64
	}{
		{"the schema", `{"operation":"open","amount":1}`, nil, "", countersign.InvalidRequest, 0},
		{"the run", `{"operation":"open"}`, func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.InvalidRequest, "the subject holds a line break")
		}, "", countersign.InvalidRequest, 0},
		{"the display", `{"operation":"open"}`, opener(bad), "", countersign.DisplayInvalid, 0},
		{"the display, wrapped", `{"operation":"open"}`, func(ctx context.Context, c *connectors.Call) (any, error) {
			_, err := c.OpenTask(ctx, bad)
			return nil, &wrapped{err}
		}, "", countersign.DisplayInvalid, 0},
		{"policy", `{"operation":"open"}`, func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.PolicyDenied, "the owner's rule 1 refuses this payment")
		}, "", countersign.PolicyDenied, 7},
		{"the inbox", `{"operation":"open"}`, opener(confirmSpec("Pay")), countersign.InboxFull, countersign.InboxFull, 7},
		{"a conflict", `{"operation":"open"}`, func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.Conflict, "the head moved")
		}, "", countersign.Conflict, 7},
		{"after a task was opened", `{"operation":"open"}`, opener(confirmSpec("Pay"), bad), "", countersign.DisplayInvalid, 7},
		{"after the write", `{"operation":"open"}`, func(_ context.Context, c *connectors.Call) (any, error) {
			c.Did(connectors.Did{Title: "Paid"})
			return nil, connectors.Refuse(countersign.InvalidRequest, "the receipt does not read")
		}, "", countersign.InvalidRequest, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hk := &hooks{run: tc.run}
			h := connectortest.New(t, hookConnector(hk))
			if tc.failOpen != "" {
				h.FailOpen = func(connectors.TaskSpec) error { return connectors.Refuse(tc.failOpen, "the owner's inbox is full") }
			}
			body := tc.body
			if tc.name == "the schema" {
				h = connectortest.New(t, strict(hookConnector(hk)))
			}
			_, err := h.Call(ctx, body)
			if countersign.ErrorCode(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if h.Spent() != tc.charged {
				t.Fatalf("charged %d µUSD, want %d", h.Spent(), tc.charged)
			}
		})
	}
}

// wrapped is a connector's own error around the platform's refusal.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return "open the task: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// strict makes "open" take no arguments.
func strict(c *connectors.Connector) *connectors.Connector {
	for i := range c.Operations {
		if c.Operations[i].Name == "open" {
			c.Operations[i].Schema = json.RawMessage(`{"type": "object", "additionalProperties": false}`)
		}
	}
	return c
}

// TestConnectorsDeclareTheirResults: every compiled-in connector declares
// the result of every operation (SPEC §14). The SDK itself does not require
// one, so that a test's own small connectors need not declare theirs.
func TestConnectorsDeclareTheirResults(t *testing.T) {
	t.Parallel()
	lacking := map[string]bool{}
	for _, c := range []*connectors.Connector{probe.New(), github.New(github.Options{}), gmail.New(gmail.Config{}), mercury.New(mercury.Config{})} {
		err := connectortest.CheckResults(c)
		switch {
		case err != nil && !lacking[c.Name]:
			t.Errorf("%v", err)
		case err == nil && lacking[c.Name]:
			t.Errorf("%s now declares every result: take it off the list", c.Name)
		}
	}
	if err := connectortest.CheckResults(hookConnector(&hooks{})); err == nil || !strings.Contains(err.Error(), "read, open, slow, confirm_it, type_it, slow_answer") {
		t.Errorf("the hook connector: %v", err)
	}
}
