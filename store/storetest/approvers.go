package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

func approverTests() []storeTest {
	return []storeTest{
		{"SharedTaskListedToItsApprovers", testSharedTaskListed},
		{"ApprovalOncePerAccount", testApprovalOncePerAccount},
		{"ApprovalOnceUnderConcurrency", testApprovalOnceUnderConcurrency},
		{"EndingDropsApprovalRecords", testEndingDropsApprovalRecords},
		{"DropApprover", testDropApprover},
		{"DevicesOfSeveralAccounts", testDevicesOf},
		{"ApproversAreTold", testApproversAreTold},
		{"ApproversWebhooksGetEvents", testApproversWebhooks},
		{"RejectedByIsKept", testRejectedBy},
		{"PurgeTakesApprovers", testPurgeTakesApprovers},
	}
}

// NewSharedTask returns a confirm task of alice.near for tests that needs
// threshold approvals of her and its approvers.
func NewSharedTask(id string, threshold int) (store.Task, store.TaskCiphertext) {
	k, c := NewTask(id, "alice.near", "bot.near")
	k.Kind, k.Operation, k.Supplies, k.Threshold = countersign.KindConfirm, "confirm", countersign.SuppliesNone, threshold
	return k, c
}

// share inserts a shared task and lists its approvers.
func share(t *testing.T, s store.Store, k store.Task, c store.TaskCiphertext, accounts ...string) {
	t.Helper()
	if err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.InsertTask(ctx, k, c); err != nil {
			return err
		}
		return tx.ShareTask(ctx, k, accounts)
	}); err != nil {
		t.Fatalf("share %s: %v", k.ID, err)
	}
}

func addApproval(t *testing.T, s store.Store, id, account string, at time.Time) bool {
	t.Helper()
	var added bool
	if err := s.Tx(ctx, func(tx store.Tx) (err error) {
		added, err = tx.AddApproval(ctx, store.Approval{TaskID: id, Account: account, At: at, Record: []byte(`{"account":"` + account + `"}`)})
		return err
	}); err != nil {
		t.Fatalf("approval of %s by %s: %v", id, account, err)
	}
	return added
}

func approvalsOf(t *testing.T, s store.Store, id string) []store.Approval {
	t.Helper()
	var list []store.Approval
	if err := s.Tx(ctx, func(tx store.Tx) (err error) {
		list, err = tx.Approvals(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return list
}

func inboxIDs(t *testing.T, s store.Store, account string, waiting bool, before *store.Task) []string {
	t.Helper()
	var ids []string
	if err := s.Tx(ctx, func(tx store.Tx) error {
		list, err := tx.InboxTasks(ctx, account, waiting, before, 10)
		for _, k := range list {
			ids = append(ids, k.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A shared task keeps its threshold and its approvers, and each approver's
// inbox lists it beside the approver's own tasks, newest first; an account
// not listed sees nothing of it.
func testSharedTaskListed(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "carol.near", "bob.near")
	own, oc := NewTask("run2-1", "bob.near", "bot.near")
	own.CreatedAt = t0.Add(time.Minute)
	insert(t, s, own, oc)
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.Task(ctx, k.ID)
		if err != nil || got.Threshold != 2 || !got.Shared() || fmt.Sprint(got) != fmt.Sprint(k) {
			t.Errorf("shared task read back %+v %v", got, err)
		}
		approvers, err := tx.TaskApprovers(ctx, k.ID)
		if err != nil || fmt.Sprint(approvers) != "[bob.near carol.near]" {
			t.Errorf("approvers %v %v", approvers, err)
		}
		if none, err := tx.TaskApprovers(ctx, own.ID); err != nil || none != nil {
			t.Errorf("an unshared task's approvers %v %v", none, err)
		}
		return nil
	})
	if got := inboxIDs(t, s, "bob.near", true, nil); fmt.Sprint(got) != "[run2-1 run1-1]" {
		t.Errorf("bob's waiting tasks %v", got)
	}
	if got := inboxIDs(t, s, "bob.near", true, &own); fmt.Sprint(got) != "[run1-1]" {
		t.Errorf("bob's waiting tasks after his own %v", got)
	}
	if got := inboxIDs(t, s, "alice.near", true, nil); fmt.Sprint(got) != "[run1-1]" {
		t.Errorf("alice's waiting tasks %v", got)
	}
	if got := inboxIDs(t, s, "dave.near", true, nil); got != nil {
		t.Errorf("an account not listed sees %v", got)
	}
	if got := inboxIDs(t, s, "carol.near", false, nil); got != nil {
		t.Errorf("carol's closed tasks %v", got)
	}
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateCancelled, countersign.ActorOwner, ""), At: t0})
	if got := inboxIDs(t, s, "carol.near", false, nil); fmt.Sprint(got) != "[run1-1]" {
		t.Errorf("carol's closed tasks once it ended %v", got)
	}
}

// Each account's approval is recorded once; the list is in the order they
// came.
func testApprovalOncePerAccount(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 3)
	share(t, s, k, c, "bob.near", "carol.near")
	if !addApproval(t, s, k.ID, "carol.near", t0.Add(2*time.Second)) || !addApproval(t, s, k.ID, "alice.near", t0.Add(3*time.Second)) {
		t.Fatal("a first approval was not recorded")
	}
	if addApproval(t, s, k.ID, "carol.near", t0.Add(4*time.Second)) {
		t.Error("an account's second approval was recorded")
	}
	list := approvalsOf(t, s, k.ID)
	var got []string
	for _, a := range list {
		got = append(got, a.Account+"@"+fmt.Sprint(a.At.Sub(t0).Seconds())+" "+string(a.Record))
	}
	if want := `[carol.near@2 {"account":"carol.near"} alice.near@3 {"account":"alice.near"}]`; fmt.Sprint(got) != want {
		t.Errorf("approvals %v, want %v", got, want)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.AddApproval(ctx, store.Approval{TaskID: k.ID, Account: "bob.near", At: t0}); err == nil {
			t.Error("an approval without its record was recorded")
		}
		return nil
	})
}

// Many approvals of one account at once: exactly one is recorded.
func testApprovalOnceUnderConcurrency(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "bob.near")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Tx(ctx, func(tx store.Tx) error {
				added, err := tx.AddApproval(ctx, store.Approval{TaskID: k.ID, Account: "bob.near", At: t0, Record: []byte("{}")})
				if added {
					wins.Add(1)
				}
				return err
			})
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || len(approvalsOf(t, s, k.ID)) != 1 {
		t.Fatalf("one account's approval was recorded %d times", wins.Load())
	}
}

// Approving keeps the approvals' records for the answer run; ending the
// task drops them and keeps who approved when. The answer run reads them
// with its inputs.
func testEndingDropsApprovalRecords(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "bob.near")
	addApproval(t, s, k.ID, "bob.near", t0)
	addApproval(t, s, k.ID, "alice.near", t0.Add(time.Second))
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0, Run: "r2", AnswerRun: "r2"})
	inTx(t, s, func(tx store.Tx) error {
		in, err := tx.RunInputs(ctx, k.ID)
		if err != nil || len(in.Approvals) != 2 || in.Approvals[0].Account != "bob.near" || in.Approvals[1].Record == nil {
			t.Errorf("run inputs' approvals %+v %v", in.Approvals, err)
		}
		return nil
	})
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateApproved, countersign.StateVoid, countersign.ActorPlatform, ""), At: t0})
	list := approvalsOf(t, s, k.ID)
	if len(list) != 2 || list[0].Account != "bob.near" || !list[1].At.Equal(t0.Add(time.Second)) {
		t.Fatalf("who approved was not kept: %+v", list)
	}
	for _, a := range list {
		if a.Record != nil {
			t.Errorf("an ended task keeps %s's signed approval", a.Account)
		}
	}
	// An unshared task's inputs have none.
	u, uc := NewTask("run2-1", "alice.near", "bot.near")
	insert(t, s, u, uc)
	inTx(t, s, func(tx store.Tx) error {
		if in, err := tx.RunInputs(ctx, u.ID); err != nil || in.Approvals != nil {
			t.Errorf("an unshared task's approvals %+v %v", in.Approvals, err)
		}
		return nil
	})
}

// Dropping an approver takes it off the project's waiting tasks, with its
// approvals and the copies wrapped to its devices; another project's
// tasks, ended tasks and the other approvers keep theirs.
func testDropApprover(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		for _, d := range []store.Device{device("bd1", "bob.near", t0), device("bd2", "bob.near", t0), device("cd1", "carol.near", t0)} {
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	copies := map[string][]byte{"ad1": []byte("a"), "bd1": []byte("b1"), "bd2": []byte("b2"), "cd1": []byte("c")}
	waiting, wc := NewSharedTask("run1-1", 2)
	wc.DeviceCopies = copies
	share(t, s, waiting, wc, "bob.near", "carol.near")
	ended, ec := NewSharedTask("run2-1", 2)
	ec.DeviceCopies = copies
	share(t, s, ended, ec, "bob.near", "carol.near")
	other, oc := NewSharedTask("run3-1", 2)
	other.ProjectUUID = "00000000-0000-4000-8000-000000000003"
	oc.DeviceCopies = copies
	share(t, s, other, oc, "bob.near")
	for _, id := range []string{waiting.ID, ended.ID, other.ID} {
		addApproval(t, s, id, "bob.near", t0)
		addApproval(t, s, id, "carol.near", t0)
	}
	move(t, s, store.Move{ID: ended.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	bob, stop := subscriber(t, s).Subscribe("bob.near")
	defer stop()
	var ids []string
	inTx(t, s, func(tx store.Tx) (err error) {
		ids, err = tx.DropApprover(ctx, waiting.ProjectUUID, "bob.near")
		return err
	})
	if fmt.Sprint(ids) != "[run1-1]" {
		t.Errorf("dropped from %v, want [run1-1]", ids)
	}
	// bob is told the task left his inbox, and of nothing else.
	if ev := next(t, bob); ev.TaskID != waiting.ID || ev.Owner != "bob.near" || ev.State != countersign.StateOpen {
		t.Errorf("bob heard %+v of being dropped", ev)
	}
	select {
	case ev := <-bob:
		t.Errorf("bob heard more: %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	inTx(t, s, func(tx store.Tx) error {
		if got, _ := tx.TaskApprovers(ctx, waiting.ID); fmt.Sprint(got) != "[carol.near]" {
			t.Errorf("approvers left %v", got)
		}
		have, _ := tx.DeviceCopies(ctx, waiting.ID)
		if fmt.Sprint(have) != "[ad1 cd1]" {
			t.Errorf("copies left %v", have)
		}
		if got, _ := tx.TaskApprovers(ctx, other.ID); fmt.Sprint(got) != "[bob.near]" {
			t.Errorf("another project's task lost its approver: %v", got)
		}
		if have, _ := tx.DeviceCopies(ctx, other.ID); len(have) != 4 {
			t.Errorf("another project's task lost copies: %v", have)
		}
		if got, _ := tx.TaskApprovers(ctx, ended.ID); fmt.Sprint(got) != "[bob.near carol.near]" {
			t.Errorf("an ended task lost its approver: %v", got)
		}
		again, err := tx.DropApprover(ctx, waiting.ProjectUUID, "bob.near")
		if err != nil || again != nil {
			t.Errorf("dropping again: %v %v", again, err)
		}
		return nil
	})
	for id, want := range map[string]string{waiting.ID: "[carol.near]", other.ID: "[bob.near carol.near]", ended.ID: "[bob.near carol.near]"} {
		var got []string
		for _, a := range approvalsOf(t, s, id) {
			got = append(got, a.Account)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("approvals of %s: %v, want %s", id, got, want)
		}
	}
	if got := inboxIDs(t, s, "bob.near", true, nil); fmt.Sprint(got) != "[run3-1]" {
		t.Errorf("bob still sees %v", got)
	}
}

// DevicesOf reads the active devices of several accounts, as ActiveDevices
// reads one's.
func testDevicesOf(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		ended := device("b3", "bob.near", t0)
		for _, d := range []store.Device{device("c1", "carol.near", t0), device("b2", "bob.near", t0.Add(time.Minute)),
			device("b1", "bob.near", t0), ended, device("d1", "dave.near", t0)} {
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		if _, err := tx.EndDevice(ctx, ended.ID, "signed_out", t0); err != nil {
			return err
		}
		list, err := tx.DevicesOf(ctx, []string{"carol.near", "bob.near", "nobody.near"}, t0.Add(time.Hour))
		var got []string
		for _, d := range list {
			got = append(got, d.ID)
		}
		if err != nil || fmt.Sprint(got) != "[b1 b2 c1]" {
			t.Errorf("devices %v %v", got, err)
		}
		if late, _ := tx.DevicesOf(ctx, []string{"bob.near"}, t0.Add(25*time.Hour)); late != nil {
			t.Errorf("devices past their sessions %v", late)
		}
		if none, err := tx.DevicesOf(ctx, nil, t0); err != nil || none != nil {
			t.Errorf("devices of nobody %v %v", none, err)
		}
		return nil
	})
}

// The approvers of a shared task hear of it as its owner does: when it
// opens, when its approvals change (NotifyTask) and when it moves. A
// rolled back change tells nobody.
func testApproversAreTold(t *testing.T, s store.Store) {
	sub := subscriber(t, s)
	alice, stopA := sub.Subscribe("alice.near")
	defer stopA()
	bob, stopB := sub.Subscribe("bob.near")
	defer stopB()
	k, c := NewSharedTask("run1-1", 2)
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.InsertTask(ctx, k, c); err != nil {
			return err
		}
		if err := tx.ShareTask(ctx, k, []string{"bob.near"}); err != nil {
			return err
		}
		return errors.New("rolled back")
	})
	share(t, s, k, c, "bob.near")
	for name, ch := range map[string]<-chan store.TaskEvent{"alice": alice, "bob": bob} {
		if ev := next(t, ch); ev.TaskID != k.ID || ev.State != countersign.StateOpen {
			t.Errorf("%s heard %+v of the opening", name, ev)
		}
	}
	inTx(t, s, func(tx store.Tx) error { return tx.NotifyTask(ctx, k.ID, countersign.StateOpen) })
	for name, ch := range map[string]<-chan store.TaskEvent{"alice": alice, "bob": bob} {
		if ev := next(t, ch); ev.TaskID != k.ID || ev.State != countersign.StateOpen || ev.Owner != name+".near" {
			t.Errorf("%s heard %+v of an approval", name, ev)
		}
	}
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateApproved, countersign.ActorApprover, ""), At: t0, Run: "r2", AnswerRun: "r2"})
	for name, ch := range map[string]<-chan store.TaskEvent{"alice": alice, "bob": bob} {
		if ev := next(t, ch); ev.TaskID != k.ID || ev.State != countersign.StateApproved {
			t.Errorf("%s heard %+v of the approval", name, ev)
		}
	}
	select {
	case ev := <-bob:
		t.Errorf("bob heard more: %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

// Each approver with a webhook gets each event of a shared task in its own
// outbox, beside the owner's; events of unshared tasks go to the owner's
// alone.
func testApproversWebhooks(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		for _, acc := range []string{"alice.near", "bob.near"} {
			if err := tx.PutWebhook(ctx, store.Webhook{Owner: acc, ID: "wh-" + acc, SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("s")}); err != nil {
				return err
			}
		}
		return nil
	})
	queued := func() int {
		var g store.Gauges
		inTx(t, s, func(tx store.Tx) (err error) { g, err = tx.Gauges(ctx); return err })
		return g.Queued[store.DeliveryJob{}.Kind()]
	}
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "bob.near", "carol.near") // carol has no webhook
	if n := queued(); n != 2 {
		t.Errorf("%d deliveries queued for a shared task's opening, want 2 (alice's and bob's)", n)
	}
	// A change of approvals alone sends no event.
	inTx(t, s, func(tx store.Tx) error { return tx.NotifyTask(ctx, k.ID, countersign.StateOpen) })
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateExpired, countersign.ActorPlatform, ""), At: t0})
	if n := queued(); n != 4 {
		t.Errorf("%d deliveries queued after its expiry, want 4", n)
	}
	u, uc := NewTask("run2-1", "alice.near", "bot.near")
	insert(t, s, u, uc)
	if n := queued(); n != 5 {
		t.Errorf("%d deliveries queued after an unshared task, want 5", n)
	}
}

// A rejection names who rejected it; no other move names anyone.
func testRejectedBy(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "bob.near")
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateRejected, countersign.ActorApprover, ""), At: t0, By: "bob.near"})
	u, uc := NewTask("run2-1", "alice.near", "bot.near")
	insert(t, s, u, uc)
	move(t, s, store.Move{ID: u.ID, Move: step(countersign.StateOpen, countersign.StateCancelled, countersign.ActorOwner, ""), At: t0, By: "alice.near"})
	inTx(t, s, func(tx store.Tx) error {
		if got, _ := tx.Task(ctx, k.ID); got.RejectedBy != "bob.near" || got.State != countersign.StateRejected {
			t.Errorf("rejected task %+v", got)
		}
		if got, _ := tx.Task(ctx, u.ID); got.RejectedBy != "" {
			t.Errorf("a cancelled task names %q as its rejecter", got.RejectedBy)
		}
		events, _ := tx.Events(ctx, k.ID)
		if len(events) != 1 || events[0].Actor != countersign.ActorApprover {
			t.Errorf("events %+v", events)
		}
		return nil
	})
}

// Purging an outcome takes its approvers and approvals with it.
func testPurgeTakesApprovers(t *testing.T, s store.Store) {
	k, c := NewSharedTask("run1-1", 2)
	share(t, s, k, c, "bob.near")
	addApproval(t, s, k.ID, "bob.near", t0)
	move(t, s, store.Move{ID: k.ID, Move: stepOf(countersign.KindConfirm, countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	kept, kc := NewSharedTask("run2-1", 2)
	share(t, s, kept, kc, "bob.near")
	addApproval(t, s, kept.ID, "bob.near", t0)
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.Purge(ctx, t0.Add(time.Hour), t0.Add(time.Minute), t0, t0)
		return err
	})
	if got := approvalsOf(t, s, k.ID); got != nil {
		t.Errorf("a purged task's approvals %+v", got)
	}
	inTx(t, s, func(tx store.Tx) error {
		if got, _ := tx.TaskApprovers(ctx, k.ID); got != nil {
			t.Errorf("a purged task's approvers %v", got)
		}
		if got, _ := tx.TaskApprovers(ctx, kept.ID); !slices.Equal(got, []string{"bob.near"}) {
			t.Errorf("a waiting task's approvers after a purge %v", got)
		}
		return nil
	})
	if got := approvalsOf(t, s, kept.ID); len(got) != 1 {
		t.Errorf("a waiting task's approvals after a purge %+v", got)
	}
}
