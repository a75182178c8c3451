package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/client"
	"countersign/connectors/mercury/mercurytest"
	"countersign/device"
)

// M-of-N approvers (SPEC §7, §13 `approvers`) from terminals: the owner's
// and each approver's, each with its own wallet and account, against serve
// --dev on PostgreSQL with its sandbox Mercury.

// approversService is bankService with two more accounts, each with a
// terminal: bob signed in, carol not yet.
func approversService(t *testing.T) (*service, *owner, *owner, *owner, *client.Client) {
	t.Helper()
	s, o, agent := bankService(t)
	bob, carol := newOwner(t, s), newOwner(t, s)
	bob.login()
	return s, o, bob, carol, agent
}

// shareBank has the owner name bob and carol the approvers of the bank,
// k of the three to approve.
func shareBank(t *testing.T, o, bob, carol *owner, k string) string {
	t.Helper()
	return o.ok("projects", "approvers", "bank", bob.account, carol.account, "--threshold", k)
}

// pay has the agent ask to pay Acme amount by ACH and returns the task.
func pay(t *testing.T, agent *client.Client, o *owner, amount string) string {
	t.Helper()
	m := payment(t, agent, o, mercurytest.AcmeID, amount, "ach")
	id, _ := m["task_id"].(string)
	if id == "" || m["status"] != "awaiting_owner" {
		t.Fatalf("the payment of $%s: %v", amount, m)
	}
	return id
}

// approvalsOf is what the agent reads of a waiting task.
func approvalsOf(t *testing.T, agent *client.Client, o *owner, id string) client.TaskStatus {
	t.Helper()
	st, err := agent.Status(context.Background(), o.account, "bank", id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// watching runs `inbox watch` in a terminal until the test ends; it
// returns what watch prints.
func watching(t *testing.T, o *owner) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return o.env[k] }}
	done := make(chan int, 1)
	go func() { done <- a.main(ctx, []string{"inbox", "watch", "--dir", o.dir}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("watch did not stop")
		}
	})
	waitFor(t, &errb, func(s string) bool { return strings.Contains(s, "watching the inbox of "+o.account) }, "watch to connect: %s")
	return &out
}

// others lists the approvers besides the owner as tasks show them: in
// byte order of their accounts (each word starts with its account).
func others(words ...string) string {
	slices.Sort(words)
	return strings.Join(words, ", ")
}

// eventLine matches a line of watch.
func eventLine(id, rest string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ` + id + " " + regexp.QuoteMeta(rest) + "$")
}

// TestInboxApproversTwoOfThree: the owner names two approvers, two of the
// three to approve. Each approver sees the payment in its own inbox,
// marked with the owner, the project and its approvals, opens its own
// device's copy (carol signs in after it opened), and approves with its
// own account; bob sees 1 of 2, then the payment done, on his event
// stream; the agent reads awaiting_owner with the count; what only the
// owner does is refused to an approver in words.
func TestInboxApproversTwoOfThree(t *testing.T) {
	t.Parallel()
	_, o, bob, carol, agent := approversService(t)
	out := shareBank(t, o, bob, carol, "2")
	containsAll(t, "projects approvers", out,
		"project bank: 2 of you and "+bob.account+", "+carol.account+" approve its writes that ask\n",
		`policy: {"confirm":["pay_invoice"],"max_payment_usd":5000,"approvers":{"accounts":["`+bob.account+`","`+carol.account+`"],"threshold":2}}`+"\n",
		"project bank: policy ok\n",
		"A write that asks waits for 2 of you, "+bob.account+" and "+carol.account+" to approve it")
	containsAll(t, "projects list", o.ok("projects", "list"), "  approvers: A write that asks waits for 2 of you, "+bob.account)

	watch := watching(t, bob)
	id := pay(t, agent, o, "120")
	owned := "(project bank of " + o.account + ": approvals "
	waitFor(t, watch, eventLine(id, "open "+owned+"0 of 2)").MatchString, "bob's event of the new payment: %s")
	if st := approvalsOf(t, agent, o, id); st.Status != "awaiting_owner" || st.Approvals == nil || *st.Approvals != (client.ApprovalsCount{Have: 0, Need: 2}) {
		t.Fatalf("the agent reads %+v", st)
	}

	// bob's inbox lists it as the owner's; the owner's too, as his own.
	list := bob.ok("list")
	if !regexp.MustCompile(`(?m)^ID\s+KIND\s+STATE\s+PREPARER\s+OWNER\s+PROJECT\s+EXPIRES\s+LOCKED\s+APPROVALS$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^`+id+`\s+confirm\s+open\s+bot\.near\s+`+o.account+`\s+bank\s+\S+\s+no\s+0 of 2$`).MatchString(list) {
		t.Fatalf("bob's list:\n%s", list)
	}
	if list := o.ok("list"); !regexp.MustCompile(`(?m)^` + id + `\s+confirm\s+open\s+bot\.near\s+you\s+bank\s+\S+\s+no\s+0 of 2$`).MatchString(list) {
		t.Fatalf("the owner's list:\n%s", list)
	}
	show := bob.ok("show", id)
	containsAll(t, "bob's show", show, "If you approve: ", "task: "+id+" (confirm, open)\n", "receipt: verified (run ",
		"owner: "+o.account+" (its project names you among its approvers: you may approve or reject this task, with your own account)\n",
		"approvals: 0 of 2 needed; none yet; not yet by you\n",
		"approvers: "+o.account+" (owner), "+others(bob.account+" (you)", carol.account)+"\n", "Amount: $120.00")

	// What a shared approval does not take, and what only the owner does,
	// is refused in words.
	bob.fails([]string{"approve", id, "--note", "ok"}, "needs the approvals of several accounts and takes no note", "nothing was signed")
	bob.fails([]string{"cancel", id}, "task "+id+" is "+o.account+"'s: only its owner may cancel it")
	bob.fails([]string{"allow", id}, "only its owner changes the policy of its project")

	out = bob.ok("approve", id)
	containsAll(t, "bob's approval", out, "approved task "+id+" (Pay $120.00 to Acme Supplies LLC)",
		"approvals: 1 of 2: your approval is recorded; the task waits for 1 more, of "+o.account+", "+carol.account+"\n")
	if strings.Contains(out, "run: ") {
		t.Fatalf("one approval of two printed a run:\n%s", out)
	}
	waitFor(t, watch, eventLine(id, "open "+owned+"1 of 2, you approved)").MatchString, "bob's event of his approval: %s")
	if st := approvalsOf(t, agent, o, id); st.State != "open" || *st.Approvals != (client.ApprovalsCount{Have: 1, Need: 2}) {
		t.Fatalf("after one approval the agent reads %+v", st)
	}
	containsAll(t, "bob's list after his approval", bob.ok("list"), "1 of 2, you approved\n")
	bob.fails([]string{"approve", id}, "you approved task "+id+" already (1 of 2 needed)", "nothing was signed")
	containsAll(t, "the owner's show", o.ok("show", id), "approvals: 1 of 2 needed; approved by "+bob.account+" at ", "; not yet by you\n",
		"approvers: "+o.account+" (you, the owner), "+others(bob.account, carol.account)+"\n")

	// carol signs in after the payment opened: her device is given its key.
	carol.login()
	containsAll(t, "carol's show", carol.ok("show", id), "approvals: 1 of 2 needed; approved by "+bob.account+" at ")
	out = carol.ok("approve", id)
	containsAll(t, "carol's approval", out, "approvals: 2 of 2: the task is approved\nrun: ")
	if st := ended(t, agent, o, id); st != "done" {
		t.Fatalf("the payment two of three approved ended %s", st)
	}
	waitFor(t, watch, eventLine(id, "done "+owned+"2 of 2, you approved)").MatchString, "bob's event of the payment done: %s")
	show = bob.ok("show", id)
	containsAll(t, "bob's show of the payment done", show, "task: "+id+" (confirm, done)\n",
		"owner: "+o.account+" (its project names you among its approvers)\n",
		"approvals: 2 of 2 needed; approved by ", bob.account+" (you) at ", carol.account+" at ")
	if strings.Contains(show, "not yet by you") {
		t.Fatalf("bob's show of the payment done:\n%s", show)
	}
	if !regexp.MustCompile(`(?m)^` + id + `\s+confirm\s+done\s+bot\.near\s+you\s+bank\s+\S+\s+-\s+2 of 2$`).MatchString(o.ok("list", "--closed")) {
		t.Fatalf("the owner's closed list:\n%s", o.ok("list", "--closed"))
	}
	bob.fails([]string{"approve", id}, "task "+id+" is done: there is nothing to approve")
}

// TestInboxApproversRejectAndOwner: the owner's approval counts as one;
// any approver's rejection ends the task, with its reason for the agent,
// and every terminal names who rejected it; several shared tasks named to
// one approve are approved each alone, and a batch the service is sent
// anyway is refused naming the task.
func TestInboxApproversRejectAndOwner(t *testing.T) {
	t.Parallel()
	_, o, bob, carol, agent := approversService(t)
	carol.login()
	shareBank(t, o, bob, carol, "2")

	// The owner and bob: two of three.
	first := pay(t, agent, o, "101")
	out := o.ok("approve", first)
	containsAll(t, "the owner's approval", out, "approvals: 1 of 2: your approval is recorded; the task waits for 1 more, of "+others(bob.account, carol.account)+"\n")
	containsAll(t, "bob's approval", bob.ok("approve", first), "approvals: 2 of 2: the task is approved\n")
	if st := ended(t, agent, o, first); st != "done" {
		t.Fatalf("the payment the owner and bob approved ended %s", st)
	}

	// carol rejects after bob approved: one rejection ends it.
	second := pay(t, agent, o, "102")
	bob.ok("approve", second)
	if out := carol.ok("reject", second, "--reason", "not this month"); out != "task "+second+": rejected\n" {
		t.Fatalf("carol's reject printed %q", out)
	}
	st := approvalsOf(t, agent, o, second)
	if st.State != string(countersign.StateRejected) || st.Reason == nil || *st.Reason != "not this month" {
		t.Fatalf("the agent reads %+v", st)
	}
	show := o.ok("show", second)
	containsAll(t, "the owner's show of the rejected payment", show, "task: "+second+" (confirm, rejected)\n",
		"approvals: 1 of 2 needed; approved by "+bob.account+" at ", "rejected by: "+carol.account+"\n")
	containsAll(t, "bob's show of the rejected payment", bob.ok("show", second), "rejected by: "+carol.account+"\n")
	containsAll(t, "carol's show of the rejected payment", carol.ok("show", second), "rejected by: "+carol.account+" (you)\n")
	if !regexp.MustCompile(`(?m)^` + second + `\s+confirm\s+rejected by ` + carol.account + `\s+`).MatchString(o.ok("list", "--closed")) {
		t.Fatalf("the owner's closed list:\n%s", o.ok("list", "--closed"))
	}
	bob.fails([]string{"reject", second}, "task_closed")

	// A batch holding shared payments, sent to the service anyway, is
	// refused naming the first, and the terminal says which and that none
	// was approved.
	a, b := pay(t, agent, o, "103"), pay(t, agent, o, "104")
	term, err := openTerminal(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := term.device(&app{}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var opened []*device.Opened
	for _, id := range []string{a, b} {
		_, op, err := term.openTask(context.Background(), d, id)
		if err != nil || op == nil {
			t.Fatalf("open %s: %v", id, err)
		}
		opened = append(opened, op)
	}
	_, err = d.BatchApprove(context.Background(), opened)
	refused := batchRefused(err, 2)
	if refused == nil || !strings.HasPrefix(refused.Error(), "the service refused the 2 tasks because of task "+a+" (invalid_request: ") ||
		!strings.HasSuffix(refused.Error(), "; none of them was approved") {
		t.Fatalf("a batch of shared tasks: %v → %v", err, refused)
	}
	for _, id := range []string{a, b} {
		if st := approvalsOf(t, agent, o, id); st.State != "open" || *st.Approvals != (client.ApprovalsCount{Have: 0, Need: 2}) {
			t.Fatalf("after the refused batch %s is %+v", id, st)
		}
	}
	// Named to one approve, each is approved alone.
	out = o.ok("approve", a, b)
	containsAll(t, "approve of two shared payments", out,
		"2 of the tasks need the approvals of several accounts, which a signature over several tasks does not give: each is approved alone\n",
		"approved task "+a+" (Pay $103.00 to Acme Supplies LLC) alone: 1 of 2 approvals, it waits for 1 more\n",
		"approved task "+b+" (Pay $104.00 to Acme Supplies LLC) alone: 1 of 2 approvals, it waits for 1 more\n")
	containsAll(t, "bob's approve of both", bob.ok("approve", a, b), "approved task "+a+" (Pay $103.00 to Acme Supplies LLC) alone: 2 of 2 approvals, run ")
	for _, id := range []string{a, b} {
		if st := ended(t, agent, o, id); st != "done" {
			t.Fatalf("%s ended %s", id, st)
		}
	}
}

// TestInboxApproversEditor: the owner changes who approves and how many
// must, each change signed as any project change and only the `approvers`
// member rewritten; an approver taken off no longer sees the waiting
// task, which keeps its threshold and is void when approved under the
// changed policy; taking every approver off leaves the owner alone.
func TestInboxApproversEditor(t *testing.T) {
	t.Parallel()
	_, o, bob, carol, agent := approversService(t)
	carol.login()
	shareBank(t, o, bob, carol, "3")
	waiting := pay(t, agent, o, "110")
	if st := approvalsOf(t, agent, o, waiting); *st.Approvals != (client.ApprovalsCount{Have: 0, Need: 3}) {
		t.Fatalf("3 of 3: the agent reads %+v", st)
	}
	containsAll(t, "carol's list under 3 of 3", carol.ok("list"), waiting)

	out := o.ok("projects", "approvers", "bank", bob.account, "--threshold", "2")
	containsAll(t, "each of two", out, "project bank: each of you and "+bob.account+" approve its writes that ask\n",
		`policy: {"confirm":["pay_invoice"],"max_payment_usd":5000,"approvers":{"accounts":["`+bob.account+`"],"threshold":2}}`+"\n",
		"A write that asks waits for each of you and "+bob.account+" to approve it",
		"an approver taken off no longer sees it; approved, it is void")
	if list := carol.ok("list"); strings.Contains(list, waiting) {
		t.Fatalf("carol, taken off, still lists the waiting payment:\n%s", list)
	}
	carol.fails([]string{"show", waiting}, "task_not_found")
	// The waiting payment keeps its three, of whom two may approve now.
	containsAll(t, "bob's show after the change", bob.ok("show", waiting), "approvals: 0 of 3 needed",
		"approvers: "+o.account+" (owner), "+bob.account+" (you)\n")
	o.ok("reject", waiting)

	// A payment opened now needs the two; approved under a policy changed
	// since, it is void.
	next := pay(t, agent, o, "111")
	containsAll(t, "bob's show under each of two", bob.ok("show", next), "approvals: 0 of 2 needed")
	o.ok("approve", next)
	shareBank(t, o, bob, carol, "2")
	bob.ok("approve", next)
	if st := ended(t, agent, o, next); st != "void" {
		t.Fatalf("a payment approved under a policy changed since it opened ended %s", st)
	}

	// No approvers: the owner alone, and no `approvers` member left.
	out = o.ok("projects", "approvers", "bank")
	containsAll(t, "no approvers", out, "project bank: you alone approve its writes that ask\n",
		`policy: {"confirm":["pay_invoice"],"max_payment_usd":5000}`+"\n")
	if list := o.ok("projects", "list"); strings.Contains(list, "approvers:") {
		t.Fatalf("projects list after the approvers were taken off:\n%s", list)
	}
	if out := o.ok("projects", "approvers", "bank", "--threshold", "1"); out != "project bank has these approvers already; nothing was sent\n" {
		t.Fatalf("the same again printed %q", out)
	}
	alone := pay(t, agent, o, "112")
	if list := bob.ok("list"); strings.Contains(list, alone) {
		t.Fatalf("bob lists a payment of a project that no longer names him:\n%s", list)
	}
	containsAll(t, "the owner's approval alone", o.ok("approve", alone), "run: ")
	if st := ended(t, agent, o, alone); st != "done" {
		t.Fatalf("the payment the owner alone approved ended %s", st)
	}
}

// TestInboxApproversRefusals: what the service would refuse about a list
// of approvers is refused by the terminal, in words, before anything is
// sent; the refusals that need no project are made with the service out
// of reach, so that they cannot have asked it.
func TestInboxApproversRefusals(t *testing.T) {
	t.Parallel()
	_, o, bob, carol, _ := approversService(t)
	ten := make([]string, 10)
	for i := range ten {
		ten[i] = strings.Repeat(string(rune('a'+i)), 64)
	}
	// A terminal of the owner whose service is out of reach.
	offline := o.terminal()
	offline.login()
	sess := offline.session()
	sess.Server = "http://127.0.0.1:1"
	if err := saveSession(offline.dir, &sess); err != nil {
		t.Fatal(err)
	}
	before := o.ok("projects", "list")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(append([]string{"projects", "approvers", "bank"}, ten...), "--threshold", "2"), "10 accounts: a project names at most 9 approvers besides you; nothing was sent"},
		{[]string{"projects", "approvers", "bank", bob.account, o.account, "--threshold", "2"}, o.account + " is you, the owner, who approves already: name the other accounts; nothing was sent"},
		{[]string{"projects", "approvers", "bank", bob.account, carol.account, "--threshold", "0"}, "--threshold 0: from 1 to 3 (you and 2 account(s)); nothing was sent"},
		{[]string{"projects", "approvers", "bank", bob.account, carol.account, "--threshold", "4"}, "--threshold 4: from 1 to 3 (you and 2 account(s)); nothing was sent"},
		{[]string{"projects", "approvers", "bank", bob.account, "--threshold", "-1"}, "--threshold -1: from 1 to 2"},
		{[]string{"projects", "approvers", "bank", bob.account}, "--threshold K is needed: how many of you and the 1 account(s) must approve (1 to 2); nothing was sent"},
		{[]string{"projects", "approvers", "bank", "--threshold", "2"}, "--threshold 2: with no other account you alone approve (threshold 1); nothing was sent"},
		{[]string{"projects", "approvers", "bank", "Bob!", "--threshold", "1"}, `"Bob!" is not a NEAR account id; nothing was sent`},
		{[]string{"projects", "approvers", "bank", bob.account, bob.account, "--threshold", "2"}, bob.account + " is named twice; nothing was sent"},
		{[]string{"projects", "approvers", "Bank!", bob.account, "--threshold", "2"}, "a project name is 1–64 of a-z 0-9"},
		{[]string{"projects", "approvers"}, "usage: countersign inbox projects approvers NAME [ACCOUNT …] [--threshold K]"},
	} {
		offline.fails(tc.args, tc.want)
	}
	o.fails([]string{"projects", "approvers", "nope", bob.account, "--threshold", "2"}, "there is no project nope (countersign inbox projects list); nothing was sent")
	// The service itself refuses a policy naming the owner, however it is
	// written.
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"confirm": ["pay_invoice"], "approvers": {"accounts": ["`+o.account+`"], "threshold": 2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o.fails([]string{"projects", "put", "bank", "--connector", "mercury", "--policy", policy, "--agent", "bot.near"},
		"invalid_request: the policy's `approvers` names you, the owner, who approves already")
	if after := o.ok("projects", "list"); after != before {
		t.Fatalf("the refusals changed the projects:\n%s\n%s", before, after)
	}
}

// TestApproversPolicyRewrite: only `approvers` is set, in its place, or
// last when the policy had none; every other member keeps its place and
// value.
func TestApproversPolicyRewrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy   string
		accounts []string
		k        int
		want     string
	}{
		{`{}`, []string{"bob.near"}, 2, `{"approvers":{"accounts":["bob.near"],"threshold":2}}`},
		{`{"confirm": ["pay"], "max": 5}`, []string{"bob.near", "carol.near"}, 1, `{"confirm":["pay"],"max":5,"approvers":{"accounts":["bob.near","carol.near"],"threshold":1}}`},
		{`{"approvers": {"accounts": ["x.near"], "threshold": 2}, "confirm": ["pay"]}`, []string{"bob.near"}, 1, `{"approvers":{"accounts":["bob.near"],"threshold":1},"confirm":["pay"]}`},
		{`{"confirm": ["pay"], "approvers": {"accounts": ["x.near"], "threshold": 2}, "rules": [{"when": {"op": "pay"}, "then": "ask"}]}`, nil, 0, `{"confirm":["pay"],"rules":[{"when":{"op":"pay"},"then":"ask"}]}`},
		{`{"note": "<a & b>"}`, nil, 0, `{"note":"<a & b>"}`},
	} {
		got, err := withApprovers([]byte(tc.policy), tc.accounts, tc.k)
		if err != nil || string(got) != tc.want {
			t.Errorf("withApprovers(%s, %v, %d) = %s, %v; want %s", tc.policy, tc.accounts, tc.k, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"a": 1} {}`, `{"a": }`, ``} {
		if got, err := withApprovers([]byte(bad), []string{"bob.near"}, 1); err == nil {
			t.Errorf("withApprovers(%q) = %s, not refused", bad, got)
		}
	}
}

// TestApproversPreview: show's lines about a shared task, for an approver
// while it waits and for its owner once it was rejected; what the service
// sends is printed escaped.
func TestApproversPreview(t *testing.T) {
	t.Parallel()
	e := testEnvelope()
	a := &client.Approvals{Have: 1, Need: 2, Approvers: []string{"alice.near", "bob.near", "carol.near"},
		By: []client.ApprovalBy{{Account: "carol.near", At: "2026-11-29T12:30:00Z"}}}
	var b strings.Builder
	preview{Envelope: e, TaskHash: strings.Repeat("f", 64), State: string(countersign.StateOpen), Receipt: "verified (run r)",
		Now: e.CreatedAt, Role: client.RoleApprover, Approvals: a, Me: "bob.near"}.write(&b)
	want := "receipt: verified (run r)\n" +
		"owner: alice.near (its project names you among its approvers: you may approve or reject this task, with your own account)\n" +
		"approvals: 1 of 2 needed; approved by carol.near at 2026-11-29T12:30:00Z; not yet by you\n" +
		"approvers: alice.near (owner), bob.near (you), carol.near\n" +
		"  Repository: alice/app\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("an approver's preview:\n%s\nwant within it:\n%s", b.String(), want)
	}
	// A task its owner alone approves shows none of it.
	b.Reset()
	preview{Envelope: e, State: string(countersign.StateOpen), Receipt: "verified", Now: e.CreatedAt, Role: client.RoleOwner, Me: "alice.near"}.write(&b)
	if strings.Contains(b.String(), "approvals:") || strings.Contains(b.String(), "approvers:") || strings.Contains(b.String(), "owner:") {
		t.Fatalf("a task of the owner alone:\n%s", b.String())
	}

	// The owner's view of a shared task an approver rejected; an account
	// the service names is escaped.
	b.Reset()
	a.By = append(a.By, client.ApprovalBy{Account: "alice.near", At: "2026-11-29T12:40:00Z"})
	a.Approved, a.Have = true, 2
	writeClosed(&b, client.TaskView{ID: e.ID, Owner: "alice.near", Role: client.RoleOwner, Kind: "confirm", State: "rejected",
		Preparer: "bot.near", Project: "github", Connector: "github", Approvals: a, RejectedBy: "bob\x1b[2J.near"}, "alice.near")
	for _, line := range []string{
		"approvals: 2 of 2 needed; approved by carol.near at 2026-11-29T12:30:00Z, alice.near (you, the owner) at 2026-11-29T12:40:00Z\n",
		"approvers: alice.near (you, the owner), bob.near, carol.near\n",
		"rejected by: bob\\u001b[2J.near\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the owner's view of a rejected shared task does not say %q:\n%s", line, b.String())
		}
	}
	if strings.Contains(b.String(), "not yet by you") {
		t.Errorf("a closed task asks for an approval:\n%s", b.String())
	}
}
