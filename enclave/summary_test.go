package enclave_test

import (
	"context"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors"
	"countersign/enclave/answers"
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
			if err := w.Enclave.Answers.Answer(ctx, id, st.Run); err != nil {
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
			if status.State != string(countersign.StateVoid) || !strings.Contains(string(status.Result), `"error":"`+answers.ApprovalMismatch+": ") ||
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
		w.DoneOnce(id)
		if logs := w.Logs.String(); strings.Contains(logs, "Acme") || strings.Contains(logs, "Mallory") {
			t.Errorf("a summary reached the log:\n%s", logs)
		}
	})
}

// TestSummaryAndOutcomeInNoClearColumn: a task's summary and outcome, and
// the summaries an approval's body carries (the right one, a wrong one, one
// the door refuses as no summary, one a device was wrongly shown), through
// a task's whole life (opened, listed, read, refused and approved at the
// door, run by the job queue, ended done or void, its history entry listed
// and opened) reach the owner's device and no clear column (every table
// read raw and dumped as text on PostgreSQL) and no log line.
func TestSummaryAndOutcomeInNoClearColumn(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	w.StartJobs()
	var canaries []string
	c := func(what string) string {
		s := canary(t, what)
		canaries = append(canaries, s)
		return s
	}
	summary, outcome, link := "pay $1 to "+c("summary"), "Paid "+c("outcome"), "https://ledger.example/"+c("link")
	w.SetAnswer(func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		w.Effects.Add(a.Task.ID)
		return connectors.Report{Result: map[string]any{"ok": true}, Outcome: connectors.Outcome{Text: outcome, URL: link}}, nil
	})
	done := pay(t, w, "Pay "+c("title"), summary)
	if _, err := w.Owner.Client.Tasks(ctx, client.ShowWaiting, "", 0); err != nil {
		t.Fatal(err)
	}
	view, err := w.Owner.Client.Task(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil || o.Envelope.Display.Summary != summary {
		t.Fatalf("the device reads the summary %q: %v", o.Envelope.Display.Summary, err)
	}
	good, err := w.Owner.ApproveRequest(o, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// Refused at the door: a summary with a line break, another summary.
	for _, bad := range []string{summary + "\n" + c("linebreak"), "pay $1 to " + c("wrong")} {
		req := good
		req.Summary = bad
		if _, err := w.Owner.Client.Approve(ctx, done, req); err == nil {
			t.Fatalf("the door took the summary %q", bad)
		}
	}
	if _, err := w.Owner.Client.Approve(ctx, done, good); err != nil {
		t.Fatal(err)
	}
	if st := w.WaitState(done, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
		t.Fatalf("the approved task ended %s", st.State)
	}
	// A device shown another summary: the door takes it, the run voids it.
	mismatched := pay(t, w, "Pay "+c("title2"), "pay $2 to "+c("summary2"))
	view, err = w.Owner.Client.Task(ctx, mismatched)
	if err != nil {
		t.Fatal(err)
	}
	if o, err = w.Owner.Open(view); err != nil {
		t.Fatal(err)
	}
	o.Envelope.Display.Summary = "pay $2 to " + c("shownother")
	if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
		t.Fatal(err)
	}
	if st := w.WaitState(mismatched, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateVoid {
		t.Fatalf("the mismatched approval ended %s", st.State)
	}
	for _, id := range []string{done, mismatched} {
		if _, err := w.Owner.Client.History(ctx, id); err != nil {
			t.Fatal(err)
		}
		w.Status("ledger", id)
	}
	if _, err := w.Owner.Client.Tasks(ctx, client.ShowClosed, "", 0); err != nil {
		t.Fatal(err)
	}
	entries := history(t, w.Owner, client.ActivityQuery{})
	if e := entries[done]; e == nil || e.Summary != summary || e.Result.Text != outcome || e.Result.URL != link {
		t.Fatalf("the history entry of the task done: %+v", e)
	}
	if e := entries[mismatched]; e == nil || e.State != string(countersign.StateVoid) || !strings.Contains(e.Summary, "summary2") {
		t.Fatalf("the history entry of the task void: %+v", e)
	}
	if w.Effects.Total() != 1 {
		t.Fatalf("%d writes, want 1", w.Effects.Total())
	}

	// The scans find what is in clear (the owner's account, the task ids).
	if found := storetest.FindInText(t, db, w.Owner.Account, done); len(found) == 0 {
		t.Fatal("the text dump finds nothing, not even what is kept in clear")
	}
	if found := storetest.Find(t, db, canaries...); len(found) > 0 {
		t.Errorf("stored in clear:\n%s", strings.Join(found, "\n"))
	}
	if found := storetest.FindInText(t, db, canaries...); len(found) > 0 {
		t.Errorf("stored in clear:\n%s", strings.Join(found, "\n"))
	}
	logs := w.Logs.String()
	if !strings.Contains(logs, mismatched) {
		t.Fatalf("the log does not name the void task, so it was not read:\n%s", logs)
	}
	for _, s := range canaries {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %s", s)
		}
	}
}
