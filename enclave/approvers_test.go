package enclave_test

import (
	"fmt"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
	"countersign/webpush/webpushtest"
)

// The answer run of a shared task (SPEC §7, §13 `approvers`) counts and
// verifies every kept approval again, under the approvers of the policy
// the envelope names: what the door recorded is never taken on its word.
func TestSharedAnswerRunRecounts(t *testing.T) {
	t.Parallel()
	type setup struct {
		w          *servicetest.World
		bob, carol *device.Device
		id         string
	}
	// approvals sets a world whose ledger needs 2 of the owner, bob and
	// carol, opens a task, has bob and carol approve it (the job queue
	// not running) and returns the run.
	approvals := func(t *testing.T, gap time.Duration) (setup, string) {
		w := servicetest.New(t, storetest.Postgres(t))
		bob, carol := w.NewOwner(), w.NewOwner()
		w.PutProject("ledger", "ledger", fmt.Sprintf(`{"confirm":["pay"],"approvers":{"accounts":["%s","%s"],"threshold":2}}`,
			bob.Account, carol.Account), nil)
		id := w.Pay()
		approve := func(d *device.Device, mutate func(*device.Opened)) string {
			view, err := d.Client.Task(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			o, err := d.Open(view)
			if err != nil {
				t.Fatal(err)
			}
			if mutate != nil {
				mutate(o)
			}
			st, err := d.Approve(ctx, o, nil, "")
			if err != nil {
				t.Fatalf("%s's approval: %v", d.Account, err)
			}
			return st.Run
		}
		approve(bob, nil)
		w.Clock.Add(gap)
		run := approve(carol, nil)
		if run == "" {
			t.Fatal("two approvals of two needed gave no run")
		}
		return setup{w, bob, carol, id}, run
	}
	exec := func(t *testing.T, w *servicetest.World, q string, args ...any) {
		t.Helper()
		if _, err := w.DB.Postgres().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		gap  time.Duration // between bob's and carol's approvals
		// tamper changes what the door kept before the run.
		tamper func(t *testing.T, s setup)
		state  countersign.State
		reason countersign.FailureReason
	}{
		{name: "as approved", state: countersign.StateDone},
		{name: "hours apart", gap: 5 * time.Hour, state: countersign.StateDone},
		{name: "an approval taken away", tamper: func(t *testing.T, s setup) {
			exec(t, s.w, "DELETE FROM task_approvals WHERE task_id = $1 AND account = $2", s.id, s.bob.Account)
		}, state: countersign.StateFailed, reason: "run_refused:confirmation_required"},
		{name: "bob's approval kept as carol's too", tamper: func(t *testing.T, s setup) {
			exec(t, s.w, `UPDATE task_approvals SET approval = (SELECT approval FROM task_approvals WHERE task_id = $1 AND account = $2)
				WHERE task_id = $1 AND account = $3`, s.id, s.bob.Account, s.carol.Account)
		}, state: countersign.StateFailed, reason: "run_refused:confirmation_required"},
		{name: "an approval moved to an account the policy does not name", tamper: func(t *testing.T, s setup) {
			exec(t, s.w, "UPDATE task_approvals SET account = 'mallory.near' WHERE task_id = $1 AND account = $2", s.id, s.bob.Account)
		}, state: countersign.StateFailed, reason: "run_refused:confirmation_required"},
		{name: "an approval's record unreadable", tamper: func(t *testing.T, s setup) {
			exec(t, s.w, "UPDATE task_approvals SET approval = $1 WHERE task_id = $2 AND account = $3", []byte("{}"), s.id, s.bob.Account)
		}, state: countersign.StateFailed, reason: "run_refused:confirmation_required"},
		{name: "the approvers changed since (void)", tamper: func(t *testing.T, s setup) {
			s.w.PutProject("ledger", "ledger", fmt.Sprintf(`{"confirm":["pay"],"approvers":{"accounts":["%s"],"threshold":2}}`, s.carol.Account), nil)
		}, state: countersign.StateVoid},
		{name: "a forged signature (void)", tamper: func(t *testing.T, s setup) {
			var raw []byte
			if err := s.w.DB.Postgres().QueryRow(ctx, "SELECT approval FROM task_approvals WHERE task_id = $1 AND account = $2", s.id, s.bob.Account).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			r, err := approval.ParseRecord(raw)
			if err != nil {
				t.Fatal(err)
			}
			r.At-- // the sentence the signature was made over is not this one
			b, _ := r.Marshal()
			exec(t, s.w, "UPDATE task_approvals SET approval = $1 WHERE task_id = $2 AND account = $3", b, s.id, s.bob.Account)
		}, state: countersign.StateVoid},
		{name: "the last approval past the run's window", tamper: func(t *testing.T, s setup) {
			s.w.Clock.Add(31 * time.Minute)
		}, state: countersign.StateFailed, reason: "run_refused:confirmation_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, run := approvals(t, tc.gap)
			if tc.tamper != nil {
				tc.tamper(t, s)
			}
			if err := s.w.Enclave.Answers.Answer(ctx, s.id, run); err != nil {
				t.Fatal(err)
			}
			got := s.w.Task(s.id)
			if got.State != tc.state || got.FailureReason != tc.reason {
				t.Fatalf("ended %s %q, want %s %q", got.State, got.FailureReason, tc.state, tc.reason)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.state == countersign.StateDone]; s.w.Effects.Count(s.id) != want {
				t.Fatalf("the write happened %d times", s.w.Effects.Count(s.id))
			}
			// Ended, the task keeps who approved and none of the signed
			// approvals.
			if tc.state != countersign.StateDone {
				return
			}
			_ = s.w.DB.Tx(ctx, func(tx store.Tx) error {
				list, err := tx.Approvals(ctx, s.id)
				if err != nil || len(list) != 2 || list[0].Record != nil || list[1].Record != nil {
					t.Errorf("approvals once done: %+v %v", list, err)
				}
				return nil
			})
		})
	}
}

// TestSharedSummaryMismatch: an approver's device shown another summary
// signs it; the door takes the approval (it cannot read the task), and the
// run voids the task (approval_mismatch), nothing written.
func TestSharedSummaryMismatch(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	bob := w.NewOwner()
	w.PutProject("ledger", "ledger", fmt.Sprintf(`{"confirm":["pay"],"approvers":{"accounts":["%s"],"threshold":2}}`, bob.Account), nil)
	id := w.Pay()
	view, err := bob.Client.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	o, err := bob.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	o.Envelope.Display.Summary = "pay $1 to someone else"
	if st, err := bob.Approve(ctx, o, nil, ""); err != nil || st.State != "open" {
		t.Fatalf("bob's approval: %+v %v", st, err)
	}
	st, err := w.Owner.Approve(ctx, w.Open(id), nil, "")
	if err != nil || st.Run == "" {
		t.Fatalf("the owner's approval: %+v %v", st, err)
	}
	if err := w.Enclave.Answers.Answer(ctx, id, st.Run); err != nil {
		t.Fatal(err)
	}
	if got := w.Task(id); got.State != countersign.StateVoid || w.Effects.Count(id) != 0 {
		t.Fatalf("ended %s with %d writes", got.State, w.Effects.Count(id))
	}
}

// TestSharedTaskPushedToApprovers: a shared task is pushed, once, to each
// subscribed device of the owner and of each approver; a task the owner
// alone approves is pushed to the owner's alone.
func TestSharedTaskPushedToApprovers(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	fake := webpushtest.New(t)
	bob, carol := w.NewOwner(), w.NewOwner()
	w.PutProject("ledger", "ledger", fmt.Sprintf(`{"confirm":["pay"],"approvers":{"accounts":["%s","%s"],"threshold":2}}`,
		bob.Account, carol.Account), nil)
	subOwner, _ := subscribe(t, w.Owner, fake)
	subBob, _ := subscribe(t, bob, fake) // carol subscribes nothing
	w.StartJobs()
	id := w.Pay()
	pushes := fake.Wait(2, 15*time.Second)
	if len(pushes) != 2 {
		t.Fatalf("%d pushes for a shared task", len(pushes))
	}
	left := int(w.Task(id).ExpiresAt.Sub(w.Clock.Now()) / time.Second)
	bySub := map[string]webpushtest.Push{}
	for _, p := range pushes {
		bySub[p.Subscription] = p
	}
	checkPush(t, bySub[subOwner.ID], subOwner, "high", left)
	checkPush(t, bySub[subBob.ID], subBob, "high", left)
	// An input task of the same project is the owner's alone.
	if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "collect", nil, nil); err != nil {
		t.Fatal(err)
	}
	_ = fake.Wait(3, 15*time.Second)
	time.Sleep(time.Second)
	if got := fake.Pushes(); len(got) != 3 || got[2].Subscription != subOwner.ID {
		t.Fatalf("pushes after an input task: %d", len(got))
	}
}
