package policy_test

import (
	"context"
	"fmt"
	"time"

	"countersign/policy"
)

// A connector declares its schema once, then reads each project's policy and
// asks it about each write its other checks allowed.
func Example() {
	schema := policy.Schema{
		Writes: []string{"pay_invoice", "cancel_invoice"},
		Reads:  []string{"accounts"},
		Keys:   map[string]policy.KeyKind{"max_payment_usd": policy.Amount},
		Conditions: []policy.Condition{
			policy.AmountRange("amount", "min_usd", "max_usd"),
			policy.AnyOf("method", "methods", "ach", "wire"),
			policy.Equals("payee", "payee", "saved", "new"),
		},
		Carries: map[string][]string{"pay_invoice": {"amount", "method", "payee"}},
		Nouns:   map[string]string{"pay_invoice": "payment"},
	}
	p := policy.Parse([]byte(`{
		"max_payment_usd": 20000,
		"rules": [
			{"when": {"op": "pay_invoice", "min_usd": 10000, "methods": ["wire"]}, "then": "refuse"},
			{"when": {"op": "pay_invoice", "max_usd": 500, "methods": ["ach"], "payee": "saved"}, "then": "allow"},
			{"when": {"op": ["pay_invoice", "cancel_invoice"]}, "then": "ask"}
		]
	}`), schema)
	fmt.Println(p.Mode())

	pay := func(dollars, method, payee string) policy.Facts {
		amount, _ := policy.ParseCents(dollars)
		return policy.Facts{
			Amounts: map[string]policy.Cents{"amount": amount},
			Words:   map[string]string{"method": method, "payee": payee},
		}
	}
	for _, f := range []policy.Facts{
		pay("120", "ach", "saved"),
		pay("120", "ach", "new"),
		pay("15000", "wire", "saved"),
	} {
		d := p.Decide("pay_invoice", f)
		fmt.Println(d.Outcome, "by rule", d.Rule)
		if d.Outcome == policy.Refuse {
			fmt.Println(d.Code + ": " + d.Sentence)
		}
	}

	// The day's count of direct writes, bounded by a daily limit.
	var counts policy.MemoryCounter
	key := policy.Key{Owner: "alice.near", Project: "4f1c2b9e", Agent: "bot.near",
		Day: policy.Day(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))}
	ok, _ := counts.Reserve(context.Background(), key, policy.Direct, 1)
	again, _ := counts.Reserve(context.Background(), key, policy.Direct, 1)
	fmt.Println(key.Day, ok, again)

	// Output:
	// ok
	// allow by rule 2
	// ask by rule 3
	// refuse by rule 1
	// policy_denied: the owner's rule 1 (pay_invoice, amount at least $10,000.00, method wire) refuses this payment
	// 2026-11-29 true false
}

// A name in `confirm` that is not one of the connector's writes makes the
// policy unreadable, and every write is refused.
func ExampleParse_unreadable() {
	p := policy.Parse([]byte(`{"confirm": ["Send"]}`), policy.Schema{Writes: []string{"send"}})
	d := p.Decide("send", policy.Facts{})
	fmt.Println(p.Mode())
	fmt.Println(d.Code + ": " + d.Sentence)
	// Output:
	// unreadable
	// policy_unreadable: `confirm` names `Send`, which is not one of this connector's writes
}
