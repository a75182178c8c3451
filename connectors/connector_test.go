package connectors_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/policy"
)

// anyArgs is a schema that takes any arguments.
var anyArgs = json.RawMessage(`{"type": "object"}`)

var ctx = context.Background()

func run(context.Context, *connectors.Call) (any, error) { return map[string]bool{"ok": true}, nil }

func answer(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
	return connectors.Report{Result: map[string]bool{"ok": true}}, nil
}

// valid is a connector that validates; each refusal below changes one thing.
func valid() *connectors.Connector {
	return &connectors.Connector{
		Name: "bank", Version: "2.1.0-rc.1+build.7", Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{"max_payment_usd": policy.Amount},
		Conditions: []policy.Condition{policy.AmountRange("amount", "min_usd", "max_usd")},
		Operations: []connectors.Operation{
			{Name: "accounts", Kind: connectors.Read, Description: "accounts in a test.", Schema: anyArgs, Run: run},
			{Name: "pay", Kind: connectors.Write, Description: "pay in a test.", Schema: anyArgs, Price: 5_000, Limit: connectors.MaxLimit, Carries: []string{"amount"}, Noun: "payment", Run: run},
			{Name: "cancel", Kind: connectors.Write, Description: "cancel in a test.", Schema: anyArgs, Run: run},
			{Name: "confirm", Kind: connectors.Answer, Description: "confirm in a test.", Answer: answer},
		},
	}
}

// textShape is a shape of supplied text the SDK reads.
var textShape = json.RawMessage(`{"type": "string", "pattern": "^[0-9]+$", "maxLength": 4, "description": "a whole number in digits, such as 7", "examples": ["7"]}`)

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := valid().Validate(); err != nil {
		t.Fatalf("the valid connector: %v", err)
	}
	withShape := valid()
	withShape.Operations[3].SuppliedText = textShape
	if err := withShape.Validate(); err != nil {
		t.Fatalf("an answer operation with the shape of its supplied text: %v", err)
	}
	op := func(i int, f func(o *connectors.Operation)) func(c *connectors.Connector) {
		return func(c *connectors.Connector) { f(&c.Operations[i]) }
	}
	for _, tc := range []struct {
		name   string
		change func(c *connectors.Connector)
		says   string
	}{
		{"no name", func(c *connectors.Connector) { c.Name = "" }, "not well formed"},
		{"capital in the name", func(c *connectors.Connector) { c.Name = "Bank" }, "not well formed"},
		{"name starting with a dash", func(c *connectors.Connector) { c.Name = "-bank" }, "not well formed"},
		{"name with a dot", func(c *connectors.Connector) { c.Name = "bank.v2" }, "not well formed"},
		{"name of 65", func(c *connectors.Connector) { c.Name = strings.Repeat("b", 65) }, "not well formed"},
		{"no version", func(c *connectors.Connector) { c.Version = "" }, "not well formed"},
		{"version with a space", func(c *connectors.Connector) { c.Version = "1 0" }, "not well formed"},
		{"version with an at", func(c *connectors.Connector) { c.Version = "1@2" }, "not well formed"},
		{"version of 65", func(c *connectors.Connector) { c.Version = strings.Repeat("1", 65) }, "not well formed"},
		{"no operation name", op(0, func(o *connectors.Operation) { o.Name = "" }), "is not [a-z0-9_]{1,64}"},
		{"operation name with a dash", op(0, func(o *connectors.Operation) { o.Name = "get-accounts" }), "is not [a-z0-9_]{1,64}"},
		{"operation name in capitals", op(0, func(o *connectors.Operation) { o.Name = "Accounts" }), "is not [a-z0-9_]{1,64}"},
		{"operation name of 65", op(0, func(o *connectors.Operation) { o.Name = strings.Repeat("a", 65) }), "is not [a-z0-9_]{1,64}"},
		{"an operation twice", op(2, func(o *connectors.Operation) { o.Name = "pay" }), "declared twice"},
		{"task_status", op(0, func(o *connectors.Operation) { o.Name = "task_status" }), "task operation"},
		{"task_cancel", op(0, func(o *connectors.Operation) { o.Name = "task_cancel" }), "task operation"},
		{"task_delete", op(0, func(o *connectors.Operation) { o.Name = "task_delete" }), "task operation"},
		{"tasks", op(0, func(o *connectors.Operation) { o.Name = "tasks" }), "task operation"},
		{"task_wait", op(0, func(o *connectors.Operation) { o.Name = "task_wait" }), "task operation"},
		{"negative price", op(1, func(o *connectors.Operation) { o.Price = -1 }), "negative price"},
		{"negative limit", op(1, func(o *connectors.Operation) { o.Limit = -time.Second }), "compute limit"},
		{"limit over the most", op(1, func(o *connectors.Operation) { o.Limit = connectors.MaxLimit + time.Nanosecond }), "compute limit"},
		{"answer without Answer", op(3, func(o *connectors.Operation) { o.Answer = nil }), "needs an Answer function only"},
		{"answer with Run too", op(3, func(o *connectors.Operation) { o.Run = run }), "needs an Answer function only"},
		{"answer priced", op(3, func(o *connectors.Operation) { o.Price = 1 }), "must be priced 0"},
		{"read without Run", op(0, func(o *connectors.Operation) { o.Run = nil }), "needs a Run function only"},
		{"write with Answer too", op(1, func(o *connectors.Operation) { o.Answer = answer }), "needs a Run function only"},
		{"no kind", op(0, func(o *connectors.Operation) { o.Kind = "" }), "has no kind"},
		{"unknown kind", op(0, func(o *connectors.Operation) { o.Kind = "delete" }), "has no kind"},
		{"policy key named confirm", func(c *connectors.Connector) { c.PolicyKeys["confirm"] = policy.List }, "cannot be a policy key"},
		{"carries an undeclared condition", op(1, func(o *connectors.Operation) { o.Carries = []string{"method"} }), "method"},
		{"no description", op(0, func(o *connectors.Operation) { o.Description = "" }), "has no description"},
		{"a blank description", op(3, func(o *connectors.Operation) { o.Description = " \t" }), "has no description"},
		{"a description of two lines", op(1, func(o *connectors.Operation) { o.Description = "Pays.\nThen more." }), "not one line"},
		{"a description too long", op(1, func(o *connectors.Operation) { o.Description = strings.Repeat("p", 201) }), "not one line"},
		{"a description not UTF-8", op(1, func(o *connectors.Operation) { o.Description = "Pays \xff." }), "not one line"},
		{"a write without a schema", op(1, func(o *connectors.Operation) { o.Schema = nil }), "not a JSON object schema"},
		{"a schema not JSON", op(1, func(o *connectors.Operation) { o.Schema = json.RawMessage(`{"type":`) }), "not a JSON object schema"},
		{"a schema of a string", op(0, func(o *connectors.Operation) { o.Schema = json.RawMessage(`{"type": "string"}`) }), "not a JSON object schema"},
		{"a schema naming operation", op(0, func(o *connectors.Operation) {
			o.Schema = json.RawMessage(`{"type": "object", "properties": {"Operation": {}}}`)
		}), "names the member operation"},
		{"an example not an object", op(0, func(o *connectors.Operation) { o.Examples = []json.RawMessage{json.RawMessage(`1`)} }), "example 1 is not a JSON object"},
		{"an answer with a schema", op(3, func(o *connectors.Operation) { o.Schema = anyArgs }), "takes no arguments from agents"},
		{"a result not an object", op(0, func(o *connectors.Operation) { o.Result = json.RawMessage(`true`) }), "result schema is not a JSON object"},
		{"an answer's result task only", op(3, func(o *connectors.Operation) { o.Result = connectors.TaskOnly }), "cannot be TaskOnly"},
		{"a write with a shape of supplied text", op(1, func(o *connectors.Operation) { o.SuppliedText = textShape }), "only an answer operation declares the shape of the text the owner supplies"},
		{"a shape of supplied text not JSON", op(3, func(o *connectors.Operation) { o.SuppliedText = json.RawMessage(`{"type":`) }), "answer operation confirm: the shape of its supplied text does not read"},
		{"a shape of supplied text of a number", op(3, func(o *connectors.Operation) {
			o.SuppliedText = json.RawMessage(`{"type": "integer", "description": "a number", "examples": ["1"]}`)
		}), `is not a string's ("type": "string")`},
		{"a shape of supplied text with another keyword", op(3, func(o *connectors.Operation) {
			o.SuppliedText = json.RawMessage(`{"type": "string", "description": "a number", "examples": ["1"], "const": "1"}`)
		}), "uses a keyword other than type, pattern, minLength, maxLength, description and examples (`const`)"},
		{"a shape of supplied text without a description", op(3, func(o *connectors.Operation) {
			o.SuppliedText = json.RawMessage(`{"type": "string", "examples": ["1"]}`)
		}), "has no description of what is expected"},
		{"a shape of supplied text without examples", op(3, func(o *connectors.Operation) {
			o.SuppliedText = json.RawMessage(`{"type": "string", "description": "a number"}`)
		}), "has no examples"},
		{"a shape of supplied text that accepts nothing", op(3, func(o *connectors.Operation) {
			o.SuppliedText = json.RawMessage(`{"type": "string", "description": "a number", "examples": ["1"], "minLength": 5, "maxLength": 4}`)
		}), "asks for at least more characters than it allows"},
		{"task only without tasks", func(c *connectors.Connector) {
			c.Tasks = false
			c.Operations = c.Operations[:3]
			c.Operations[1].Result = connectors.TaskOnly
		}, "does not declare tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want it to say %q", err, tc.says)
			}
			if _, err := connectors.NewCatalogue(c); err == nil {
				t.Fatal("the catalogue took it")
			}
		})
	}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	c := valid()
	s := c.Schema()
	if strings.Join(s.Writes, ",") != "pay,cancel" || strings.Join(s.Reads, ",") != "accounts" {
		t.Fatalf("writes %v, reads %v: answers are neither", s.Writes, s.Reads)
	}
	if len(s.Carries) != 1 || strings.Join(s.Carries["pay"], ",") != "amount" || len(s.Nouns) != 1 || s.Nouns["pay"] != "payment" {
		t.Fatalf("carries %v, nouns %v", s.Carries, s.Nouns)
	}
	if s.Keys["max_payment_usd"] != policy.Amount || len(s.Conditions) != 1 {
		t.Fatalf("keys %v, conditions %d", s.Keys, len(s.Conditions))
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	c := valid()
	for _, tc := range []struct {
		policy string
		mode   policy.Mode
	}{
		{`{}`, policy.OK},
		{`{"confirm": ["pay", "cancel"], "max_payment_usd": 500}`, policy.OK},
		{`{"confirm": ["confirm"]}`, policy.Unreadable}, // an answer operation is not a write
		{`{"confirm": ["accounts"]}`, policy.Unreadable},
		{`{"rules": [{"when": {"op": "cancel", "max_usd": 5}, "then": "ask"}]}`, policy.Broken},
	} {
		p := c.ParsePolicy([]byte(tc.policy))
		if p.Mode() != tc.mode {
			t.Errorf("%s: %s (%s), want %s", tc.policy, p.Mode(), p.Sentence(), tc.mode)
		}
	}
	d := c.ParsePolicy([]byte(`{"rules": [{"when": {"min_usd": 100}, "then": "refuse"}]}`)).
		Decide("pay", policy.Facts{Amounts: map[string]policy.Cents{"amount": 100_00}})
	if d.Outcome != policy.Refuse || d.Sentence != "the owner's rule 1 (amount at least $100.00) refuses this payment" {
		t.Fatalf("decision %+v: the noun comes from the operation", d)
	}
}

func TestOperationBuildAndLimit(t *testing.T) {
	t.Parallel()
	c := valid()
	if c.Build() != "bank@2.1.0-rc.1+build.7" {
		t.Fatalf("build %s", c.Build())
	}
	pay, ok := c.Operation("pay")
	if !ok || pay.Name != "pay" || pay.ComputeLimit() != connectors.MaxLimit {
		t.Fatalf("pay: %+v", pay)
	}
	pay.Price = 7 // the operation itself, not a copy
	if c.Operations[1].Price != 7 {
		t.Fatal("Operation returned a copy")
	}
	if accounts, _ := c.Operation("accounts"); accounts.ComputeLimit() != connectors.DefaultLimit {
		t.Fatalf("default limit %s", accounts.ComputeLimit())
	}
	if _, ok := c.Operation("Pay"); ok {
		t.Fatal("found an operation by another case")
	}
}

func TestCatalogue(t *testing.T) {
	t.Parallel()
	a, b := valid(), valid()
	b.Name = "alpha"
	cat, err := connectors.NewCatalogue(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cat.Names(), ",") != "alpha,bank" || cat["bank"] != a {
		t.Fatalf("catalogue %v", cat.Names())
	}
	if _, err := connectors.NewCatalogue(a, valid()); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("the same name twice: %v", err)
	}
	if cat, err := connectors.NewCatalogue(); err != nil || len(cat.Names()) != 0 {
		t.Fatalf("an empty catalogue: %v", err)
	}

	for _, tc := range []struct {
		connector, policy, mode string
		known                   bool
	}{
		{"bank", `{"confirm": ["pay"]}`, "ok", true},
		{"bank", `{"confirm": ["accounts"]}`, "unreadable", true},
		{"alpha", `{"rules": [{"when": {"op": "cancel", "max_usd": 5}, "then": "ask"}]}`, "broken", true},
		{"mail", `{}`, "", false},
	} {
		mode, sentence, known := cat.PolicyMode(tc.connector, []byte(tc.policy))
		if mode != tc.mode || known != tc.known || known && (mode == "ok") != (sentence == "") {
			t.Errorf("PolicyMode(%s, %s) = %q, %q, %v", tc.connector, tc.policy, mode, sentence, known)
		}
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	type args struct {
		To     string   `json:"to"`
		Amount int      `json:"amount"`
		Tags   []string `json:"tags"`
	}
	var got args
	c := &connectors.Call{Args: json.RawMessage(`{"operation": "pay", "to": "bob", "amount": 5, "tags": ["a"]}`)}
	if err := c.Decode(&got); err != nil || got.To != "bob" || got.Amount != 5 || len(got.Tags) != 1 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	got = args{}
	c.Args = json.RawMessage(`{"operation": "pay"}`)
	if err := c.Decode(&got); err != nil || got.To != "" {
		t.Fatalf("absent members: %+v, %v", got, err)
	}

	for _, tc := range []struct {
		body, want string
	}{
		{`[]`, "the call is not a JSON object"},
		{`"pay"`, "the call is not a JSON object"},
		{`{"operation": "pay"`, "the call is not a JSON object"},
		{``, "the call is not a JSON object"},
		{`{"operation": "pay", "memo": "x"}`, "the call's arguments are not this operation's (unknown member `memo`)"},
		{`{"to": 5}`, "`to` has the wrong type"},
		{`{"amount": "5"}`, "`amount` has the wrong type"},
		{`{"amount": 2.5}`, "`amount` has the wrong type"},
		{`{"amount": 1e100}`, "`amount` has the wrong type"},
		{`{"tags": "a"}`, "`tags` has the wrong type"},
		{`{"tags": [1]}`, "`tags` has the wrong type"},
		{`{"operation": "pay", "TO": "bob"}`, "the call writes `to` in another case"},
		{`{"operation": "pay", "\u212a": 1}`, "the call's arguments are not this operation's (unknown member a member)"},
		{`{"to": "a", "To": "b"}`, "the call names `to` twice (member names are compared ignoring case)"},
		{`{"operation": "pay", "OPERATION": "x"}`, "the call names `operation` twice (member names are compared ignoring case)"},
		{`{"operation": "pay", "tags": ["a"], "memo": {"a": 1, "a": 2}}`, "the call names `a` twice (member names are compared ignoring case)"},
		{`{"operation": "pay"} {}`, "the call holds more than one JSON value"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			var v args
			err := (&connectors.Call{Args: json.RawMessage(tc.body)}).Decode(&v)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *countersign.Error
			if !errors.As(err, &e) || e.Code != countersign.InvalidRequest || e.Message != tc.want {
				t.Fatalf("got %v, want invalid_request: %s", err, tc.want)
			}
		})
	}
	// A value v cannot hold is malformed, never quoted.
	err := (&connectors.Call{Args: json.RawMessage(`{"to": "secret value"}`)}).Decode(args{})
	if countersign.ErrorCode(err) != countersign.InvalidRequest || strings.Contains(err.Error(), "secret") {
		t.Fatalf("got %v", err)
	}
}

func TestRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{connectors.Refused(countersign.PolicyDenied, false, "The owner's rule %d refuses this payment.", 1),
			"policy_denied: The owner's rule 1 refuses this payment. Nothing was written."},
		{connectors.Refused(countersign.Conflict, true, "The second file failed."),
			"conflict: The second file failed. The write happened."},
		{connectors.RefusedUnknown("upstream_unavailable", "The answer was lost."),
			"upstream_unavailable: The answer was lost. Whether the write happened is not known."},
	} {
		if tc.err.Error() != tc.want {
			t.Errorf("got %q, want %q", tc.err, tc.want)
		}
		var r *connectors.Refusal
		if !errors.As(tc.err, &r) || string(r.Code)+": "+r.Message() != tc.want {
			t.Errorf("%v is not a Refusal with that message", tc.err)
		}
	}
	err := connectors.Refuse(countersign.InvalidRequest, "`%s` is required", "to")
	if err.Error() != "invalid_request: `to` is required" || countersign.ErrorCode(err) != countersign.InvalidRequest {
		t.Fatalf("Refuse: %v", err)
	}
}

func TestTaskAnswers(t *testing.T) {
	t.Parallel()
	task := connectors.Task{
		ID: "abc-1", Kind: countersign.KindInput, Hash: strings.Repeat("ab", 32), Thread: "abc-1",
		ExpiresAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600)),
		Link:      "https://countersign.example/tasks/abc-1",
	}
	for _, tc := range []struct {
		got  any
		want string
	}{
		{connectors.AwaitingOwner(task), `{"expires_at":"2026-11-30T11:00:00Z","link":"https://countersign.example/tasks/abc-1","ok":true,"status":"awaiting_owner","task_hash":"` + task.Hash + `","task_id":"abc-1","thread":"abc-1"}`},
		{connectors.Notified(task), `{"expires_at":"2026-11-30T11:00:00Z","link":"https://countersign.example/tasks/abc-1","ok":true,"status":"notified","task_hash":"` + task.Hash + `","task_id":"abc-1","thread":"abc-1"}`},
	} {
		b, err := json.Marshal(tc.got)
		if err != nil || string(b) != tc.want {
			t.Errorf("got %s, want %s", b, tc.want)
		}
	}
}

// platform records what the SDK asks of the platform.
type platform struct {
	specs   []connectors.TaskSpec
	threads []string
	kinds   []policy.Kind
	limits  []int
}

func (p *platform) OpenTask(_ context.Context, spec connectors.TaskSpec, thread string) (connectors.Task, error) {
	p.specs, p.threads = append(p.specs, spec), append(p.threads, thread)
	return connectors.Task{ID: "new", Kind: spec.Kind, Thread: thread}, nil
}

func (p *platform) Reserve(_ context.Context, kind policy.Kind, limit int) (bool, error) {
	p.kinds, p.limits = append(p.kinds, kind), append(p.limits, limit)
	return true, nil
}

func (p *platform) Spend(context.Context, string, policy.Cents, policy.Cents) (bool, error) {
	return true, nil
}

func (p *platform) Unspend(context.Context, string) error { return nil }

func TestCallAndAnswerCallAskThePlatform(t *testing.T) {
	t.Parallel()
	p := &platform{}
	pol := valid().ParsePolicy([]byte(`{"confirm": ["pay"]}`))
	c := &connectors.Call{Operation: "pay", Policy: pol, Platform: p}
	if _, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm}); err != nil || p.threads[0] != "" {
		t.Fatalf("a call's task starts a thread: %q, %v", p.threads, err)
	}
	if ok, err := c.Reserve(ctx, policy.Direct, 3); !ok || err != nil || p.kinds[0] != policy.Direct || p.limits[0] != 3 {
		t.Fatalf("reserve: %v %v", p.kinds, p.limits)
	}
	if d := c.Decide(policy.Facts{Amounts: map[string]policy.Cents{"amount": 1}}); d.Outcome != policy.Ask {
		t.Fatalf("the call's operation is decided: %+v", d)
	}

	a := &connectors.AnswerCall{Task: connectors.Task{ID: "r-2", Thread: "r-1"}, Policy: pol, Platform: p}
	if _, err := a.Next(ctx, connectors.TaskSpec{Kind: countersign.KindInput}); err != nil || p.threads[1] != "r-1" {
		t.Fatalf("next: %q, %v", p.threads, err)
	}
	answerBy := &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}
	if _, err := a.Notice(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm, AnswerBy: answerBy}); err != nil ||
		p.threads[2] != "r-1" || p.specs[2].Kind != countersign.KindNotice || p.specs[2].AnswerBy != nil {
		t.Fatalf("notice: %+v, %v", p.specs[2], err)
	}
	for _, k := range []countersign.Kind{countersign.KindNotice, "", "question"} {
		_, err := a.Next(ctx, connectors.TaskSpec{Kind: k})
		if countersign.ErrorCode(err) != countersign.InvalidRequest {
			t.Fatalf("next turn of kind %q: %v", k, err)
		}
	}
	if len(p.specs) != 3 {
		t.Fatal("a refused next turn reached the platform")
	}
	if ok, err := a.Reserve(ctx, 2); !ok || err != nil || p.kinds[1] != policy.Confirmed || p.limits[1] != 2 {
		t.Fatalf("an answer counts a confirmed write: %v %v", p.kinds, p.limits)
	}
	if d := a.Decide("cancel", policy.Facts{}); d.Outcome != policy.Allow {
		t.Fatalf("the answer names the sealed write: %+v", d)
	}
}

// FuzzDecode decodes any call body strictly: a refusal is invalid_request,
// and an accepted body holds no member the arguments do not have.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"operation":"pay","to":"bob","amount":5}`, `{}`, `[]`, `{"memo":1}`, `{"amount":"5"}`, `{"to":{"a":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v struct {
			To     string `json:"to"`
			Amount int    `json:"amount"`
		}
		err := (&connectors.Call{Args: json.RawMessage(body)}).Decode(&v)
		if err != nil {
			if countersign.ErrorCode(err) != countersign.InvalidRequest {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &members); err != nil {
			t.Fatalf("%q was accepted: %v", body, err)
		}
		for k := range members {
			if k != "operation" && !strings.EqualFold(k, "to") && !strings.EqualFold(k, "amount") {
				t.Fatalf("%q was accepted with member %q", body, k)
			}
		}
	})
}

func TestDecodeRefusesAmbiguousCalls(t *testing.T) {
	t.Parallel()
	var v struct {
		To string `json:"to"`
	}
	for _, body := range []string{
		`null`,
		`{"to":"a","to":"b"}`,
		`{"to":"a","To":"b"}`,
		`{"to":"a"} {}`,
		`{"to":"a"`,
		`{"` + strings.Repeat("x", 100) + "\u202e" + `":1}`,
	} {
		c := &connectors.Call{Args: json.RawMessage(body)}
		err := c.Decode(&v)
		if countersign.ErrorCode(err) != countersign.InvalidRequest {
			t.Errorf("%q: %v", body, err)
		}
		if err != nil && strings.Contains(err.Error(), "\u202e") {
			t.Errorf("%q: the refusal echoes the member's name: %v", body, err)
		}
	}
}

// TestTaskOnly: TaskOnly, and only a schema nothing fits ("not": {}), says
// an operation answers only by opening a task; the task operations all
// declare their results.
func TestTaskOnly(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		string(connectors.TaskOnly):   true,
		`{"not": {}}`:                 true,
		`{"not": {"type": "string"}}`: false,
		`{"type": "object"}`:          false,
		`{"not": true}`:               false,
		`{"not": []}`:                 false,
		`[]`:                          false,
		``:                            false,
	} {
		if got := connectors.IsTaskOnly(json.RawMessage(raw)); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
	for _, op := range connectors.PlatformOperations {
		if op.Result == nil || connectors.IsTaskOnly(op.Result) {
			t.Errorf("task operation %s declares no result of its own", op.Name)
		}
	}
}
