package enclave_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"countersign"
	"countersign/connectors"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// outage is a store that is unavailable for the next down transactions.
type outage struct {
	*sqlstore.DB
	down atomic.Int64
}

func (o *outage) Tx(ctx context.Context, fn func(store.Tx) error) error {
	if o.down.Add(-1) >= 0 {
		return fmt.Errorf("%w: the database is restarting", store.ErrUnavailable)
	}
	return o.DB.Tx(ctx, fn)
}

// TestAnswerRecordedAfterAnOutage: the store goes away after the
// connector's answer has written and before the run's end is recorded. The
// task cannot be run again (it is answering), so its end is tried again
// until the store answers: the task ends done, with the write made once,
// instead of staying answering until the 30-minute rule.
func TestAnswerRecordedAfterAnOutage(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	flaky := &outage{DB: db}
	e := w.OtherEnclave(flaky)
	w.SetAnswer(func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		w.Effects.Add(a.Task.ID)
		flaky.down.Store(3) // the next three transactions find the store down
		return connectors.Report{Result: map[string]any{"ok": true}}, nil
	})
	id := w.Pay()
	run := w.Approve(id, nil)
	if err := e.Answers.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Answers.Answer(ctx, id, run); err != nil {
		t.Fatalf("the answer run: %v", err)
	}
	w.DoneOnce(id)
	if flaky.down.Load() >= 0 {
		t.Fatalf("the outage was not met (%d transactions left down)", flaky.down.Load())
	}
}

// lostAnswer is a store whose next transaction's COMMIT answers as if the
// database went away, whether the commit was kept (kept) or not.
type lostAnswer struct {
	*sqlstore.DB
	armed, kept atomic.Bool
}

func (l *lostAnswer) Tx(ctx context.Context, fn func(store.Tx) error) error {
	if !l.armed.CompareAndSwap(true, false) {
		return l.DB.Tx(ctx, fn)
	}
	errGone := fmt.Errorf("%w: the connection closed at the commit", store.ErrUnavailable)
	err := l.DB.Tx(ctx, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if l.kept.Load() {
			return nil
		}
		return errGone // rolled back
	})
	if err == nil || errors.Is(err, errGone) {
		return errGone
	}
	return err
}

// TestClaimWhoseCommitAnswerWasLost: the database goes away as an answer
// run's claim commits, so the run cannot tell whether its claim was kept.
// A claim kept is run there and then (no later job would find the task
// approved again, and it would stay answering until the 30-minute rule);
// one not kept is tried again by its job. Either way the write is made
// once and the task ends done.
func TestClaimWhoseCommitAnswerWasLost(t *testing.T) {
	t.Parallel()
	for _, kept := range []bool{true, false} {
		t.Run(fmt.Sprintf("kept %v", kept), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
				w := servicetest.New(t, db)
				lost := &lostAnswer{DB: db}
				e := w.OtherEnclave(lost)
				if err := e.Answers.Heartbeat(ctx); err != nil {
					t.Fatal(err)
				}
				id := w.Pay()
				run := w.Approve(id, nil)
				lost.kept.Store(kept)
				lost.armed.Store(true)
				err := e.Answers.Answer(ctx, id, run)
				switch {
				case kept && err != nil:
					t.Fatalf("a claim kept, its commit's answer lost: %v", err)
				case !kept && !errors.Is(err, store.ErrUnavailable):
					t.Fatalf("a claim not kept, its commit's answer lost: %v, want the store unavailable (the job is tried again)", err)
				case !kept:
					if got := w.Task(id); got.State != countersign.StateApproved {
						t.Fatalf("after a claim not kept the task is %s", got.State)
					}
					if err := e.Answers.Answer(ctx, id, run); err != nil {
						t.Fatalf("the job tried again: %v", err)
					}
				}
				w.DoneOnce(id)
			})
		})
	}
}
