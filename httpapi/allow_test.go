package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"countersign/approval"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
	"countersign/inbox"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestAlwaysAllowAtTheDoor: POST /inbox/projects/{name}/allow answers the
// exact project text "Always allow this" sets, and changes nothing; a
// project put with it keeps the policy before as one it only widens, a
// second one on top keeps both, the same text again keeps them, and any
// other change forgets them.
func TestAlwaysAllowAtTheDoor(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(mercury.New(mercury.Config{BaseURL: "http://127.0.0.1:1", Egress: egress.Options{AllowPrivate: true}})))
	const base = `{"confirm": ["pay_invoice", "cancel_invoice"], "max_payment_usd": 5000}`
	w.PutProject("bank", "mercury", base, nil)
	owner := w.Owner
	acme := fmt.Sprintf(`{"op": "pay_invoice", "max_usd": 120, "methods": ["ach"], "payee": "saved", "recipients": [%q]}`, mercurytest.AcmeID)

	cases := []struct {
		name    string
		project string
		body    any
		saying  string
	}{
		{"no such project", "nope", map[string]any{"when": json.RawMessage(acme)}, "no such project"},
		{"when is not an object", "bank", map[string]any{"when": "pay_invoice"}, "`when` is the JSON object"},
		{"when left out", "bank", map[string]any{}, "`when` is the JSON object"},
		{"a connector without conditions", "ledger", map[string]any{"when": json.RawMessage(`{"op": "pay"}`)}, "takes no rules"},
		{"a condition the write does not carry", "bank", map[string]any{"when": json.RawMessage(`{"op": "cancel_invoice", "max_usd": 1}`)}, "`when` is not"},
		{"a write carrying nothing", "bank", map[string]any{"when": json.RawMessage(`{"op": "cancel_invoice"}`)}, "would allow every cancellation"},
		{"a payee left out", "bank", map[string]any{"when": json.RawMessage(`{"op": "pay_invoice", "max_usd": 120, "methods": ["ach"], "payee": "saved"}`)}, "recipient is not known"},
		{"two methods", "bank", map[string]any{"when": json.RawMessage(`{"op": "pay_invoice", "max_usd": 120, "methods": ["ach", "wire"], "payee": "saved", "recipients": ["x"]}`)}, "`when` is not"},
		{"an amount as a minimum", "bank", map[string]any{"when": json.RawMessage(`{"op": "pay_invoice", "min_usd": 120, "methods": ["ach"], "payee": "saved", "recipients": ["x"]}`)}, "`when` is not"},
		{"not a write", "bank", map[string]any{"when": json.RawMessage(`{"op": "accounts"}`)}, "not one of this connector's writes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postJSON(t, owner.Client, "/inbox/projects/"+tc.project+"/allow", tc.body)
			msg, _ := body["error"].(string)
			if status != 400 || body["reason"] != "invalid_request" || !strings.Contains(msg, tc.saying) {
				t.Fatalf("%d %v, want 400 saying %q", status, body, tc.saying)
			}
		})
	}
	widens := func() []string {
		t.Helper()
		var p store.Project
		if err := w.DB.Tx(ctx, func(tx store.Tx) (err error) {
			p, err = tx.Project(ctx, owner.Account, "bank")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return p.PolicyWidens
	}
	put := func(text string) {
		t.Helper()
		conf, err := owner.Confirm(approval.ActionSetProject("bank", text))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := owner.Client.PutProject(ctx, "bank", text, conf); err != nil {
			t.Fatal(err)
		}
	}
	first, err := owner.Client.ProposeAllow(ctx, "bank", json.RawMessage(acme))
	if err != nil {
		t.Fatal(err)
	}
	wantPolicy := `{"confirm":["cancel_invoice"],"max_payment_usd":5000,"rules":[` +
		`{"when":{"op":"pay_invoice","max_usd":120,"methods":["ach"],"payee":"saved","recipients":["` + mercurytest.AcmeID + `"]},"then":"allow"},` +
		`{"when":{"op":"pay_invoice"},"then":"ask"}]}`
	if first.Policy != wantPolicy || first.Project != `{"connector":"mercury","policy":`+wantPolicy+`,"agents":["`+w.Agent+`"]}` || !first.Moved {
		t.Fatalf("the proposal %+v", first)
	}
	if got := widens(); got != nil {
		t.Fatalf("a proposal changed the project: %v", got)
	}
	put(first.Project)
	if got := widens(); !slices.Equal(got, []string{sha(base)}) {
		t.Fatalf("after Always allow the project widens %v", got)
	}
	second, err := owner.Client.ProposeAllow(ctx, "bank", json.RawMessage(fmt.Sprintf(`{"op": "pay_invoice", "max_usd": 75.5, "methods": ["wire"], "payee": "saved", "recipients": [%q]}`, mercurytest.GlobexID)))
	if err != nil {
		t.Fatal(err)
	}
	if second.Moved {
		t.Fatalf("a second rule moved the write out of confirm again: %+v", second)
	}
	put(second.Project)
	if got := widens(); !slices.Equal(got, []string{sha(first.Policy), sha(base)}) {
		t.Fatalf("after a second Always allow the project widens %v", got)
	}
	put(second.Project) // the same text, confirmed again
	if got := widens(); !slices.Equal(got, []string{sha(first.Policy), sha(base)}) {
		t.Fatalf("after the same text again the project widens %v", got)
	}
	other, _ := inbox.ProjectText("mercury", []byte(second.Policy[:len(second.Policy)-1]+`,"max_spend_usd_month":100}`), []string{w.Agent})
	put(other)
	if got := widens(); got != nil {
		t.Fatalf("after another change the project widens %v", got)
	}
}
