package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/policy"
)

// A tiny connector keeps memos: memo_count reads, memo_add writes — at once,
// or after the owner's yes when the policy asks — and memo_confirm carries
// out a memo_add the owner approved. The connectortest harness plays the
// platform around it.
func Example() {
	var memos []string
	dailyLimit := func(p *policy.Policy) int {
		if n, ok := p.Count("max_per_day"); ok {
			return n
		}
		return 100
	}
	// What the reads and writes answer when they open no task, and what
	// memo_confirm reports.
	counted := json.RawMessage(`{"type": "object", "properties": {"ok": {"const": true}, "count": {"type": "integer", "minimum": 0}},
		"required": ["ok", "count"], "additionalProperties": false}`)
	added := json.RawMessage(`{"type": "object", "properties": {"added": {"const": true}, "count": {"type": "integer", "minimum": 1}},
		"required": ["added", "count"], "additionalProperties": false}`)
	c := &connectors.Connector{
		Name: "memo", Version: "1.0.0", Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{"max_per_day": policy.Count},
		Operations: []connectors.Operation{
			{Name: "memo_count", Kind: connectors.Read, Description: "Counts the memos.",
				Schema: json.RawMessage(`{"type": "object", "additionalProperties": false}`), Result: counted, Run: func(context.Context, *connectors.Call) (any, error) {
					return map[string]any{"ok": true, "count": len(memos)}, nil
				}},
			{Name: "memo_add", Kind: connectors.Write, Price: 1_000, Description: "Adds a memo, or asks the owner first when the policy says so.",
				Schema: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 500}},
					"required": ["text"], "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{"text": "buy milk"}`)}, Result: counted, Run: func(ctx context.Context, c *connectors.Call) (any, error) {
					var args struct {
						Text string `json:"text"`
					}
					if err := c.Decode(&args); err != nil {
						return nil, err
					}
					if args.Text == "" {
						return nil, connectors.Refuse(countersign.InvalidRequest, "`text` is required")
					}
					switch d := c.Decide(policy.Facts{}); d.Outcome {
					case policy.Refuse:
						return nil, connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
					case policy.Ask:
						// Seal the exact write; show it whole.
						task, err := c.OpenTask(ctx, connectors.TaskSpec{
							Kind: countersign.KindConfirm,
							Display: countersign.Display{Title: "Add a memo", Summary: "add a memo to the notebook", Fields: []countersign.Field{
								{Kind: countersign.FieldLongText, Label: "Memo", Values: []string{args.Text}, WrittenBy: countersign.WrittenByAgent},
							}},
							AnswerBy: &countersign.AnswerBy{Operation: "memo_confirm", Supplies: countersign.SuppliesNone},
							State:    []byte(args.Text),
						})
						if err != nil {
							return nil, err
						}
						return connectors.AwaitingOwner(task), nil
					}
					if ok, err := c.Reserve(ctx, policy.Direct, dailyLimit(c.Policy)); err != nil || !ok {
						return nil, connectors.Refuse(countersign.PolicyDenied, "the day's number of memos is reached")
					}
					memos = append(memos, args.Text)
					return map[string]any{"ok": true, "count": len(memos)}, nil
				}},
			{Name: "memo_confirm", Kind: connectors.Answer, Description: "Adds a memo the owner approved.", Result: added, Answer: func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
				// The policy as it is now; Ask is the owner's yes.
				if d := a.Decide("memo_add", policy.Facts{}); d.Outcome == policy.Refuse {
					return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s.", d.Sentence)
				}
				if ok, err := a.Reserve(ctx, dailyLimit(a.Policy)); err != nil || !ok {
					return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The day's number of memos is reached.")
				}
				memos = append(memos, string(a.State))
				return connectors.Report{Result: map[string]any{"added": true, "count": len(memos)}}, nil
			}},
		},
	}

	h, err := connectortest.NewHarness(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	// Without a policy, the write happens at once.
	out, _ := h.Call(ctx, `{"operation": "memo_add", "text": "Water the plants"}`)
	fmt.Println(string(out))

	// "Ask me before memo_add": the write waits for the owner.
	h.Policy = []byte(`{"confirm": ["memo_add"]}`)
	out, _ = h.Call(ctx, `{"operation": "memo_add", "text": "Buy milk"}`)
	var answer struct{ Status string }
	_ = json.Unmarshal(out, &answer)
	task, err := h.Awaiting(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(answer.Status, task.Task.Kind, task.Spec.Display.Title+":", task.Spec.Display.Fields[0].Values[0])

	// The owner approves; the platform runs memo_confirm as the agent.
	result, _, err := h.Answer(ctx, task, nil, "")
	fmt.Println(string(result), err)

	out, _ = h.Call(ctx, `{"operation": "memo_count"}`)
	fmt.Println(string(out))

	// Refusals read "<code>: <sentence>".
	_, err = h.Call(ctx, `{"operation": "memo_add", "txt": "typo"}`)
	fmt.Println(err)
	_, _, err = h.Answer(ctx, task, nil, "")
	fmt.Println(err)
	fmt.Println("spent", h.Spent(), "µUSD")

	// Output:
	// {"count":1,"ok":true}
	// awaiting_owner confirm Add a memo: Buy milk
	// {"added":true,"count":2} <nil>
	// {"count":2,"ok":true}
	// invalid_request: the call has an unknown member `txt`
	// task_closed: the task is done
	// spent 2000 µUSD
}
