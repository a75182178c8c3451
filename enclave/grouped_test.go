package enclave_test

import (
	"sync"
	"testing"
	"time"

	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestGroupedApprovalsAndAnswers: an owner's approvals sent at once, and
// the answer runs they hand over, share commits (store.Grouped); each job
// handed over twice at once, the second of a pair finds its task taken,
// and its group keeps nothing and tries each alone. Every task is carried
// out once and ends done.
func TestGroupedApprovalsAndAnswers(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	handed := make(chan store.AnswerJob, 32)
	t.Cleanup(db.SetHandOff(&sqlstore.HandOff{Jobs: handed}))
	const n = 8
	var ids []string
	var opened []*device.Opened
	for range n {
		id := w.Pay()
		ids, opened = append(ids, id), append(opened, w.Open(id))
	}
	before := db.Grouping()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, o := range opened {
		wg.Go(func() {
			<-start
			if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	var jobs []store.AnswerJob
	for range n {
		var j store.AnswerJob
		select {
		case j = <-handed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d approvals' jobs handed over, want %d", len(jobs)/2, n)
		}
		if j.Inputs == nil {
			t.Fatalf("job %+v handed over without its task", j)
		}
		jobs = append(jobs, j, j)
	}
	runAtOnce(t, w, jobs)
	for _, id := range ids {
		w.DoneOnce(id)
	}
	after := db.Grouping()
	commits, kept, alone := after.Commits-before.Commits, after.Kept-before.Kept, after.Alone-before.Alone
	t.Logf("%d approvals and %d answer jobs: %d commits of groups kept %d, %d tried again alone", n, 2*n, commits, kept, alone)
	if kept <= commits {
		t.Fatalf("%d commits kept %d transactions: none shared one", commits, kept)
	}
}
