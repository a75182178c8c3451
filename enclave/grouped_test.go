package enclave_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
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
	handed := handedOver(t, db, 32)
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

// TestGroupedRunsLoggedAndTimedOnce: in-process answer runs handed over
// twice at once share their lane's groups; the second of a pair keeps its
// group from committing and every member is tried again alone. A run so
// tried is kept once, and is logged and timed once: the operator's log and
// /metrics count the runs that happened, not the tries.
func TestGroupedRunsLoggedAndTimedOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	handed := handedOver(t, db, 32)
	const n = 6
	var jobs []store.AnswerJob
	for range n {
		id := w.Guess()
		run := w.Approve(id, []byte("0"))
		j := <-handed
		if j.TaskID != id || j.Run != run || j.Inputs == nil {
			t.Fatalf("handed over %+v for %s", j, id)
		}
		jobs = append(jobs, j, j)
	}
	before := db.Grouping()
	runAtOnce(t, w, jobs)
	if after := db.Grouping(); after.Alone == before.Alone {
		t.Fatalf("no grouped transaction was tried again alone (%+v → %+v): the test shows nothing", before, after)
	}
	logs := w.Logs.String()
	for i := 0; i < len(jobs); i += 2 {
		j := jobs[i]
		if k := w.Task(j.TaskID); k.State != "done" || k.NextTaskID == "" {
			t.Errorf("turn %s ended %s, next %q", j.TaskID, k.State, k.NextTaskID)
		}
		for _, msg := range []string{`msg="answer run started"`, `msg="answer run finished"`} {
			if got := strings.Count(logs, msg+" run="+j.Run+" "); got != 1 {
				t.Errorf("run %s: %s logged %d times, want once", j.Run, msg, got)
			}
		}
	}
	// The agent's guess_starts, one at a time, each logged once.
	if got := strings.Count(logs, `msg="run started"`); got != n {
		t.Errorf("%d agent's runs logged as started, want %d", got, n)
	}
	if got := len(openTasks(t, w)); got != n {
		t.Errorf("%d next turns open, want %d: one a run", got, n)
	}
	rec := httptest.NewRecorder()
	w.API.Metrics().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := fmt.Sprintf(`countersign_answer_run_seconds_count{connector="probe"} %d`, n); !strings.Contains(rec.Body.String(), want+"\n") {
		t.Errorf("/metrics lacks %s", want)
	}
}
