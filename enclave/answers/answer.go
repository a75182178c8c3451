package answers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/calls"
	"countersign/enclave/history"
	"countersign/sealing"
	"countersign/store"
)

// ending is how a task that cannot run ends: failed with a reason, or void.
type ending struct {
	void   bool
	reason countersign.FailureReason
	// code and refusal are the code and sentence the agent's result and
	// the owner's history are told: a run_refused reason's, or a void's
	// that has one (approval_mismatch).
	code    string
	refusal string
}

func fail(r countersign.FailureReason) *ending { return &ending{reason: r} }

func refused(code countersign.Code, sentence string) *ending {
	r, _ := countersign.RunRefused(code)
	return &ending{reason: r, code: string(code), refusal: sentence}
}

// ApprovalMismatch is the code of a task ended void because the owner's
// signature, which the door checked against the summary the request
// carried, does not verify over the envelope's own summary (SPEC §7): the
// owner was shown, or signed, another summary than the task's.
const ApprovalMismatch = "approval_mismatch"

// errMismatch is checkApproval's answer to a signature that does not verify
// over the sentence rebuilt from the sealed task.
var errMismatch = errors.New("the signature does not verify over the sentence with the envelope's summary")

// mismatch is the ending of an approval whose signature names another
// summary: void, nothing written.
func mismatch() *ending {
	return &ending{void: true, code: ApprovalMismatch,
		refusal: "The owner's approval was signed over another summary than the task's own, so it was not carried out."}
}

// prepared is everything an answer run needs, checked before it begins.
type prepared struct {
	task     store.Task
	project  store.Project
	conn     *connectors.Connector
	op       *connectors.Operation
	envelope countersign.Envelope
	sealed   enclave.SealedCopy
	keys     *sealing.TaskKeys
	// approval is the owner's approval of a task the owner alone approves
	// (zero for a shared task, whose approvals are counted apart).
	approval approval.Record
	// seen is what the claim read of the task for its outcome's move.
	seen store.Seen
}

// Answer runs the answer operation of an approved task, exactly once. It is
// what the answer job calls: an error means "try the job again later"
// (the store was unavailable); the task row decides whether anything may
// run at all, so a retried or duplicated job that finds the task taken does
// nothing.
func (s *Service) Answer(ctx context.Context, taskID, run string) error {
	return s.AnswerJob(ctx, store.AnswerJob{TaskID: taskID, Run: run})
}

// AnswerJob is Answer for a job from the queue or handed off in-process.
func (s *Service) AnswerJob(ctx context.Context, job store.AnswerJob) error {
	// One transaction checks everything in the approved state and either
	// ends the task there or claims the run (approved → answering,
	// compare-and-set, the run's row naming this process, whose heartbeat
	// says it is alive): nothing can change between the checks and the
	// claim. A job handed over by the approval's commit carries what that
	// commit read of the task: the claim then reads nothing and makes its
	// move from what was read; if the task changed since, the transaction
	// keeps nothing, and the task is read again, with its lock.
	//
	// The answer of an operation declared InProcess runs in the claim's
	// transaction, and its end is recorded there too: the claim, what the
	// run did and how it ended are kept together or not at all. If nothing
	// was kept, the task is still approved and the job may run again; for
	// any reason but the store's being away or the task's having changed,
	// it runs again at once the ordinary way.
	var c *claimed
	var whole, ordinary bool
	var err error
	var tried time.Time
	// A job handed over with its task shares its commit with other
	// owners' actions where it can (store.Grouped), and may then be tried
	// twice: each try starts from the job.
	txCtx := ctx
	if job.Inputs != nil {
		txCtx = store.Grouped(ctx, job.Inputs.Task.Owner)
	}
	for {
		err = store.FromSeen(func(fromSeen bool) error {
			return s.store.Tx(txCtx, func(tx answersTx) (err error) {
				c, whole = nil, false
				c, err = s.claim(ctx, tx, job, fromSeen && job.Inputs != nil, !ordinary)
				if err != nil || c == nil || c.begin == nil {
					return err
				}
				whole, tried = true, time.Now()
				return s.answerIn(ctx, tx, c, job.Run, fromSeen)
			})
		})
		if !whole || err == nil || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrStale) || ordinary {
			break
		}
		s.log.Warn("an in-process answer run kept nothing; it runs again the ordinary way", "run", job.Run, "err_type", fmt.Sprintf("%T", err))
		ordinary = true
	}
	if whole {
		// Logged and timed once, for the try that counts (the last): a
		// try its transaction did not keep did not happen.
		p := c.prepared
		s.log.Info("answer run started", "run", job.Run, "task", p.task.ID, "agent", p.task.Preparer, "operation", p.op.Name, "in_process", true)
		s.observe(p.conn.Name, tried)
	}
	if errors.Is(err, store.ErrUnavailable) && c != nil {
		// The claim's COMMIT went out and its answer was lost: it may
		// have been kept, and then no job will find the task approved
		// again. Whether it was is read back.
		err = s.claimKept(ctx, job.Run, c.receiptKeySealed, err)
	}
	if err != nil || c == nil {
		return err
	}
	p := c.prepared
	if whole {
		// The run and its end were kept with the claim.
		s.log.Info("answer run finished", "run", job.Run, "task", p.task.ID, "in_process", true)
		return nil
	}
	s.log.Info("answer run started", "run", job.Run, "task", p.task.ID, "agent", p.task.Preparer, "operation", p.op.Name)
	defer s.observe(p.conn.Name, time.Now())
	return s.answer(ctx, p, job.Run, c.limit, c.input, c.receiptKey)
}

// answerIn runs the answer claimed in tx, of an operation declared
// InProcess, in tx, and records its end there. Its caller logs and times
// it: once, though its transaction may be tried more than once.
func (s *Service) answerIn(ctx context.Context, tx answersTx, c *claimed, run string, fromSeen bool) error {
	p := c.prepared
	e, err := s.runAnswer(ctx, tx, c.begin, p, run, c.limit, c.input, c.receiptKey)
	if err != nil {
		return err
	}
	return s.recordEnd(ctx, tx, p, e, fromSeen)
}

// claimed is what a claim of an answer run made: the run prepared, its
// compute limit, its input, and its receipt key (with the key sealed for
// its row); and, for a run kept whole in the claim's transaction, the
// claim's move, made with the run's end in one write of the task's row.
type claimed struct {
	prepared         *prepared
	limit            time.Duration
	input            []byte
	receiptKey       *sealing.ReceiptKey
	receiptKeySealed []byte
	begin            *store.Step
}

// claim tries AnswerJob's claim of job in tx: from the job's Inputs when
// handed (the move then made from what they saw), else from the task read
// with its lock. It returns nil when there is nothing to run: the task
// taken, ended, or ended here. When whole may be kept and the operation is
// declared InProcess, the claim's move is kept for the run's end (begin),
// which writes the task's row once for both: the transaction holds the
// claim all the same, since nothing of it is kept unless that write finds
// the task still approved.
func (s *Service) claim(ctx context.Context, tx answersTx, job store.AnswerJob, handed, whole bool) (*claimed, error) {
	var in store.RunInputs
	if handed {
		in = *job.Inputs
	} else {
		var err error
		in, err = tx.RunInputs(ctx, job.TaskID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	t := in.Task
	if t.State != countersign.StateApproved || t.AnswerRun != job.Run {
		return nil, nil // taken, ended, or another approval's run
	}
	p, end, err := s.prepare(in)
	if err != nil {
		return nil, err
	}
	if end != nil {
		if handed {
			// Ended from the task as it is, under its lock.
			return nil, store.ErrStale
		}
		return nil, s.endApproved(ctx, tx, t, end, p)
	}
	// No more compute than the preparing run was allowed, nor than the
	// answer operation declares.
	c := &claimed{prepared: p, limit: time.Duration(p.sealed.Voucher.ComputeLimitMS) * time.Millisecond}
	if c.limit <= 0 || c.limit > connectors.MaxLimit {
		c.limit = connectors.DefaultLimit
	}
	c.limit = min(c.limit, p.op.ComputeLimit())
	c.input, _ = calls.Marshal(map[string]string{"operation": p.op.Name, "task_id": t.ID})
	now := s.clock()
	begin, err := countersign.Transition(t.Kind, countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform, "")
	if err != nil {
		return nil, err
	}
	if whole && p.op.InProcess {
		// Read with its lock, or held now as read before: the row is
		// the transaction's before the run takes the owner's lock, as
		// the claim's write would have made it.
		if handed {
			if err := tx.HoldTask(ctx, t, in.Seen); err != nil {
				return nil, err
			}
		}
		c.begin = &store.Step{Move: begin, At: now, Run: job.Run}
	} else {
		m := store.Move{ID: t.ID, Move: begin, At: now, Run: job.Run}
		if handed {
			m.Seen = &in.Seen
		}
		moved, err := tx.MoveTask(ctx, m)
		if err != nil || !moved {
			return nil, err
		}
	}
	// The run's own receipt is keyed under a key of its own (SPEC §11).
	var rkKeyID uint32
	if c.receiptKey, rkKeyID, c.receiptKeySealed, err = s.keys.NewReceiptKey(job.Run); err != nil {
		return nil, err
	}
	return c, tx.InsertRun(ctx, store.Run{ID: job.Run, Agent: t.Preparer, Owner: t.Owner, ProjectUUID: t.ProjectUUID,
		Operation: p.op.Name, ComputeLimit: c.limit, TaskID: t.ID, InputSHA256: c.receiptKey.Sum(c.input),
		ReceiptKeyID: rkKeyID, ReceiptKey: c.receiptKeySealed, StartedAt: now, Runner: s.instance})
}

// claimPatience is how long a claim whose commit's answer was lost waits
// for the store, to learn whether it was kept.
const claimPatience = time.Minute

// claimKept tells whether this claim of run, whose commit's answer was lost
// (lost), was kept: its run's row names this process and holds the receipt
// key sealed for this claim alone. A claim kept is this process's to run
// (nil); one not kept answers lost, and the job is tried again.
func (s *Service) claimKept(ctx context.Context, run string, receiptKey []byte, lost error) error {
	kept := false
	err := calls.UntilStored(ctx, s.store, s.log, time.Now().Add(claimPatience), func(tx answersTx) error {
		r, err := tx.Run(ctx, run)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		kept = r.Runner == s.instance && bytes.Equal(r.ReceiptKey, receiptKey)
		return nil
	})
	switch {
	case err != nil:
		return err
	case !kept:
		return lost
	}
	s.log.Warn("an answer run's claim was kept though the answer to its commit was lost: it runs", "run", run)
	return nil
}

// prepare makes every check that comes before the run begins, in the
// approved state: the sealed copy opens and is the approved task, the
// owner's approval verifies again, the operation exists and is free, the
// preparer may still act, the policy (or one it only widens) and build are
// the ones the owner saw and the preparer is still granted the project
// (else void).
// Everything it reads was read in one round trip (RunInputs).
func (s *Service) prepare(in store.RunInputs) (*prepared, *ending, error) {
	t := in.Task
	p := &prepared{task: t, seen: in.Seen}
	if in.Project == nil {
		return p, &ending{void: true}, nil // its policy no longer hashes to anything
	}
	project := *in.Project
	p.project = project
	raw := in.Approval
	if raw == nil && !t.Shared() || in.Sealed == nil {
		return nil, nil, store.ErrNotFound
	}
	sc, tk, err := s.keys.OpenSealed(t, in.Sealed, in.KeyID)
	if err != nil {
		s.log.Error("a sealed copy does not open", "task", t.ID, "err", err)
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	p.sealed, p.keys = sc, tk
	if h := sha256.Sum256([]byte(sc.Envelope)); hex.EncodeToString(h[:]) != t.TaskHash {
		s.log.Error("a sealed copy is not the approved task", "task", t.ID)
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	if p.envelope, err = countersign.ParseEnvelope([]byte(sc.Envelope)); err != nil {
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	if !t.Shared() {
		if p.approval, err = approval.ParseRecord(raw); err != nil {
			return p, refused(countersign.ConfirmationRequired, "the owner's approval cannot be read."), nil
		}
		if err := s.checkApproval(p, p.approval, t.Owner, false); errors.Is(err, errMismatch) {
			s.log.Warn("an approval's signature does not verify over the task's own summary; the task is void", "task", t.ID)
			return p, mismatch(), nil
		} else if err != nil {
			s.log.Warn("an approval did not verify on the run side", "task", t.ID, "err", err)
			return p, refused(countersign.ConfirmationRequired, "the owner's approval does not verify for this task now."), nil
		}
	}
	conn, ok := s.connectors[project.Connector]
	if !ok {
		return p, fail(countersign.FailOperationUnknown), nil
	}
	p.conn = conn
	op, ok := conn.Operation(p.envelope.AnswerBy.Operation)
	if !ok || op.Kind != connectors.Answer {
		return p, fail(countersign.FailOperationUnknown), nil
	}
	if op.Price != 0 {
		return p, fail(countersign.FailOperationPriced), nil
	}
	p.op = op
	if in.Preparer == nil || in.Preparer.Keys == 0 {
		return p, fail(countersign.FailPreparerKeyUnavailable), nil
	}
	// The policy the task was opened under, or one the project's policy
	// only widens ("Always allow this", SPEC §13): the answer operation
	// decides the sealed write again with the policy as it is now.
	h := sha256.Sum256(project.Policy)
	if hex.EncodeToString(h[:]) != p.envelope.PolicyHash && !slices.Contains(project.PolicyWidens, p.envelope.PolicyHash) || conn.Build() != p.envelope.Build {
		return p, &ending{void: true}, nil
	}
	// The owner changed the project: the preparer is no longer granted it,
	// so nothing runs as that agent on it.
	if !slices.Contains(project.Agents, t.Preparer) {
		return p, &ending{void: true}, nil
	}
	// A shared task's approvals are counted and verified again under the
	// approvers of the policy the envelope names (or one that only widens
	// it): never the door's word for who approved.
	if t.Shared() {
		return p, s.checkShared(p, in.Approvals), nil
	}
	return p, nil, nil
}

// checkShared counts the approvals of a shared task again (SPEC §7, §13
// `approvers`): each kept approval must be one the project's policy lets
// approve (its owner or a listed approver, never the task's preparer),
// read, signed by that account over the approve sentence rebuilt from the
// envelope (its own summary, nothing supplied) for this deployment, and
// dated while the task waited; distinct accounts so verified must reach
// the policy's threshold, and the newest approval, which moved the task,
// must be within the run-side window. A signature over another summary
// voids the task (approval_mismatch); too few approvals refuse it.
func (s *Service) checkShared(p *prepared, rows []store.Approval) *ending {
	t := p.task
	rule := p.conn.ParsePolicy(p.project.Policy).For(t.Owner)
	var counted []string
	var newest time.Time
	for _, row := range rows {
		rec, err := approval.ParseRecord(row.Record)
		if err != nil || rec.SignedBy(t.Owner) != row.Account {
			s.log.Warn("a kept approval cannot be read; it does not count", "task", t.ID, "account", row.Account)
			continue
		}
		if !rule.Includes(row.Account) || row.Account == t.Preparer {
			s.log.Warn("an approval by an account the policy does not let approve; it does not count", "task", t.ID, "account", row.Account)
			continue
		}
		if err := s.checkApproval(p, rec, row.Account, true); errors.Is(err, errMismatch) {
			s.log.Warn("an approval's signature does not verify over the task's own summary; the task is void", "task", t.ID, "account", row.Account)
			return mismatch()
		} else if err != nil {
			s.log.Warn("an approval did not verify on the run side; it does not count", "task", t.ID, "account", row.Account, "err", err)
			continue
		}
		counted = append(counted, row.Account)
		if rec.Time().After(newest) {
			newest = rec.Time()
		}
	}
	if n := rule.Count(counted, t.Preparer); n < rule.Threshold || !rule.Shared() {
		s.log.Warn("a shared task's approvals do not reach its threshold on the run side", "task", t.ID, "have", n, "need", rule.Threshold)
		return refused(countersign.ConfirmationRequired, fmt.Sprintf("the task's approvals (%d) do not reach the %d the project's approvers need now.", n, rule.Threshold))
	}
	if err := approval.CheckRun(s.clock(), newest, p.envelope.ExpiresAt); err != nil {
		s.log.Warn("a shared task's last approval is out of the run-side window", "task", t.ID, "err", err)
		return refused(countersign.ConfirmationRequired, "the approvals do not verify for this task now.")
	}
	return nil
}

// checkApproval rebuilds the approval sentence of account (the owner, or
// an approver of a shared task) from the sealed envelope (its
// display.summary included) and the kept approval a, and checks its
// signature for this deployment's recipient, its callback URL (under the
// public origin, as the door checks it) and its time. An owner's approval
// is checked in the run-side window; one of several approvals of a shared
// task, which may have been given hours before the threshold was reached,
// only for being dated while the task waited (the door checked each when
// it came; checkShared holds the newest to the window). When the door
// checked the signature for this recipient, one that does not verify here
// is errMismatch: the door verified it over the sentence with the summary
// its request carried, and everything else the payload holds is rebuilt
// here from what the door kept, so the summary is what differs.
func (s *Service) checkApproval(p *prepared, a approval.Record, account string, shared bool) error {
	at := a.Time()
	supply := countersign.SupplyHash(a.Note, a.Supplied)
	if a.TaskHash != p.task.TaskHash || a.SupplyHash != supply {
		return errors.New("the approval names another hash or supply")
	}
	if shared {
		switch {
		case a.Batch != nil || a.Supplied != nil || a.Note != nil:
			return errors.New("an approval of a shared task supplies nothing and is given alone")
		case !at.Before(p.envelope.ExpiresAt):
			return errors.New("the approval is dated at or after the task's expiry")
		case at.After(s.clock().Add(approval.RunMaxAhead)):
			return errors.New("the approval is dated more than 10 minutes ahead")
		case at.Before(p.envelope.CreatedAt.Add(-approval.ConfirmationMaxAge)):
			return errors.New("the approval is dated before the task was opened")
		}
	} else if err := approval.CheckRun(s.clock(), at, p.envelope.ExpiresAt); err != nil {
		return err
	}
	var sentence string
	var err error
	if a.Batch != nil {
		sentence, err = s.batchSentence(p, a, at)
	} else {
		sentence, err = approval.Approval{Account: account, Summary: p.envelope.Display.Summary, TaskID: p.envelope.ID,
			TaskHash: p.task.TaskHash, SupplyHash: supply, At: at}.Sentence()
	}
	if err != nil {
		return err
	}
	key, err := approval.ParsePublicKey(a.PublicKey)
	if err != nil {
		return err
	}
	sig, err := approval.ParseSignature(a.Signature, key.Type())
	if err != nil {
		return err
	}
	nonce, err := approval.ParseNonce(a.Nonce)
	if err != nil {
		return err
	}
	if s.keys.Recipient() == "" {
		return errors.New("no recipient is configured")
	}
	if a.CallbackURL != nil && !approval.CallbackUnder(s.keys.Origin(), *a.CallbackURL) {
		return errors.New("the approval's callback URL is not under the public origin")
	}
	err = approval.Payload{Message: sentence, Nonce: nonce, Recipient: s.keys.Recipient(), CallbackURL: a.CallbackURL}.VerifySignature(key, sig)
	// Made for another deployment's recipient (or kept before the door
	// named it), a signature that fails here says nothing of the summary.
	// A batch's own summary was compared already: its sentence is the one
	// the door verified, or the approval was tampered with.
	if approval.KindOf(err) == approval.InvalidSignature && a.Recipient == s.keys.Recipient() && a.Batch == nil {
		return errMismatch
	}
	return err
}

// batchSentence rebuilds the batch sentence a task approved in a batch was
// signed over (SPEC §7): this task's line must be in the batch with the
// approved hash and nothing supplied, and the summary at its place must be
// the envelope's own (else errMismatch: the owner signed another summary
// for it); the other tasks' lines and summaries are the batch's, as the
// door checked the signature over them.
func (s *Service) batchSentence(p *prepared, a approval.Record, at time.Time) (string, error) {
	b := a.Batch
	i := slices.IndexFunc(b.Tasks, func(l approval.BatchLine) bool { return l.ID == p.envelope.ID })
	if i < 0 {
		return "", errors.New("the batch does not name the task")
	}
	if l := b.Tasks[i]; l.TaskHash != p.task.TaskHash || l.SupplyHash != countersign.SupplyHash(nil, nil) || a.Supplied != nil || a.Note != nil {
		return "", errors.New("the batch names another hash or a supply for the task")
	}
	summaries, err := enclave.OpenBatch(p.keys, b.Summaries)
	if err != nil {
		return "", fmt.Errorf("the batch's summaries: %w", err)
	}
	if len(summaries) != len(b.Tasks) {
		return "", errors.New("the batch's summaries do not match its tasks")
	}
	if summaries[i] != p.envelope.Display.Summary {
		return "", errMismatch
	}
	return approval.BatchApproval{Account: p.envelope.Owner, Project: p.task.Project, Tasks: b.Tasks, Summaries: summaries, At: at}.Sentence()
}

// endApproved ends, in tx, a task whose run cannot begin: failed with its
// reason, or void. It is observed: the platform ended it. A refusal's
// sentence is sealed into the task's history entry when p read the
// envelope (its title and summary).
func (s *Service) endApproved(ctx context.Context, tx endTx, t store.Task, end *ending, p *prepared) error {
	to, reason := countersign.StateFailed, end.reason
	if end.void {
		to, reason = countersign.StateVoid, ""
	}
	m, err := countersign.Transition(t.Kind, countersign.StateApproved, to, countersign.ActorPlatform, reason)
	if err != nil {
		return err
	}
	var entry []byte
	if end.refusal != "" && p != nil && p.envelope.ID == t.ID {
		entry = s.history.Ended(t, p.envelope.Display, history.Result{Text: history.Sentence(end.refusal + " Nothing was written.")})
	}
	moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, Move: m, At: s.clock(), Run: t.AnswerRun, Entry: entry})
	if err != nil || !moved {
		return err
	}
	told := string(reason)
	if told == "" {
		told = end.code
	}
	s.log.Info("answer run did not begin", "task", t.ID, "state", to, "reason", told)
	if end.refusal == "" {
		return nil
	}
	return s.recordResult(ctx, tx, t, map[string]any{"ok": false, "error": end.code + ": " + end.refusal + " Nothing was written.", "wrote": false}, "", "")
}

// recordResult seals an answer run's result for the preparer and keeps the
// tasks it opened next.
func (s *Service) recordResult(ctx context.Context, tx store.Outcomes, t store.Task, result any, next, notice string) error {
	sealed, err := s.sealResult(t, result)
	if err != nil {
		return err
	}
	return tx.RecordAnswer(ctx, t.ID, sealed, next, notice)
}

// sealResult seals an answer run's result for the preparer.
func (s *Service) sealResult(t store.Task, result any) ([]byte, error) {
	b, err := calls.Marshal(result)
	if err != nil {
		return nil, err
	}
	return s.keys.SealOutcome(t, b)
}

// answer runs the claimed answer operation and records how it ended.
func (s *Service) answer(ctx context.Context, p *prepared, run string, limit time.Duration, input []byte, rk *sealing.ReceiptKey) error {
	e, err := s.runAnswer(ctx, nil, nil, p, run, limit, input, rk)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	// The connector has answered: what it did is recorded whatever it
	// takes. While the store is unavailable the end is tried again (the
	// job cannot be: the task is answering), until the sweep's deadline
	// for a run that never reports.
	// The end is moved from the task as the claim read it, and goes with
	// the commit; if a sweep ended the task meanwhile, or the owner's
	// webhook changed, it is moved again from the task as it is now.
	deadline := time.Now().Add(countersign.AnswerRunDeadline)
	err = store.FromSeen(func(fromSeen bool) error {
		return calls.UntilStored(ctx, s.store, s.log, deadline, func(tx answersTx) error {
			return s.recordEnd(ctx, tx, p, e, fromSeen)
		})
	})
	if err != nil {
		return err
	}
	s.log.Info("answer run finished", "run", run, "task", p.task.ID, "state", e.state, "reason", e.reason)
	return nil
}

// concluded is how an answer run ended, to be recorded: the run, the
// task's last move, the owner's history entry, the preparer's result
// (and sealed), the tasks it opened.
type concluded struct {
	begin  *store.Step // the claim, when its move is written with the end
	r      *calls.Run
	finish countersign.Move
	state  countersign.State
	reason countersign.FailureReason
	entry  []byte
	answer []byte
	sealed []byte
	opened []calls.Opened
	next   string
	notice string
}

// runAnswer runs the claimed answer operation: in tx, when its operation
// is declared InProcess and the claim was made in tx, else on its own.
// begin is the claim's move when it is written with the run's end.
func (s *Service) runAnswer(ctx context.Context, tx answersTx, begin *store.Step, p *prepared, run string, limit time.Duration, input []byte, rk *sealing.ReceiptKey) (*concluded, error) {
	t := p.task
	ac, end := s.answerCall(ctx, tx, p, run)
	r := &calls.Run{ID: run, Agent: t.Preparer, Request: input, ComputeLimit: limit, Receipt: rk, Operation: p.op.Name,
		Project: calls.Project{Owner: t.Owner, Name: p.project.Name, UUID: t.ProjectUUID, Connector: p.conn.Name,
			Build: p.conn.Build(), PolicyHash: p.envelope.PolicyHash, Approvers: p.conn.ParsePolicy(p.project.Policy).For(t.Owner)},
		Claiming: begin != nil}
	var out any
	var opened []calls.Opened
	var runErr error
	// The report comes back whole through the handler's channel: a handler
	// given up leaves nothing behind to read.
	handler := func(ctx context.Context, plat connectors.Platform) (any, error) {
		ac.Platform = plat
		return p.op.Answer(ctx, ac)
	}
	switch {
	case end != nil:
		runErr = &connectors.Refusal{Code: countersign.TaskUnreadable, Sentence: end.refusal}
	case tx != nil:
		var broke error
		if out, opened, runErr, broke = s.calls.ExecuteIn(ctx, tx, r, p.conn, handler); broke != nil {
			return nil, broke
		}
	default:
		out, opened, runErr = s.calls.Execute(ctx, r, p.conn, handler)
	}
	rep, _ := out.(connectors.Report)
	out = rep.Result
	e := &concluded{r: r, opened: opened, begin: begin}
	for _, o := range opened {
		if o.Kind == countersign.KindNotice {
			e.notice = o.ID
		} else if e.next == "" {
			e.next = o.ID
		}
	}
	var result any
	var sentence string
	e.state, e.reason, result, sentence = s.outcome(out, runErr)
	var err error
	if e.finish, err = countersign.Transition(t.Kind, countersign.StateAnswering, e.state, countersign.ActorPlatform, e.reason); err != nil {
		return nil, err
	}
	told := history.Result{Text: history.Sentence(sentence)}
	if e.state == countersign.StateDone {
		told = s.history.Outcome(p.conn.Name, rep.Outcome)
	}
	e.entry = s.history.Ended(t, p.envelope.Display, told)
	e.answer, _ = calls.Marshal(result)
	if e.sealed, err = s.sealResult(t, result); err != nil {
		return nil, err
	}
	return e, nil
}

// recordEnd records in tx how an answer run ended: the task's end, its
// result and the next turns in one statement (moved from the task as the
// claim read it when fromSeen), and the run's receipts.
func (s *Service) recordEnd(ctx context.Context, tx answersTx, p *prepared, e *concluded, fromSeen bool) error {
	m := store.Move{ID: p.task.ID, Move: e.finish, At: s.clock(), Run: e.r.ID, Through: e.begin,
		Answer: &store.Answer{Result: e.sealed, NextTaskID: e.next, NoticeID: e.notice}, Entry: e.entry}
	if fromSeen {
		m.Seen = &p.seen
	}
	moved, err := tx.MoveTask(ctx, m)
	if err != nil {
		return err
	}
	if !moved && e.begin != nil {
		// The claim is made by this write: a task no longer approved
		// keeps nothing of this transaction.
		return store.ErrStale
	}
	if !moved {
		// A sweep ended it (run_unfinished) while it ran: what it
		// reports now is not recorded, and nothing runs again.
		s.log.Warn("an answer run finished after its task was ended", "run", e.r.ID, "task", p.task.ID)
		return nil
	}
	return s.calls.Sign(ctx, tx, e.r, p.op.Name, e.answer, e.opened)
}

// answerCall opens what the answer handler receives: the owner's supply and
// note (sealed to the reply key) and the task's files.
func (s *Service) answerCall(ctx context.Context, tx answersTx, p *prepared, run string) (*connectors.AnswerCall, *ending) {
	t := p.task
	unreadable := refused(countersign.TaskUnreadable, "decryption failed.")
	ac := &connectors.AnswerCall{
		Operation: p.op.Name, Envelope: p.envelope, State: p.sealed.State, Agent: t.Preparer, Owner: t.Owner,
		Project: p.project.Name, ProjectUUID: t.ProjectUUID, Run: run, Policy: p.conn.ParsePolicy(p.project.Policy),
		Now:  s.clock(),
		Task: connectors.Task{ID: t.ID, Kind: t.Kind, Hash: t.TaskHash, Thread: t.Thread, ExpiresAt: t.ExpiresAt, Link: s.calls.Link(t.ID)},
	}
	var err error
	if p.approval.Supplied != nil {
		if ac.Supplied, err = sealing.OpenWith(p.keys.ReplyKey(), sealing.Answer, t.ID, p.approval.Supplied); err != nil {
			return nil, unreadable
		}
	}
	if p.approval.Note != nil {
		note, err := sealing.OpenWith(p.keys.ReplyKey(), sealing.Note, t.ID, p.approval.Note)
		if err != nil {
			return nil, unreadable
		}
		ac.Note = string(note)
	}
	ck, err := p.sealed.Key()
	if err != nil {
		return nil, unreadable
	}
	if len(p.envelope.Files) > 0 {
		read := func(tx answersTx) error { return s.openFiles(ctx, tx, p, ck, ac) }
		if tx != nil {
			err = read(tx)
		} else {
			err = s.store.Tx(ctx, read)
		}
		if err != nil {
			return nil, unreadable
		}
	}
	if p.project.Creds != nil {
		if ac.Credentials, err = s.keys.Credentials(p.project); err != nil {
			return nil, unreadable
		}
	}
	return ac, nil
}

// openFiles opens the task's files for its answer run.
func (s *Service) openFiles(ctx context.Context, tx store.TaskContent, p *prepared, ck *sealing.ContentKey, ac *connectors.AnswerCall) error {
	for n := range p.envelope.Files {
		blob, err := tx.File(ctx, p.task.ID, n)
		if err != nil {
			return err
		}
		data, err := ck.OpenFile(p.task.ID, n, blob)
		if err != nil {
			return err
		}
		ac.Files = append(ac.Files, data)
	}
	return nil
}

// outcome turns what an answer handler returned into the task's end: done
// with its result, or failed run_refused:<code> with a sentence that says
// whether the write happened (for the owner's history too).
func (s *Service) outcome(out any, runErr error) (countersign.State, countersign.FailureReason, any, string) {
	refusedWith := func(code countersign.Code, sentence string, wrote bool) (countersign.State, countersign.FailureReason, any, string) {
		r, err := countersign.RunRefused(code)
		if err != nil {
			r, _ = countersign.RunRefused(countersign.Internal)
		}
		return countersign.StateFailed, r, map[string]any{"ok": false, "error": string(code) + ": " + sentence, "wrote": wrote}, sentence
	}
	var rf *connectors.Refusal
	var ce *countersign.Error
	switch {
	case errors.As(runErr, &rf):
		return refusedWith(rf.Code, rf.Message(), rf.Wrote)
	case errors.As(runErr, &ce):
		// A refusal without a word on the write: say it is not known.
		return refusedWith(ce.Code, ce.Message+" Whether the write happened is not known.", false)
	case runErr != nil:
		return refusedWith(countersign.Internal, "The connector failed. Whether the write happened is not known.", false)
	}
	b, err := calls.Marshal(out)
	if err != nil || len(b) == 0 || b[0] != '{' || len(b) > countersign.MaxResultBytes {
		return refusedWith(countersign.Internal, fmt.Sprintf("The connector's result is not a JSON object of at most %d bytes. Whether the write happened is not known.", countersign.MaxResultBytes), false)
	}
	return countersign.StateDone, "", json.RawMessage(b), ""
}
