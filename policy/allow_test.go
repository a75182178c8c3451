package policy

import (
	"bytes"
	"strings"
	"testing"
)

// bank is Mercury's schema as the connector declares it with the payee's
// id among its conditions, for "Always allow this".
var bank = Schema{
	Writes: mercury.Writes, Reads: mercury.Reads, Keys: mercury.Keys, Nouns: mercury.Nouns,
	Conditions: []Condition{
		AmountRange("amount", "min_usd", "max_usd"),
		AnyOf("method", "methods", "ach", "wire", "check"),
		Equals("payee", "payee", "saved", "new"),
		Names("recipient", "recipients", false),
	},
	Carries: map[string][]string{
		"pay_invoice":  {"amount", "method", "payee", "recipient"},
		"send_invoice": {"amount"},
	},
	Caps: []Cap{{Key: "max_payment_usd", Condition: "amount", Writes: []string{"pay_invoice"}}},
}

// repos is GitHub's schema with its rule conditions.
var repos = Schema{
	Writes: github.Writes, Reads: github.Reads, Keys: github.Keys, Allowed: "actions",
	Conditions: []Condition{Names("repo", "repos", true), Names("branch", "branches", false), Names("path", "paths", false)},
	Carries: map[string][]string{
		"file_put": {"repo", "branch", "path"}, "commit": {"repo", "branch", "path"}, "issue_comment": {"repo"},
	},
}

// mail is Gmail's schema with its rule conditions.
var mail = Schema{
	Writes: gmail.Writes, Reads: gmail.Reads, Keys: gmail.Keys,
	Conditions: []Condition{Names("recipient", "recipients", true), Names("domain", "domains", true)},
	Carries:    map[string][]string{"send": {"recipient", "domain"}},
}

const acme, globex = "b2b2b2b2-0000-4000-8000-000000000001", "b2b2b2b2-0000-4000-8000-000000000002"

// pay is the facts of a pay_invoice to a payee (payee "" is a new one).
func pay(cents Cents, method, payee string) Facts {
	f := payment(cents, method, "saved")
	f.Names = map[string][]string{"recipient": {payee}}
	if payee == "" {
		f.Words["payee"], f.Names["recipient"] = "new", []string{}
	}
	return f
}

// TestAlwaysAllowAPayment is SPEC §13's "Always allow this" on a $120 ACH
// to a saved payee, from a policy that asks before every payment: a $119
// ACH to the same payee is allowed, a $121 one, another payee, a new payee
// or a wire still asks, and everything else is decided as before.
func TestAlwaysAllowAPayment(t *testing.T) {
	t.Parallel()
	old := []byte(`{"confirm": ["pay_invoice", "cancel_invoice"], "max_payment_usd": 5000}`)
	a, err := AlwaysAllow(old, bank, "pay_invoice", pay(12000, "ach", acme))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"confirm":["cancel_invoice"],"max_payment_usd":5000,"rules":[` +
		`{"when":{"op":"pay_invoice","max_usd":120,"methods":["ach"],"payee":"saved","recipients":["` + acme + `"]},"then":"allow"},` +
		`{"when":{"op":"pay_invoice"},"then":"ask"}]}`
	if string(a.Policy) != want {
		t.Fatalf("the policy is\n%s\nwant\n%s", a.Policy, want)
	}
	if !a.Moved || string(a.Rule) != `{"when":{"op":"pay_invoice","max_usd":120,"methods":["ach"],"payee":"saved","recipients":["`+acme+`"]},"then":"allow"}` {
		t.Fatalf("the rule %s (moved %v)", a.Rule, a.Moved)
	}
	if a.Sentence != "Rule 1: pay_invoice where the amount is at most $120.00 and the method is ach and the payee is saved and the recipient is `"+acme+"` runs at once." {
		t.Fatalf("the sentence %q", a.Sentence)
	}
	p := mustParse(t, string(a.Policy), bank)
	for _, tc := range []struct {
		name  string
		facts Facts
		want  Outcome
	}{
		{"$120.00 ACH to the same payee", pay(12000, "ach", acme), Allow},
		{"$119.00 ACH to the same payee", pay(11900, "ach", acme), Allow},
		{"$0.01 ACH to the same payee", pay(1, "ach", acme), Allow},
		{"$120.01 ACH to the same payee", pay(12001, "ach", acme), Ask},
		{"$121.00 ACH to the same payee", pay(12100, "ach", acme), Ask},
		{"$119.00 ACH to another payee", pay(11900, "ach", globex), Ask},
		{"$119.00 ACH to a new payee", pay(11900, "ach", ""), Ask},
		{"$119.00 wire to the same payee", pay(11900, "wire", acme), Ask},
		{"$119.00 check to the same payee", pay(11900, "check", acme), Ask},
		{"$6,000 ACH to the same payee", pay(600000, "ach", acme), Refuse},
	} {
		if d := p.Decide("pay_invoice", tc.facts); d.Outcome != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, d, tc.want)
		}
	}
	if d := p.Decide("cancel_invoice", noFacts); d.Outcome != Ask {
		t.Errorf("a cancellation: %+v", d)
	}
	if !WidenedBy(old, a.Policy, bank) {
		t.Fatal("the policy with the rule is not seen as widening the old one")
	}
}

// facts to try against a policy's decisions.
var tried = func() []Facts {
	var out []Facts
	for _, cents := range []Cents{1, 11900, 12000, 12001, 50000, 50001, 100001, 600000} {
		for _, method := range []string{"ach", "wire", "check"} {
			for _, payee := range []string{acme, globex, ""} {
				out = append(out, pay(cents, method, payee))
			}
		}
	}
	return out
}()

// TestAlwaysAllowChangesNothingElse: whatever the policy (confirm or rules,
// allow rules after asking ones, refusals, caps), the policy with the rule
// decides every write as before, except the ones the rule allows, which
// were asked.
func TestAlwaysAllowChangesNothingElse(t *testing.T) {
	t.Parallel()
	policies := []string{
		`{"confirm":["pay_invoice"]}`,
		`{"confirm":["pay_invoice","send_invoice"],"max_payment_usd":5000,"rules":[
			{"when":{"op":"pay_invoice","payee":"new","min_usd":1000.01},"then":"refuse"},
			{"when":{"op":"pay_invoice","methods":["ach"],"payee":"saved"},"then":"allow"},
			{"when":{"min_usd":100},"then":"allow"},
			{"when":{"op":["pay_invoice","cancel_invoice"]},"then":"allow"},
			{"then":"allow"}]}`,
		`{"max_payment_usd":5000,"max_spend_usd_month":20000,"rules":[
			{"when":{"op":"pay_invoice","payee":"new","min_usd":1000.01},"then":"refuse"},
			{"when":{"op":"pay_invoice","min_usd":500.01},"then":"ask"},
			{"when":{"op":"pay_invoice","methods":["wire"]},"then":"ask"},
			{"when":{"op":"cancel_invoice"},"then":"ask"},
			{"when":{"op":"pay_invoice","methods":["ach"],"payee":"saved","max_usd":100},"then":"allow"},
			{"when":{"op":["pay_invoice","add_recipient","send_invoice"]},"then":"ask"}]}`,
		`{"confirm":["pay_invoice"],"rules":[{"when":{"op":"pay_invoice","recipients":["` + globex + `"]},"then":"refuse"}]}`,
	}
	for i, raw := range policies {
		old := mustParse(t, raw, bank)
		for _, asked := range tried {
			if old.Decide("pay_invoice", asked).Outcome != Ask || asked.Words["payee"] == "new" {
				continue // "Always allow" is offered from a task: an asked payment
			}
			a, err := AlwaysAllow([]byte(raw), bank, "pay_invoice", asked)
			if err != nil {
				t.Fatalf("policy %d, %v: %v", i+1, asked, err)
			}
			updated := mustParse(t, string(a.Policy), bank)
			rule := mustParse(t, `{"rules":[`+string(a.Rule)+`]}`, bank)
			for _, f := range tried {
				before, after := old.Decide("pay_invoice", f), updated.Decide("pay_invoice", f)
				want := before.Outcome
				if r := rule.Decide("pay_invoice", f); r.Rule == 1 && before.Outcome == Ask {
					want = Allow
				}
				if after.Outcome != want || before.Outcome == Refuse && after.Sentence == "" {
					t.Fatalf("policy %d, allowing %v: %v was %+v, is %+v", i+1, asked, f, before, after)
				}
			}
			for _, op := range []string{"add_recipient", "cancel_invoice"} {
				if before, after := old.Decide(op, noFacts), updated.Decide(op, noFacts); before.Outcome != after.Outcome {
					t.Fatalf("policy %d: %s was %+v, is %+v", i+1, op, before, after)
				}
			}
			for _, cents := range []Cents{1, 50001} {
				f := Facts{Amounts: map[string]Cents{"amount": cents}}
				if before, after := old.Decide("send_invoice", f), updated.Decide("send_invoice", f); before.Outcome != after.Outcome {
					t.Fatalf("policy %d: send_invoice of %v was %+v, is %+v", i+1, cents, before, after)
				}
			}
			if !WidenedBy([]byte(raw), a.Policy, bank) {
				t.Fatalf("policy %d: not seen as widened", i+1)
			}
		}
	}
}

// TestAlwaysAllowRefusals: what cannot be always allowed says why.
func TestAlwaysAllowRefusals(t *testing.T) {
	t.Parallel()
	var fifty strings.Builder
	fifty.WriteString(`{"rules":[`)
	for i := range MaxRules {
		if i > 0 {
			fifty.WriteString(",")
		}
		fifty.WriteString(`{"when":{"op":"pay_invoice"},"then":"ask"}`)
	}
	fifty.WriteString("]}")
	for _, tc := range []struct {
		name   string
		raw    string
		s      Schema
		op     string
		facts  Facts
		saying string
	}{
		{"an unreadable policy", `{"confirm":["pay"]}`, bank, "pay_invoice", pay(100, "ach", acme), "cannot be applied"},
		{"a connector without conditions", `{}`, probe, "guess_start", noFacts, "takes no rules"},
		{"not a write", `{}`, bank, "accounts", noFacts, "not one of this connector's writes"},
		{"a write carrying nothing", `{"confirm":["cancel_invoice"]}`, bank, "cancel_invoice", noFacts, "would allow every cancellation"},
		{"a new payee", `{"confirm":["pay_invoice"]}`, bank, "pay_invoice", pay(100, "ach", ""), "names no recipient"},
		{"a fact missing", `{"confirm":["pay_invoice"]}`, bank, "pay_invoice", payment(100, "ach", "saved"), "recipient is not known"},
		{"fifty rules", fifty.String(), bank, "pay_invoice", pay(100, "ach", acme), "at most 50"},
		{"a rule that would still refuse", `{"max_payment_usd":1,"confirm":["pay_invoice"]}`, bank, "pay_invoice", pay(200, "ach", acme), "would still refuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := AlwaysAllow([]byte(tc.raw), tc.s, tc.op, tc.facts)
			if err == nil || !strings.Contains(err.Error(), tc.saying) || a.Policy != nil {
				t.Fatalf("%v (%s), want %q", err, a.Policy, tc.saying)
			}
		})
	}
}

// TestWidenedByOnlyAlwaysAllow: only the exact text AlwaysAllow makes of
// the old policy counts as widening it.
func TestWidenedByOnlyAlwaysAllow(t *testing.T) {
	t.Parallel()
	old := []byte(`{"confirm":["pay_invoice"]}`)
	a, err := AlwaysAllow(old, bank, "pay_invoice", pay(12000, "ach", acme))
	if err != nil {
		t.Fatal(err)
	}
	again, err := AlwaysAllow(a.Policy, bank, "pay_invoice", pay(5000, "wire", globex))
	if err != nil {
		t.Fatal(err)
	}
	if !WidenedBy(a.Policy, again.Policy, bank) || WidenedBy(old, again.Policy, bank) {
		t.Fatal("a second rule widens the policy with the first, not the one before")
	}
	for _, tc := range []struct {
		name    string
		updated string
	}{
		{"the same policy", string(old)},
		{"a rule asking first", strings.Replace(string(a.Policy), `"then":"allow"`, `"then":"ask"`, 1)},
		{"the allow rule without its payee", strings.Replace(string(a.Policy), `,"recipients":["`+acme+`"]`, ``, 1)},
		{"the last rule dropped", strings.Replace(string(a.Policy), `,{"when":{"op":"pay_invoice"},"then":"ask"}`, ``, 1)},
		{"confirm kept", strings.Replace(string(a.Policy), `"confirm":[]`, `"confirm":["pay_invoice"]`, 1)},
		{"a key added", strings.Replace(string(a.Policy), `{"confirm"`, `{"max_payment_usd":1,"confirm"`, 1)},
		{"the same text spaced", strings.Replace(string(a.Policy), `,`, `, `, 1)},
		{"not JSON", "{"},
	} {
		if tc.updated != string(a.Policy) && WidenedBy(old, []byte(tc.updated), bank) {
			t.Errorf("%s: counted as widening", tc.name)
		}
	}
}

// TestNamesConditions: GitHub's and Gmail's rule conditions name what the
// connector cannot list in advance; a write matches when it names at
// least one and every one is listed (ignoring case where the condition
// says so).
func TestNamesConditions(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"actions":["file_put","commit","issue_comment"],"confirm":["file_put","commit","issue_comment"],"rules":[
		{"when":{"op":["file_put","commit"],"repos":["Octo/App"],"branches":["main"],"paths":["README.md","docs/a.md"]},"then":"allow"},
		{"when":{"repos":["octo/secret","octo/vault"]},"then":"refuse"}]}`, repos)
	write := func(repo, branch string, paths ...string) Facts {
		return Facts{Names: map[string][]string{"repo": {repo}, "branch": {branch}, "path": paths}}
	}
	for _, tc := range []struct {
		name  string
		op    string
		facts Facts
		want  Outcome
	}{
		{"listed, the repository in another case", "file_put", write("octo/app", "main", "README.md"), Ask}, // confirm stands
		{"a commit of listed paths", "commit", write("octo/app", "main", "README.md", "docs/a.md"), Ask},
		{"a commit with a path not listed", "commit", write("octo/app", "main", "README.md", "go.mod"), Ask},
		{"a refused repository", "issue_comment", Facts{Names: map[string][]string{"repo": {"OCTO/VAULT"}}}, Refuse},
	} {
		if d := p.Decide(tc.op, tc.facts); d.Outcome != tc.want {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	d := p.Decide("issue_comment", Facts{Names: map[string][]string{"repo": {"octo/vault"}}})
	if d.Sentence != "the owner's rule 2 (repo one of 2 named) refuses this write" {
		t.Errorf("the agent is told %q (it must not learn the owner's other names)", d.Sentence)
	}
	// Without confirm, the allow rule decides; branches compare exactly.
	p = mustParse(t, `{"actions":["file_put"],"rules":[{"when":{"op":"file_put","repos":["octo/app"],"branches":["main"],"paths":["README.md"]},"then":"allow"},
		{"when":{"op":"file_put"},"then":"ask"}]}`, repos)
	if d := p.Decide("file_put", write("OCTO/APP", "main", "README.md")); d.Outcome != Allow || d.Rule != 1 {
		t.Errorf("the listed write: %+v", d)
	}
	if d := p.Decide("file_put", write("octo/app", "Main", "README.md")); d.Outcome != Ask {
		t.Errorf("another branch's case: %+v", d)
	}
	if d := p.Decide("file_put", write("octo/app", "main", "readme.md")); d.Outcome != Ask {
		t.Errorf("another path's case: %+v", d)
	}
	if d := p.Decide("file_put", Facts{Names: map[string][]string{"repo": {"octo/app"}, "branch": {"main"}}}); d.Code != "internal_error" {
		t.Errorf("a fact missing: %+v", d)
	}
	if d := p.Decide("file_put", Facts{Names: map[string][]string{"repo": {"octo/app"}, "branch": {"main"}, "path": {}}}); d.Outcome != Ask {
		t.Errorf("no path named matches no rule testing paths: %+v", d)
	}
	for _, bad := range []string{`{"rules":[{"when":{"repos":[]},"then":"allow"}]}`, `{"rules":[{"when":{"repos":"octo/app"},"then":"allow"}]}`,
		`{"rules":[{"when":{"repos":[""]},"then":"allow"}]}`, `{"rules":[{"when":{"repos":["a\u0000"]},"then":"allow"}]}`} {
		if p := Parse([]byte(bad), repos); p.Mode() != Unreadable || !strings.Contains(p.Sentence(), "non-empty list of names") {
			t.Errorf("%s: %s %q", bad, p.Mode(), p.Sentence())
		}
	}
	if p := Parse([]byte(`{"rules":[{"when":{"op":"issue_comment","paths":["a"]},"then":"allow"}]}`), repos); p.Mode() != Broken ||
		p.Sentence() != "rule 1 names a path, and issue_comment carries none" {
		t.Errorf("a path for a write without one: %s %q", p.Mode(), p.Sentence())
	}
}

// TestAlwaysAllowAMessage: Gmail's rule names every recipient and domain
// of the message; a message to more people, or to others, still asks.
func TestAlwaysAllowAMessage(t *testing.T) {
	t.Parallel()
	msg := func(to ...string) Facts {
		var domains []string
		for _, a := range to {
			domains = append(domains, a[strings.IndexByte(a, '@')+1:])
		}
		return Facts{Names: map[string][]string{"recipient": to, "domain": domains}}
	}
	a, err := AlwaysAllow([]byte(`{"confirm":["send"],"recipient_domains":["example.com"]}`), mail, "send", msg("dana@example.com", "eve@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(a.Policy, []byte(`"recipients":["dana@example.com","eve@example.com"],"domains":["example.com"]`)) {
		t.Fatalf("the policy %s", a.Policy)
	}
	p := mustParse(t, string(a.Policy), mail)
	for _, tc := range []struct {
		facts Facts
		want  Outcome
	}{
		{msg("dana@example.com"), Allow},
		{msg("Dana@Example.com", "eve@example.com"), Allow},
		{msg("dana@example.com", "frank@example.com"), Ask},
		{msg("mallory@example.org"), Ask},
	} {
		if d := p.Decide("send", tc.facts); d.Outcome != tc.want {
			t.Errorf("%v: %+v", tc.facts, d)
		}
	}
}

func TestCentsNumber(t *testing.T) {
	t.Parallel()
	for c, want := range map[Cents]string{0: "0", 1: "0.01", 10: "0.1", 12000: "120", 12050: "120.5", 12005: "120.05", 99999: "999.99"} {
		if got := c.number(); got != want {
			t.Errorf("%d: %q", c, got)
		}
		if back, err := ParseCents(want); err != nil || back != c {
			t.Errorf("%q reads back as %d %v", want, back, err)
		}
	}
}
