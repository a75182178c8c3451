package web_test

// M-of-N approvers (SPEC §7, §13 `approvers`) in the page.

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/client"
	"countersign/device"
	"countersign/sealing"
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
