package enclave_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"countersign/enclave"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// startJobs works the job queue with e on db until the test ends.
func startJobs(t testing.TB, db *sqlstore.DB, e *enclave.Enclave) {
	t.Helper()
	jctx, cancel := context.WithCancel(context.Background())
	go e.KeepAlive(jctx)
	stop, err := db.StartJobs(jctx, sqlstore.Jobs{Workers: e.Workers(), Periodic: e.PeriodicJobs(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = stop(sctx)
		cancel()
	})
}

// waitDone waits until every task is done.
func (w *world) waitDone(ids []string) {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for w.task(id).State != "done" {
			if time.Now().After(deadline) {
				w.t.Fatalf("task %s is %s", id, w.task(id).State)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestTwoProcessesEachApprovalOnce: two service processes (two enclaves,
// two connection pools, two job queue clients with their own heartbeats)
// work one PostgreSQL database; 200 approvals are each carried out exactly
// once.
func TestTwoProcessesEachApprovalOnce(t *testing.T) {
	db := storetest.Postgres(t)
	w := newWorld(t, db)
	other, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	second := enclave.New(enclave.Config{Keys: w.keys, Store: other, Connectors: w.cat, Now: w.clock.Now,
		PublicURL: "https://inbox.example", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	startJobs(t, db, w.e)
	startJobs(t, other, second)

	var all []string
	for batch := 0; batch < 20; batch++ {
		var ids []string
		for i := 0; i < 10; i++ {
			ids = append(ids, w.pay())
		}
		for _, id := range ids {
			w.approve(id, nil)
		}
		w.waitDone(ids)
		all = append(all, ids...)
	}
	for _, id := range all {
		if n := w.effects.count(id); n != 1 {
			t.Fatalf("task %s was carried out %d times", id, n)
		}
	}
	if n := w.effects.total(); n != 200 {
		t.Fatalf("%d writes for 200 approvals", n)
	}
	// Both processes took part.
	runners := map[string]int{}
	_ = db.Tx(ctx, func(tx store.Tx) error {
		for _, id := range all {
			r, err := tx.Run(ctx, w.task(id).AnswerRun)
			if err != nil {
				return err
			}
			runners[r.Runner]++
		}
		return nil
	})
	if len(runners) != 2 {
		t.Logf("runs by process: %v (one process took every job this time)", runners)
	}
}
