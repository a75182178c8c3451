package enclave_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/origin"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestAnswerRunOnce: an approved task is carried out once, ends done with
// the result sealed for the preparer, loses its ciphertext, and a second
// job for it does nothing.
func TestAnswerRunOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		run := w.Approve(id, nil)
		if got := w.Task(id); got.State != countersign.StateApproved || got.AnswerRun != run {
			t.Fatalf("after approval: %+v", got)
		}
		if err := w.Enclave.Answers.Answer(ctx, id, "another-run"); err != nil || w.Task(id).State != countersign.StateApproved {
			t.Fatalf("a job for another run acted: %v", err)
		}
		if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
			t.Fatal(err)
		}
		if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
			t.Fatal(err)
		}
		if n := w.Effects.Count(id); n != 1 {
			t.Fatalf("the write happened %d times", n)
		}
		st := w.Status("ledger", id)
		if st.State != string(countersign.StateDone) || st.OutcomeClass != "claimed" || string(st.Result) != `{"ok":true,"paid":true}` || st.Run != run {
			t.Fatalf("task_status %+v", st)
		}
		_ = db.Tx(ctx, func(tx store.Tx) error {
			if _, _, err := tx.Sealed(ctx, id); err == nil {
				t.Error("a done task keeps its sealed copy")
			}
			if _, err := tx.Content(ctx, id); err == nil {
				t.Error("a done task keeps its content")
			}
			r, err := tx.Run(ctx, run)
			if err != nil || r.TaskID != id || r.Price != 0 || r.FinishedAt.IsZero() || r.Receipt == "" {
				t.Errorf("the answer run's row: %+v %v", r, err)
			}
			return nil
		})
	})
}

// TestAnswerRunOnceUnderConcurrency: jobs of one approval run at once
// (a sweep's copy beside the hand-off, two processes) claim it once: the
// first holds the task's row from its read to its commit, and the others
// find it answering.
func TestAnswerRunOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		answerAtOnce(t, w, id, w.Approve(id, nil))
		w.DoneOnce(id)
	})
}

// answerAtOnce runs sixteen jobs of one approval at once and waits for
// them all.
func answerAtOnce(t *testing.T, w *servicetest.World, id, run string) {
	t.Helper()
	jobs := make([]store.AnswerJob, 16)
	for i := range jobs {
		jobs[i] = store.AnswerJob{TaskID: id, Run: run}
	}
	runAtOnce(t, w, jobs)
}

// handedOver has db hand the answer jobs its commits hand over (as a
// process that runs answers hands them to itself) to the channel it
// returns, which holds room of them, until the test ends.
func handedOver(t *testing.T, db *sqlstore.DB, room int) chan store.AnswerJob {
	t.Helper()
	handed := make(chan store.AnswerJob, room)
	t.Cleanup(db.SetHandOff(&sqlstore.HandOff{Jobs: handed}))
	return handed
}

// runAtOnce starts jobs at once and waits for them all.
func runAtOnce(t *testing.T, w *servicetest.World, jobs []store.AnswerJob) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, job := range jobs {
		wg.Go(func() {
			<-start
			if err := w.Enclave.Answers.AnswerJob(ctx, job); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
}

// answerJob is the job of approval run of task id: handed, with what the
// approval's commit read of the task, as a process hands it to itself;
// else as from the queue.
func answerJob(t *testing.T, db store.Store, id, run string, handed bool) store.AnswerJob {
	t.Helper()
	job := store.AnswerJob{TaskID: id, Run: run}
	if !handed {
		return job
	}
	var in store.RunInputs
	if err := db.Tx(ctx, func(tx store.Tx) (err error) {
		in, err = tx.RunInputs(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	job.Inputs = &in
	return job
}

// TestAnswerRunEndings: each way a run cannot happen, or fails, ends the
// task as the contract says, and nothing is written.
func TestAnswerRunEndings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		// The overrun below waits for the answer's limit.
		w := servicetest.New(t, db, servicetest.WithAnswerLimit(500*time.Millisecond))
		check := func(name, id, state, reason, class string) {
			t.Helper()
			got := w.Task(id)
			if string(got.State) != state || string(got.FailureReason) != reason || string(got.OutcomeClass) != class {
				t.Errorf("%s: ended %s %q %s, want %s %q %s", name, got.State, got.FailureReason, got.OutcomeClass, state, reason, class)
			}
			if w.Effects.Count(id) != 0 {
				t.Errorf("%s: the write happened", name)
			}
		}

		// The policy changed after the approval: void.
		id := w.Pay()
		run := w.Approve(id, nil)
		setPolicy(t, w, "ledger", `{"confirm":["pay"]}`)
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		check("policy changed", id, string(countersign.StateVoid), "", "observed")
		setPolicy(t, w, "ledger", `{}`)

		// The preparer's key was revoked: preparer_key_unavailable.
		id = w.Pay()
		run = w.Approve(id, nil)
		w.RevokeAgent()
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		check("key revoked", id, string(countersign.StateFailed), "preparer_key_unavailable", "observed")
		w.AgentKey = servicetest.AgentKey + "-new"
		if err := db.Tx(ctx, func(tx store.Tx) error { return tx.AddAgentKey(ctx, w.Agent, hashKey(w.AgentKey), w.Clock.Now()) }); err != nil {
			t.Fatal(err)
		}

		// The answer operation got a price: operation_priced.
		id = w.Pay()
		run = w.Approve(id, nil)
		op, _ := w.Ledger.Operation("confirm")
		op.Price = 5
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		op.Price = 0
		check("priced", id, string(countersign.StateFailed), "operation_priced", "observed")

		// The sealed copy was tampered with: run_refused:task_unreadable.
		id = w.Pay()
		run = w.Approve(id, nil)
		tamper(t, db, id)
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		check("tampered", id, string(countersign.StateFailed), "run_refused:task_unreadable", "observed")
		if st := w.Status("ledger", id); !strings.Contains(string(st.Result), "decryption failed") {
			t.Errorf("the agent is not told: %s", st.Result)
		}

		// The approval is more than 30 minutes old when the run comes.
		id = w.Pay()
		run = w.Approve(id, nil)
		w.Clock.Add(31 * time.Minute)
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		check("late run", id, string(countersign.StateFailed), "run_refused:confirmation_required", "observed")

		// A connector that refuses after the approval, saying nothing was
		// written: failed run_refused:<code>, claimed, with its sentence.
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The owner's rule 1 refuses this payment.")
		})
		id = w.Pay()
		run = w.Approve(id, nil)
		_ = w.Enclave.Answers.Answer(ctx, id, run)
		check("refused", id, string(countersign.StateFailed), "run_refused:policy_denied", "claimed")
		if st := w.Status("ledger", id); !strings.Contains(string(st.Result), "Nothing was written.") {
			t.Errorf("the refusal does not say whether it wrote: %s", st.Result)
		}

		// A connector that panics, one that fails with its own error, and
		// one that overruns its limit: failed run_refused:internal_error;
		// the process goes on, and what the panic or error quoted (it may
		// be the task's content) is not logged.
		const quoted = "memo: rent for flat 4B"
		for name, f := range map[string]func(context.Context, *connectors.AnswerCall) (connectors.Report, error){
			"panic": func(context.Context, *connectors.AnswerCall) (connectors.Report, error) { panic(quoted) },
			"error": func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
				return connectors.Report{}, fmt.Errorf("bank said no to %q", quoted)
			},
			"overrun": func(ctx context.Context, _ *connectors.AnswerCall) (connectors.Report, error) {
				time.Sleep(10 * time.Second) // ignores its context
				return connectors.Report{Result: map[string]any{"late": true}}, nil
			},
		} {
			w.SetAnswer(f)
			id = w.Pay()
			run = w.Approve(id, nil)
			start := time.Now()
			_ = w.Enclave.Answers.Answer(ctx, id, run)
			if time.Since(start) > 5*time.Second {
				t.Errorf("%s: the run was not given up at its limit", name)
			}
			check(name, id, string(countersign.StateFailed), "run_refused:internal_error", "claimed")
		}
		if logs := w.Logs.String(); strings.Contains(logs, "rent for flat") {
			t.Errorf("a connector's panic or error text reached the log:\n%s", logs)
		}
	})
}

func setPolicy(t *testing.T, w *servicetest.World, name, policy string) {
	t.Helper()
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, name)
		if err != nil {
			return err
		}
		p.Policy = []byte(policy)
		p.UpdatedAt = w.Clock.Now()
		return tx.PutProject(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hashKey(k string) []byte { return enclaveHash(k) }

// tamper flips a byte of a task's sealed copy, as an attacker with the
// database could.
func tamper(t *testing.T, db *sqlstore.DB, id string) {
	t.Helper()
	q := "UPDATE tasks SET sealed = ? WHERE id = ?"
	var sealed []byte
	_ = db.Tx(ctx, func(tx store.Tx) (err error) {
		sealed, _, err = tx.Sealed(ctx, id)
		return err
	})
	sealed[len(sealed)/2] ^= 1
	var err error
	if db.Postgres() != nil {
		_, err = db.Postgres().Exec(ctx, "UPDATE tasks SET sealed = $1 WHERE id = $2", sealed, id)
	} else {
		_, err = db.SQLite().ExecContext(ctx, q, sealed, id)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentApprovalsOneWins: 50 approvals of one task at once, each
// signed on its own: exactly one is accepted.
func TestConcurrentApprovalsOneWins(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		o := w.Open(id)
		var wins, closed atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			req, err := w.Owner.ApproveRequest(o, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := w.Owner.Client.Approve(ctx, id, req)
				switch reason(err) {
				case "":
					wins.Add(1)
				case "task_closed":
					closed.Add(1)
				default:
					t.Errorf("an approval answered %v", err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || closed.Load() != 49 {
			t.Fatalf("%d approvals accepted, %d refused task_closed", wins.Load(), closed.Load())
		}
		if n := countJobs(t, db); n != 1 {
			t.Fatalf("%d answer jobs queued", n)
		}
	})
}

func countJobs(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	return int(countOn(t, db, "SELECT COUNT(*) FROM river_job WHERE kind = 'answer_run'"))
}

// TestReceiptsVerify: the task's origin carries a receipt signed by the
// published run key that names the task and its hash.
func TestReceiptsVerify(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		view, _ := w.Owner.Client.Task(ctx, id)
		o, _ := w.Owner.Open(view)
		org, err := w.Owner.Client.Origin(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		cur, keys, _ := w.Enclave.Keys.RunKeys()
		pub, err := origin.ParseKey(keys[cur])
		if err != nil {
			t.Fatal(err)
		}
		task := origin.Task{ID: id, Hash: view.TaskHash, Owner: w.Owner.Account, Preparer: w.Agent, Build: o.Envelope.Build, Run: org.Run,
			Input: o.ReceiptInputMatches}
		if err := (origin.Keys{cur: pub}).Verify(org.Receipt, task); err != nil {
			t.Fatalf("receipt: %v (%s)", err, org.Receipt)
		}
		var signed origin.Signed
		_ = json.Unmarshal(org.Receipt, &signed)
		if signed.Receipt.Operation != "pay" || org.Operation != "pay" {
			t.Fatalf("receipt %+v, origin %+v", signed.Receipt, org)
		}
		// The task's receipt names the keyed hash of the request the device
		// decrypted (SPEC §11), which the device recomputes; the origin shows
		// the receipt's hashes beside it, and neither is the bare hash.
		if !o.ReceiptInputMatches(signed.Receipt.InputSHA256) {
			t.Fatalf("the device does not recompute the receipt's input %s over %s", signed.Receipt.InputSHA256, o.Request)
		}
		bare := sha256.Sum256(o.Request)
		for _, h := range []string{signed.Receipt.InputSHA256, org.InputSHA256} {
			if h == hex.EncodeToString(bare[:]) || len(h) != 64 {
				t.Fatalf("a receipt names the input hash %q", h)
			}
		}
		if !o.ReceiptInputMatches(org.InputSHA256) || org.OutputSHA256 != signed.Receipt.OutputSHA256 {
			t.Fatalf("the origin shows hashes %s %s that are not its receipt's", org.InputSHA256, org.OutputSHA256)
		}
		task.Hash = strings.Repeat("0", 64)
		if err := (origin.Keys{cur: pub}).Verify(org.Receipt, task); err == nil {
			t.Fatal("a receipt verified for another hash")
		}
	})
}

// TestApprovalInTimeRunsAfterExpiry: an approval given a minute before the
// task expires is carried out even though its run comes after the expiry.
func TestApprovalInTimeRunsAfterExpiry(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	id := w.Pay()
	w.Clock.Add(24*time.Hour - time.Minute)
	run := w.Approve(id, nil)
	w.Clock.Add(2 * time.Minute)
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
	w.DoneOnce(id)
}
