package enclave_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
	e := servicetest.NewEnclave(servicetest.EnclaveConfig{Keys: w.Keys, Store: flaky, Connectors: w.Catalogue, Now: w.Clock.Now,
		PublicURL: w.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	if got := w.Task(id); got.State != countersign.StateDone {
		t.Fatalf("after the outage the task is %s %s, want done", got.State, got.FailureReason)
	}
	if n := w.Effects.Count(id); n != 1 {
		t.Fatalf("the write ran %d times", n)
	}
	if flaky.down.Load() >= 0 {
		t.Fatalf("the outage was not met (%d transactions left down)", flaky.down.Load())
	}
}
