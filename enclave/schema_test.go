package enclave_test

import (
	"errors"
	"strings"
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// TestCallsFitTheirSchemas: a call whose arguments break its operation's
// schema is refused invalid_request naming the member, before its run
// starts: nothing is charged and no task is opened.
func TestCallsFitTheirSchemas(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	agent := w.AgentClient()
	balance := func() int64 {
		var a store.Agent
		if err := w.DB.Tx(ctx, func(tx store.Tx) (err error) {
			a, err = tx.Agent(ctx, w.Agent)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a.Balance
	}
	before := balance()
	for _, tc := range []struct{ name, project, body, want string }{
		{"max too big", "probe", `{"operation":"guess_start","max":1001}`, "`max` is a whole number from 2 to 1000"},
		{"max a string", "probe", `{"operation":"guess_start","max":"10"}`, "`max` is a whole number from 2 to 1000"},
		{"unknown member", "probe", `{"operation":"guess_start","secret":3}`, "the call has an unknown member `secret`"},
		{"another case", "probe", `{"operation":"guess_start","Max":3}`, "the call writes `max` in another case"},
		{"amount missing", "ledger", `{"operation":"pay"}`, "`amount` is required"},
		{"amount not a number", "ledger", `{"operation":"pay","amount":"one dollar"}`, "`amount` is a whole number from 1 to 1000000"},
		{"memo too long", "ledger", `{"operation":"pay","amount":1,"memo":"` + longMemo + `"}`, "`memo` is a string of at most 500 characters"},
		{"task_id missing", "ledger", `{"operation":"task_status"}`, "task_status takes {task_id}; `task_id` is required"},
		{"task_id not an id", "ledger", `{"operation":"task_wait","task_id":"Not An Id"}`, "task_wait takes {task_id, timeout_s?}; `task_id` is a string matching ^[a-z0-9-]{1,80}$"},
		{"timeout_s too long", "ledger", `{"operation":"task_wait","task_id":"r1-1","timeout_s":61}`, "task_wait takes {task_id, timeout_s?}; `timeout_s` is a whole number from 0 to 60"},
		{"state unknown", "ledger", `{"operation":"tasks","state":"closed"}`, "tasks takes {state?}; `state` is one of \"open\", \"approved\", \"answering\", \"done\", \"failed\", \"rejected\", \"cancelled\", \"expired\", \"void\""},
	} {
		_, err := agent.CallRaw(ctx, w.Owner.Account, tc.project, []byte(tc.body), nil)
		var r *client.Refusal
		if !errors.As(err, &r) || r.Code != "invalid_request" || r.Message != tc.want {
			t.Errorf("%s: got %v, want invalid_request: %s", tc.name, err, tc.want)
		}
	}
	if after := balance(); after != before {
		t.Fatalf("refused calls cost %d µUSD", before-after)
	}
	page, err := w.Owner.Client.Tasks(ctx, client.ShowWaiting, "", 0)
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("refused calls opened %d tasks (%v)", len(page.Tasks), err)
	}
	// The same calls with arguments that fit run and are charged.
	w.Guess()
	if after := balance(); after != before-10_000 {
		t.Fatalf("a game cost %d µUSD", before-after)
	}
}

var longMemo = strings.Repeat("m", 501)
