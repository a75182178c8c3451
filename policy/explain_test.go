package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Schemas with the gates the real connectors declare: GitHub's `actions`
// and Mercury's maximum amounts.
var (
	githubGated = func() Schema {
		s := github
		s.Allowed = "actions"
		return s
	}()
	mercuryCapped = func() Schema {
		s := mercury
		s.Caps = []Cap{
			{Key: "max_payment_usd", Condition: "amount", Writes: []string{"pay_invoice"}},
			{Key: "max_spend_usd_month", Condition: "amount", Writes: []string{"pay_invoice"}, Counted: "with the last 30 days' payments"},
		}
		return s
	}()
)

// readmeMercury is the README's policy for "a payment above $500, every
// wire, every cancellation can wait while a small ACH payment to a saved
// payee runs at once".
const readmeMercury = `{"max_payment_usd": 5000, "max_spend_usd_month": 20000,
 "rules": [
   {"when": {"op": "pay_invoice", "payee": "new", "min_usd": 1000.01}, "then": "refuse"},
   {"when": {"op": "pay_invoice", "min_usd": 500.01}, "then": "ask"},
   {"when": {"op": "pay_invoice", "methods": ["wire"]}, "then": "ask"},
   {"when": {"op": "cancel_invoice"}, "then": "ask"},
   {"when": {"op": "pay_invoice", "methods": ["ach"], "payee": "saved"}, "then": "allow"},
   {"when": {"op": ["pay_invoice", "add_recipient", "send_invoice"]}, "then": "ask"}]}`

func TestExplainReadmeMercuryPolicy(t *testing.T) {
	t.Parallel()
	e := mustParse(t, readmeMercury, mercuryCapped).Explain()
	want := []string{
		"pay_invoice, the first that applies: refused when the amount is above $5,000.00 (max_payment_usd); " +
			"refused when the amount, with the last 30 days' payments, is above $20,000.00 (max_spend_usd_month); " +
			"refused when the amount is at least $1,000.01 and the payee is new (rule 1); " +
			"asks you first when the amount is at least $500.01 (rule 2); " +
			"asks you first when the method is wire (rule 3); " +
			"runs at once when the method is ach and the payee is saved (rule 5); " +
			"otherwise asks you first (rule 6).",
		"add_recipient: asks you first (rule 6).",
		"send_invoice: asks you first (rule 6).",
		"cancel_invoice: asks you first (rule 4).",
	}
	var got []string
	for _, w := range e.Writes {
		got = append(got, w.Text)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rules := []string{
		"Rule 1: pay_invoice where the amount is at least $1,000.01 and the payee is new refused.",
	}
	if e.Rules[0] != rules[0] || len(e.Rules) != 6 {
		t.Fatalf("rules: %q", e.Rules)
	}
	if len(e.Limits) != 0 {
		t.Fatalf("the caps are told with the writes, not again as limits: %q", e.Limits)
	}
	if w := e.Writes[3]; w.Always != Ask || w.Op != "cancel_invoice" || w.Noun != "cancellation" {
		t.Fatalf("cancel_invoice: %+v", w)
	}
}

// TestExplainClaimsMatchDecide reads back what the owner is told about each
// write, in its words, and checks it against Decide for many calls: a claim
// the words make that Decide does not keep fails here.
func TestExplainClaimsMatchDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		schema Schema
		raw    string
	}{
		{"README mercury", mercuryCapped, readmeMercury},
		{"mercury confirm and a cap", mercuryCapped, `{"confirm":["pay_invoice","cancel_invoice"],"max_payment_usd":750}`},
		{"mercury allow rule under confirm", mercuryCapped, `{"confirm":["pay_invoice"],"rules":[{"when":{"op":"pay_invoice","max_usd":100},"then":"allow"},{"when":{"methods":["wire"]},"then":"refuse"}]}`},
		{"mercury rule without op", mercuryCapped, `{"rules":[{"when":{"min_usd":10,"max_usd":99.99},"then":"ask"},{"when":{"payee":"new"},"then":"refuse"}]}`},
		{"mercury every write refused", mercuryCapped, `{"rules":[{"then":"refuse"}]}`},
		{"mercury nothing", mercuryCapped, `{}`},
		{"github actions and confirm", githubGated, `{"actions":["pr_merge","issue_comment","repo_star"],"confirm":["pr_merge"]}`},
		{"github no actions", githubGated, `{"confirm":["pr_merge"]}`},
		{"gmail confirm", gmail, `{"confirm":["send"],"recipient_domains":["example.com"],"max_recipients":5}`},
		{"probe", probe, `{}`},
		{"unreadable", mercuryCapped, `{"confirm":["Pay_invoice"]}`},
		{"broken", mercuryCapped, `{"rules":[{"when":{"op":"cancel_invoice","min_usd":1},"then":"ask"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Parse([]byte(tc.raw), tc.schema)
			e := p.Explain()
			if len(e.Writes) != len(tc.schema.Writes) {
				t.Fatalf("%d writes told, %d declared", len(e.Writes), len(tc.schema.Writes))
			}
			checked := 0
			for _, w := range e.Writes {
				for _, f := range factsFor(w.Op, tc.schema) {
					claim := claimed(t, w, f)
					d := p.Decide(w.Op, f)
					if claim != d.Outcome {
						t.Errorf("%s with %v: the owner is told %q, which says %s; Decide says %+v", w.Op, f, w.Text, claim, d)
					}
					checked++
				}
			}
			if checked < len(e.Writes) {
				t.Fatalf("only %d calls checked", checked)
			}
		})
	}
}

// factsFor is a spread of calls of op: every word, and amounts on both
// sides of every boundary the tests use.
func factsFor(op string, s Schema) []Facts {
	carried := s.Carries[op]
	if len(carried) == 0 {
		return []Facts{{}}
	}
	var amounts []Cents
	for _, d := range []Cents{1, 1000, 9999, 10000, 50000, 50001, 75000, 75001, 100000, 100001, 500000, 500001, 2000000, 2000001, 9000000} {
		amounts = append(amounts, d)
	}
	var out []Facts
	for _, a := range amounts {
		if !slices.Contains(carried, "method") {
			out = append(out, Facts{Amounts: map[string]Cents{"amount": a}})
			continue
		}
		for _, m := range []string{"ach", "wire", "check"} {
			for _, p := range []string{"saved", "new"} {
				out = append(out, payment(a, m, p))
			}
		}
	}
	return out
}

// claimed is the outcome the owner's words say f gets. It reads only the
// words: the outcome verb, and each case's "when".
func claimed(t *testing.T, w WriteExplanation, f Facts) Outcome {
	t.Helper()
	if w.Always != 0 {
		if !strings.Contains(w.Text, ": "+w.Always.verb()) {
			t.Fatalf("%q does not say %q", w.Text, w.Always.verb())
		}
		return w.Always
	}
	for _, c := range w.Cases {
		if c.When == "always" || holds(t, c.When, f) {
			if !strings.Contains(w.Text, c.Outcome.verb()+" when "+c.When) && !strings.Contains(w.Text, "otherwise "+c.Outcome.verb()+" ("+c.Because+")") {
				t.Fatalf("%q does not tell the case %+v", w.Text, c)
			}
			return c.Outcome
		}
	}
	if !strings.HasSuffix(w.Text, "otherwise "+w.Otherwise.verb()+".") {
		t.Fatalf("%q does not end with what happens otherwise (%s)", w.Text, w.Otherwise)
	}
	return w.Otherwise
}

// holds evaluates a case's words, "the amount is at least $500.01 and the
// method is ach or wire", against f.
func holds(t *testing.T, when string, f Facts) bool {
	t.Helper()
	for _, part := range strings.Split(when, " and ") {
		rest, ok := strings.CutPrefix(part, "the ")
		if !ok {
			t.Fatalf("cannot read %q", part)
		}
		name, test, ok := strings.Cut(rest, " is ")
		if !ok {
			t.Fatalf("cannot read %q", part)
		}
		amount := func(s string) Cents {
			c, err := ParseCents(strings.ReplaceAll(strings.TrimPrefix(s, "$"), ",", ""))
			if err != nil {
				t.Fatalf("cannot read the amount %q in %q", s, part)
			}
			return c
		}
		a, hasAmount := f.Amounts[name]
		var ok2 bool
		switch {
		case strings.HasPrefix(test, "above "):
			ok2 = hasAmount && a > amount(strings.TrimPrefix(test, "above "))
		case strings.HasPrefix(test, "at least "):
			ok2 = hasAmount && a >= amount(strings.TrimPrefix(test, "at least "))
		case strings.HasPrefix(test, "at most "):
			ok2 = hasAmount && a <= amount(strings.TrimPrefix(test, "at most "))
		case strings.HasPrefix(test, "from "):
			lo, hi, _ := strings.Cut(strings.TrimPrefix(test, "from "), " to ")
			ok2 = hasAmount && a >= amount(lo) && a <= amount(hi)
		default:
			words := strings.Split(strings.ReplaceAll(test, " or ", ", "), ", ")
			ok2 = slices.Contains(words, f.Words[name])
		}
		if !ok2 {
			return false
		}
	}
	return true
}

func TestAllowedList(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"actions":["issue_comment","pr_merge"],"confirm":["pr_merge","issue_create"]}`, githubGated)
	for _, tc := range []struct {
		op   string
		want Decision
	}{
		{"issue_comment", Decision{Outcome: Allow}},
		{"pr_merge", Decision{Outcome: Ask}},
		{"issue_create", Decision{Outcome: Refuse, Code: "policy_denied", Sentence: "the owner's policy does not allow issue_create (it is not in `actions`)"}},
		{"repo_star", Decision{Outcome: Refuse, Code: "policy_denied", Sentence: "the owner's policy does not allow repo_star (it is not in `actions`)"}},
	} {
		if d := p.Decide(tc.op, noFacts); d != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.op, d, tc.want)
		}
	}
	// Without `actions`, nothing is allowed.
	if d := mustParse(t, `{}`, githubGated).Decide("repo_star", noFacts); d.Outcome != Refuse {
		t.Errorf("no actions: %+v", d)
	}
	e := p.Explain()
	if w := e.Writes[slices.IndexFunc(e.Writes, func(w WriteExplanation) bool { return w.Op == "issue_create" })]; w.Always != Refuse ||
		w.Text != "issue_create: refused (it is not in `actions`)." {
		t.Errorf("issue_create told %+v", w)
	}
	if fmt.Sprint(e.Limits) != "[]" {
		t.Errorf("the allowed list is told with the writes, not as a limit: %q", e.Limits)
	}
}

func TestCaps(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"max_payment_usd": 500, "max_spend_usd_month": 2000,
		"rules":[{"when":{"op":"pay_invoice","methods":["wire"]},"then":"refuse"},{"then":"allow"}]}`, mercuryCapped)
	for _, tc := range []struct {
		name  string
		op    string
		facts Facts
		want  Decision
	}{
		{"at the cap", "pay_invoice", payment(50000, "ach", "saved"), Decision{Outcome: Allow, Rule: 2}},
		{"above the cap", "pay_invoice", payment(50001, "ach", "saved"),
			Decision{Outcome: Refuse, Code: "policy_denied", Sentence: "the payment of $500.01 is above the owner's max_payment_usd of $500.00"}},
		{"a cap comes before the rules", "pay_invoice", payment(250000, "wire", "saved"),
			Decision{Outcome: Refuse, Code: "policy_denied", Sentence: "the payment of $2,500.00 is above the owner's max_payment_usd of $500.00"}},
		{"an invoice is not capped", "send_invoice", Facts{Amounts: map[string]Cents{"amount": 900000}}, Decision{Outcome: Allow, Rule: 2}},
	} {
		if d := p.Decide(tc.op, tc.facts); d != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, d, tc.want)
		}
	}
}

func TestGatesDeclaredWrongly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*Schema)
		want string
	}{
		{"allowed not a key", func(s *Schema) { s.Allowed = "writes" }, `Allowed names "writes", which is not a WriteList key`},
		{"allowed a plain list", func(s *Schema) { s.Keys = map[string]KeyKind{"writes": List}; s.Allowed = "writes" }, `Allowed names "writes", which is not a WriteList key`},
		{"cap on a count", func(s *Schema) {
			s.Keys = map[string]KeyKind{"max": Count}
			s.Caps = []Cap{{Key: "max", Condition: "amount", Writes: []string{"pay_invoice"}}}
		}, `a cap names "max", which is not an Amount key`},
		{"cap on a word", func(s *Schema) {
			s.Caps = []Cap{{Key: "max_payment_usd", Condition: "method", Writes: []string{"pay_invoice"}}}
		}, `the cap "max_payment_usd" names "method", which is not an AmountRange condition`},
		{"cap on a write without the amount", func(s *Schema) {
			s.Caps = []Cap{{Key: "max_payment_usd", Condition: "amount", Writes: []string{"cancel_invoice"}}}
		}, `the cap "max_payment_usd" names "cancel_invoice", which is not a write carrying amount`},
		{"cap on no write", func(s *Schema) {
			s.Caps = []Cap{{Key: "max_payment_usd", Condition: "amount"}}
		}, `the cap "max_payment_usd" names no write`},
	} {
		s := mercury
		tc.edit(&s)
		if err := s.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestExplainLimits(t *testing.T) {
	t.Parallel()
	e := mustParse(t, `{"confirm":["send"],"recipient_domains":["example.com","example.org"],"max_recipients":5,"subject_prefix":"[bot] ","recipients":[]}`, gmail).Explain()
	want := []string{`max_recipients: 5`, `recipient_domains: example.com, example.org`, `recipients: none`, `subject_prefix: "[bot] "`}
	if !slices.Equal(e.Limits, want) {
		t.Fatalf("limits %q, want %q", e.Limits, want)
	}
	if e.Writes[0].Text != "send: asks you first." {
		t.Fatalf("send: %q", e.Writes[0].Text)
	}
	u := Parse([]byte(`{"confirm":["Send"]}`), gmail).Explain()
	if u.Mode != Unreadable || u.Writes[0].Always != Refuse || !strings.Contains(u.Writes[0].Text, "refused, because the policy cannot be applied") {
		t.Fatalf("unreadable: %+v", u)
	}
}
