package enclave_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"countersign"
	"countersign/device"
	"countersign/enclave/answers"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// batchOf opens the tasks on the owner's device, shows each the summary of
// shown (when not ""), and approves them in one batch at the door; it
// returns each task's run.
func batchOf(t *testing.T, w *servicetest.World, ids []string, shown map[string]string) map[string]string {
	t.Helper()
	var opened []*device.Opened
	for _, id := range ids {
		view, err := w.Owner.Client.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		o, err := w.Owner.Open(view)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := shown[id]; ok {
			o.Envelope.Display.Summary = s
		}
		opened = append(opened, o)
	}
	got, err := w.Owner.BatchApprove(ctx, opened)
	if err != nil {
		t.Fatalf("the door refused the batch: %v", err)
	}
	runs := map[string]string{}
	for _, a := range got.Tasks {
		runs[a.ID] = a.Run
	}
	return runs
}

// TestBatchRunsCheckTheirOwnSummary: each answer run of a batch rebuilds
// the batch sentence with its own envelope's summary at its place (SPEC
// §7). A device shown another summary for one task signs the batch over
// it and the door accepts it (it holds only ciphertext); that task ends
// void (approval_mismatch), nothing written, and the others are carried
// out. The summaries reach no log and no row in clear.
func TestBatchRunsCheckTheirOwnSummary(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	a := pay(t, w, "Pay Acme Corp", "pay $1.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone")
	b := pay(t, w, "Pay Globex", "pay $2.00 to Globex from Checking ••1234 by ACH; it cannot be undone")
	c := pay(t, w, "Pay Initech", "pay $3.00 to Initech from Checking ••1234 by ACH; it cannot be undone")
	runs := batchOf(t, w, []string{a, b, c}, map[string]string{b: "pay $2.00 to Mallory from Checking ••1234 by ACH; it cannot be undone"})
	// While approved, the row keeps the batch's summaries only sealed.
	var kept []byte
	if err := w.DB.Postgres().QueryRow(ctx, "SELECT approval FROM tasks WHERE id = $1", a).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kept), "Acme") || strings.Contains(string(kept), "Globex") || strings.Contains(string(kept), "Mallory") {
		t.Fatalf("the approval row holds a summary in clear: %s", kept)
	}
	for _, id := range []string{a, b, c} {
		if err := w.Enclave.Answers.Answer(ctx, id, runs[id]); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{a, c} {
		if got := w.Task(id); got.State != countersign.StateDone || w.Effects.Count(id) != 1 {
			t.Errorf("task %s: %s, %d writes", id, got.State, w.Effects.Count(id))
		}
	}
	got := w.Task(b)
	if got.State != countersign.StateVoid || got.FailureReason != "" || w.Effects.Count(b) != 0 {
		t.Fatalf("the task signed over another summary ended %s %q with %d writes", got.State, got.FailureReason, w.Effects.Count(b))
	}
	status := w.Status("ledger", b)
	if !strings.Contains(string(status.Result), `"error":"`+answers.ApprovalMismatch+": ") || !strings.Contains(string(status.Result), `"wrote":false`) {
		t.Fatalf("the agent reads %s", status.Result)
	}
	// Every task ended: the approvals, and the sealed summaries with them,
	// are gone.
	var left int
	if err := w.DB.Postgres().QueryRow(ctx, "SELECT COUNT(*) FROM tasks WHERE approval IS NOT NULL AND id = ANY($1)", []string{a, b, c}).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d ended tasks keep their approval", left)
	}
	if logs := w.Logs.String(); strings.Contains(logs, "Acme") || strings.Contains(logs, "Mallory") {
		t.Errorf("a summary reached the log:\n%s", logs)
	}
}

// TestBatchRunsRefuseATamperedApproval: what a task approved in a batch
// keeps is checked again by its run. Another task's sealed summaries (they
// open only for the task they were sealed to), a batch without this task's
// line: the run refuses (confirmation_required); the batch's lines in
// another order put another task's summary at its place: void. Nothing is
// written either way.
func TestBatchRunsRefuseATamperedApproval(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	cases := []struct {
		name   string
		tamper func(own, other map[string]any)
		state  countersign.State
		reason countersign.FailureReason
	}{
		{"another task's sealed summaries", func(own, other map[string]any) {
			own["batch"].(map[string]any)["summaries"] = other["batch"].(map[string]any)["summaries"]
		}, countersign.StateFailed, "run_refused:confirmation_required"},
		{"a batch without the task", func(own, other map[string]any) {
			b := own["batch"].(map[string]any)
			b["tasks"] = b["tasks"].([]any)[1:]
		}, countersign.StateFailed, "run_refused:confirmation_required"},
		{"the batch's lines in another order", func(own, other map[string]any) {
			b := own["batch"].(map[string]any)
			tasks := b["tasks"].([]any)
			tasks[0], tasks[1] = tasks[1], tasks[0]
			// The summary at the task's place is then another task's.
		}, countersign.StateVoid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := pay(t, w, "Pay Acme Corp", "pay $1.00 to Acme Corp; it cannot be undone")
			b := pay(t, w, "Pay Globex", "pay $2.00 to Globex; it cannot be undone")
			runs := batchOf(t, w, []string{a, b}, nil)
			rows := map[string]map[string]any{}
			for _, id := range []string{a, b} {
				var raw []byte
				if err := w.DB.Postgres().QueryRow(ctx, "SELECT approval FROM tasks WHERE id = $1", id).Scan(&raw); err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				rows[id] = m
			}
			tc.tamper(rows[a], rows[b])
			raw, _ := json.Marshal(rows[a])
			if _, err := w.DB.Postgres().Exec(ctx, "UPDATE tasks SET approval = $1 WHERE id = $2", raw, a); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{a, b} {
				if err := w.Enclave.Answers.Answer(ctx, id, runs[id]); err != nil {
					t.Fatal(err)
				}
			}
			if got := w.Task(a); got.State != tc.state || got.FailureReason != tc.reason || w.Effects.Count(a) != 0 {
				t.Fatalf("the tampered task ended %s %q with %d writes", got.State, got.FailureReason, w.Effects.Count(a))
			}
			w.DoneOnce(b)
		})
	}
}

// TestBatchSummariesInNoClearColumn: the summaries a batch approval names
// are in no clear column (every table read raw and dumped as text on
// PostgreSQL) while the tasks wait approved with them sealed in their
// approvals, nor after their runs, nor in a log line.
func TestBatchSummariesInNoClearColumn(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	var canaries, ids []string
	for i := range 3 {
		s := canary(t, fmt.Sprintf("batch%d", i))
		canaries = append(canaries, s)
		ids = append(ids, pay(t, w, "Pay", "pay $1 to "+s))
	}
	shown := canary(t, "shownother")
	canaries = append(canaries, shown)
	runs := batchOf(t, w, ids, map[string]string{ids[2]: "pay $1 to " + shown})
	scan := func(when string) {
		t.Helper()
		if found := storetest.Find(t, db, canaries...); len(found) > 0 {
			t.Errorf("%s, stored in clear:\n%s", when, strings.Join(found, "\n"))
		}
		if found := storetest.FindInText(t, db, canaries...); len(found) > 0 {
			t.Errorf("%s, stored in clear:\n%s", when, strings.Join(found, "\n"))
		}
	}
	scan("approved")
	for _, id := range ids {
		if err := w.Enclave.Answers.Answer(ctx, id, runs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if w.Task(ids[0]).State != countersign.StateDone || w.Task(ids[2]).State != countersign.StateVoid {
		t.Fatalf("the batch ended %s, %s, %s", w.Task(ids[0]).State, w.Task(ids[1]).State, w.Task(ids[2]).State)
	}
	scan("ended")
	logs := w.Logs.String()
	for _, s := range canaries {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %s", s)
		}
	}
}
