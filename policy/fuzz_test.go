package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`{}`,
	`{"confirm":["pay_invoice","cancel_invoice"]}`,
	`{"confirm":["send"],"recipient_domains":["example.com"],"max_per_day":5,"subject_prefix":"[bot] "}`,
	`{"actions":["pr_merge"],"repos":["alice/site"],"max_writes_per_day":20,"confirm":["pr_merge"]}`,
	`{"max_payment_usd":2500.5,"rules":[
		{"when":{"op":"pay_invoice","max_usd":500,"methods":["ach"],"payee":"saved"},"then":"allow"},
		{"when":{"op":["pay_invoice","cancel_invoice"]},"then":"ask"}]}`,
	`{"rules":[{"when":{"min_usd":1000},"then":"refuse"},{"when":{"payee":"new"},"then":"ask"},{"then":"allow"}]}`,
	`{"rules":[{"when":{"op":"cancel_invoice","max_usd":5},"then":"ask"}]}`,
	`{"rules":[{"when":{"op":"pay_invoice","min_usd":500,"max_usd":100},"then":"ask"}]}`,
	`{"confirm":[],"conf\u0069rm":[]}`,
	`{"rules":[{"when":{"op":[["pay_invoice"]]},"then":"ask"}]}`,
	`{"confirm":["accounts"]}`,
	"{\"conf\u202eirm\":1}",
	`{"rules":[{"then":"ask","then":"allow"}]}`,
	`[]`,
	``,
	`{"confirm":`,
}

// FuzzParse reads any bytes as a policy of each test connector: it never
// panics, always ends in one of the three modes with a short, clean
// sentence, and an OK policy decides every write the same way twice, never
// more loosely than its `confirm`.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), int64(50000), uint8(0), uint8(0))
	}
	f.Add([]byte(`{"rules":[{"when":{"op":"pay_invoice","methods":["wire"]},"then":"refuse"}]}`), int64(1), uint8(1), uint8(1))
	methods := []string{"ach", "wire", "check"}
	payees := []string{"saved", "new"}
	f.Fuzz(func(t *testing.T, raw []byte, amount int64, method, payee uint8) {
		sum := sha256.Sum256(raw)
		for _, s := range []Schema{mercury, github, gmail, probe} {
			p := Parse(raw, s)
			checkParsed(t, p, raw, hex.EncodeToString(sum[:]))
			again := Parse(raw, s)
			if again.Mode() != p.Mode() || again.Sentence() != p.Sentence() {
				t.Fatalf("two readings differ: %s %q, then %s %q", p.Mode(), p.Sentence(), again.Mode(), again.Sentence())
			}
			facts := Facts{
				Amounts: map[string]Cents{"amount": Cents(amount)},
				Words:   map[string]string{"method": methods[int(method)%len(methods)], "payee": payees[int(payee)%len(payees)]},
			}
			for _, op := range s.Writes {
				d := p.Decide(op, facts)
				checkDecision(t, p, op, d)
				if d2 := again.Decide(op, facts); d2 != d {
					t.Fatalf("Decide(%s) differs between readings: %+v, %+v", op, d, d2)
				}
				if d2 := p.Decide(op, facts); d2 != d {
					t.Fatalf("Decide(%s) differs between calls: %+v, %+v", op, d, d2)
				}
			}
		}
	})
}

func checkParsed(t *testing.T, p *Policy, raw []byte, hash string) {
	t.Helper()
	if p.Hash() != hash {
		t.Fatalf("Hash = %s, want %s", p.Hash(), hash)
	}
	switch p.Mode() {
	case OK:
		if p.Sentence() != "" {
			t.Fatalf("an OK policy has a sentence: %q", p.Sentence())
		}
		if len(raw) > MaxBytes {
			t.Fatalf("an OK policy of %d bytes", len(raw))
		}
	case Unreadable, Broken:
		s := p.Sentence()
		if s == "" || len(s) > 200 || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
			t.Fatalf("sentence %q", s)
		}
		for _, r := range s {
			if r > unicode.MaxASCII && r != '…' {
				t.Fatalf("sentence %q holds %U", s, r)
			}
		}
	default:
		t.Fatalf("mode %q", p.Mode())
	}
}

func checkDecision(t *testing.T, p *Policy, op string, d Decision) {
	t.Helper()
	if p.Mode() != OK {
		if d != (Decision{Outcome: Refuse, Code: "policy_unreadable", Sentence: p.Sentence()}) {
			t.Fatalf("a %s policy decided %+v", p.Mode(), d)
		}
		return
	}
	if d.Rule < 0 || d.Rule > len(p.rules) {
		t.Fatalf("Decide(%s) names rule %d of %d", op, d.Rule, len(p.rules))
	}
	switch d.Outcome {
	case Allow, Ask:
		if d.Code != "" || d.Sentence != "" {
			t.Fatalf("Decide(%s) = %+v", op, d)
		}
		if p.Asks(op) && d.Outcome == Allow {
			t.Fatalf("a rule widened %s: %+v", op, d)
		}
	case Refuse:
		if d.Code != "policy_denied" || d.Rule == 0 || !strings.HasPrefix(d.Sentence, "the owner's rule ") {
			t.Fatalf("Decide(%s) = %+v", op, d)
		}
	default:
		t.Fatalf("Decide(%s) = %+v", op, d)
	}
}

var centsPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$`)

// FuzzParseCents checks ParseCents against a regular expression of the
// format and against exact rational arithmetic.
func FuzzParseCents(f *testing.F) {
	for _, s := range []string{"0", "500", "499.99", "0.5", "1e3", "-1", "01", "1.234", "999999999999999.99", "1000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCents(s)
		if (err == nil) != centsPattern.MatchString(s) {
			t.Fatalf("ParseCents(%q) = %d, %v; the pattern says otherwise", s, c, err)
		}
		if err != nil {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		r.Mul(r, big.NewRat(100, 1))
		if !r.IsInt() || r.Num().Int64() != int64(c) {
			t.Fatalf("ParseCents(%q) = %d, want %s", s, c, r.RatString())
		}
		if back, err := ParseCents(c.String()); err != nil || back != c {
			t.Fatalf("ParseCents(%q) = %d, %v; want %d", c.String(), back, err, c)
		}
	})
}
