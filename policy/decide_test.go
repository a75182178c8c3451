package policy

import (
	"testing"
)

func mustParse(t testing.TB, raw string, s Schema) *Policy {
	t.Helper()
	p := Parse([]byte(raw), s)
	if p.Mode() != OK {
		t.Fatalf("policy %s: %s", p.Mode(), p.Sentence())
	}
	return p
}

var noFacts = Facts{}

func TestConfirm(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"confirm":["pr_merge","issue_create"]}`, github)
	for _, tc := range []struct {
		op   string
		want Outcome
	}{
		{"pr_merge", Ask},
		{"issue_create", Ask},
		{"issue_comment", Allow},
		{"repo_star", Allow},
	} {
		if d := p.Decide(tc.op, noFacts); d != (Decision{Outcome: tc.want}) {
			t.Errorf("Decide(%s) = %+v, want %s", tc.op, d, tc.want)
		}
	}
	// The default is none: a policy naming none acts at once.
	if d := mustParse(t, `{}`, github).Decide("pr_merge", noFacts); d.Outcome != Allow {
		t.Errorf("empty policy: %+v", d)
	}
}

func TestFirstMatchDecides(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"rules":[
		{"when":{"op":"pay_invoice","methods":["wire"]},"then":"refuse"},
		{"when":{"op":"pay_invoice","min_usd":100},"then":"ask"},
		{"when":{"op":"pay_invoice"},"then":"allow"},
		{"when":{"op":"pay_invoice","payee":"new"},"then":"refuse"}
	]}`, mercury)
	for _, tc := range []struct {
		name  string
		facts Facts
		want  Decision
	}{
		{"a wire matches rule 1 before rule 2", payment(50000, "wire", "saved"), Decision{Outcome: Refuse, Rule: 1, Code: "policy_denied",
			Sentence: "the owner's rule 1 (pay_invoice, method wire) refuses this payment"}},
		{"a large ACH matches rule 2", payment(50000, "ach", "saved"), Decision{Outcome: Ask, Rule: 2}},
		{"a small ACH matches rule 3", payment(9999, "ach", "saved"), Decision{Outcome: Allow, Rule: 3}},
		{"rule 4 is never reached", payment(9999, "ach", "new"), Decision{Outcome: Allow, Rule: 3}},
	} {
		if d := p.Decide("pay_invoice", tc.facts); d != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, d, tc.want)
		}
	}
}

func TestRulesNeverWiden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		raw  string
		op   string
		want Decision
	}{
		{"an allow rule leaves an asked write asked",
			`{"confirm":["cancel_invoice"],"rules":[{"when":{"op":"cancel_invoice"},"then":"allow"}]}`,
			"cancel_invoice", Decision{Outcome: Ask}},
		{"an allow rule without op leaves an asked write asked",
			`{"confirm":["cancel_invoice"],"rules":[{"then":"allow"}]}`,
			"cancel_invoice", Decision{Outcome: Ask}},
		{"the first match decides even when confirm stands",
			`{"confirm":["cancel_invoice"],"rules":[{"then":"allow"},{"then":"refuse"}]}`,
			"cancel_invoice", Decision{Outcome: Ask}},
		{"an ask rule on an asked write",
			`{"confirm":["cancel_invoice"],"rules":[{"when":{"op":"cancel_invoice"},"then":"ask"}]}`,
			"cancel_invoice", Decision{Outcome: Ask, Rule: 1}},
		{"an ask rule on an allowed write",
			`{"rules":[{"when":{"op":"cancel_invoice"},"then":"ask"}]}`,
			"cancel_invoice", Decision{Outcome: Ask, Rule: 1}},
		{"a refuse rule on an allowed write",
			`{"rules":[{"when":{"op":"add_recipient"},"then":"refuse"}]}`,
			"add_recipient", Decision{Outcome: Refuse, Rule: 1, Code: "policy_denied",
				Sentence: "the owner's rule 1 (add_recipient) refuses this write"}},
		{"a refuse rule on an asked write",
			`{"confirm":["cancel_invoice"],"rules":[{"when":{"op":["send_invoice","cancel_invoice"]},"then":"refuse"}]}`,
			"cancel_invoice", Decision{Outcome: Refuse, Rule: 1, Code: "policy_denied",
				Sentence: "the owner's rule 1 (send_invoice or cancel_invoice) refuses this cancellation"}},
		{"an allow rule on an allowed write",
			`{"rules":[{"when":{"op":"cancel_invoice"},"then":"allow"}]}`,
			"cancel_invoice", Decision{Outcome: Allow, Rule: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := mustParse(t, tc.raw, mercury).Decide(tc.op, noFacts); d != tc.want {
				t.Fatalf("%+v, want %+v", d, tc.want)
			}
		})
	}
}

func TestNoMatchFallsBackToConfirm(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"confirm":["send_invoice"],"rules":[
		{"when":{"op":"pay_invoice","min_usd":1000},"then":"refuse"},
		{"when":{"op":"cancel_invoice"},"then":"ask"}
	]}`, mercury)
	for _, tc := range []struct {
		op    string
		facts Facts
		want  Outcome
	}{
		{"pay_invoice", payment(99999, "ach", "saved"), Allow},
		{"send_invoice", Facts{Amounts: map[string]Cents{"amount": 1}}, Ask},
		{"add_recipient", noFacts, Allow},
	} {
		if d := p.Decide(tc.op, tc.facts); d != (Decision{Outcome: tc.want}) {
			t.Errorf("Decide(%s) = %+v, want %s by no rule", tc.op, d, tc.want)
		}
	}
}

func TestOpAsStringOrList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		raw  string
		want map[string]Outcome
	}{
		{"string", `{"rules":[{"when":{"op":"send_invoice"},"then":"ask"}]}`,
			map[string]Outcome{"send_invoice": Ask, "cancel_invoice": Allow, "add_recipient": Allow}},
		{"list of one", `{"rules":[{"when":{"op":["send_invoice"]},"then":"ask"}]}`,
			map[string]Outcome{"send_invoice": Ask, "cancel_invoice": Allow, "add_recipient": Allow}},
		{"list of two", `{"rules":[{"when":{"op":["send_invoice","cancel_invoice"]},"then":"ask"}]}`,
			map[string]Outcome{"send_invoice": Ask, "cancel_invoice": Ask, "add_recipient": Allow}},
		{"no op", `{"rules":[{"when":{},"then":"ask"}]}`,
			map[string]Outcome{"send_invoice": Ask, "cancel_invoice": Ask, "add_recipient": Ask}},
	} {
		p := mustParse(t, tc.raw, mercury)
		for op, want := range tc.want {
			facts := Facts{Amounts: map[string]Cents{"amount": 100}}
			if d := p.Decide(op, facts); d.Outcome != want {
				t.Errorf("%s: Decide(%s) = %+v, want %s", tc.name, op, d, want)
			}
		}
	}
}

func TestRuleWithoutOpSkipsWritesLackingItsConditions(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"rules":[
		{"when":{"min_usd":1000},"then":"refuse"},
		{"when":{"payee":"new"},"then":"ask"}
	]}`, mercury)
	for _, tc := range []struct {
		op    string
		facts Facts
		want  Decision
	}{
		// pay_invoice and send_invoice carry an amount; rule 1 applies.
		{"pay_invoice", payment(100000, "ach", "saved"), Decision{Outcome: Refuse, Rule: 1, Code: "policy_denied",
			Sentence: "the owner's rule 1 (amount at least $1,000.00) refuses this payment"}},
		{"send_invoice", Facts{Amounts: map[string]Cents{"amount": 100000}}, Decision{Outcome: Refuse, Rule: 1, Code: "policy_denied",
			Sentence: "the owner's rule 1 (amount at least $1,000.00) refuses this write"}},
		{"send_invoice", Facts{Amounts: map[string]Cents{"amount": 99999}}, Decision{Outcome: Allow}},
		// Only pay_invoice carries a payee; rule 2 applies to it alone.
		{"pay_invoice", payment(100, "ach", "new"), Decision{Outcome: Ask, Rule: 2}},
		// cancel_invoice carries neither: no rule matches it.
		{"cancel_invoice", noFacts, Decision{Outcome: Allow}},
		{"add_recipient", noFacts, Decision{Outcome: Allow}},
	} {
		if d := p.Decide(tc.op, tc.facts); d != tc.want {
			t.Errorf("Decide(%s, %v) = %+v, want %+v", tc.op, tc.facts, d, tc.want)
		}
	}
}

// TestMercuryExample expresses SPEC §14's sentence as rules: "a payment above
// $500, every wire, every cancellation can wait while a small ACH payment to
// a saved payee runs at once".
func TestMercuryExample(t *testing.T) {
	t.Parallel()
	policies := map[string]string{
		// The small ACH payment to a saved payee first, then everything else
		// that must wait.
		"allow first": `{"rules":[
			{"when":{"op":"pay_invoice","max_usd":500,"methods":["ach"],"payee":"saved"},"then":"allow"},
			{"when":{"op":["pay_invoice","cancel_invoice"]},"then":"ask"}
		]}`,
		// Each clause of the sentence as its own rule, and the small ACH
		// payment to a saved payee last.
		"clause by clause": `{"rules":[
			{"when":{"op":"pay_invoice","min_usd":500.01},"then":"ask"},
			{"when":{"op":"pay_invoice","methods":["wire"]},"then":"ask"},
			{"when":{"op":"cancel_invoice"},"then":"ask"},
			{"when":{"op":"pay_invoice","methods":["ach"],"payee":"saved"},"then":"allow"},
			{"when":{"op":"pay_invoice"},"then":"ask"}
		]}`,
	}
	cases := []struct {
		name  string
		op    string
		facts Facts
		want  Outcome
	}{
		{"small ACH to a saved payee", "pay_invoice", payment(12000, "ach", "saved"), Allow},
		{"ACH of exactly $500 to a saved payee", "pay_invoice", payment(50000, "ach", "saved"), Allow},
		{"ACH of $500.01 to a saved payee", "pay_invoice", payment(50001, "ach", "saved"), Ask},
		{"large ACH to a saved payee", "pay_invoice", payment(250000, "ach", "saved"), Ask},
		{"small wire to a saved payee", "pay_invoice", payment(1000, "wire", "saved"), Ask},
		{"large wire", "pay_invoice", payment(900000, "wire", "new"), Ask},
		{"small ACH to a new payee", "pay_invoice", payment(1000, "ach", "new"), Ask},
		{"small check to a saved payee", "pay_invoice", payment(1000, "check", "saved"), Ask},
		{"a cancellation", "cancel_invoice", noFacts, Ask},
		{"sending an invoice", "send_invoice", Facts{Amounts: map[string]Cents{"amount": 900000}}, Allow},
		{"adding a recipient", "add_recipient", noFacts, Allow},
	}
	for pname, raw := range policies {
		p := mustParse(t, raw, mercury)
		for _, tc := range cases {
			if d := p.Decide(tc.op, tc.facts); d.Outcome != tc.want {
				t.Errorf("%s: %s: %+v, want %s", pname, tc.name, d, tc.want)
			}
		}
	}

	// Ticking pay_invoice in "Ask me before" instead cannot be loosened by
	// an allow rule: every payment waits, the small ACH one too.
	p := mustParse(t, `{"confirm":["pay_invoice","cancel_invoice"],"rules":[
		{"when":{"op":"pay_invoice","max_usd":500,"methods":["ach"],"payee":"saved"},"then":"allow"}
	]}`, mercury)
	if d := p.Decide("pay_invoice", payment(12000, "ach", "saved")); d != (Decision{Outcome: Ask}) {
		t.Errorf("confirm with an allow rule: %+v, want ask", d)
	}
}

func TestRefusalSentences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule string
		op   string
		f    Facts
		want string
	}{
		{`{"then":"refuse"}`, "add_recipient", noFacts,
			"the owner's rule 2 (every write) refuses this write"},
		{`{"when":{"op":"pay_invoice","min_usd":10,"max_usd":20.5},"then":"refuse"}`, "pay_invoice", payment(1500, "ach", "new"),
			"the owner's rule 2 (pay_invoice, amount from $10.00 to $20.50) refuses this payment"},
		{`{"when":{"max_usd":20},"then":"refuse"}`, "pay_invoice", payment(1500, "ach", "new"),
			"the owner's rule 2 (amount at most $20.00) refuses this payment"},
		{`{"when":{"payee":"new","methods":["wire","ach","wire"],"op":["pay_invoice","pay_invoice"],"min_usd":0},"then":"refuse"}`, "pay_invoice", payment(1500, "ach", "new"),
			"the owner's rule 2 (pay_invoice, amount at least $0.00, method wire or ach, payee new) refuses this payment"},
		{`{"when":{"op":"cancel_invoice"},"then":"refuse"}`, "cancel_invoice", noFacts,
			"the owner's rule 2 (cancel_invoice) refuses this cancellation"},
	} {
		p := mustParse(t, `{"rules":[{"when":{"op":"send_invoice"},"then":"ask"},`+tc.rule+`]}`, mercury)
		// The rule under test is the policy's second.
		want := Decision{Outcome: Refuse, Rule: 2, Code: "policy_denied", Sentence: tc.want}
		if d := p.Decide(tc.op, tc.f); d != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.rule, d, want)
		}
	}
}

func TestDecideFailsClosedOnConnectorMistakes(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"rules":[{"when":{"op":"pay_invoice","min_usd":1000},"then":"refuse"}]}`, mercury)
	for _, tc := range []struct {
		name  string
		op    string
		facts Facts
		want  string
	}{
		{"a read", "accounts", noFacts, "the policy was asked about `accounts`, which is not one of this connector's writes"},
		{"an unknown operation", "pay", noFacts, "the policy was asked about `pay`, which is not one of this connector's writes"},
		{"another case", "Pay_Invoice", noFacts, "the policy was asked about `Pay_Invoice`, which is not one of this connector's writes"},
		{"no amount", "pay_invoice", Facts{Words: map[string]string{"method": "ach", "payee": "saved"}},
			"the connector gave no amount for this payment"},
		{"no method", "pay_invoice", Facts{Amounts: map[string]Cents{"amount": 1}, Words: map[string]string{"payee": "saved"}},
			"the connector gave no method for this payment"},
		{"an undeclared method", "pay_invoice", payment(1, "swift", "saved"),
			"the connector gave a method its policy does not declare for this payment"},
		{"an undeclared payee", "pay_invoice", payment(1, "ach", ""),
			"the connector gave a payee its policy does not declare for this payment"},
		{"nothing at all", "pay_invoice", noFacts, "the connector gave no amount for this payment"},
		{"no amount for an invoice", "send_invoice", noFacts, "the connector gave no amount for this write"},
	} {
		want := Decision{Outcome: Refuse, Code: "internal_error", Sentence: tc.want}
		if d := p.Decide(tc.op, tc.facts); d != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, d, want)
		}
	}
	// Facts for conditions a write does not carry are not needed, and
	// ignored when given.
	if d := p.Decide("cancel_invoice", payment(1, "swift", "x")); d != (Decision{Outcome: Allow}) {
		t.Errorf("cancel_invoice with stray facts: %+v", d)
	}
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[Outcome]string{Allow: "allow", Ask: "ask", Refuse: "refuse", 0: "Outcome(0)", 9: "Outcome(9)"} {
		if o.String() != want {
			t.Errorf("%d: %q", uint8(o), o.String())
		}
	}
	if !(Allow < Ask && Ask < Refuse) {
		t.Error("outcomes are not ordered by strictness")
	}
}

func TestRuleText(t *testing.T) {
	t.Parallel()
	p := Parse([]byte(`{"rules":[{"when":{"op":"pay_invoice","min_usd":500.01},"then":"ask"},{"then":"refuse"}]}`), mercury)
	for n, want := range map[int]string{1: "rule 1 (pay_invoice, amount at least $500.01)", 2: "rule 2 (every write)", 0: "", 3: ""} {
		if got := p.RuleText(n); got != want {
			t.Errorf("RuleText(%d) = %q, want %q", n, got, want)
		}
	}
}
