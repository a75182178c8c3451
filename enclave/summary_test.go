package enclave_test

import (
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/enclave"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestApprovalOverAnotherSummaryIsVoid: the answer run rebuilds the
// approval sentence from the envelope's own summary (SPEC §7). An approval
// the door accepted because the request carried the summary it was signed
// over, but which is not the task's (a device shown another summary, or
// one that signed the sentence without a summary), ends the task void with
// approval_mismatch: nothing is written, the agent is told, the owner's
// history says so. The task's own summary is carried out.
func TestApprovalOverAnotherSummaryIsVoid(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		const summary = "pay $1.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone"
		for _, signed := range []string{
			"pay $1.00 to Mallory from Checking ••1234 by ACH; it cannot be undone",
			"", // the sentence without a summary
		} {
			id := pay(t, w, "Pay Acme Corp", summary)
			view, err := w.Owner.Client.Task(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			o, err := w.Owner.Open(view)
			if err != nil {
				t.Fatal(err)
			}
			o.Envelope.Display.Summary = signed // what this device was shown
			req, err := w.Owner.ApproveRequest(o, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if req.Summary != signed {
				t.Fatalf("the device sent the summary %q, signed %q", req.Summary, signed)
			}
			st, err := w.Owner.Client.Approve(ctx, id, req)
			if err != nil {
				t.Fatalf("the door refused an approval whose body names the summary it signed: %v", err)
			}
			if err := w.Enclave.Answer(ctx, id, st.Run); err != nil {
				t.Fatal(err)
			}
			got := w.Task(id)
			if got.State != countersign.StateVoid || got.FailureReason != "" || got.OutcomeClass != countersign.OutcomeObserved {
				t.Errorf("signed %q: the task ended %s %q %s, want void", signed, got.State, got.FailureReason, got.OutcomeClass)
			}
			if n := w.Effects.Count(id); n != 0 {
				t.Errorf("signed %q: the write happened %d times", signed, n)
			}
			status := w.Status("ledger", id)
			if status.State != string(countersign.StateVoid) || !strings.Contains(string(status.Result), `"error":"`+enclave.ApprovalMismatch+": ") ||
				!strings.Contains(string(status.Result), "Nothing was written.") || !strings.Contains(string(status.Result), `"wrote":false`) {
				t.Errorf("signed %q: the agent reads %s %s", signed, status.State, status.Result)
			}
			entry := history(t, w.Owner, client.ActivityQuery{})[id]
			if entry == nil || entry.State != string(countersign.StateVoid) || entry.Summary != summary ||
				!strings.Contains(entry.Told(), "another summary") || !strings.Contains(entry.Told(), "Nothing was written.") {
				t.Errorf("signed %q: the history entry %+v", signed, entry)
			}
		}
		if n := w.Effects.Total(); n != 0 {
			t.Fatalf("%d writes happened", n)
		}
		// The task's own summary, signed and sent: carried out, once.
		id := pay(t, w, "Pay Acme Corp", summary)
		approveAndRun(t, w, id)
		if got := w.Task(id); got.State != countersign.StateDone || w.Effects.Count(id) != 1 {
			t.Fatalf("the approval of the task's own summary: %s, %d writes", got.State, w.Effects.Count(id))
		}
		if logs := w.Logs.String(); strings.Contains(logs, "Acme") || strings.Contains(logs, "Mallory") {
			t.Errorf("a summary reached the log:\n%s", logs)
		}
	})
}
