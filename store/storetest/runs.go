package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/store"
)

func runTests() []storeTest {
	return []storeTest{
		{"RunRoundTrip", testRunRoundTrip},
		{"RunRefusals", testRunRefusals},
		{"RunEndingWithItsTasks", testRunEndingWithItsTasks},
		{"ClaimCallOnce", testClaimCallOnce},
		{"ClaimCallUnderConcurrency", testClaimCallUnderConcurrency},
		{"ClaimCallRefusals", testClaimCallRefusals},
		{"AnswerCallRefusals", testAnswerCallRefusals},
		{"RolledBackClaimIsNotThere", testRolledBackClaim},
		{"PreparerTasks", testPreparerTasks},
		{"PreparerTasksRefusals", testPreparerTasksRefusals},
		{"ForgetTask", testForgetTask},
	}
}

// NewRun returns a run for tests that has not finished.
func NewRun(id string) store.Run {
	return store.Run{
		ID: id, Agent: "bot.near", Owner: "alice.near", ProjectUUID: "uuid-1", Operation: "guess_start",
		Price: 10_000, ComputeLimit: 2500 * time.Millisecond, InputSHA256: strings.Repeat("a", 64),
		StartedAt: t0, ReceiptKeyID: 7, ReceiptKey: []byte("sealed receipt key"),
	}
}

func readRun(t *testing.T, s store.Store, id string) store.Run {
	t.Helper()
	var r store.Run
	inTx(t, s, func(tx store.Tx) (err error) {
		r, err = tx.Run(ctx, id)
		return err
	})
	return r
}

func testRunRoundTrip(t *testing.T, s store.Store) {
	r := NewRun("run1")
	inTx(t, s, func(tx store.Tx) error { return tx.InsertRun(ctx, r) })
	if got := readRun(t, s, "run1"); !reflect.DeepEqual(got, r) {
		t.Errorf("run read back\n got %+v\nwant %+v", got, r)
	}
	answer := NewRun("run2")
	answer.Operation, answer.Price, answer.TaskID = "guess", 0, "run1-1"
	answer.ComputeLimit = time.Minute
	answer.ReceiptKeyID, answer.ReceiptKey = 0, nil // none kept: read back as none
	inTx(t, s, func(tx store.Tx) error { return tx.InsertRun(ctx, answer) })

	k, c := NewTask("run1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	out, receipt := strings.Repeat("b", 64), `{"run":"run1","sig":"x"}`
	taskReceipt := `{"run":"run1","task_id":"run1-1"}`
	inTx(t, s, func(tx store.Tx) error {
		return tx.FinishRun(ctx, "run1", t0.Add(3*time.Second), out, receipt, store.TaskReceipt{TaskID: "run1-1", Receipt: taskReceipt})
	})
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.TaskReceipt(ctx, "run1-1")
		if err == nil && got != taskReceipt {
			t.Errorf("the task's receipt kept with its run's end: %q", got)
		}
		return err
	})
	want := r
	want.FinishedAt, want.OutputSHA256, want.Receipt = t0.Add(3*time.Second), out, receipt
	if got := readRun(t, s, "run1"); !reflect.DeepEqual(got, want) {
		t.Errorf("finished run\n got %+v\nwant %+v", got, want)
	}
	if got := readRun(t, s, "run2"); !reflect.DeepEqual(got, answer) {
		t.Errorf("another run changed when one finished\n got %+v\nwant %+v", got, answer)
	}

	// A run finishes once: its receipt is not replaced.
	err := s.Tx(ctx, func(tx store.Tx) error {
		return tx.FinishRun(ctx, "run1", t0.Add(time.Hour), strings.Repeat("c", 64), "forged")
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second FinishRun: %v, want ErrConflict", err)
	}
	if got := readRun(t, s, "run1"); !reflect.DeepEqual(got, want) {
		t.Errorf("a refused FinishRun changed the run: %+v", got)
	}
}

// testRunEndingWithItsTasks: a run that opens tasks and ends in the same
// transaction keeps each task's own receipt, and a task opened before it
// keeps its own.
func testRunEndingWithItsTasks(t *testing.T, s store.Store) {
	earlier, c := NewTask("run4-0", "alice.near", "bot.near")
	insert(t, s, earlier, c)
	receipts := map[string]string{"run4-0": `{"task_id":"run4-0"}`, "run4-1": `{"task_id":"run4-1"}`, "run4-2": `{"task_id":"run4-2"}`}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.InsertRun(ctx, NewRun("run4")); err != nil {
			return err
		}
		for _, id := range []string{"run4-1", "run4-2"} {
			k, c := NewTask(id, "alice.near", "bot.near")
			if err := tx.InsertTask(ctx, k, c); err != nil {
				return err
			}
		}
		return tx.FinishRun(ctx, "run4", t0.Add(time.Second), strings.Repeat("b", 64), `{"run":"run4"}`,
			store.TaskReceipt{TaskID: "run4-2", Receipt: receipts["run4-2"]},
			store.TaskReceipt{TaskID: "run4-0", Receipt: receipts["run4-0"]},
			store.TaskReceipt{TaskID: "run4-1", Receipt: receipts["run4-1"]})
	})
	inTx(t, s, func(tx store.Tx) error {
		for id, want := range receipts {
			if got, err := tx.TaskReceipt(ctx, id); err != nil || got != want {
				t.Errorf("task %s's receipt: %q, %v; want %q", id, got, err, want)
			}
		}
		return nil
	})
}

func testRunRefusals(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error { return tx.InsertRun(ctx, NewRun("run1")) })
	for _, tc := range []struct {
		name string
		f    func(tx store.Tx) error
		want error // nil: any refusal
	}{
		{"a taken id", func(tx store.Tx) error { return tx.InsertRun(ctx, NewRun("run1")) }, store.ErrConflict},
		{"no id", func(tx store.Tx) error { return tx.InsertRun(ctx, NewRun("")) }, nil},
		{"finish of an unknown run", func(tx store.Tx) error {
			return tx.FinishRun(ctx, "run9", t0, "", "")
		}, store.ErrConflict},
		{"the receipt of an unknown task", func(tx store.Tx) error {
			return tx.FinishRun(ctx, "run1", t0, "", "", store.TaskReceipt{TaskID: "nosuch-1", Receipt: "x"})
		}, store.ErrNotFound},
		{"an unknown run", func(tx store.Tx) error {
			_, err := tx.Run(ctx, "run9")
			return err
		}, store.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Tx(ctx, tc.f)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("got %v, want a refusal (%v)", err, tc.want)
			}
		})
	}
	if got := readRun(t, s, "run1"); !reflect.DeepEqual(got, NewRun("run1")) {
		t.Errorf("refusals changed a run: %+v", got)
	}
}

// NewCall returns an idempotent call for tests.
func NewCall(key, body string) store.IdempotentCall {
	return store.IdempotentCall{Agent: "bot.near", Owner: "alice.near", Project: "github", Key: key,
		BodySHA256: body, BodyKeyID: 1, CreatedAt: t0}
}

func claim(t *testing.T, s store.Store, c store.IdempotentCall) (store.IdempotentCall, bool) {
	t.Helper()
	var first store.IdempotentCall
	var claimed bool
	inTx(t, s, func(tx store.Tx) (err error) {
		first, claimed, err = tx.ClaimCall(ctx, c)
		return err
	})
	return first, claimed
}

func testClaimCallOnce(t *testing.T, s store.Store) {
	c := NewCall("key-1", "body-1")
	first, claimed := claim(t, s, c)
	if !claimed || !reflect.DeepEqual(first, c) {
		t.Fatalf("first claim = %+v, %v; want the call, claimed", first, claimed)
	}
	later := NewCall("key-1", "body-2")
	later.CreatedAt = t0.Add(time.Minute)
	first, claimed = claim(t, s, later)
	if claimed || !reflect.DeepEqual(first, c) {
		t.Fatalf("second claim = %+v, %v; want the first call, not claimed", first, claimed)
	}

	// The key is per agent, owner and project.
	for name, change := range map[string]func(c *store.IdempotentCall){
		"agent":   func(c *store.IdempotentCall) { c.Agent = "other.near" },
		"owner":   func(c *store.IdempotentCall) { c.Owner = "bob.near" },
		"project": func(c *store.IdempotentCall) { c.Project = "gmail" },
		"key":     func(c *store.IdempotentCall) { c.Key = "key-2" },
	} {
		o := NewCall("key-1", "body-3")
		change(&o)
		if _, claimed := claim(t, s, o); !claimed {
			t.Errorf("the same key for another %s was not claimed", name)
		}
	}

	// The answer, once stored, is what a later claim returns.
	answered := c
	answered.AnswerKeyID, answered.Answer = 3, []byte("sealed-answer")
	inTx(t, s, func(tx store.Tx) error { return tx.AnswerCall(ctx, answered) })
	first, claimed = claim(t, s, NewCall("key-1", "body-1"))
	if claimed || !reflect.DeepEqual(first, answered) {
		t.Fatalf("claim after the answer = %+v, %v; want %+v", first, claimed, answered)
	}
	other := NewCall("key-1", "body-3")
	other.Agent = "other.near"
	first, _ = claim(t, s, other)
	if first.Answer != nil {
		t.Errorf("another agent's claim got an answer: %+v", first)
	}
}

func testClaimCallUnderConcurrency(t *testing.T, s store.Store) {
	const tries = 20
	var wins atomic.Int32
	var winner atomic.Value
	firsts := make([]store.IdempotentCall, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				first, claimed, err := tx.ClaimCall(ctx, NewCall("key-1", fmt.Sprintf("body-%d", i)))
				if claimed {
					wins.Add(1)
					winner.Store(first.BodySHA256)
				}
				firsts[i] = first
				return err
			})
			if err != nil {
				t.Errorf("claim %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of %d concurrent claims of one key claimed it, want exactly 1", wins.Load(), tries)
	}
	for i, f := range firsts {
		if f.BodySHA256 != winner.Load() {
			t.Errorf("claim %d saw the call with body %q, want the winner's %q", i, f.BodySHA256, winner.Load())
		}
	}
}

func testClaimCallRefusals(t *testing.T, s store.Store) {
	for _, tc := range []struct {
		name   string
		change func(c *store.IdempotentCall)
	}{
		{"no agent", func(c *store.IdempotentCall) { c.Agent = "" }},
		{"no owner", func(c *store.IdempotentCall) { c.Owner = "" }},
		{"no project", func(c *store.IdempotentCall) { c.Project = "" }},
		{"no key", func(c *store.IdempotentCall) { c.Key = "" }},
		{"no body hash", func(c *store.IdempotentCall) { c.BodySHA256 = "" }},
		{"no body key id", func(c *store.IdempotentCall) { c.BodyKeyID = 0 }},
		{"no time", func(c *store.IdempotentCall) { c.CreatedAt = time.Time{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCall("key-1", "body-1")
			tc.change(&c)
			var claimed bool
			err := s.Tx(ctx, func(tx store.Tx) (err error) {
				_, claimed, err = tx.ClaimCall(ctx, c)
				return err
			})
			if claimed || err == nil || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("ClaimCall(%+v) = %v, %v; want a refusal", c, claimed, err)
			}
		})
	}
	// Nothing was claimed by the refusals.
	if _, claimed := claim(t, s, NewCall("key-1", "body-1")); !claimed {
		t.Error("a refused claim held the key")
	}
}

func testAnswerCallRefusals(t *testing.T, s store.Store) {
	claim(t, s, NewCall("key-1", "body-1"))
	answer := func(c store.IdempotentCall) store.IdempotentCall {
		c.AnswerKeyID, c.Answer = 1, []byte("sealed-answer")
		return c
	}
	inTx(t, s, func(tx store.Tx) error { return tx.AnswerCall(ctx, answer(NewCall("key-1", "body-1"))) })
	unclaimed := answer(NewCall("key-2", "body-1"))
	otherBody := answer(NewCall("key-1", "body-2"))
	otherKeyID := answer(NewCall("key-1", "body-1"))
	otherKeyID.BodyKeyID = 2
	noAnswer := NewCall("key-1", "body-1")
	for _, tc := range []struct {
		name string
		c    store.IdempotentCall
		want error // nil: any refusal
	}{
		{"an unclaimed key", unclaimed, store.ErrNotFound},
		{"another body", otherBody, store.ErrNotFound},
		{"the body hashed under another key id", otherKeyID, store.ErrNotFound},
		{"answered already", answer(NewCall("key-1", "body-1")), store.ErrConflict},
		{"no answer", noAnswer, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Tx(ctx, func(tx store.Tx) error { return tx.AnswerCall(ctx, tc.c) })
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("AnswerCall = %v, want a refusal (%v)", err, tc.want)
			}
		})
	}
	if first, _ := claim(t, s, NewCall("key-1", "body-1")); string(first.Answer) != "sealed-answer" || first.AnswerKeyID != 1 {
		t.Errorf("refusals changed the answer: %+v", first)
	}
}

func testRolledBackClaim(t *testing.T, s store.Store) {
	boom := errors.New("the call failed before it committed")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if _, claimed, err := tx.ClaimCall(ctx, NewCall("key-1", "body-1")); !claimed || err != nil {
			return fmt.Errorf("claim in the transaction: %v, %w", claimed, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if first, claimed := claim(t, s, NewCall("key-1", "body-2")); !claimed || first.BodySHA256 != "body-2" {
		t.Fatalf("after a rolled back claim: %+v, %v; want a new claim", first, claimed)
	}
}

func preparerTasks(t *testing.T, s store.Store, owner, preparer string, state countersign.State, limit int) []string {
	t.Helper()
	var ids []string
	inTx(t, s, func(tx store.Tx) error {
		list, err := tx.PreparerTasks(ctx, owner, "", preparer, state, limit)
		for _, k := range list {
			if k.Owner != owner || k.Preparer != preparer || k.Forgotten {
				t.Errorf("PreparerTasks(%s, %s) listed %+v", owner, preparer, k)
			}
			ids = append(ids, k.ID)
		}
		return err
	})
	return ids
}

func testPreparerTasks(t *testing.T, s store.Store) {
	// bot.near's tasks for alice.near: created a minute apart, with two
	// sharing a second (ordered by id, descending).
	for _, task := range []struct {
		id      string
		minutes int
	}{{"r1-1", 0}, {"r2-1", 1}, {"r2-2", 1}, {"r3-1", 2}, {"r4-1", 3}, {"r5-1", 4}} {
		k, c := NewTask(task.id, "alice.near", "bot.near")
		k.CreatedAt = t0.Add(time.Duration(task.minutes) * time.Minute)
		insert(t, s, k, c)
	}
	// Tasks that must never appear in bot.near's list for alice.near.
	for _, k := range []struct{ id, owner, preparer string }{
		{"x1-1", "alice.near", "other.near"},
		{"x2-1", "bob.near", "bot.near"},
		{"x3-1", "bob.near", "other.near"},
	} {
		task, c := NewTask(k.id, k.owner, k.preparer)
		task.CreatedAt = t0.Add(time.Hour)
		insert(t, s, task, c)
	}
	move(t, s, store.Move{ID: "r2-2", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "r3-1", Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "r4-1", Move: step(countersign.StateOpen, countersign.StateCancelled, countersign.ActorAgent, ""), At: t0})
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.ForgetTask(ctx, "r4-1")
		return err
	})

	for _, tc := range []struct {
		name, owner, preparer string
		state                 countersign.State
		limit                 int
		want                  string
	}{
		{"all, newest first", "alice.near", "bot.near", "", 50, "[r5-1 r3-1 r2-2 r2-1 r1-1]"},
		{"limited", "alice.near", "bot.near", "", 3, "[r5-1 r3-1 r2-2]"},
		{"one", "alice.near", "bot.near", "", 1, "[r5-1]"},
		{"open", "alice.near", "bot.near", countersign.StateOpen, 50, "[r5-1 r2-1 r1-1]"},
		{"open, limited", "alice.near", "bot.near", countersign.StateOpen, 2, "[r5-1 r2-1]"},
		{"approved", "alice.near", "bot.near", countersign.StateApproved, 50, "[r2-2]"},
		{"rejected", "alice.near", "bot.near", countersign.StateRejected, 50, "[r3-1]"},
		{"forgotten are not listed", "alice.near", "bot.near", countersign.StateCancelled, 50, "[]"},
		{"none in a state", "alice.near", "bot.near", countersign.StateDone, 50, "[]"},
		{"another preparer", "alice.near", "other.near", "", 50, "[x1-1]"},
		{"another owner", "bob.near", "bot.near", "", 50, "[x2-1]"},
		{"an unknown preparer", "alice.near", "nobody.near", "", 50, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(preparerTasks(t, s, tc.owner, tc.preparer, tc.state, tc.limit)); got != tc.want {
				t.Errorf("PreparerTasks(%s, %s, %q, %d) = %s, want %s", tc.owner, tc.preparer, tc.state, tc.limit, got, tc.want)
			}
		})
	}
}

func testPreparerTasksRefusals(t *testing.T, s store.Store) {
	k, c := NewTask("r1-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	for _, limit := range []int{0, -1} {
		err := s.Tx(ctx, func(tx store.Tx) error {
			_, err := tx.PreparerTasks(ctx, "alice.near", "", "bot.near", "", limit)
			return err
		})
		if err == nil || errors.Is(err, store.ErrUnavailable) {
			t.Errorf("PreparerTasks with limit %d: %v, want a refusal", limit, err)
		}
	}
}

func forget(t *testing.T, s store.Store, id string) bool {
	t.Helper()
	var ok bool
	inTx(t, s, func(tx store.Tx) (err error) {
		ok, err = tx.ForgetTask(ctx, id)
		return err
	})
	return ok
}

func testForgetTask(t *testing.T, s store.Store) {
	for _, id := range []string{"open-1", "approved-1", "answering-1", "done-1", "failed-1", "rejected-1", "expired-1"} {
		k, c := NewTask(id, "alice.near", "bot.near")
		insert(t, s, k, c)
	}
	move(t, s, store.Move{ID: "approved-1", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "answering-1", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "answering-1", Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0})
	move(t, s, store.Move{ID: "done-1", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "done-1", Move: step(countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, ""), At: t0})
	move(t, s, store.Move{ID: "done-1", Move: step(countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform, ""), At: t0})
	move(t, s, store.Move{ID: "failed-1", Move: step(countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "failed-1", Move: step(countersign.StateApproved, countersign.StateFailed, countersign.ActorPlatform, countersign.FailRunNotStarted), At: t0})
	move(t, s, store.Move{ID: "rejected-1", Move: step(countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, ""), At: t0})
	move(t, s, store.Move{ID: "expired-1", Move: step(countersign.StateOpen, countersign.StateExpired, countersign.ActorPlatform, ""), At: t0})

	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"open-1", false},
		{"approved-1", false},
		{"answering-1", false},
		{"done-1", true},
		{"failed-1", true},
		{"rejected-1", true},
		{"expired-1", true},
		{"none-1", false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if got := forget(t, s, tc.id); got != tc.want {
				t.Fatalf("ForgetTask(%s) = %v, want %v", tc.id, got, tc.want)
			}
			if tc.want && forget(t, s, tc.id) {
				t.Fatalf("ForgetTask(%s) forgot it twice", tc.id)
			}
		})
	}
	inTx(t, s, func(tx store.Tx) error {
		// The owner's view is untouched: a forgotten task is still there, marked.
		k, err := tx.Task(ctx, "done-1")
		if err != nil || !k.Forgotten || k.State != countersign.StateDone {
			t.Errorf("a forgotten task: %+v, %v", k, err)
		}
		if k, _ := tx.Task(ctx, "open-1"); k.Forgotten {
			t.Errorf("an open task was marked forgotten")
		}
		return nil
	})
	if got := fmt.Sprint(preparerTasks(t, s, "alice.near", "bot.near", "", 50)); got != "[open-1 approved-1 answering-1]" {
		t.Errorf("the preparer's list after forgetting every closed task: %s", got)
	}
}
