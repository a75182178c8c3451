package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestUnreadable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		schema Schema
		raw    string
		want   string
	}{
		// Not JSON, or not one JSON object.
		{"empty", mercury, ``, "the policy is empty"},
		{"only spaces", mercury, " \r\n\t", "the policy is empty"},
		{"cut short", mercury, `{"confirm":`, "the policy is not valid JSON (it ends too soon)"},
		{"cut short after spaces", mercury, `{"confirm": `, "the policy is not valid JSON (it ends too soon)"},
		{"trailing comma", mercury, `{"confirm":["send_invoice",]}`, "the policy is not valid JSON (at byte 28)"},
		{"control character in a string", mercury, "{\"confirm\":[\"a\x01\"]}", "the policy is not valid JSON (at byte 15)"},
		{"single quotes", mercury, `{'confirm':[]}`, "the policy is not valid JSON (at byte 2)"},
		{"two values", mercury, `{} {}`, "the policy is not valid JSON (at byte 4)"},
		{"invalid UTF-8", mercury, "{\"confirm\":[\"\xff\"]}", "the policy is not valid UTF-8"},
		{"byte order mark", mercury, "\ufeff{}", "the policy is not valid JSON (at byte 1)"},
		{"array", mercury, `[]`, "the policy is not a JSON object"},
		{"string", mercury, `"confirm"`, "the policy is not a JSON object"},
		{"null", mercury, `null`, "the policy is not a JSON object"},
		{"number", mercury, `1`, "the policy is not a JSON object"},
		{"nested too deeply", mercury, `{"rules":[{"when":{"op":[["pay_invoice"]]},"then":"ask"}]}`, "the policy is nested too deeply"},
		{"deep unknown member", mercury, `{"x":[[[[[[[[[[]]]]]]]]]]}`, "the policy is nested too deeply"},

		// Repeated members, at every level, however they are spelled.
		{"confirm twice", mercury, `{"confirm":[],"confirm":[]}`, "the policy names `confirm` twice"},
		{"confirm twice, escaped", mercury, `{"confirm":[],"conf\u0069rm":[]}`, "the policy names `confirm` twice"},
		{"key twice", gmail, `{"max_per_day":1,"max_per_day":2}`, "the policy names `max_per_day` twice"},
		{"member twice in a rule", mercury, `{"rules":[{"then":"ask","then":"allow"}]}`, "rule 1 names `then` twice"},
		{"member twice in a when", mercury, `{"rules":[{"then":"ask"},{"when":{"op":"pay_invoice","op":"cancel_invoice"},"then":"ask"}]}`, "rule 2's `when` names `op` twice"},
		{"confirm twice in two cases", mercury, `{"confirm":[],"CONFIRM":["pay_invoice"]}`, "the policy names `confirm` twice, in two cases (names are compared ignoring case)"},
		{"key twice in two cases", gmail, `{"max_per_day":1,"Max_Per_Day":2}`, "the policy names `max_per_day` twice, in two cases (names are compared ignoring case)"},
		{"key twice with a Kelvin sign", mercury, `{"rules":[],"\u212a":1,"k":2}`, "the policy names \"\\u212a\" twice, in two cases (names are compared ignoring case)"},
		{"member twice in a rule in two cases", mercury, `{"rules":[{"then":"ask","THEN":"allow"}]}`, "rule 1 names `then` twice, in two cases (names are compared ignoring case)"},
		{"member twice in a when in two cases", mercury, `{"rules":[{"when":{"max_usd":5,"MAX_USD":500},"then":"allow"}]}`, "rule 1's `when` names `max_usd` twice, in two cases (names are compared ignoring case)"},

		// Unknown members, at every level.
		{"unknown member", mercury, `{"confrim":["pay_invoice"]}`, "the policy has an unknown member `confrim`"},
		{"member in another case", mercury, `{"Confirm":["pay_invoice"]}`, "the policy writes `confirm` in another case"},
		{"rules in another case", mercury, `{"RULES":[]}`, "the policy writes `rules` in another case"},
		{"key in another case", gmail, `{"MAX_PER_DAY":3}`, "the policy writes `max_per_day` in another case"},
		{"member of a rule in another case", mercury, `{"rules":[{"Then":"ask"}]}`, "rule 1 writes `then` in another case"},
		{"when in another case", mercury, `{"rules":[{"then":"ask","WHEN":{}}]}`, "rule 1 writes `when` in another case"},
		{"op in another case", mercury, `{"rules":[{"when":{"OP":"pay_invoice"},"then":"ask"}]}`, "rule 1's `when` writes `op` in another case"},
		{"condition in another case", mercury, `{"rules":[{"when":{"Min_USD":5},"then":"ask"}]}`, "rule 1's `when` writes `min_usd` in another case"},
		{"condition with a Kelvin sign", mercury, "{\"rules\":[{\"when\":{\"max_usd\":5},\"then\":\"ask\"},{\"when\":{\"methods\":[\"ach\"],\"payee\":\"new\"},\"then\":\"ask\"}],\"confirm\":[],\"\u212a\":1}", `the policy has an unknown member "\u212a"`},
		{"another connector's key", mercury, `{"max_per_day":3}`, "the policy has an unknown member `max_per_day`"},
		{"rules where no conditions are declared", github, `{"rules":[]}`, "this connector's policy takes no `rules`"},
		{"unknown member of a rule", mercury, `{"rules":[{"then":"ask","else":"allow"}]}`, "rule 1 has an unknown member `else`"},
		{"unknown member of a when", mercury, `{"rules":[{"when":{"amount":5},"then":"ask"}]}`, "rule 1's `when` has an unknown member `amount`"},
		{"unknown member with a long name", mercury, `{"` + strings.Repeat("a", 40) + `":1}`, "the policy has an unknown member `" + strings.Repeat("a", 32) + "…`"},
		{"unknown member with a reordering character", mercury, "{\"conf\u202eirm\":1}", `the policy has an unknown member "conf\u202eirm"`},
		{"unknown member with a line break", mercury, `{"a\nb":1}`, `the policy has an unknown member "a\nb"`},
		{"unknown member, long and not plain", mercury, `{"` + strings.Repeat("é", 40) + `":1}`, `the policy has an unknown member "` + strings.Repeat(`\u00e9`, 6) + `..."`},
		{"unknown member of wide characters", mercury, `{"` + strings.Repeat("😀", 40) + `":1}`, `the policy has an unknown member "` + strings.Repeat(`\U0001f600`, 4) + `..."`},
		{"unknown member, long, plain at first", mercury, `{"` + strings.Repeat("a", 38) + `é":1}`, `the policy has an unknown member "` + strings.Repeat("a", 38) + `..."`},
		{"unknown empty member", mercury, `{"":1}`, `the policy has an unknown member ""`},

		// confirm.
		{"confirm a read", mercury, `{"confirm":["accounts"]}`, "`confirm` names `accounts`, a read: only writes belong there"},
		{"confirm a misspelling", mercury, `{"confirm":["pay_invoce"]}`, "`confirm` names `pay_invoce`, which is not one of this connector's writes"},
		{"confirm another case", mercury, `{"confirm":["Pay_Invoice"]}`, "`confirm` names `Pay_Invoice`, which is not one of this connector's writes"},
		{"confirm with a space", gmail, `{"confirm":["send "]}`, "`confirm` names \"send \", which is not one of this connector's writes"},
		{"confirm the empty name", gmail, `{"confirm":[""]}`, "`confirm` names \"\", which is not one of this connector's writes"},
		{"confirm a write after a read", gmail, `{"confirm":["send","message_get"]}`, "`confirm` names `message_get`, a read: only writes belong there"},
		{"confirm a string", gmail, `{"confirm":"send"}`, "`confirm` must be a list of write names"},
		{"confirm null", gmail, `{"confirm":null}`, "`confirm` must be a list of write names"},
		{"confirm an object", gmail, `{"confirm":{"send":true}}`, "`confirm` must be a list of write names"},
		{"confirm a number in the list", gmail, `{"confirm":["send",1]}`, "`confirm` must be a list of write names"},

		// The connector's own keys, of the wrong type or out of range.
		{"count as a string", gmail, `{"max_per_day":"5"}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count negative", gmail, `{"max_per_day":-1}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count negative zero", gmail, `{"max_per_day":-0}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count with a fraction", gmail, `{"max_per_day":1.5}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count with a zero fraction", gmail, `{"max_per_day":1.0}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count with an exponent", gmail, `{"max_per_day":1e2}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count too big", gmail, `{"max_per_day":1000000001}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count far too big", gmail, `{"max_per_day":99999999999999999999999}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count null", gmail, `{"max_per_day":null}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"count true", gmail, `{"max_per_day":true}`, "`max_per_day` must be a whole number from 0 to 1000000000"},
		{"amount as a string", mercury, `{"max_payment_usd":"500"}`, "`max_payment_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"amount with three decimals", mercury, `{"max_payment_usd":500.001}`, "`max_payment_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"amount negative", mercury, `{"max_payment_usd":-5}`, "`max_payment_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"amount with an exponent", mercury, `{"max_payment_usd":5e2}`, "`max_payment_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"amount too big", mercury, `{"max_spend_usd_month":1000000000000000}`, "`max_spend_usd_month` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"text as a number", gmail, `{"subject_prefix":1}`, "`subject_prefix` must be a string without control characters"},
		{"text with a line break", gmail, `{"subject_prefix":"[bot]\r\nBcc: x@example.com"}`, "`subject_prefix` must be a string without control characters"},
		{"text with a C1 control", gmail, `{"subject_prefix":"a\u0085b"}`, "`subject_prefix` must be a string without control characters"},
		{"list as a string", gmail, `{"recipients":"a@example.com"}`, "`recipients` must be a list of non-empty strings without control characters"},
		{"list with an empty string", gmail, `{"recipient_domains":["example.com",""]}`, "`recipient_domains` must be a list of non-empty strings without control characters"},
		{"list with a number", github, `{"repos":["a/b",1]}`, "`repos` must be a list of non-empty strings without control characters"},
		{"list with a tab", github, `{"repos":["a/b\t"]}`, "`repos` must be a list of non-empty strings without control characters"},
		{"list null", github, `{"repos":null}`, "`repos` must be a list of non-empty strings without control characters"},
		{"write list with a read", github, `{"actions":["pr_merge","pr_get"]}`, "`actions` names `pr_get`, a read: only writes belong there"},
		{"write list with a misspelling", github, `{"actions":["pr_mrege"]}`, "`actions` names `pr_mrege`, which is not one of this connector's writes"},

		// rules.
		{"rules an object", mercury, `{"rules":{"then":"ask"}}`, "`rules` must be a list of rules"},
		{"rules null", mercury, `{"rules":null}`, "`rules` must be a list of rules"},
		{"rule a string", mercury, `{"rules":["ask"]}`, "rule 1 must be an object with `when` and `then`"},
		{"rule without then", mercury, `{"rules":[{"then":"ask"},{"when":{}}]}`, "rule 2 has no `then`"},
		{"then deny", mercury, `{"rules":[{"then":"deny"}]}`, "rule 1's `then` must be allow, ask or refuse"},
		{"then in another case", mercury, `{"rules":[{"then":"Allow"}]}`, "rule 1's `then` must be allow, ask or refuse"},
		{"then a list", mercury, `{"rules":[{"then":["ask"]}]}`, "rule 1's `then` must be allow, ask or refuse"},
		{"then null", mercury, `{"rules":[{"then":null}]}`, "rule 1's `then` must be allow, ask or refuse"},
		{"when a list", mercury, `{"rules":[{"when":[],"then":"ask"}]}`, "rule 1's `when` must be an object"},
		{"when null", mercury, `{"rules":[{"when":null,"then":"ask"}]}`, "rule 1's `when` must be an object"},
		{"op a number", mercury, `{"rules":[{"when":{"op":1},"then":"ask"}]}`, "rule 1's `op` must be a write's name or a non-empty list of them"},
		{"op an empty list", mercury, `{"rules":[{"when":{"op":[]},"then":"ask"}]}`, "rule 1's `op` must be a write's name or a non-empty list of them"},
		{"op a list with a number", mercury, `{"rules":[{"when":{"op":["pay_invoice",2]},"then":"ask"}]}`, "rule 1's `op` must be a write's name or a non-empty list of them"},
		{"op null", mercury, `{"rules":[{"when":{"op":null},"then":"ask"}]}`, "rule 1's `op` must be a write's name or a non-empty list of them"},
		{"min as a string", mercury, `{"rules":[{"when":{"min_usd":"500"},"then":"ask"}]}`, "rule 1's `min_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"max negative", mercury, `{"rules":[{"when":{"max_usd":-1},"then":"ask"}]}`, "rule 1's `max_usd` must be an amount in dollars with at most two decimals, such as 500 or 499.99"},
		{"methods a string", mercury, `{"rules":[{"when":{"methods":"wire"},"then":"ask"}]}`, "rule 1's `methods` must be a non-empty list of ach, wire or check"},
		{"methods empty", mercury, `{"rules":[{"when":{"methods":[]},"then":"ask"}]}`, "rule 1's `methods` must be a non-empty list of ach, wire or check"},
		{"methods unknown", mercury, `{"rules":[{"when":{"methods":["ach","swift"]},"then":"ask"}]}`, "rule 1's `methods` must be a non-empty list of ach, wire or check"},
		{"methods in another case", mercury, `{"rules":[{"when":{"methods":["WIRE"]},"then":"ask"}]}`, "rule 1's `methods` must be a non-empty list of ach, wire or check"},
		{"payee unknown", mercury, `{"rules":[{"when":{"payee":"old"},"then":"ask"}]}`, "rule 1's `payee` must be saved or new"},
		{"payee a list", mercury, `{"rules":[{"when":{"payee":["new"]},"then":"ask"}]}`, "rule 1's `payee` must be saved or new"},
		{"a later rule", mercury, `{"rules":[{"then":"ask"},{"then":"ask"},{"when":{"payee":"x"},"then":"ask"}]}`, "rule 3's `payee` must be saved or new"},
		{"the first mistake decides", mercury, `{"confirm":["nope"],"bogus":1}`, "`confirm` names `nope`, which is not one of this connector's writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Parse([]byte(tc.raw), tc.schema)
			if p.Mode() != Unreadable || p.Sentence() != tc.want {
				t.Fatalf("got %s %q\nwant unreadable %q", p.Mode(), p.Sentence(), tc.want)
			}
			assertRefusesEveryWrite(t, p, tc.schema, "policy_unreadable")
		})
	}
}

func TestBroken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		raw  string
		want string
	}{
		{"amount on a write that carries none", `{"rules":[{"when":{"op":"cancel_invoice","max_usd":5},"then":"ask"}]}`,
			"rule 1 bounds an amount, and cancel_invoice carries none"},
		{"minimum alone on a write that carries none", `{"rules":[{"when":{"op":"add_recipient","min_usd":5},"then":"refuse"}]}`,
			"rule 1 bounds an amount, and add_recipient carries none"},
		{"method on a write that carries only an amount", `{"rules":[{"when":{"op":"send_invoice","max_usd":5,"methods":["ach"]},"then":"ask"}]}`,
			"rule 1 names a method, and send_invoice carries none"},
		{"payee on one write of a list", `{"rules":[{"when":{"op":["pay_invoice","cancel_invoice"],"payee":"new"},"then":"ask"}]}`,
			"rule 1 names a payee, and cancel_invoice carries none"},
		{"a later rule", `{"rules":[{"when":{"op":"pay_invoice"},"then":"ask"},{"when":{"op":"add_recipient","methods":["wire"]},"then":"ask"}]}`,
			"rule 2 names a method, and add_recipient carries none"},
		{"op names a read", `{"rules":[{"when":{"op":"pay_invoice"},"then":"ask"},{"when":{"op":"accounts"},"then":"refuse"}]}`,
			"rule 2's `op` names `accounts`, a read: only writes belong there"},
		{"op names a misspelling in a list", `{"rules":[{"when":{"op":["pay_invoice","cancel_invoce"]},"then":"ask"}]}`,
			"rule 1's `op` names `cancel_invoce`, which is not one of this connector's writes"},
		{"op names another case", `{"rules":[{"when":{"op":"PAY_INVOICE"},"then":"ask"}]}`,
			"rule 1's `op` names `PAY_INVOICE`, which is not one of this connector's writes"},
		{"op names nothing", `{"rules":[{"when":{"op":""},"then":"ask"}]}`,
			"rule 1's `op` names \"\", which is not one of this connector's writes"},
		{"minimum above maximum", `{"rules":[{"when":{"op":"pay_invoice","min_usd":500,"max_usd":100},"then":"ask"}]}`,
			"rule 1's `min_usd` is above its `max_usd`, so it never matches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Parse([]byte(tc.raw), mercury)
			if p.Mode() != Broken || p.Sentence() != tc.want {
				t.Fatalf("got %s %q\nwant broken %q", p.Mode(), p.Sentence(), tc.want)
			}
			assertRefusesEveryWrite(t, p, mercury, "policy_unreadable")
		})
	}
}

// assertRefusesEveryWrite checks that a policy that is not OK refuses each of
// the schema's writes with its own sentence, and holds nothing.
func assertRefusesEveryWrite(t *testing.T, p *Policy, s Schema, code string) {
	t.Helper()
	for _, w := range s.Writes {
		d := p.Decide(w, payment(1, "ach", "saved"))
		want := Decision{Outcome: Refuse, Code: code, Sentence: p.Sentence()}
		if d != want {
			t.Errorf("Decide(%s) = %+v, want %+v", w, d, want)
		}
		if p.Asks(w) {
			t.Errorf("Asks(%s) on a policy that is not OK", w)
		}
	}
	for k := range s.Keys {
		_, c := p.Count(k)
		_, a := p.Amount(k)
		_, x := p.Text(k)
		_, l := p.List(k)
		if c || a || x || l {
			t.Errorf("key %s is readable on a policy that is not OK", k)
		}
	}
}

func TestOK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		schema Schema
		raw    string
	}{
		{"empty", mercury, `{}`},
		{"empty with spaces", mercury, " \n\t{ }\r\n"},
		{"empty confirm", gmail, `{"confirm":[]}`},
		{"confirm twice the same", gmail, `{"confirm":["send","send"]}`},
		{"empty rules", mercury, `{"rules":[]}`},
		{"rule without when", mercury, `{"rules":[{"then":"ask"}]}`},
		{"rule with an empty when", mercury, `{"rules":[{"when":{},"then":"refuse"}]}`},
		{"then before when", mercury, `{"rules":[{"then":"ask","when":{"op":"cancel_invoice"}}]}`},
		{"rule without op tests a condition", mercury, `{"rules":[{"when":{"max_usd":10},"then":"ask"}]}`},
		{"op repeated in a list", mercury, `{"rules":[{"when":{"op":["pay_invoice","pay_invoice"]},"then":"ask"}]}`},
		{"minimum equal to maximum", mercury, `{"rules":[{"when":{"op":"pay_invoice","min_usd":5,"max_usd":5.00},"then":"ask"}]}`},
		{"unicode in a list", gmail, `{"recipients":["zoë@example.com"]}`},
		{"probe", probe, `{"confirm":["guess_start"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Parse([]byte(tc.raw), tc.schema)
			if p.Mode() != OK || p.Sentence() != "" {
				t.Fatalf("got %s %q, want ok", p.Mode(), p.Sentence())
			}
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	p := Parse([]byte(`{
		"confirm": ["send"],
		"recipient_domains": ["example.com", "example.org"],
		"recipients": [],
		"max_per_day": 0,
		"max_recipients": 1000000000,
		"subject_prefix": "[bot] "
	}`), gmail)
	if p.Mode() != OK {
		t.Fatalf("%s %q", p.Mode(), p.Sentence())
	}
	if !p.Asks("send") || p.Asks("message_get") || p.Asks("Send") {
		t.Error("Asks is wrong")
	}
	if got, ok := p.List("recipient_domains"); !ok || !slices.Equal(got, []string{"example.com", "example.org"}) {
		t.Errorf("recipient_domains = %q, %v", got, ok)
	}
	if got, ok := p.List("recipients"); !ok || got == nil || len(got) != 0 {
		t.Errorf("recipients = %#v, %v; want a set, empty list", got, ok)
	}
	if got, ok := p.Count("max_per_day"); !ok || got != 0 {
		t.Errorf("max_per_day = %d, %v", got, ok)
	}
	if got, ok := p.Count("max_recipients"); !ok || got != MaxCount {
		t.Errorf("max_recipients = %d, %v", got, ok)
	}
	if got, ok := p.Count("max_attachment_kb"); ok || got != 0 {
		t.Errorf("max_attachment_kb (not set) = %d, %v", got, ok)
	}
	if got, ok := p.Text("subject_prefix"); !ok || got != "[bot] " {
		t.Errorf("subject_prefix = %q, %v", got, ok)
	}
	// A getter of another kind, or of an undeclared key, finds nothing.
	if _, ok := p.Text("max_per_day"); ok {
		t.Error("Text read a Count key")
	}
	if _, ok := p.Count("subject_prefix"); ok {
		t.Error("Count read a Text key")
	}
	if _, ok := p.Amount("max_per_day"); ok {
		t.Error("Amount read a Count key")
	}
	if _, ok := p.List("nothing"); ok {
		t.Error("List read an undeclared key")
	}
	// The list returned is the caller's own.
	got, _ := p.List("recipient_domains")
	got[0] = "evil.example"
	if again, _ := p.List("recipient_domains"); again[0] != "example.com" {
		t.Error("List handed out the policy's own slice")
	}

	m := Parse([]byte(`{"max_payment_usd": 2500.5, "max_spend_usd_month": 0}`), mercury)
	if c, ok := m.Amount("max_payment_usd"); !ok || c != 250050 {
		t.Errorf("max_payment_usd = %d, %v", c, ok)
	}
	if c, ok := m.Amount("max_spend_usd_month"); !ok || c != 0 {
		t.Errorf("max_spend_usd_month = %d, %v", c, ok)
	}

	g := Parse([]byte(`{"actions":["pr_merge","issue_comment"],"repos":["alice/site"],"max_writes_per_day":20}`), github)
	if a, ok := g.List("actions"); !ok || !slices.Equal(a, []string{"pr_merge", "issue_comment"}) {
		t.Errorf("actions = %q, %v", a, ok)
	}
}

func TestRuleLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rules int
		mode  Mode
	}{{0, OK}, {1, OK}, {MaxRules, OK}, {MaxRules + 1, Unreadable}, {500, Unreadable}} {
		raw := `{"rules":[` + strings.Repeat(`{"when":{"op":"pay_invoice"},"then":"ask"},`, tc.rules)
		raw = strings.TrimSuffix(raw, ",") + `]}`
		p := Parse([]byte(raw), mercury)
		if p.Mode() != tc.mode {
			t.Errorf("%d rules: %s %q, want %s", tc.rules, p.Mode(), p.Sentence(), tc.mode)
		}
		if tc.mode == Unreadable {
			want := fmt.Sprintf("the policy has %d rules; at most 50 are allowed", tc.rules)
			if p.Sentence() != want {
				t.Errorf("%d rules: %q, want %q", tc.rules, p.Sentence(), want)
			}
		}
	}
}

func TestSizeLimit(t *testing.T) {
	t.Parallel()
	// sized returns a policy of exactly n bytes that is readable at any size.
	sized := func(n int) []byte {
		head, tail := `{"confirm":["send"]`, `}`
		return []byte(head + strings.Repeat(" ", n-len(head)-len(tail)) + tail)
	}
	if raw := sized(MaxBytes); len(raw) != 65536 || Parse(raw, gmail).Mode() != OK {
		t.Fatalf("a policy of exactly 64 KiB is not OK: %q", Parse(raw, gmail).Sentence())
	}
	raw := sized(MaxBytes + 1)
	p := Parse(raw, gmail)
	if p.Mode() != Unreadable || p.Sentence() != "the policy is 65537 bytes; at most 65536 are allowed" {
		t.Fatalf("a policy of 64 KiB + 1: %s %q", p.Mode(), p.Sentence())
	}
	// The hash still covers the bytes as stored.
	sum := sha256.Sum256(raw)
	if p.Hash() != hex.EncodeToString(sum[:]) {
		t.Fatal("hash of an oversized policy")
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want string // computed with sha256sum, outside Go
	}{
		// The contract vectors' policy_hash.
		{`{}`, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
		{`{"confirm":["send"]}`, "f555628eecbfab0d003eff9be53b3abffc9c7567d458a1163c35bba28a49ba13"},
		// The empty policy is unreadable, and still has a hash.
		{``, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	} {
		if got := Parse([]byte(tc.raw), gmail).Hash(); got != tc.want {
			t.Errorf("Hash(%q) = %s, want %s", tc.raw, got, tc.want)
		}
	}
	// The bytes as stored, not a canonical form: spacing changes the hash.
	if Parse([]byte(`{ }`), gmail).Hash() == Parse([]byte(`{}`), gmail).Hash() {
		t.Error("the hash ignores the stored bytes")
	}
}

func TestParseKeepsNoReferenceToInput(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"recipients":["a@example.com"],"confirm":["send"]}`)
	p := Parse(raw, gmail)
	copy(raw, bytes.Repeat([]byte("x"), len(raw)))
	if got, _ := p.List("recipients"); got[0] != "a@example.com" || !p.Asks("send") {
		t.Fatal("the policy changed with the caller's bytes")
	}
}
