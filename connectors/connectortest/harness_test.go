package connectortest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/policy"
)

func TestNewRefusesAConnectorThatDoesNotValidate(t *testing.T) {
	t.Parallel()
	bad := &connectors.Connector{Name: "Bad Name", Version: "1"}
	rec := &recorder{TB: t}
	if h := connectortest.New(rec, bad); h != nil {
		t.Fatal("New returned a harness for a connector that does not validate")
	}
	if !rec.fatal || !strings.Contains(rec.said(), "not well formed") {
		t.Fatalf("New did not fail the test with the reason: %q", rec.said())
	}
	if _, err := connectortest.NewHarness(bad); err == nil {
		t.Fatal("NewHarness accepted a connector that does not validate")
	}
	if _, err := connectortest.NewHarness(nil); err == nil {
		t.Fatal("NewHarness accepted no connector")
	}
}

// TestNewRefusesSchemasThatDoNotHold: a schema that does not compile, or
// an example that does not fit its schema, fails the test.
func TestNewRefusesSchemasThatDoNotHold(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		schema, example, says string
	}{
		"a bad pattern":                {`{"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}`, `{}`, "does not compile"},
		"a bad keyword":                {`{"type": "object", "properties": {"a": {"minimum": "one"}}}`, `{}`, "does not compile"},
		"a reference outside":          {`{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`, `{}`, "does not compile"},
		"an example that does not fit": {`{"type": "object", "properties": {"n": {"type": "integer"}}}`, `{"n": "one"}`, "example 1 does not fit its schema: `n` is a whole number"},
	} {
		c := hookConnector(&hooks{})
		c.Operations[0].Schema = json.RawMessage(tc.schema)
		c.Operations[0].Examples = []json.RawMessage{json.RawMessage(tc.example)}
		rec := &recorder{TB: t}
		if h := connectortest.New(rec, c); h != nil || !rec.fatal || !strings.Contains(rec.said(), tc.says) {
			t.Errorf("%s: New did not fail the test saying %q: %q", name, tc.says, rec.said())
		}
	}
}

// TestCallChecksTheSchema: a call that does not fit its operation's schema
// is refused before its run, naming the member; nothing is charged.
func TestCallChecksTheSchema(t *testing.T) {
	t.Parallel()
	ran := false
	c := hookConnector(&hooks{run: func(context.Context, *connectors.Call) (any, error) {
		ran = true
		return map[string]any{"ok": true}, nil
	}})
	c.Operations[1].Schema = json.RawMessage(`{"type": "object", "properties": {"amount": {"type": "integer", "minimum": 1}}, "required": ["amount"], "additionalProperties": false}`)
	h := connectortest.New(t, c)
	for body, want := range map[string]string{
		`{"operation": "open"}`:                      "`amount` is required",
		`{"operation": "open", "amount": 0}`:         "`amount` is a whole number of at least 1",
		`{"operation": "open", "Amount": 1}`:         "the call writes `amount` in another case",
		`{"operation": "open", "amount": 1, "x": 2}`: "the call has an unknown member `x`",
	} {
		_, err := h.Call(ctx, body)
		wantRefusal(t, err, countersign.InvalidRequest, want)
	}
	if ran || h.Spent() != 0 {
		t.Fatalf("refused calls ran (%v) or were charged %d", ran, h.Spent())
	}
	if _, err := h.Call(ctx, `{"operation": "open", "amount": 1}`); err != nil || !ran || h.Spent() != 7 {
		t.Fatalf("a call that fits: %v, ran %v, spent %d", err, ran, h.Spent())
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, hookConnector(&hooks{}))
	if h.Owner != connectortest.DefaultOwner || h.Agent != connectortest.DefaultAgent ||
		h.Project != "hook" || h.ProjectUUID != connectortest.DefaultProjectUUID ||
		string(h.Policy) != "{}" || h.PublicURL != connectortest.DefaultPublicURL || h.Now == nil {
		t.Fatalf("defaults: %+v", h)
	}
}

func TestCallHandsTheRunWhatThePlatformKnows(t *testing.T) {
	t.Parallel()
	var got *connectors.Call
	hk := &hooks{run: func(_ context.Context, c *connectors.Call) (any, error) {
		got = c
		return map[string]any{"ok": true, "html": "<b>&</b>"}, nil
	}}
	h := newHook(t, hk)
	h.Credentials = []byte("token")
	h.Policy = []byte(`{"max_per_day": 3}`)
	body := `{"operation": "read", "q": 1}`
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"html":"<b>&</b>","ok":true}` {
		t.Fatalf("output %s: want JSON without HTML escapes", out)
	}
	switch {
	case got.Operation != "read", string(got.Args) != body, got.Agent != h.Agent, got.Owner != h.Owner,
		got.Project != "hook", got.ProjectUUID != h.ProjectUUID, string(got.Credentials) != "token",
		!got.Now.Equal(t0), got.Platform == nil, !countersign.ValidRunID(got.Run):
		t.Fatalf("call: %+v", got)
	}
	if n, ok := got.Policy.Count("max_per_day"); !ok || n != 3 {
		t.Fatalf("policy max_per_day = %d, %v", n, ok)
	}
	if h.Spent() != 0 {
		t.Fatalf("a free read charged %d", h.Spent())
	}
}

func TestCallRefusals(t *testing.T) {
	t.Parallel()
	unreadable := []byte(`{"confirm": ["read"]}`)
	broken := []byte(`{"rules": [{"when": {"op": "slow", "min_usd": 5}, "then": "ask"}]}`)
	schema := hookConnector(&hooks{}).Schema()
	for _, tc := range []struct {
		name     string
		body     string
		policy   []byte
		code     countersign.Code
		sentence string
	}{
		{"too large", `{"operation":"read","x":"` + strings.Repeat("a", connectortest.MaxBodyBytes) + `"}`, nil,
			countersign.InvalidRequest, "the call is larger than 65536 bytes"},
		{"not JSON", `{"operation":`, nil, countersign.InvalidRequest, "the call is not a JSON object"},
		{"an array", `[{"operation":"read"}]`, nil, countersign.InvalidRequest, "the call is not a JSON object"},
		{"null", `null`, nil, countersign.InvalidRequest, "the call is not a JSON object"},
		{"a string", `"read"`, nil, countersign.InvalidRequest, "the call is not a JSON object"},
		{"no operation", `{"q":1}`, nil, countersign.InvalidRequest, "the call needs an `operation`, a string"},
		{"operation not a string", `{"operation":["read"]}`, nil, countersign.InvalidRequest, "the call needs an `operation`, a string"},
		{"operation null", `{"operation":null}`, nil, countersign.InvalidRequest, "the call needs an `operation`, a string"},
		{"operation empty", `{"operation":""}`, nil, countersign.InvalidRequest, "the call needs an `operation`, a string"},
		{"operation in capitals", `{"operation":"Read"}`, nil, countersign.InvalidRequest, `hook has no operation "Read" an agent may call`},
		{"unknown operation", `{"operation":"write"}`, nil, countersign.InvalidRequest, `hook has no operation "write" an agent may call`},
		{"answer operation", `{"operation":"confirm_it"}`, nil, countersign.InvalidRequest, `hook has no operation "confirm_it" an agent may call`},
		{"task operation", `{"operation":"task_status","task_id":"x"}`, nil, countersign.InvalidRequest,
			"task_status is answered by the platform, which this harness does not play"},
		{"write, unreadable policy", `{"operation":"open"}`, unreadable, countersign.PolicyUnreadable,
			policy.Parse(unreadable, schema).Sentence()},
		{"write, broken policy", `{"operation":"open"}`, broken, countersign.PolicyUnreadable,
			policy.Parse(broken, schema).Sentence()},
		{"write, policy not JSON", `{"operation":"open"}`, []byte(`{`), countersign.PolicyUnreadable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			h := newHook(t, &hooks{run: func(context.Context, *connectors.Call) (any, error) {
				ran = true
				return map[string]bool{"ok": true}, nil
			}})
			if tc.policy != nil {
				h.Policy = tc.policy
			}
			out, err := h.Call(ctx, tc.body)
			if out != nil {
				t.Fatalf("refused call answered %s", out)
			}
			wantRefusal(t, err, tc.code, tc.sentence)
			if ran {
				t.Fatal("the run started")
			}
			if h.Spent() != 0 {
				t.Fatalf("a refused call charged %d", h.Spent())
			}
		})
	}
	// The policy modes the table relies on.
	if m := policy.Parse(unreadable, schema).Mode(); m != policy.Unreadable {
		t.Fatalf("unreadable policy is %s", m)
	}
	if m := policy.Parse(broken, schema).Mode(); m != policy.Broken {
		t.Fatalf("broken policy is %s", m)
	}
}

// The service reads a body as encoding/json does: invalid UTF-8 is replaced,
// and the member names the operation in any case.
func TestCallReadsTheBodyAsTheServiceDoes(t *testing.T) {
	t.Parallel()
	var args json.RawMessage
	h := newHook(t, &hooks{run: func(_ context.Context, c *connectors.Call) (any, error) {
		args = c.Args
		return map[string]bool{"ok": true}, nil
	}})
	body := "{\"Operation\":\"read\",\"x\":\"\xff\"}"
	if out, err := h.Call(ctx, body); err != nil || string(out) != `{"ok":true}` {
		t.Fatalf("got %s, %v", out, err)
	}
	if string(args) != body {
		t.Fatal("the run was not handed the body exactly as sent")
	}
}

func TestCallServesReadsWhateverThePolicy(t *testing.T) {
	t.Parallel()
	h := newHook(t, &hooks{run: func(context.Context, *connectors.Call) (any, error) { return map[string]bool{"ok": true}, nil }})
	h.Policy = []byte(`{"confirm": ["read"]}`)
	if out, err := h.Call(ctx, `{"operation":"read"}`); err != nil || string(out) != `{"ok":true}` {
		t.Fatalf("read under an unreadable policy: %s, %v", out, err)
	}
}

func TestCallChargesWritesWhenTheRunStarts(t *testing.T) {
	t.Parallel()
	hk := &hooks{run: func(context.Context, *connectors.Call) (any, error) {
		return nil, connectors.Refuse(countersign.PolicyDenied, "no")
	}}
	h := newHook(t, hk)
	if _, err := h.Call(ctx, `{"operation":"open"}`); countersign.ErrorCode(err) != countersign.PolicyDenied {
		t.Fatalf("got %v", err)
	}
	if h.Spent() != 7 {
		t.Fatalf("spent %d, want the price 7 even for a run that refused", h.Spent())
	}
}

func TestCallRunErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("upstream said 502")
	for _, tc := range []struct {
		name string
		run  func(context.Context, *connectors.Call) (any, error)
		want func(t *testing.T, err error)
	}{
		{"a refusal reads as it is", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.Conflict, "the head moved")
		}, func(t *testing.T, err error) {
			if err.Error() != "conflict: the head moved" {
				t.Fatalf("got %q", err)
			}
		}},
		{"a wrapped refusal keeps its code", func(context.Context, *connectors.Call) (any, error) {
			return nil, errors.Join(errors.New("context"), connectors.Refuse(countersign.InboxFull, "full"))
		}, func(t *testing.T, err error) {
			if connectortest.Text(err) != "inbox_full: full" {
				t.Fatalf("got %q", connectortest.Text(err))
			}
		}},
		{"another error is internal, and kept for the test", func(context.Context, *connectors.Call) (any, error) {
			return nil, boom
		}, func(t *testing.T, err error) {
			if !errors.Is(err, boom) || connectortest.Text(err) != "internal_error: internal error" {
				t.Fatalf("got %v (%s)", err, connectortest.Text(err))
			}
		}},
		{"output that is not an object", func(context.Context, *connectors.Call) (any, error) {
			return []string{"ok"}, nil
		}, func(t *testing.T, err error) {
			if connectortest.Text(err) != "internal_error: internal error" || !strings.Contains(err.Error(), "not a JSON object") {
				t.Fatalf("got %v", err)
			}
		}},
		{"no output", func(context.Context, *connectors.Call) (any, error) {
			return nil, nil
		}, func(t *testing.T, err error) {
			if !strings.Contains(err.Error(), "not a JSON object") {
				t.Fatalf("got %v", err)
			}
		}},
		{"output that does not marshal", func(context.Context, *connectors.Call) (any, error) {
			return map[string]any{"f": func() {}}, nil
		}, func(t *testing.T, err error) {
			if countersign.ErrorCode(err) != countersign.Internal || !strings.Contains(err.Error(), "does not marshal") {
				t.Fatalf("got %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHook(t, &hooks{run: tc.run})
			out, err := h.Call(ctx, `{"operation":"read"}`)
			if err == nil {
				t.Fatalf("answered %s", out)
			}
			tc.want(t, err)
		})
	}
}

func TestCallPanicFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	h := connectortest.New(rec, hookConnector(&hooks{run: func(context.Context, *connectors.Call) (any, error) {
		var m map[string]int
		m["x"] = 1 // panics
		return nil, nil
	}}))
	_, err := h.Call(ctx, `{"operation":"read"}`)
	if connectortest.Text(err) != "internal_error: internal error" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(rec.said(), "read panicked") {
		t.Fatalf("the test was not failed: %q", rec.said())
	}
}

func TestCallComputeLimit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	late := make(chan error, 1)
	h := newHook(t, &hooks{run: func(ctx context.Context, c *connectors.Call) (any, error) {
		<-release // ignores its context
		_, err := c.OpenTask(ctx, confirmSpec("Too late"))
		late <- err
		return map[string]bool{"ok": true}, nil
	}})
	_, err := h.Call(ctx, `{"operation":"slow"}`)
	if countersign.ErrorCode(err) != countersign.Internal || !strings.Contains(err.Error(), "compute limit of 50ms") {
		t.Fatalf("got %v", err)
	}
	close(release)
	if err := <-late; err == nil {
		t.Fatal("an abandoned run opened a task")
	}
	if len(h.Tasks()) != 0 {
		t.Fatal("a task was recorded")
	}
}

func TestCallGivesTheRunItsDeadline(t *testing.T) {
	t.Parallel()
	deadlines := make(chan time.Time, 1)
	h := newHook(t, &hooks{run: func(ctx context.Context, _ *connectors.Call) (any, error) {
		d, _ := ctx.Deadline()
		deadlines <- d
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	start := time.Now()
	_, err := h.Call(ctx, `{"operation":"slow"}`)
	deadline := <-deadlines
	if err == nil || deadline.IsZero() || deadline.Sub(start) > time.Second {
		t.Fatalf("deadline %v after %v, err %v", deadline.Sub(start), start, err)
	}
}

func TestCallCancelled(t *testing.T) {
	t.Parallel()
	h := newHook(t, &hooks{run: func(ctx context.Context, _ *connectors.Call) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Call(cctx, `{"operation":"read"}`); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestAwaiting(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	o := openOne(t, h, hk, confirmSpec("Send it"))

	hk.run = func(ctx context.Context, c *connectors.Call) (any, error) {
		task, err := c.OpenTask(ctx, noticeSpec("Sent"))
		return connectors.Notified(task), err
	}
	out, err := h.Call(ctx, `{"operation":"open"}`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.Awaiting(out); err != nil || n.Task.Kind != countersign.KindNotice {
		t.Fatalf("notified: %+v, %v", n, err)
	}

	good := connectors.AwaitingOwner(o.Task).(map[string]any)
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
	}{
		{"not ok", func(m map[string]any) { m["ok"] = false }},
		{"notified for a confirm task", func(m map[string]any) { m["status"] = "notified" }},
		{"other hash", func(m map[string]any) { m["task_hash"] = strings.Repeat("0", 64) }},
		{"other thread", func(m map[string]any) { m["thread"] = "t" }},
		{"other expiry", func(m map[string]any) { m["expires_at"] = "2026-11-30T12:00:01Z" }},
		{"other link", func(m map[string]any) { m["link"] = "https://example.com/" }},
		{"unknown task", func(m map[string]any) { m["task_id"] = "nope" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]any{}
			for k, v := range good {
				m[k] = v
			}
			tc.change(m)
			b, _ := json.Marshal(m)
			if _, err := h.Awaiting(b); err == nil {
				t.Fatalf("accepted %s", b)
			}
		})
	}
	if _, err := h.Awaiting(json.RawMessage(`[1]`)); err == nil {
		t.Fatal("accepted an array")
	}
	b, _ := json.Marshal(good)
	if got, err := h.Awaiting(b); err != nil || got.Task != o.Task {
		t.Fatalf("the true answer: %+v, %v", got, err)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{connectors.Refuse(countersign.Muted, "the owner muted this agent"), "muted: the owner muted this agent"},
		{connectors.Refused(countersign.PolicyDenied, false, "The rule refuses it."), "policy_denied: The rule refuses it. Nothing was written."},
		{errors.New("dial tcp: secret host"), "internal_error: internal error"},
	} {
		if got := connectortest.Text(tc.err); got != tc.want {
			t.Errorf("Text(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	hk := &hooks{run: opener(confirmSpec("One"), noticeSpec("Two"))}
	h := newHook(t, hk)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := h.Call(ctx, `{"operation":"open"}`); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, o := range h.Tasks() {
		if seen[o.Task.ID] {
			t.Fatalf("id %s twice", o.Task.ID)
		}
		seen[o.Task.ID] = true
	}
	if len(seen) != 32 || h.Spent() != 16*7 {
		t.Fatalf("%d tasks, spent %d", len(seen), h.Spent())
	}
}
