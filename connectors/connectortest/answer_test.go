package connectortest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/policy"
)

func TestAnswerHandsTheRunTheSealedTask(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	h.Credentials = []byte("creds")
	spec := inputSpec("Tell me", countersign.SuppliesText)
	spec.Files = []connectors.File{{Name: "a.txt", ContentType: "text/plain", Data: []byte("one")},
		{Name: "b.txt", ContentType: "text/plain", Data: []byte("two")}}
	o := openOne(t, h, hk, spec)

	var got *connectors.AnswerCall
	hk.answer = func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		got = a
		return connectors.Report{Result: map[string]string{"heard": string(a.Supplied)}}, nil
	}
	h.Agent = "someone.else" // the run is the preparer's, whoever calls now
	h.Now = func() time.Time { return t0.Add(time.Hour) }
	result, opened, err := h.Answer(ctx, o, []byte("hello"), "thanks")
	if err != nil {
		t.Fatal(err)
	}
	if string(result) != `{"heard":"hello"}` || len(opened) != 0 {
		t.Fatalf("result %s, opened %d", result, len(opened))
	}
	env, _ := countersign.ParseEnvelope(o.Envelope)
	switch {
	case got.Operation != "type_it", got.Task != o.Task, got.Agent != connectortest.DefaultAgent,
		got.Owner != connectortest.DefaultOwner, got.Project != "hook", got.ProjectUUID != connectortest.DefaultProjectUUID,
		string(got.State) != "input state", string(got.Supplied) != "hello", got.Note != "thanks",
		len(got.Files) != 2, string(got.Files[0]) != "one", string(got.Files[1]) != "two",
		string(got.Credentials) != "creds", !got.Now.Equal(t0.Add(time.Hour)), got.Platform == nil,
		!countersign.ValidRunID(got.Run), got.Run == o.Run, got.Policy == nil:
		t.Fatalf("answer call: %+v", got)
	}
	if got.Envelope.ID != env.ID || got.Envelope.StateHash != env.StateHash || got.Envelope.Display.Title != "Tell me" {
		t.Fatalf("envelope: %+v", got.Envelope)
	}
	if s, _ := h.Status(o.Task.ID); s.State != countersign.StateDone || string(s.Result) != `{"heard":"hello"}` {
		t.Fatalf("status %+v", s)
	}
}

func TestAnswerOpensTheNextTurnAndANotice(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	first := openOne(t, h, hk, inputSpec("Turn 1", countersign.SuppliesText))
	hk.answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		if _, err := a.Next(ctx, inputSpec("Turn 2", countersign.SuppliesText)); err != nil {
			return connectors.Report{}, err
		}
		if _, err := a.Notice(ctx, confirmSpec("Told")); err != nil { // Notice makes it a notice
			return connectors.Report{}, err
		}
		return connectors.Report{Result: map[string]bool{"ok": true}}, nil
	}
	h.Agent = "someone.else"
	_, opened, err := h.Answer(ctx, first, []byte("x"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 2 || opened[0].Task.Kind != countersign.KindInput || opened[1].Task.Kind != countersign.KindNotice {
		t.Fatalf("opened %+v", opened)
	}
	for _, o := range opened {
		if o.Task.Thread != first.Task.ID || o.Preparer != connectortest.DefaultAgent || o.Operation != "type_it" {
			t.Fatalf("opened %+v", o)
		}
	}
	if opened[0].Run != opened[1].Run || opened[0].Run == first.Run {
		t.Fatal("the answer run's tasks are not its own")
	}
	// The second turn is answered in its turn.
	hk.answer = func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{Result: map[string]bool{"ok": true}}, nil
	}
	if _, _, err := h.Answer(ctx, opened[0], []byte("y"), ""); err != nil {
		t.Fatal(err)
	}
}

func TestAnswerConfirmedCount(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	a := openOne(t, h, hk, confirmSpec("One"))
	b := openOne(t, h, hk, confirmSpec("Two"))
	hk.answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		ok, err := a.Reserve(ctx, 1)
		if err != nil {
			return connectors.Report{}, err
		}
		if !ok {
			return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The day's number is reached.")
		}
		return connectors.Report{Result: map[string]bool{"sent": true}}, nil
	}
	h.Agent = "caller.near" // the count is the preparer's
	if _, _, err := h.Answer(ctx, a, nil, ""); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Answer(ctx, b, nil, "")
	if connectortest.Text(err) != "policy_denied: The day's number is reached. Nothing was written." {
		t.Fatalf("got %v", err)
	}
	h.Agent = connectortest.DefaultAgent
	if h.Count(policy.Confirmed) != 1 || h.Count(policy.Direct) != 0 {
		t.Fatalf("counts: confirmed %d, direct %d", h.Count(policy.Confirmed), h.Count(policy.Direct))
	}
}

func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	limit := countersign.MaxSuppliedBytes - 94
	for _, tc := range []struct {
		name     string
		spec     connectors.TaskSpec
		before   func(h *connectortest.Harness, o connectortest.Opened)
		task     func(o connectortest.Opened) connectortest.Opened
		supplied []byte
		note     string
		code     countersign.Code
		state    countersign.State // after the refusal
	}{
		{name: "unknown task", spec: confirmSpec("x"),
			task: func(o connectortest.Opened) connectortest.Opened { o.Task.ID += "9"; return o },
			code: countersign.TaskNotFound, state: countersign.StateOpen},
		{name: "a notice", spec: noticeSpec("x"), code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "text for a confirm task", spec: confirmSpec("x"), supplied: []byte("yes"),
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "empty supply for a confirm task", spec: confirmSpec("x"), supplied: []byte{},
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "no text for a text task", spec: inputSpec("x", countersign.SuppliesText),
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "no file for a file task", spec: inputSpec("x", countersign.SuppliesFile),
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "supply over 8 KiB sealed", spec: inputSpec("x", countersign.SuppliesText), supplied: make([]byte, limit+1),
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "note over 8 KiB sealed", spec: confirmSpec("x"), note: strings.Repeat("n", limit+1),
			code: countersign.InvalidRequest, state: countersign.StateOpen},
		{name: "expired", spec: confirmSpec("x"),
			before: func(h *connectortest.Harness, _ connectortest.Opened) {
				h.Now = func() time.Time { return t0.Add(24 * time.Hour) }
			},
			code: countersign.TaskExpired, state: countersign.StateExpired},
		{name: "answered already", spec: confirmSpec("x"),
			before: func(h *connectortest.Harness, o connectortest.Opened) {
				if _, _, err := h.Answer(ctx, o, nil, ""); err != nil {
					panic(err)
				}
			},
			code: countersign.TaskClosed, state: countersign.StateDone},
		{name: "policy changed", spec: confirmSpec("x"),
			before: func(h *connectortest.Harness, _ connectortest.Opened) { h.Policy = []byte(`{ }`) },
			code:   countersign.TaskVoid, state: countersign.StateVoid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			hk := &hooks{answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
				ran++
				return connectors.Report{Result: map[string]bool{"ok": true}}, nil
			}}
			h := newHook(t, hk)
			o := openOne(t, h, hk, tc.spec)
			if tc.before != nil {
				tc.before(h, o)
			}
			ranBefore := ran
			task := o
			if tc.task != nil {
				task = tc.task(o)
			}
			result, opened, err := h.Answer(ctx, task, tc.supplied, tc.note)
			wantRefusal(t, err, tc.code, answerSentences[tc.name])
			if result != nil || opened != nil || ran != ranBefore {
				t.Fatalf("the run started: %s", result)
			}
			if s, _ := h.Status(o.Task.ID); s.State != tc.state {
				t.Fatalf("state %s, want %s", s.State, tc.state)
			}
		})
	}
}

// answerSentences are the inbox's sentences for refused approvals.
var answerSentences = map[string]string{
	"unknown task":                    "no such task",
	"a notice":                        "a notice asks nothing: acknowledge it instead",
	"text for a confirm task":         "this task takes no supply; approve it without one",
	"empty supply for a confirm task": "this task takes no supply; approve it without one",
	"no text for a text task":         "this task needs the owner's text",
	"no file for a file task":         "this task needs the owner's file",
	"supply over 8 KiB sealed":        "a supply or a note is larger than 8 KiB",
	"note over 8 KiB sealed":          "a supply or a note is larger than 8 KiB",
	"expired":                         "the task expired before the approval arrived",
	"answered already":                "the task is done",
	"policy changed":                  "the project's policy changed after the task was opened",
}

func TestAnswerClosedCarriesTheState(t *testing.T) {
	t.Parallel()
	hk := &hooks{answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{Result: map[string]bool{"ok": true}}, nil
	}}
	h := newHook(t, hk)
	o := openOne(t, h, hk, confirmSpec("Once"))
	if _, _, err := h.Answer(ctx, o, nil, ""); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Answer(ctx, o, nil, "")
	var e *countersign.Error
	if !errors.As(err, &e) || e.Code != countersign.TaskClosed || e.State != countersign.StateDone {
		t.Fatalf("got %#v", err)
	}
}

func TestAnswerAtTheLimits(t *testing.T) {
	t.Parallel()
	limit := countersign.MaxSuppliedBytes - 94
	var got *connectors.AnswerCall
	hk := &hooks{answer: func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		got = a
		return connectors.Report{Result: map[string]string{"pad": strings.Repeat("r", countersign.MaxResultBytes-10)}}, nil
	}}
	h := newHook(t, hk)
	o := openOne(t, h, hk, inputSpec("x", countersign.SuppliesText))
	h.Now = func() time.Time { return o.Task.ExpiresAt.Add(-time.Second) }
	note := strings.Repeat("n", limit)
	if _, _, err := h.Answer(ctx, o, make([]byte, limit), note); err != nil {
		t.Fatal(err)
	}
	if len(got.Supplied) != limit || got.Note != note {
		t.Fatal("the run did not get the supply and note")
	}
	// An empty text is text.
	o = openOne(t, h, hk, inputSpec("x", countersign.SuppliesText))
	if _, _, err := h.Answer(ctx, o, []byte{}, ""); err != nil || got.Supplied == nil {
		t.Fatalf("empty text: %v", err)
	}
	// A file task takes a file; invalid UTF-8 text is handed over as sent.
	o = openOne(t, h, hk, inputSpec("x", countersign.SuppliesFile))
	if _, _, err := h.Answer(ctx, o, []byte{0xff, 0}, ""); err != nil || !bytes.Equal(got.Supplied, []byte{0xff, 0}) {
		t.Fatalf("file: %v", err)
	}
}

func TestAnswerSupplyLimit(t *testing.T) {
	t.Parallel()
	var got []byte
	hk := &hooks{answer: func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		got = a.Supplied
		return connectors.Report{Result: map[string]bool{"ok": true}}, nil
	}}
	h := newHook(t, hk)
	h.SupplyLimit = 40_000
	o := openOne(t, h, hk, inputSpec("x", countersign.SuppliesText))
	if _, _, err := h.Answer(ctx, o, make([]byte, 40_000), strings.Repeat("n", 40_000)); err != nil || len(got) != 40_000 {
		t.Fatalf("raised limit: %v", err)
	}
	o = openOne(t, h, hk, inputSpec("x", countersign.SuppliesText))
	_, _, err := h.Answer(ctx, o, make([]byte, 40_001), "")
	wantRefusal(t, err, countersign.InvalidRequest, "")
}

func TestAnswerVoidWhenTheBuildChanged(t *testing.T) {
	t.Parallel()
	hk := &hooks{answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{Result: map[string]bool{"ok": true}}, nil
	}}
	c := hookConnector(hk)
	h := connectortest.New(t, c)
	o := openOne(t, h, hk, confirmSpec("x"))
	c.Version = "0.2.0"
	_, _, err := h.Answer(ctx, o, nil, "")
	wantRefusal(t, err, countersign.TaskVoid, "the connector's build changed after the task was opened")
	if s, _ := h.Status(o.Task.ID); s.State != countersign.StateVoid {
		t.Fatalf("state %s", s.State)
	}
}

func TestAnswerNoVoidMeetsTheChangedPolicy(t *testing.T) {
	t.Parallel()
	hk := &hooks{answer: func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		if d := a.Decide("open", policyFacts()); d.Outcome == policy.Refuse {
			return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s.", d.Sentence)
		}
		return connectors.Report{Result: map[string]bool{"sent": true}}, nil
	}}
	h := newHook(t, hk)
	h.Policy = []byte(`{"confirm": ["open"]}`)
	o := openOne(t, h, hk, confirmSpec("Pay"))
	h.Policy = []byte(`{"confirm": ["open"], "rules": [{"when": {"op": "open", "min_usd": 1}, "then": "refuse"}]}`)
	h.NoVoid = true
	_, _, err := h.Answer(ctx, o, nil, "")
	var refusal *connectors.Refusal
	if !errors.As(err, &refusal) || refusal.Wrote {
		t.Fatalf("got %v", err)
	}
	if s, _ := h.Status(o.Task.ID); s.State != countersign.StateFailed || s.FailureReason != "run_refused:policy_denied" {
		t.Fatalf("status %+v", s)
	}
}

func policyFacts() policy.Facts {
	return policy.Facts{Amounts: map[string]policy.Cents{"amount": 500}}
}

func TestAnswerRunOutcomes(t *testing.T) {
	t.Parallel()
	boom := errors.New("the bank hung up")
	for _, tc := range []struct {
		name   string
		op     string
		answer func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error)
		reason countersign.FailureReason
		check  func(t *testing.T, err error)
	}{
		{"a refusal", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, connectors.Refused(countersign.Conflict, true, "The payment was sent twice.")
		}, "run_refused:conflict", func(t *testing.T, err error) {
			if err.Error() != "conflict: The payment was sent twice. The write happened." {
				t.Fatalf("got %q", err)
			}
		}},
		{"another error", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, boom
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !errors.Is(err, boom) {
				t.Fatalf("got %v", err)
			}
		}},
		{"a refusal of the SDK, not a Refusal", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, connectors.Refuse(countersign.PolicyDenied, "no")
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if countersign.ErrorCode(err) != countersign.PolicyDenied {
				t.Fatalf("got %v", err)
			}
		}},
		{"a result that is not an object", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: []int{1}}, nil
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "not a JSON object") {
				t.Fatalf("got %v", err)
			}
		}},
		{"no result", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, nil
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "not a JSON object") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a result over 16 KiB", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]string{"pad": strings.Repeat("r", countersign.MaxResultBytes)}}, nil
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "over 16384") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a result that does not marshal", "confirm_it", func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]any{"c": make(chan int)}}, nil
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "does not marshal") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a run over its compute limit", "slow_answer", func(ctx context.Context, _ *connectors.AnswerCall) (connectors.Report, error) {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond)
			return connectors.Report{Result: map[string]bool{"ok": true}}, nil
		}, countersign.FailRunUnfinished, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "compute limit of 50ms") {
				t.Fatalf("got %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hk := &hooks{answer: tc.answer}
			h := newHook(t, hk)
			spec := confirmSpec("x")
			spec.AnswerBy.Operation = tc.op
			o := openOne(t, h, hk, spec)
			result, _, err := h.Answer(ctx, o, nil, "")
			if err == nil {
				t.Fatalf("answered %s", result)
			}
			tc.check(t, err)
			if s, _ := h.Status(o.Task.ID); s.State != countersign.StateFailed || s.FailureReason != tc.reason || s.Result != nil {
				t.Fatalf("status %+v, want failed %s", s, tc.reason)
			}
		})
	}
}

func TestAnswerPanicFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	hk := &hooks{answer: func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		_ = a.Files[3] // panics
		return connectors.Report{}, nil
	}}
	h := connectortest.New(rec, hookConnector(hk))
	o := openOne(t, h, hk, confirmSpec("x"))
	if _, _, err := h.Answer(ctx, o, nil, ""); err == nil {
		t.Fatal("a panic answered")
	}
	if !strings.Contains(rec.said(), "confirm_it panicked") {
		t.Fatalf("the test was not failed: %q", rec.said())
	}
	if s, _ := h.Status(o.Task.ID); s.State != countersign.StateFailed || s.FailureReason != countersign.FailRunUnfinished {
		t.Fatalf("status %+v", s)
	}
}

func TestAnswerResultIsTheObjectReported(t *testing.T) {
	t.Parallel()
	hk := &hooks{answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{Result: json.RawMessage(` {"a": [1, 2], "b": "<&>"} `)}, nil
	}}
	h := newHook(t, hk)
	o := openOne(t, h, hk, confirmSpec("x"))
	result, _, err := h.Answer(ctx, o, nil, "")
	if err != nil || string(result) != `{"a":[1,2],"b":"<&>"}` {
		t.Fatalf("result %s, %v", result, err)
	}
}
