package enclave_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors"
	"countersign/connectors/gmail"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// refuser's writes, priced 10,000 µUSD, each refuse in their own way;
// inProcess declares them so (each then runs in one transaction). broken
// counts the runs of the write whose platform call fails.
func refuser(inProcess bool, broken *atomic.Int32) *connectors.Connector {
	good := connectors.TaskSpec{Kind: countersign.KindConfirm,
		Display:  countersign.Display{Title: "Pay", Summary: "pay in a test", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "What", Values: []string{"a test"}, WrittenBy: countersign.WrittenByProject}}},
		AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}}
	bad := good
	bad.Display.Title = "Pay\r\nBcc: everyone"
	write := func(name string, run func(ctx context.Context, c *connectors.Call) (any, error)) connectors.Operation {
		return connectors.Operation{Name: name, Kind: connectors.Write, Price: 10_000, Description: name + " in a test.", Run: run, InProcess: inProcess,
			Schema: json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}`)}
	}
	return &connectors.Connector{Name: "refuser", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{
		write("args", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.InvalidRequest, "the subject holds a line break or a control character")
		}),
		write("display", func(ctx context.Context, c *connectors.Call) (any, error) {
			_, err := c.OpenTask(ctx, bad)
			return nil, err
		}),
		write("display_wrapped", func(ctx context.Context, c *connectors.Call) (any, error) {
			_, err := c.OpenTask(ctx, bad)
			return nil, fmt.Errorf("open the task: %w", err)
		}),
		write("denied", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.PolicyDenied, "the owner's rule 1 (any payment) refuses this payment")
		}),
		write("conflict", func(context.Context, *connectors.Call) (any, error) {
			return nil, connectors.Refuse(countersign.Conflict, "the head moved")
		}),
		write("after_task", func(ctx context.Context, c *connectors.Call) (any, error) {
			if _, err := c.OpenTask(ctx, good); err != nil {
				return nil, err
			}
			_, err := c.OpenTask(ctx, bad)
			return nil, err
		}),
		write("after_write", func(_ context.Context, c *connectors.Call) (any, error) {
			c.Did(connectors.Did{Title: "Paid"})
			return nil, connectors.Refuse(countersign.InvalidRequest, "the receipt does not read")
		}),
		// A platform call the store refuses (a payment of nothing), after a
		// task was opened: in process, the run's one transaction keeps
		// nothing, and the run is made again the ordinary way.
		write("broken", func(ctx context.Context, c *connectors.Call) (any, error) {
			broken.Add(1)
			if _, err := c.OpenTask(ctx, good); err != nil {
				return nil, err
			}
			_, err := c.Spend(ctx, "nothing", 0, -1)
			return nil, err
		}),
		{Name: "confirm", Kind: connectors.Answer, Description: "confirm in a test.", Answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]bool{"ok": true}}, nil
		}},
	}}
}

// TestRefusalsForTheirOwnArgumentsAreNotCharged: a call refused for its
// own arguments costs nothing wherever the refusal arose — the platform's
// schema check, the connector's run (a line break in a Gmail subject), a
// task's display refused by OpenTask, wrapped or not — and its ledger
// holds no charge; a refusal for any other reason, or one after the run
// opened a task or did its write, is charged as SPEC §5 says. A replay
// of an uncharged refusal by its idempotency key costs nothing either.
//
// The same holds of writes declared in process, whose runs are each one
// transaction: there a broken platform call keeps nothing of the first
// try, and the run made again the ordinary way is charged once.
func TestRefusalsForTheirOwnArgumentsAreNotCharged(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in process %v", inProcess), func(t *testing.T) {
			t.Parallel()
			refusalsCharged(t, inProcess)
		})
	}
}

func refusalsCharged(t *testing.T, inProcess bool) {
	db := storetest.Postgres(t)
	var broken atomic.Int32
	w := servicetest.New(t, db, servicetest.WithConnector(refuser(inProcess, &broken)), servicetest.WithConnector(gmail.New(gmail.Config{})))
	agent := w.AgentClient()
	money := func() (int64, []store.LedgerEntry) {
		t.Helper()
		var a store.Agent
		var l []store.LedgerEntry
		if err := db.Tx(ctx, func(tx store.Tx) (err error) {
			if a, err = tx.Agent(ctx, w.Agent); err != nil {
				return err
			}
			l, err = tx.Ledger(ctx, w.Agent)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a.Balance, l
	}
	for _, tc := range []struct {
		name, project, op string
		args              map[string]any
		code              string
		charged           int64
	}{
		{"the schema", "refuser", "args", map[string]any{"n": "one"}, "invalid_request", 0},
		{"the run", "refuser", "args", nil, "invalid_request", 0},
		{"a Gmail subject", "gmail", "send", map[string]any{"to": []string{"dana@example.com"}, "subject": "Hi\r\nBcc: eve@example.com", "body": "x"}, "invalid_request", 0},
		{"the display", "refuser", "display", nil, "display_invalid", 0},
		{"the display, wrapped", "refuser", "display_wrapped", nil, "display_invalid", 0},
		{"the policy", "refuser", "denied", nil, "policy_denied", 10_000},
		{"a conflict", "refuser", "conflict", nil, "conflict", 10_000},
		{"after a task was opened", "refuser", "after_task", nil, "display_invalid", 10_000},
		{"after the write", "refuser", "after_write", nil, "invalid_request", 10_000},
		{"a platform call broken", "refuser", "broken", nil, "internal_error", 10_000},
	} {
		before, ledger := money()
		trips := db.RoundTrips()
		raw, err := agent.Call(ctx, w.Owner.Account, tc.project, tc.op, tc.args, nil)
		trips = db.RoundTrips() - trips
		var r *client.Refusal
		if !errors.As(err, &r) || r.Code != tc.code {
			t.Errorf("%s: %s %v, want a %s refusal", tc.name, raw, err, tc.code)
			continue
		}
		after, ledgerAfter := money()
		if before-after != tc.charged {
			t.Errorf("%s: charged %d µUSD, want %d", tc.name, before-after, tc.charged)
		}
		added := ledgerAfter[len(ledger):]
		switch {
		case tc.charged == 0 && len(added) != 0:
			t.Errorf("%s: the ledger holds %+v", tc.name, added)
		case tc.charged != 0 && (len(added) != 1 || added[0].Amount != -tc.charged || added[0].Run == ""):
			t.Errorf("%s: the ledger holds %+v, want the charge", tc.name, added)
		}
		t.Logf("%s: %d round trips", tc.name, trips)
	}
	runs := int32(1)
	if inProcess {
		runs = 2
	}
	if got := broken.Load(); got != runs {
		t.Errorf("the broken write ran %d times, want %d", got, runs)
	}
	if inProcess && !strings.Contains(w.Logs.String(), "an in-process run kept nothing; it runs again in transactions of its own") {
		t.Error("the in-process run kept nothing without a word in the log")
	}

	// The refusal is the first answer of its idempotency key; its replay
	// runs nothing and costs nothing.
	before, ledger := money()
	opts := &client.CallOptions{IdempotencyKey: "refused-once"}
	first, _ := agent.Call(ctx, w.Owner.Account, "refuser", "display", nil, opts)
	again, _ := agent.Call(ctx, w.Owner.Account, "refuser", "display", nil, opts)
	after, ledgerAfter := money()
	if !strings.Contains(string(first), `"error":"display_invalid: `) || string(again) != string(first) {
		t.Fatalf("the refusal %s, replayed as %s", first, again)
	}
	if after != before || len(ledgerAfter) != len(ledger) {
		t.Fatalf("a refusal and its replay moved the balance from %d to %d, the ledger by %d", before, after, len(ledgerAfter)-len(ledger))
	}
}
