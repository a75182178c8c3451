package connectortest_test

import (
	"context"
	"encoding/json"
	"testing"

	"countersign"
	"countersign/connectors"
)

// FuzzCall sends any body to a connector whose read decodes its arguments
// strictly and whose write opens a task: the harness answers with JSON or a
// refusal of the contract, never another error, and opens a task only for a
// call of the write.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"operation":"read","text":"hi"}`, `{"operation":"open"}`, `{"operation":"confirm_it"}`,
		`{"operation":"task_status"}`, `{"operation":1}`, `{}`, `[]`, `null`, `{"operation":"read","x":1}`,
		`{"operation":"read","operation":"open"}`, "{\"operation\":\"read\",\"text\":\"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		hk := &hooks{run: func(ctx context.Context, c *connectors.Call) (any, error) {
			if c.Operation == "open" {
				return opener(confirmSpec("Fuzzed"))(ctx, c)
			}
			var args struct {
				Text string `json:"text"`
			}
			if err := c.Decode(&args); err != nil {
				return nil, err
			}
			return map[string]any{"ok": true, "text": args.Text}, nil
		}}
		h := newHook(t, hk)
		out, err := h.Call(ctx, body)
		if err != nil {
			if code := countersign.ErrorCode(err); code != countersign.InvalidRequest {
				t.Fatalf("%q: %v", body, err)
			}
			if len(h.Tasks()) != 0 {
				t.Fatal("a refused call opened a task")
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q answered %q", body, out)
		}
		var call struct {
			Operation string `json:"operation"`
		}
		if err := json.Unmarshal([]byte(body), &call); err != nil {
			t.Fatalf("%q was served: %v", body, err)
		}
		switch call.Operation {
		case "open":
			if _, err := h.Awaiting(out); err != nil || len(h.Tasks()) != 1 {
				t.Fatalf("%q: %v", body, err)
			}
		case "read", "slow":
			if len(h.Tasks()) != 0 {
				t.Fatalf("%q opened a task", body)
			}
		default:
			t.Fatalf("%q served operation %q", body, call.Operation)
		}
	})
}

// FuzzAnswer approves a text task with any supply and note: the harness
// refuses only with invalid_request, or hands the run exactly what was sent.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte("hello"), "note")
	f.Add([]byte{}, "")
	f.Add([]byte{0xff, 0xfe}, "\u202e")
	f.Add(make([]byte, 8099), "")
	f.Fuzz(func(t *testing.T, supplied []byte, note string) {
		var got *connectors.AnswerCall
		hk := &hooks{answer: func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			got = a
			return connectors.Report{Result: map[string]int{"n": len(a.Supplied)}}, nil
		}}
		h := newHook(t, hk)
		o := openOne(t, h, hk, inputSpec("Say", countersign.SuppliesText))
		_, _, err := h.Answer(ctx, o, supplied, note)
		if err != nil {
			if countersign.ErrorCode(err) != countersign.InvalidRequest {
				t.Fatal(err)
			}
			return
		}
		if string(got.Supplied) != string(supplied) || got.Supplied == nil || got.Note != note {
			t.Fatal("the run was not handed what was sent")
		}
	})
}
