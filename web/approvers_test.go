package web_test

// M-of-N approvers (SPEC §7, §13 `approvers`) in the page.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"countersign"
	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/device"
	"countersign/sealing"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestBrowserOpensApproverCopyAsGo: one task of alice.near, its key
// wrapped to the page's device key and to a Go device's, listed with
// every shape of owner, role and approvals; the page opens it exactly when
// Go's device.Open does, and both open it only as its owner or as an
// account the listing names among its approvers with the role approver
// for the envelope's owner.
func TestBrowserOpensApproverCopyAsGo(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	var dev newDevice
	call(t, ctx, "newDevice", nil, &dev)
	pagePub, err := sealing.ParseP256PublicKey(dev.Pubkey)
	if err != nil {
		t.Fatal(err)
	}
	goKey, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}

	id := "appr" + hex.EncodeToString(randomBytes(t, 6)) + "-1"
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reply := sealing.FormatP256PublicKey(newP256(t).PublicKey())
	env := countersign.Envelope{
		AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}, Build: "ledger@1",
		CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour),
		Display: countersign.Display{Title: "Pay Acme Corp", Summary: "pay $1.00 to Acme Corp"},
		ID:      id, Kind: countersign.KindConfirm, Owner: "alice.near", PolicyHash: strings.Repeat("a", 64),
		Preparer: "bot.near", Project: "ledger", ProjectUUID: "0b7c9a52-3c1e-4d7a-9f00-5e2d1c4b6a80",
		ReplyPubkey: reply, StateHash: strings.Repeat("b", 64), Thread: id,
	}
	envelope, err := env.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(map[string]string{"envelope": string(envelope), "request": `{"amount":1}`})
	key := sealing.NewContentKey()
	content, err := key.SealContent(id, plain)
	if err != nil {
		t.Fatal(err)
	}
	pageCopy, err := sealing.WrapContentKey(pagePub, id, key)
	if err != nil {
		t.Fatal(err)
	}
	goCopy, err := sealing.WrapContentKey(goKey.PublicKey(), id, key)
	if err != nil {
		t.Fatal(err)
	}

	listed := func(owner, role string, a *client.Approvals) client.TaskView {
		return client.TaskView{ID: id, Owner: owner, Role: role, Project: "ledger", ProjectUUID: env.ProjectUUID, Connector: "ledger",
			Preparer: "bot.near", Kind: "confirm", State: "open", Thread: id, CreatedAt: "2026-12-01T10:00:00Z",
			ExpiresAt: "2026-12-02T10:00:00Z", ReplyPubkey: reply, TaskHash: countersign.TaskHash(envelope),
			Content: content, Files: []client.TaskFile{}, Approvals: a}
	}
	approvers := func(accounts ...string) *client.Approvals {
		return &client.Approvals{Have: 0, Need: 2, Approvers: accounts, By: []client.ApprovalBy{}}
	}
	abc := approvers("alice.near", "bob.near", "carol.near")
	cases := []struct {
		name    string
		account string
		view    client.TaskView
		opens   bool
	}{
		{"the owner, alone", "alice.near", listed("alice.near", "owner", nil), true},
		{"the owner of a shared task", "alice.near", listed("alice.near", "owner", abc), true},
		{"the owner, listed oddly", "alice.near", listed("carol.near", "approver", approvers("bob.near")), true},
		{"an approver listed", "bob.near", listed("alice.near", "approver", abc), true},
		{"the last approver listed", "carol.near", listed("alice.near", "approver", abc), true},
		{"an account not among the approvers", "dave.near", listed("alice.near", "approver", abc), false},
		{"an approver, listed as owner", "bob.near", listed("alice.near", "owner", abc), false},
		{"an approver, with no role", "bob.near", listed("alice.near", "", abc), false},
		{"an approver of another owner's task", "bob.near", listed("carol.near", "approver", abc), false},
		{"an account claiming to own it", "bob.near", listed("bob.near", "owner", nil), false},
		{"an approver, without approvals", "bob.near", listed("alice.near", "approver", nil), false},
		{"an approver, with no approvers listed", "bob.near", listed("alice.near", "approver", approvers()), false},
		{"an approver in another case", "bob.near", listed("alice.near", "approver", approvers("alice.near", "Bob.near")), false},
		{"an approver, the owner left out of the view", "bob.near", listed("", "approver", abc), false},
	}

	type pageCase struct {
		Account string          `json:"account"`
		View    json.RawMessage `json:"view"`
	}
	var page []pageCase
	for _, c := range cases {
		v := c.view
		v.DeviceCopy = pageCopy
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		page = append(page, pageCase{c.account, b})
	}
	var got []string
	call(t, ctx, "openAs", page, &got)
	if len(got) != len(cases) {
		t.Fatalf("the page answered %d cases of %d: %q", len(got), len(cases), got)
	}
	for i, c := range cases {
		v := c.view
		v.DeviceCopy = goCopy
		_, goErr := (&device.Device{Account: c.account, Key: goKey}).Open(v)
		pageOpens := got[i] == "ok"
		switch {
		case (goErr == nil) != c.opens:
			t.Errorf("%s: Go's device opens it %v (%v), want %v", c.name, goErr == nil, goErr, c.opens)
		case pageOpens != c.opens:
			t.Errorf("%s: the page says %q, want it to open %v (Go: %v)", c.name, got[i], c.opens, goErr)
		case !c.opens && (got[i] != "refused mismatch" || !errors.Is(goErr, device.ErrMismatch)):
			t.Errorf("%s: refused by the page as %q and by Go as %v; want both a mismatch", c.name, got[i], goErr)
		}
	}
}

// namedApprover signs in a Go device of a named account (name) whose key
// the world's chain knows, for a page to sign in with the same wallet.
func namedApprover(t *testing.T, w *servicetest.World, name string) *device.Device {
	t.Helper()
	wallet, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	wallet.AccountID = name
	w.RPC.AddAccount(name)
	w.RPC.AddKey(name, wallet.Key.PublicKey().String(), neartest.FullAccess())
	d := w.Device(wallet)
	if _, err := d.SignIn(context.Background(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return d
}

// sharedItem is the waiting list's item of task id: its count, whether
// this account approved, its meta line, and whether it can be selected.
type sharedItem struct {
	Have     string `json:"have"`
	Need     string `json:"need"`
	Approved string `json:"approved"`
	Line     string `json:"line"`
	Meta     string `json:"meta"`
	Owner    string `json:"owner"`
	Pick     bool   `json:"pick"`
}

func itemOf(t *testing.T, ctx context.Context, id string) sharedItem {
	t.Helper()
	var it sharedItem
	raw := run(t, ctx, "the item of "+id, chromedp.Evaluate[string](`(() => {
  const li = document.querySelector('#tasks li[data-task="`+id+`"]');
  const a = li?.querySelector(".task-approvals");
  return JSON.stringify({have: a?.dataset.have ?? "", need: a?.dataset.need ?? "", approved: a?.dataset.approved ?? "",
    line: a?.textContent ?? "", meta: li?.querySelector(".task-meta")?.textContent ?? "",
    owner: li?.querySelector(".task-meta .account")?.dataset.account ?? "", pick: !!li?.querySelector("input.task-pick")});
})()`))
	if err := json.Unmarshal([]byte(raw), &it); err != nil {
		t.Fatal(err)
	}
	return it
}

// waitItem waits until task id's item in the list reads have of need and
// whether this account approved it.
func waitItem(t *testing.T, ctx context.Context, id string, have, need int, approved bool) {
	t.Helper()
	waitJS(t, ctx, fmt.Sprintf("task %s listed %d of %d (approved here %v)", id, have, need, approved),
		fmt.Sprintf(`(() => { const a = document.querySelector('#tasks li[data-task="%s"] .task-approvals'); return a?.dataset.have === "%d" && a?.dataset.need === "%d" && a?.dataset.approved === "%v"; })()`, id, have, need, approved))
}

// approvedOnCard is each approver the open card lists, with whether it approved.
func approvedOnCard(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "the card's approvers", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#card-approvers li")].map((li) => li.dataset.account + "=" + li.dataset.approved)`))
}

// TestInboxPageApprovers: a ledger project approved by 2 of its owner,
// bob.near and carol.near, in three pages signed in as each, against the
// whole service. A task is listed in each inbox, marked in the approvers'
// with its owner and project, with its count and whether each has
// approved; none offers it for a batch or for Always allow this, nor a
// note. bob approves it from his page with his own wallet: it stays
// waiting at 1 of 2 on every page (the owner's card shows who), and carol's
// approval ends it, carried out once; each page tells it done. A second
// task, approved by the owner and rejected by carol with a reason, ends
// rejected: the agent reads carol's reason, and the owner's and bob's pages
// name carol, in the banner and in the owner's history. Then the owner
// edits the approvers and threshold in Settings: refusals told before the
// wallet is asked, the first approver added sets the threshold to 2, and
// the saved policy is the one the editor says in words; bob, taken off,
// sees the task still waiting leave his inbox at once.
func TestInboxPageApprovers(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	bob := namedApprover(t, w, "bob.near")
	carol := namedApprover(t, w, "carol.near")
	w.PutProject("ledger", "ledger", `{"confirm":["pay"],"approvers":{"accounts":["bob.near","carol.near"],"threshold":2}}`, nil)
	owner := w.Owner.Account

	pages := map[string]context.Context{}
	for _, d := range []*device.Device{w.Owner, bob, carol} {
		ctx := blankTab(t, 240*time.Second)
		injectWalletOf(t, ctx, d)
		signInWithWallet(t, ctx, w)
		pages[d.Account] = ctx
	}
	alice, bobs, carols := pages[owner], pages["bob.near"], pages["carol.near"]

	acme := payTask(t, w, "ledger", 12, "Pay Acme Corp", "pay $12.00 to Acme Corp by ACH")
	bolt := payTask(t, w, "ledger", 30, "Pay Bolt Ltd", "pay $30.00 to Bolt Ltd by wire")
	for who, ctx := range pages {
		for _, id := range []string{acme, bolt} {
			waitItem(t, ctx, id, 0, 2, false)
			it := itemOf(t, ctx, id)
			if it.Pick {
				t.Errorf("%s's page offers the shared task %s for a batch", who, id)
			}
			if who == owner {
				if !strings.HasPrefix(it.Meta, "ledger · from bot.near") || it.Line != "0 of 2 approved · waiting for your approval" {
					t.Errorf("the owner's item reads %q / %q", it.Meta, it.Line)
				}
			} else if !strings.HasPrefix(it.Meta, "ledger of ") || it.Owner != owner {
				t.Errorf("%s's item reads %q, naming the owner %q; want ledger of %s", who, it.Meta, it.Owner, owner)
			}
		}
		if hidden := run(t, ctx, "the batch box", chromedp.Evaluate[bool](`document.getElementById("batch").hidden`)); !hidden {
			t.Errorf("%s's page offers Approve selected for two shared tasks", who)
		}
	}

	// bob opens his own copy: whose it is, who approves, no note, no
	// Always allow this, no Got it; he approves with his own wallet.
	openCard(t, bobs, acme)
	if got := textOf(t, bobs, "the card's meta", "#card-meta"); !strings.HasPrefix(got, "ledger of ") {
		t.Errorf("bob's card's meta reads %q", got)
	}
	if got := textOf(t, bobs, "the count", "#card-approvals-count"); got != "0 of 2 approved" {
		t.Errorf("bob's card counts %q", got)
	}
	if got := textOf(t, bobs, "whose", "#card-shared"); !strings.HasPrefix(got, "The project ledger of "+owner[:8]+"…") || !strings.HasSuffix(got, " names you among its approvers: it is carried out once 2 of its 3 approvers approve it, each with their own wallet; any one of them may reject it.") {
		t.Errorf("bob's card says %q", got)
	}
	if got := approvedOnCard(t, bobs); strings.Join(got, " ") != owner+"=false bob.near=false carol.near=false" {
		t.Errorf("bob's card lists %q", got)
	}
	if n := run(t, bobs, "what the card offers", chromedp.Evaluate[int](`document.querySelectorAll("#note, #allow-open, #card-actions button[aria-keyshortcuts=g]").length`)); n != 0 {
		t.Errorf("bob's card offers %d of a note, Always allow this and Got it", n)
	}
	waitJS(t, bobs, "Approve enabled", `!document.querySelector("#card-actions button.approve-summary").disabled`)
	do(t, bobs, "bob's card at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, bobs, "inbox-approver-card")
	do(t, bobs, "bob approves", chromedp.Click(approveButton()))
	waitJS(t, bobs, "recorded", `document.getElementById("status").textContent.startsWith("Your approval is recorded: 1 of 2 approved.")`)
	signed := walletSigned(t, bobs)
	if last := signed[len(signed)-1]; !strings.HasPrefix(last, "Approve in Countersign as bob.near: pay $12.00 to Acme Corp by ACH. Task "+acme+" with hash ") {
		t.Fatalf("bob's wallet signed %q", last)
	}
	if st := w.Task(acme); st.State != countersign.StateOpen {
		t.Fatalf("after one approval of two the task is %s", st.State)
	}
	// Every page sees it move, live: 1 of 2, and bob's says he approved.
	waitItem(t, bobs, acme, 1, 2, true)
	waitItem(t, alice, acme, 1, 2, false)
	waitItem(t, carols, acme, 1, 2, false)
	if it := itemOf(t, alice, acme); it.Line != "1 of 2 approved (by bob.near) · waiting for your approval" {
		t.Errorf("the owner's item reads %q", it.Line)
	}
	if it := itemOf(t, bobs, acme); it.Line != "1 of 2 approved (by you) · you approved it" {
		t.Errorf("bob's item reads %q", it.Line)
	}
	do(t, bobs, "bob's list at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, bobs, "inbox-approver-list")
	openCard(t, bobs, acme)
	if n := run(t, bobs, "Approve", chromedp.Evaluate[int](`[...document.querySelectorAll("#card-actions button.approve-summary")].filter((b) => !b.hidden).length`)); n != 0 {
		t.Error("bob's card offers Approve again after he approved")
	}
	if got := textOf(t, bobs, "approved already", "#card-approved-already"); !strings.HasPrefix(got, "You approved it. It waits for 1 more approval") {
		t.Errorf("bob's card says %q", got)
	}
	do(t, bobs, "back", chromedp.KeyEvent(kb.Escape))

	// The owner's card: 1 of 2, bob's approval beside his name.
	openCard(t, alice, acme)
	if got := textOf(t, alice, "the count", "#card-approvals-count"); got != "1 of 2 approved" {
		t.Errorf("the owner's card counts %q", got)
	}
	if got := approvedOnCard(t, alice); strings.Join(got, " ") != owner+"=false bob.near=true carol.near=false" {
		t.Errorf("the owner's card lists %q", got)
	}
	if got := textOf(t, alice, "whose", "#card-shared"); !strings.HasPrefix(got, "Your project ledger shares this task with its approvers (you among them)") {
		t.Errorf("the owner's card says %q", got)
	}
	do(t, alice, "the owner's card at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, alice, "inbox-shared-owner-card")

	// carol's approval is the second: approved once, carried out once, and
	// the owner's open card follows it out.
	openCard(t, carols, acme)
	waitJS(t, carols, "Approve enabled", `!document.querySelector("#card-actions button.approve-summary").disabled`)
	do(t, carols, "carol approves", chromedp.Click(approveButton()))
	waitJS(t, carols, "approved", `document.getElementById("status").textContent.startsWith("Approved (2 of 2)")`)
	if st := w.WaitState(acme, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone || w.Effects.Count(acme) != 1 {
		t.Fatalf("after 2 of 2 the task is %s, carried out %d times", st.State, w.Effects.Count(acme))
	}
	for who, ctx := range pages {
		waitJS(t, ctx, who+" told it is done", `document.querySelector('#outcomes .outcome[data-outcome="`+acme+`"]')?.dataset.state === "done" && !document.querySelector('#tasks li[data-task="`+acme+`"]')`)
		if got := banner(t, ctx, acme); !strings.Contains(got, "Done: Pay Acme Corp") {
			t.Errorf("%s's banner reads %q", who, got)
		}
	}
	if got := banner(t, bobs, acme); !strings.Contains(got, "Approved by you and carol.near, and carried out.") {
		t.Errorf("bob's banner reads %q", got)
	}

	// The second task: the owner approves (1 of 2), carol rejects it with
	// a reason; it ends rejected, naming carol.
	openCard(t, alice, bolt)
	waitJS(t, alice, "Approve enabled", `!document.querySelector("#card-actions button.approve-summary").disabled`)
	do(t, alice, "the owner approves", chromedp.Click(approveButton()))
	waitJS(t, alice, "recorded", `document.getElementById("status").textContent.startsWith("Your approval is recorded: 1 of 2 approved.")`)
	waitItem(t, carols, bolt, 1, 2, false)
	openCard(t, carols, bolt)
	do(t, carols, "carol rejects", chromedp.Click(named("Reject")), chromedp.WaitVisible(chromedp.ID("reason")),
		chromedp.SendKeys(chromedp.ID("reason"), "Not this vendor."), chromedp.Click(named("Reject this task")))
	waitJS(t, carols, "rejected", `document.getElementById("status").textContent === "Rejected."`)
	if st := w.WaitState(bolt, countersign.StateRejected); st.RejectedBy != "carol.near" || w.Effects.Count(bolt) != 0 {
		t.Fatalf("the rejected task: rejected by %q, carried out %d times", st.RejectedBy, w.Effects.Count(bolt))
	}
	if st := w.Status("ledger", bolt); st.State != "rejected" || st.Reason == nil || *st.Reason != "Not this vendor." {
		t.Fatalf("the agent reads %+v", st)
	}
	for _, ctx := range []context.Context{alice, bobs} {
		waitJS(t, ctx, "told it was rejected", `document.querySelector('#outcomes .outcome[data-outcome="`+bolt+`"]')?.dataset.state === "rejected"`)
		if got := banner(t, ctx, bolt); !strings.Contains(got, "Rejected by carol.near: Pay Bolt Ltd") || !strings.Contains(got, "Nothing was written. A reason, if carol.near gave one, is sealed for the agent alone.") {
			t.Errorf("the banner reads %q", got)
		}
	}
	if got := banner(t, carols, bolt); got != "" {
		t.Errorf("carol's page tells her own rejection again: %q", got)
	}
	waitJS(t, alice, "the history names carol", `document.querySelector('#history li[data-entry="`+bolt+`"] .entry-outcome')?.textContent === "Rejected by carol.near. Nothing was written."`)
	// Rejected, it did nothing: its summary is what approving would have done.
	if got := run(t, alice, "the entry's rows", chromedp.Evaluate[string](`[...document.querySelectorAll('#history li[data-entry="`+bolt+`"] dt')].map((d) => d.textContent).join("|")`)); !strings.HasPrefix(got, "What approving it would have done|What happened|") {
		t.Errorf("the rejected entry's rows are %q", got)
	}
	do(t, alice, "dismiss the first task's banner", chromedp.Click(chromedp.CSS(`#outcomes .outcome[data-outcome="`+acme+`"] button`)),
		chromedp.Click(chromedp.CSS(`#history li[data-entry="`+bolt+`"] summary`)), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, alice, "inbox-shared-rejected")
	// An approver's history holds none of the owner's tasks.
	if n := run(t, bobs, "bob's history", chromedp.Evaluate[int](`document.querySelectorAll('#history li[data-entry="`+acme+`"], #history li[data-entry="`+bolt+`"]').length`)); n != 0 {
		t.Errorf("bob's history lists %d of the owner's tasks", n)
	}

	// A third task waits when the owner takes bob off the approvers: bob's
	// page drops it at once, saying why.
	cog := payTask(t, w, "ledger", 7, "Pay Cog Inc", "pay $7.00 to Cog Inc by ACH")
	waitItem(t, bobs, cog, 0, 2, false)

	// Settings: the editor reads the approvers and threshold the policy holds.
	settingsOpen(t, alice, "projects")
	item := `#projects-list li[data-project="ledger"]`
	if got := textOf(t, alice, "who approves", "#project-ledger-explained-approvers"); got != "A write that asks waits for 2 of you, bob.near and carol.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone." {
		t.Errorf("the project says %q", got)
	}
	do(t, alice, "edit", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project ledger"]`)), chromedp.WaitVisible(chromedp.ID("project-ledger-approvers-accounts")))
	read := func() []string {
		return run(t, alice, "the editor", chromedp.Evaluate[[]string](`[document.getElementById("project-ledger-approvers-accounts").value,
  document.getElementById("project-ledger-approvers-threshold").value,
  [...document.getElementById("project-ledger-approvers-threshold").options].map((o) => o.textContent).join("|"),
  document.getElementById("project-ledger-approvers-words").textContent]`))
	}
	if got := read(); got[0] != "bob.near, carol.near" || got[1] != "2" || got[2] != "1 of 3|2 of 3|3 of 3" {
		t.Fatalf("the editor reads %q", got)
	}
	typeAccounts := func(s string) {
		t.Helper()
		do(t, alice, "type the approvers", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.getElementById("project-ledger-approvers-accounts"); i.value = ""; i.dispatchEvent(new Event("input")); })()`),
			chromedp.SendKeys(chromedp.ID("project-ledger-approvers-accounts"), s))
	}
	// No approvers: the owner alone; the first one typed sets the threshold to 2.
	typeAccounts("")
	if got := read(); got[1] != "1" || got[2] != "1 (you)" || got[3] != "Only you approve what a write asks." {
		t.Fatalf("with no approvers the editor reads %q", got)
	}
	typeAccounts("dave.near")
	if got := read(); got[1] != "2" || got[3] != "A write that asks waits for each of you and dave.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone." {
		t.Fatalf("with one approver the editor reads %q", got)
	}
	// Refused in the page, before the wallet is asked.
	before := len(walletSigned(t, alice))
	ten := "a1.near a2.near a3.near a4.near a5.near a6.near a7.near a8.near a9.near a10.near"
	for _, c := range []struct{ accounts, said string }{
		{owner, "you are named among the approvers: you approve already"},
		{"bob.near Carol.near", "approver Carol.near is not a NEAR account id"},
		{"bob.near, bob.near", "bob.near is named twice among the approvers"},
		{ten, "10 approvers are named; at most 9 besides you"},
	} {
		typeAccounts(c.accounts)
		do(t, alice, "save", chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
		waitJS(t, alice, "refused", `document.getElementById("project-ledger-save-result")?.hidden === false`)
		if got := textOf(t, alice, "the refusal", "#project-ledger-save-result"); got != "This project cannot be saved: "+c.said+"." && !strings.HasPrefix(got, "This project cannot be saved: "+c.said) {
			t.Errorf("%q: the page says %q, want %q", c.accounts, got, c.said)
		}
	}
	if n := len(walletSigned(t, alice)); n != before {
		t.Fatalf("the wallet was asked %d times for refused approvers", n-before)
	}
	// Each of the owner, carol and dave, bob taken off: saved with the usual confirmation.
	typeAccounts("carol.near, dave.near")
	do(t, alice, "threshold 3", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById("project-ledger-approvers-threshold"); s.value = "3"; s.dispatchEvent(new Event("change")); })()`))
	if got := read(); got[3] != "A write that asks waits for each of you, carol.near and dave.near to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone." {
		t.Fatalf("the editor reads %q", got)
	}
	if hidden := run(t, alice, "the last refusal", chromedp.Evaluate[bool](`getComputedStyle(document.getElementById("project-ledger-save-result")).display === "none"`)); !hidden {
		t.Error("the refusal of the approvers typed before stays beside Save once they changed")
	}
	if said := textOf(t, alice, "the live region", "#status"); strings.Contains(said, "cannot be saved") {
		t.Errorf("the page's status still says %q once the approvers changed", said)
	}
	do(t, alice, "the editor in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("project-ledger-approvers").scrollIntoView({block: "center"})`))
	screen(t, alice, "settings-approvers")
	do(t, alice, "save", chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
	waitJS(t, alice, "saved", `document.getElementById("status").textContent.includes("The project ledger is saved")`)
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		if p.Name != "ledger" {
			continue
		}
		if p.Policy != `{"confirm":["pay"],"approvers":{"accounts":["carol.near","dave.near"],"threshold":3}}` || p.PolicyMode != "ok" ||
			p.PolicyExplained.Approvers == nil || p.PolicyExplained.Approvers.Threshold != 3 {
			t.Fatalf("the saved project: %s (%s) %+v", p.Policy, p.PolicyMode, p.PolicyExplained.Approvers)
		}
		text := `{"connector":"ledger","policy":` + p.Policy + `,"agents":["` + w.Agent + `"]}`
		settingsConfirmed(t, alice, w, approval.ActionSetProject("ledger", text))
	}
	if got := textOf(t, alice, "who approves", "#project-ledger-explained-approvers"); !strings.HasPrefix(got, "A write that asks waits for each of you, carol.near and dave.near") {
		t.Errorf("the saved project says %q", got)
	}
	waitJS(t, bobs, "bob told he was taken off", `document.querySelector('#outcomes .outcome[data-outcome="`+cog+`"]')?.dataset.state === "gone" && !document.querySelector('#tasks li[data-task="`+cog+`"]')`)
	if got := banner(t, bobs, cog); !strings.HasPrefix(got, "No longer yours to approve: Pay Cog Inc") {
		t.Errorf("bob's banner reads %q", got)
	}
	waitItem(t, carols, cog, 0, 2, false)
}
