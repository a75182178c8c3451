package enclave_test

import (
	"testing"

	"countersign"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// waitDone waits until every task is done.
func waitDone(w *servicetest.World, ids []string) {
	for _, id := range ids {
		w.WaitState(id, countersign.StateDone)
	}
}

// TestTwoProcessesEachApprovalOnce: two service processes (two enclaves,
// two connection pools, two job queue clients with their own heartbeats)
// work one PostgreSQL database; 200 approvals are each carried out exactly
// once.
func TestTwoProcessesEachApprovalOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	other, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	second := w.OtherEnclave(other)
	w.StartJobs()
	servicetest.StartJobs(t, other, second)

	var all []string
	for batch := 0; batch < 20; batch++ {
		var ids []string
		for i := 0; i < 10; i++ {
			ids = append(ids, w.Pay())
		}
		for _, id := range ids {
			w.Approve(id, nil)
		}
		waitDone(w, ids)
		all = append(all, ids...)
	}
	for _, id := range all {
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("task %s was carried out %d times", id, n)
		}
	}
	if n := w.Effects.Total(); n != 200 {
		t.Fatalf("%d writes for 200 approvals", n)
	}
	// Both processes took part.
	runners := map[string]int{}
	_ = db.Tx(ctx, func(tx store.Tx) error {
		for _, id := range all {
			r, err := tx.Run(ctx, w.Task(id).AnswerRun)
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
