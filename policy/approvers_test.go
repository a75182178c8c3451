package policy

import (
	"fmt"
	"strings"
	"testing"
)

// `approvers` is read for every connector; what is wrong with it makes the
// policy unreadable, with a sentence naming what.
func TestApproversUnreadable(t *testing.T) {
	t.Parallel()
	ten := `["a1.near","a2.near","a3.near","a4.near","a5.near","a6.near","a7.near","a8.near","a9.near","a10.near"]`
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"not an object", `{"approvers":["bob.near"]}`, "`approvers` must be {\"accounts\": [NEAR account ids], \"threshold\": a number}"},
		{"no threshold", `{"approvers":{"accounts":["bob.near"]}}`, "`approvers` must be {\"accounts\": [NEAR account ids], \"threshold\": a number}"},
		{"no accounts", `{"approvers":{"threshold":1}}`, "`approvers` must be {\"accounts\": [NEAR account ids], \"threshold\": a number}"},
		{"accounts not a list", `{"approvers":{"accounts":"bob.near","threshold":1}}`, "`approvers`' `accounts` must be a list of NEAR account ids"},
		{"an account not a string", `{"approvers":{"accounts":[1],"threshold":1}}`, "`approvers`' `accounts` must be a list of NEAR account ids"},
		{"not an account id", `{"approvers":{"accounts":["Bob.near"],"threshold":1}}`, "`approvers` account 1 is not a NEAR account id"},
		{"an account twice", `{"approvers":{"accounts":["bob.near","bob.near"],"threshold":2}}`, "`approvers` names bob.near twice"},
		{"ten accounts", `{"approvers":{"accounts":` + ten + `,"threshold":2}}`, "`approvers` names 10 accounts; at most 9 besides the owner"},
		{"threshold 0", `{"approvers":{"accounts":["bob.near"],"threshold":0}}`, "`approvers`' threshold is 0; it is from 1 to 2"},
		{"threshold past everyone", `{"approvers":{"accounts":["bob.near"],"threshold":3}}`, "`approvers`' threshold is 3; it is from 1 to 2"},
		{"threshold a fraction", `{"approvers":{"accounts":["bob.near"],"threshold":1.5}}`, "`approvers`' `threshold` must be a whole number"},
		{"threshold a string", `{"approvers":{"accounts":["bob.near"],"threshold":"2"}}`, "`approvers`' `threshold` must be a whole number"},
		{"unknown member", `{"approvers":{"accounts":["bob.near"],"threshold":1,"quorum":2}}`, "`approvers` has an unknown member `quorum`"},
		{"member in another case", `{"approvers":{"Accounts":["bob.near"],"threshold":1}}`, "`approvers` writes `accounts` in another case"},
		{"member twice", `{"approvers":{"accounts":[],"threshold":1,"threshold":1}}`, "`approvers` names `threshold` twice"},
		{"approvers in another case", `{"Approvers":{"accounts":["bob.near"],"threshold":1}}`, "the policy writes `approvers` in another case"},
		{"approvers twice", `{"approvers":{"accounts":[],"threshold":1},"approvers":{"accounts":[],"threshold":1}}`, "the policy names `approvers` twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range []Schema{mercury, gmail} {
				p := Parse([]byte(tc.raw), s)
				if p.Mode() != Unreadable || !strings.HasPrefix(p.Sentence(), tc.want) {
					t.Fatalf("%s %q: %q, want unreadable %q", p.Mode(), tc.raw, p.Sentence(), tc.want)
				}
				if a := p.For("alice.near"); a.Shared() || a.Threshold != 1 {
					t.Fatalf("an unreadable policy's approvers: %+v", a)
				}
			}
		})
	}
}

func TestApproversFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw string
		want      string // For("alice.near") as "k of [accounts]"
		text      string // the explanation's sentence ("" for none)
	}{
		{"none", `{"confirm":["pay_invoice"]}`, "1 of []", ""},
		{"empty", `{"approvers":{"accounts":[],"threshold":1}}`, "1 of []", ""},
		{"2 of 3", `{"confirm":["pay_invoice"],"approvers":{"accounts":["carol.near","bob.near"],"threshold":2}}`, "2 of [carol.near bob.near]",
			"A write that asks waits for 2 of you, carol.near and bob.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone."},
		{"each of 2", `{"approvers":{"accounts":["bob.near"],"threshold":2}}`, "2 of [bob.near]",
			"A write that asks waits for each of you and bob.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone."},
		// The owner listed (the inbox refuses it) counts once, and the
		// threshold is kept: never fewer approvals than the policy says.
		{"the owner listed", `{"approvers":{"accounts":["alice.near","bob.near"],"threshold":3}}`, "3 of [bob.near]",
			"A write that asks waits for each of you, alice.near and bob.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone."},
		{"broken", `{"approvers":{"accounts":["bob.near"],"threshold":2},"rules":[{"when":{"op":"add_recipient","min_usd":5},"then":"ask"}]}`, "1 of []", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Parse([]byte(tc.raw), mercury)
			a := p.For("alice.near")
			if got := fmt.Sprintf("%d of %v", a.Threshold, a.Accounts); got != tc.want || a.Owner != "alice.near" {
				t.Fatalf("For = %s (%q), want %s", got, a.Owner, tc.want)
			}
			e := p.Explain()
			switch {
			case tc.text == "" && e.Approvers != nil:
				t.Fatalf("explained approvers %+v", e.Approvers)
			case tc.text != "" && (e.Approvers == nil || e.Approvers.Text != tc.text):
				t.Fatalf("explained approvers %+v, want %q", e.Approvers, tc.text)
			}
		})
	}
}
