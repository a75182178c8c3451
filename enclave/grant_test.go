package enclave_test

import (
	"testing"

	"countersign"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestAnswerRunChecksTheGrantNow: a task whose preparer the owner has since
// removed from the project is not carried out as that agent: it ends void,
// observed, and nothing is written; a task of a preparer still granted runs.
func TestAnswerRunChecksTheGrantNow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		kept := w.Pay()
		removed := w.Pay()
		keptRun := w.Approve(kept, nil)
		_ = w.Enclave.Answers.Answer(ctx, kept, keptRun)
		w.DoneOnce(kept)

		run := w.Approve(removed, nil)
		// The owner takes the agent off the project after approving.
		w.Grant("ledger")
		_ = w.Enclave.Answers.Answer(ctx, removed, run)
		got := w.Task(removed)
		if got.State != countersign.StateVoid || got.OutcomeClass != countersign.OutcomeObserved {
			t.Errorf("a removed preparer's task ended %s (%s), want void, observed", got.State, got.OutcomeClass)
		}
		if n := w.Effects.Count(removed); n != 0 {
			t.Errorf("the write happened %d times as an agent no longer granted", n)
		}
	})
}
