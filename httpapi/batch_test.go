package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// payIn has the agent open a ledger task in project whose envelope names
// summary, and returns its id.
func payIn(t *testing.T, w *servicetest.World, project, summary string) string {
	t.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, project, "pay", map[string]any{"amount": 1, "summary": summary}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("pay answered %s", raw)
	}
	return a.TaskID
}

// openAll opens tasks on the owner's device, in order.
func openAll(t *testing.T, d *device.Device, ids ...string) []*device.Opened {
	t.Helper()
	out := make([]*device.Opened, len(ids))
	for i, id := range ids {
		out[i] = open(t, d, id)
	}
	return out
}

// signBatch signs, as the world's owner, the batch sentence over lines and
// summaries of project at the world's clock: what a device would sign if it
// were shown them.
func signBatch(t *testing.T, w *servicetest.World, project string, lines []approval.BatchLine, summaries []string) client.BatchApproveRequest {
	t.Helper()
	at := w.Clock.Now().UTC().Truncate(time.Second)
	sentence, err := approval.BatchApproval{Account: w.Owner.Account, Project: project, Tasks: lines, Summaries: summaries, At: at}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := w.Owner.Signer.Sign(sentence, w.Inbox.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	req := client.BatchApproveRequest{Approval: client.Confirmation{At: at.Unix(), Signed: signed}, Summaries: summaries}
	for _, l := range lines {
		req.Tasks = append(req.Tasks, client.BatchLine(l))
	}
	return req
}

func lineOf(o *device.Opened) approval.BatchLine {
	return approval.BatchLine{ID: o.Envelope.ID, TaskHash: o.TaskHash, SupplyHash: countersign.SupplyHash(nil, nil)}
}

// TestBatchApprovalOfTen: ten confirm tasks of one project are approved
// with one signature, one nonce spent, and each is carried out once by its
// own answer run.
func TestBatchApprovalOfTen(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	var ids []string
	for i := range 10 {
		ids = append(ids, payIn(t, w, "ledger", fmt.Sprintf("pay $%d.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone", i+1)))
	}
	opened := openAll(t, w.Owner, ids...)
	before := spentNonces(t, w.DB, w.Owner.Account)
	req, err := w.Owner.BatchApproveRequest(opened)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.Owner.Client.BatchApprove(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 10 {
		t.Fatalf("the answer names %d tasks", len(got.Tasks))
	}
	runs := map[string]bool{}
	for i, a := range got.Tasks {
		if a.ID != ids[i] || a.State != "approved" || a.Run == "" || runs[a.Run] {
			t.Fatalf("task %d answered %+v", i, a)
		}
		runs[a.Run] = true
	}
	if n := spentNonces(t, w.DB, w.Owner.Account) - before; n != 1 {
		t.Fatalf("the batch spent %d nonces", n)
	}
	for _, id := range ids {
		if end := w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); end.State != countersign.StateDone {
			t.Fatalf("task %s ended %s %s", id, end.State, end.FailureReason)
		}
	}
	for _, id := range ids {
		if n := w.Effects.Count(id); n != 1 {
			t.Errorf("task %s was carried out %d times", id, n)
		}
	}
	if n := w.Effects.Total(); n != 10 {
		t.Fatalf("%d writes for ten tasks", n)
	}
	if logs := w.Logs.String(); strings.Contains(logs, "Acme") {
		t.Errorf("a summary reached the log:\n%s", logs)
	}
}

// TestBatchApprovalRefusals: every refusal of a batch names its task and
// its reason, moves no task and spends no nonce; the good batch goes
// through afterwards, once, and neither its replay nor its signature sent
// for one of its tasks alone is accepted.
func TestBatchApprovalRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		w.PutProject("ledger2", "ledger", "{}", nil)
		owner := w.Owner
		const sa, sb = "pay $1.00 to Acme Corp; it cannot be undone", "pay $2.00 to Globex; it cannot be undone"
		a, b := payIn(t, w, "ledger", sa), payIn(t, w, "ledger", sb)
		elsewhere := payIn(t, w, "ledger2", "pay $3.00 to Initech; it cannot be undone")
		rejected := payIn(t, w, "ledger", "pay $4.00 to Hooli; it cannot be undone")
		notice, input := w.Tell(), w.Guess()
		oa, ob, oe, or := open(t, owner, a), open(t, owner, b), open(t, owner, elsewhere), open(t, owner, rejected)
		if _, err := owner.Client.Reject(ctx, rejected, nil); err != nil {
			t.Fatal(err)
		}
		good, err := owner.BatchApproveRequest([]*device.Opened{oa, ob})
		if err != nil {
			t.Fatal(err)
		}
		la, lb := lineOf(oa), lineOf(ob)
		noteLine := approval.BatchLine{ID: notice, TaskHash: w.Task(notice).TaskHash, SupplyHash: la.SupplyHash}
		inputLine := approval.BatchLine{ID: input, TaskHash: w.Task(input).TaskHash, SupplyHash: la.SupplyHash}
		// No such task; another owner's is answered the same, as is an id
		// no task can have.
		const strangerTask = "r0000000000000000000000000-1"
		const othersTask = "o0000000000000000000000000-1"
		others, othersCT := storetest.NewTask(othersTask, "someone-else.near", w.Agent)
		if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, others, othersCT) }); err != nil {
			t.Fatal(err)
		}
		otherHash := lb
		otherHash.TaskHash = strings.Repeat("0", 64)
		supplied := lb
		supplied.SupplyHash = countersign.SupplyHash(nil, []byte("x"))
		mutate := func(f func(r *client.BatchApproveRequest)) client.BatchApproveRequest {
			r := good
			r.Tasks = append([]client.BatchLine{}, good.Tasks...)
			r.Summaries = append([]string{}, good.Summaries...)
			f(&r)
			return r
		}
		before := spentNonces(t, db, owner.Account)
		eleven := make([]approval.BatchLine, 11)
		elevenSummaries := make([]string, 11)
		for i := range eleven {
			eleven[i] = la
			eleven[i].ID = fmt.Sprintf("%s%d", la.ID[:len(la.ID)-1], i+10)
			elevenSummaries[i] = "pay"
		}

		cases := []struct {
			name   string
			req    any
			status int
			reason string
			task   string // the task the refusal names ("" for none)
		}{
			{"malformed body", "{", 400, "invalid_request", ""},
			{"unknown member", map[string]any{"tasks": good.Tasks, "approval": good.Approval, "summaries": good.Summaries, "extra": 1}, 400, "invalid_request", ""},
			{"one task", mutate(func(r *client.BatchApproveRequest) { r.Tasks, r.Summaries = r.Tasks[:1], r.Summaries[:1] }), 400, "invalid_request", ""},
			{"eleven tasks", map[string]any{"tasks": eleven, "approval": good.Approval, "summaries": elevenSummaries}, 400, "invalid_request", ""},
			{"a summary missing", mutate(func(r *client.BatchApproveRequest) { r.Summaries = r.Summaries[:1] }), 400, "invalid_request", ""},
			{"a task twice", mutate(func(r *client.BatchApproveRequest) { r.Tasks[1] = r.Tasks[0] }), 400, "invalid_request", a},
			{"a supply", signBatch(t, w, "ledger", []approval.BatchLine{la, supplied}, []string{sa, sb}), 400, "invalid_request", b},
			{"an empty summary", mutate(func(r *client.BatchApproveRequest) { r.Summaries[1] = "" }), 400, "invalid_request", b},
			{"a summary with a line break", mutate(func(r *client.BatchApproveRequest) { r.Summaries[1] = "pay\n$2" }), 400, "invalid_request", b},
			{"a summary over 200 characters", mutate(func(r *client.BatchApproveRequest) { r.Summaries[1] = strings.Repeat("x", 201) }), 400, "invalid_request", b},
			{"a notice", signBatch(t, w, "ledger", []approval.BatchLine{la, noteLine}, []string{sa, "tell"}), 400, "invalid_request", notice},
			{"an input task", signBatch(t, w, "probe", []approval.BatchLine{inputLine, la}, []string{"guess", sa}), 400, "invalid_request", input},
			{"a task of another project", signBatch(t, w, "ledger", []approval.BatchLine{la, lineOf(oe)}, []string{sa, oe.Envelope.Display.Summary}), 400, "invalid_request", elsewhere},
			{"a task that moved", signBatch(t, w, "ledger", []approval.BatchLine{la, lineOf(or)}, []string{sa, or.Envelope.Display.Summary}), 409, "task_closed", rejected},
			{"no such task", mutate(func(r *client.BatchApproveRequest) { r.Tasks[1].ID = strangerTask }), 404, "task_not_found", strangerTask},
			{"another owner's task", mutate(func(r *client.BatchApproveRequest) { r.Tasks[1].ID = othersTask }), 404, "task_not_found", othersTask},
			{"an id no task can have", mutate(func(r *client.BatchApproveRequest) { r.Tasks[1].ID = "not-a-task" }), 404, "task_not_found", "not-a-task"},
			{"another hash", signBatch(t, w, "ledger", []approval.BatchLine{la, otherHash}, []string{sa, sb}), 403, "confirmation_required", b},
			{"the tasks in another order than signed", mutate(func(r *client.BatchApproveRequest) {
				r.Tasks[0], r.Tasks[1] = r.Tasks[1], r.Tasks[0]
				r.Summaries[0], r.Summaries[1] = r.Summaries[1], r.Summaries[0]
			}), 403, "confirmation_required", ""},
			{"another summary than signed", mutate(func(r *client.BatchApproveRequest) { r.Summaries[1] = "pay $2.00 to Mallory; it cannot be undone" }), 403, "confirmation_required", ""},
			{"signed for another project name", signBatch(t, w, "ledger2", []approval.BatchLine{la, lb}, []string{sa, sb}), 403, "confirmation_required", ""},
			{"a signature over one task's single sentence", func() client.BatchApproveRequest {
				single, err := owner.ApproveRequest(oa, nil, "")
				if err != nil {
					t.Fatal(err)
				}
				return mutate(func(r *client.BatchApproveRequest) { r.Approval = single.Approval })
			}(), 403, "confirmation_required", ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body := postJSON(t, owner.Client, "/inbox/tasks/approve", tc.req)
				if status != tc.status || body["reason"] != tc.reason || body["terminal"] != true || body["error"] == "" {
					t.Fatalf("%d %v, want %d %s", status, body, tc.status, tc.reason)
				}
				named, _ := body["task_id"].(string)
				if named != tc.task {
					t.Fatalf("the refusal names the task %q, want %q: %v", named, tc.task, body)
				}
				if msg, _ := body["error"].(string); tc.task != "" && !strings.HasPrefix(msg, "task "+tc.task+": ") {
					t.Fatalf("the sentence does not name the task: %q", msg)
				}
				if msg, _ := body["error"].(string); strings.Contains(msg, "Acme") || strings.Contains(msg, "Globex") || strings.Contains(msg, "Mallory") {
					t.Fatalf("the refusal quotes a summary: %q", msg)
				}
			})
		}
		for _, id := range []string{a, b, elsewhere} {
			if got := w.Task(id).State; got != countersign.StateOpen {
				t.Fatalf("a refused batch moved %s to %s", id, got)
			}
		}
		if after := spentNonces(t, db, owner.Account); after != before {
			t.Fatalf("refused batches spent %d nonces", after-before)
		}
		// The good batch, once.
		got, err := owner.Client.BatchApprove(ctx, good)
		if err != nil {
			t.Fatalf("the good batch after the refusals: %v", err)
		}
		if len(got.Tasks) != 2 || got.Tasks[0].ID != a || got.Tasks[1].ID != b || w.Task(a).State != countersign.StateApproved || w.Task(b).State != countersign.StateApproved {
			t.Fatalf("the good batch: %+v", got)
		}
		if after := spentNonces(t, db, owner.Account); after != before+1 {
			t.Fatalf("the batch spent %d nonces", after-before)
		}
		// Replayed: refused, naming the first task that is no longer open.
		status, body := postJSON(t, owner.Client, "/inbox/tasks/approve", good)
		if status != 409 || body["reason"] != "task_closed" || body["state"] != "approved" || body["task_id"] != a {
			t.Fatalf("a replayed batch: %d %v", status, body)
		}
		// Its signature sent for one of its tasks alone: refused (the
		// single sentence is not what was signed).
		c := payIn(t, w, "ledger", sa)
		oc := open(t, owner, c)
		batch, err := owner.BatchApproveRequest([]*device.Opened{oc, or})
		if err != nil {
			t.Fatal(err)
		}
		status, body = postJSON(t, owner.Client, "/inbox/tasks/"+c+"/approve", client.ApproveRequest{TaskHash: oc.TaskHash, Summary: sa, Approval: batch.Approval})
		if status != 403 || body["reason"] != "confirmation_required" {
			t.Fatalf("a batch signature for one task alone: %d %v", status, body)
		}
		if got := w.Task(c).State; got != countersign.StateOpen {
			t.Fatalf("the task is %s", got)
		}
		// Expired: a batch of a task that expired before the approval
		// arrived is refused whole, naming it.
		d := payIn(t, w, "ledger", sb)
		od := open(t, owner, d)
		w.Clock.Add(24*time.Hour + time.Second)
		e := payIn(t, w, "ledger", sa)
		oe2 := open(t, owner, e)
		late, err := owner.BatchApproveRequest([]*device.Opened{oe2, od})
		if err != nil {
			t.Fatal(err)
		}
		status, body = postJSON(t, owner.Client, "/inbox/tasks/approve", late)
		if status != 409 || body["reason"] != "task_expired" || body["task_id"] != d {
			t.Fatalf("a batch with an expired task: %d %v", status, body)
		}
		if got := w.Task(e).State; got != countersign.StateOpen {
			t.Fatalf("the batch's unexpired task is %s", got)
		}
	})
}

// TestBatchApprovalSentTwiceAtOnce: the same batch sent twice at once is
// accepted once; the other is refused, every task is approved once and
// one nonce is spent.
func TestBatchApprovalSentTwiceAtOnce(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	for round := range 3 {
		var ids []string
		for i := range 3 {
			ids = append(ids, payIn(t, w, "ledger", fmt.Sprintf("pay $%d.00 to Acme Corp; it cannot be undone", 10*round+i+1)))
		}
		req, err := w.Owner.BatchApproveRequest(openAll(t, w.Owner, ids...))
		if err != nil {
			t.Fatal(err)
		}
		before := spentNonces(t, w.DB, w.Owner.Account)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = w.Owner.Client.BatchApprove(ctx, req) })
		}
		wg.Wait()
		accepted := 0
		for _, err := range errs {
			switch {
			case err == nil:
				accepted++
			case reason(err) != "task_closed" && reason(err) != "confirmation_required":
				t.Fatalf("round %d: the second batch was refused %v", round, err)
			}
		}
		if accepted != 1 {
			t.Fatalf("round %d: %d of two identical batches were accepted (%v)", round, accepted, errs)
		}
		if n := spentNonces(t, w.DB, w.Owner.Account) - before; n != 1 {
			t.Fatalf("round %d: %d nonces spent", round, n)
		}
		runs := map[string]bool{}
		for _, id := range ids {
			task := w.Task(id)
			if task.State != countersign.StateApproved || runs[task.AnswerRun] {
				t.Fatalf("round %d: task %s is %s (run %s)", round, id, task.State, task.AnswerRun)
			}
			runs[task.AnswerRun] = true
			events, err := w.Owner.Client.History(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != 1 || events[0].To != "approved" {
				t.Fatalf("round %d: task %s moved %+v", round, id, events)
			}
		}
	}
}

// TestBatchApprovalTimed measures, on PostgreSQL, the time from approving
// ten tasks in one batch to all ten done, beside ten single approvals sent
// one after another (the device signs each, as a page would after ten
// clicks), each to all ten done. It asserts nothing about the times: it
// logs them (docs/benchmarks.md).
func TestBatchApprovalTimed(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	w.StartJobs()
	open10 := func(round int) []*device.Opened {
		var ids []string
		for i := range 10 {
			ids = append(ids, payIn(t, w, "ledger", fmt.Sprintf("pay $%d.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone", 100*round+i+1)))
		}
		return openAll(t, w.Owner, ids...)
	}
	allDone := func(opened []*device.Opened) {
		for _, o := range opened {
			if end := w.WaitState(o.Envelope.ID, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); end.State != countersign.StateDone {
				t.Fatalf("task %s ended %s", o.Envelope.ID, end.State)
			}
		}
	}
	const rounds = 5
	var batch, single, batchDoor, singleDoor []time.Duration
	for round := range rounds {
		opened := open10(2 * round)
		start := time.Now()
		if _, err := w.Owner.BatchApprove(ctx, opened); err != nil {
			t.Fatal(err)
		}
		batchDoor = append(batchDoor, time.Since(start))
		allDone(opened)
		batch = append(batch, time.Since(start))

		opened = open10(2*round + 1)
		start = time.Now()
		for _, o := range opened {
			if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		singleDoor = append(singleDoor, time.Since(start))
		allDone(opened)
		single = append(single, time.Since(start))
	}
	median := func(d []time.Duration) time.Duration {
		s := append([]time.Duration{}, d...)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("approve → all ten done, median of %d: one batch of 10 %v (its request %v); ten single approvals %v (their requests %v)",
		rounds, ms(median(batch)), ms(median(batchDoor)), ms(median(single)), ms(median(singleDoor)))
}
