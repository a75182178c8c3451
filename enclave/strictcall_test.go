package enclave_test

import (
	"errors"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestCallBodiesStrict: an agent's call whose members repeat (ignoring
// case, at any depth) or that writes a task operation's argument in another
// case is refused invalid_request, naming the member, and nothing runs.
func TestCallBodiesStrict(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		agent := w.AgentClient()
		if _, err := agent.CallRaw(ctx, w.Owner.Account, "ledger", []byte(`{"operation":"task_status","task_id":"`+id+`"}`), nil); err != nil {
			t.Fatalf("the plain call is refused: %v", err)
		}
		const twice = " twice (member names are compared ignoring case)"
		cases := []struct {
			name, project, body, want string
		}{
			{"operation twice", "probe", `{"operation":"guess_start","operation":"task_status"}`, "the call names `operation`" + twice},
			{"operation twice in two cases", "probe", `{"operation":"task_status","OPERATION":"guess_start","task_id":"` + id + `"}`, "the call names `operation`" + twice},
			{"task_id twice", "ledger", `{"operation":"task_status","task_id":"` + id + `","task_id":"other-1"}`, "the call names `task_id`" + twice},
			{"task_id twice in two cases", "ledger", `{"operation":"task_status","task_id":"other-1","Task_Id":"` + id + `"}`, "the call names `task_id`" + twice},
			{"a member twice deeper down", "ledger", `{"operation":"task_status","task_id":"` + id + `","x":[{"a":1,"A":2}]}`, "the call names `a`" + twice},
			{"a connector argument twice", "ledger", `{"operation":"pay","amount":1,"AMOUNT":2}`, "the call names `amount`" + twice},
			{"task_id in capitals", "ledger", `{"operation":"task_status","TASK_ID":"` + id + `"}`, "task_status takes {task_id}; the call writes `task_id` in another case"},
			{"task_id with a Kelvin sign", "ledger", `{"operation":"task_cancel","tas\u212a_id":"` + id + `"}`, "task_cancel takes {task_id}; the call writes `task_id` in another case"},
			{"state in another case", "ledger", `{"operation":"tasks","State":"open"}`, "tasks takes {state?}; the call writes `state` in another case"},
			{"timeout_s in another case", "ledger", `{"operation":"task_wait","task_id":"` + id + `","Timeout_S":0}`, "task_wait takes {task_id, timeout_s?}; the call writes `timeout_s` in another case"},
		}
		for _, c := range cases {
			_, err := agent.CallRaw(ctx, w.Owner.Account, c.project, []byte(c.body), nil)
			var r *client.Refusal
			if !errors.As(err, &r) || r.Code != "invalid_request" || r.Message != c.want {
				t.Errorf("%s: got %v, want invalid_request: %s", c.name, err, c.want)
			}
		}
		if got := w.Task(id); got.State != countersign.StateOpen {
			t.Fatalf("a refused call moved the task: %s", got.State)
		}
		if n := w.Effects.Count(id); n != 0 {
			t.Fatalf("a refused call wrote %d times", n)
		}
	})
}
