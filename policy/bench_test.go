package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

const mercuryPolicy = `{"max_payment_usd":2500,"rules":[
	{"when":{"op":"pay_invoice","max_usd":500,"methods":["ach"],"payee":"saved"},"then":"allow"},
	{"when":{"op":["pay_invoice","cancel_invoice"]},"then":"ask"}]}`

// fiftyRules is the longest rule list, none of which matches a $1 ACH
// payment to a saved payee, so that Decide reads every rule.
func fiftyRules() string {
	rules := make([]string, MaxRules)
	for i := range rules {
		rules[i] = fmt.Sprintf(`{"when":{"op":["pay_invoice"],"min_usd":%d.50,"max_usd":%d,"methods":["wire","check"],"payee":"new"},"then":"refuse"}`, i, 10000+i)
	}
	return `{"rules":[` + strings.Join(rules, ",") + `]}`
}

// largestList is a policy of nearly 64 KiB: one long list of recipients.
func largestList() string {
	var b strings.Builder
	b.WriteString(`{"recipients":[`)
	for i := 0; b.Len() < MaxBytes-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"person%d@example.com"`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func benchParse(b *testing.B, raw string, s Schema) {
	data := []byte(raw)
	if p := Parse(data, s); p.Mode() != OK {
		b.Fatalf("%s: %s", p.Mode(), p.Sentence())
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(data, s)
	}
}

func BenchmarkParseEmpty(b *testing.B)       { benchParse(b, `{}`, mercury) }
func BenchmarkParseMercury(b *testing.B)     { benchParse(b, mercuryPolicy, mercury) }
func BenchmarkParseFiftyRules(b *testing.B)  { benchParse(b, fiftyRules(), mercury) }
func BenchmarkParseLargestList(b *testing.B) { benchParse(b, largestList(), gmail) }

func BenchmarkDecideMercury(b *testing.B) {
	p := mustParse(b, mercuryPolicy, mercury)
	facts := payment(12000, "ach", "saved")
	b.ReportAllocs()
	for b.Loop() {
		p.Decide("pay_invoice", facts)
	}
}

func BenchmarkDecideFiftyRules(b *testing.B) {
	p := mustParse(b, fiftyRules(), mercury)
	facts := payment(100, "ach", "saved")
	if d := p.Decide("pay_invoice", facts); d != (Decision{Outcome: Allow}) {
		b.Fatalf("%+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Decide("pay_invoice", facts)
	}
}

func BenchmarkMemoryCounterReserve(b *testing.B) {
	var c MemoryCounter
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Reserve(ctx, day, Direct, MaxCount); err != nil {
				b.Error(err)
			}
		}
	})
}
