package enclave

import (
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
	"countersign/sealing"
	"countersign/store"
)

// approvalRecord is the owner's approval as the door kept it.
type approvalRecord struct {
	At          int64   `json:"at"`
	PublicKey   string  `json:"public_key"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url,omitempty"`
	// Recipient is the recipient the door checked the signature for; ""
	// in an approval kept before the door named it.
	Recipient  string `json:"recipient,omitempty"`
	TaskHash   string `json:"task_hash"`
	SupplyHash string `json:"supply_hash"`
	Supplied   []byte `json:"supplied,omitempty"`
	Note       []byte `json:"note,omitempty"`
}

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
	sealed   sealedCopy
	keys     *sealing.TaskKeys
	approval approvalRecord
}

// Answer runs the answer operation of an approved task, exactly once. It is
// what the answer job calls: an error means "try the job again later"
// (the store was unavailable); the task row decides whether anything may
// run at all, so a retried or duplicated job that finds the task taken does
// nothing.
func (e *Enclave) Answer(ctx context.Context, taskID, run string) error {
	return e.AnswerJob(ctx, store.AnswerJob{TaskID: taskID, Run: run})
}

// AnswerJob is Answer for a job from the queue or handed off in-process
// (job.Queued set): the run's claim, or its ending before it begins, also
// deletes the handed-off job's fallback from the queue.
func (e *Enclave) AnswerJob(ctx context.Context, job store.AnswerJob) error {
	taskID, run := job.TaskID, job.Run
	// One transaction checks everything in the approved state and either
	// ends the task there or claims the run (approved → answering,
	// compare-and-set, the run's row naming this process, whose heartbeat
	// says it is alive): nothing can change between the checks and the claim.
	var p *prepared
	var limit time.Duration
	var input []byte
	var rk *sealing.ReceiptKey
	claimed := false
	err := e.store.Tx(ctx, func(tx store.Tx) error {
		in, err := tx.RunInputs(ctx, taskID, job.Queued)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		t := in.Task
		if t.State != countersign.StateApproved || t.AnswerRun != run {
			return nil // taken, ended, or another approval's run
		}
		var end *ending
		if p, end, err = e.prepare(in); err != nil {
			return err
		}
		if end != nil {
			return e.endApproved(ctx, tx, t, end, p)
		}
		// No more compute than the preparing run was allowed, nor than the
		// answer operation declares.
		limit = time.Duration(p.sealed.Voucher.ComputeLimitMS) * time.Millisecond
		if limit <= 0 || limit > connectors.MaxLimit {
			limit = connectors.DefaultLimit
		}
		limit = min(limit, p.op.ComputeLimit())
		input, _ = marshal(map[string]string{"operation": p.op.Name, "task_id": t.ID})
		now := e.clock()
		moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, From: countersign.StateApproved, To: countersign.StateAnswering,
			At: now, Actor: "platform", Run: run})
		if err != nil || !moved {
			return err
		}
		claimed = true
		// The run's own receipt is keyed under a key of its own (SPEC §11).
		var rkKeyID uint32
		var rkSealed []byte
		if rk, rkKeyID, rkSealed, err = e.newReceiptKey(run); err != nil {
			return err
		}
		return tx.InsertRun(ctx, store.Run{ID: run, Agent: t.Preparer, Owner: t.Owner, ProjectUUID: t.ProjectUUID,
			Operation: p.op.Name, ComputeLimit: limit, TaskID: t.ID, InputSHA256: rk.Sum(input),
			ReceiptKeyID: rkKeyID, ReceiptKey: rkSealed, StartedAt: now, Runner: e.instance})
	})
	if err != nil || !claimed {
		return err
	}
	e.log.Info("answer run started", "run", run, "task", p.task.ID, "agent", p.task.Preparer, "operation", p.op.Name)
	defer e.observeAnswer(p.conn.Name, time.Now())
	return e.answer(ctx, p, run, limit, input, rk)
}

// prepare makes every check that comes before the run begins, in the
// approved state: the sealed copy opens and is the approved task, the
// owner's approval verifies again, the operation exists and is free, the
// preparer may still act, the policy and build are the ones the owner saw
// and the preparer is still granted the project (else void).
// Everything it reads was read in one round trip (RunInputs).
func (e *Enclave) prepare(in store.RunInputs) (*prepared, *ending, error) {
	t := in.Task
	p := &prepared{task: t}
	if in.Project == nil {
		return p, &ending{void: true}, nil // its policy no longer hashes to anything
	}
	project := *in.Project
	p.project = project
	raw := in.Approval
	if raw == nil || in.Sealed == nil {
		return nil, nil, store.ErrNotFound
	}
	sc, tk, err := e.openSealedBlob(t, in.Sealed, in.KeyID)
	if err != nil {
		e.log.Error("a sealed copy does not open", "task", t.ID, "err", err)
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	p.sealed, p.keys = sc, tk
	if h := sha256.Sum256([]byte(sc.Envelope)); hex.EncodeToString(h[:]) != t.TaskHash {
		e.log.Error("a sealed copy is not the approved task", "task", t.ID)
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	if p.envelope, err = countersign.ParseEnvelope([]byte(sc.Envelope)); err != nil {
		return p, refused(countersign.TaskUnreadable, "decryption failed."), nil
	}
	if err := json.Unmarshal(raw, &p.approval); err != nil {
		return p, refused(countersign.ConfirmationRequired, "the owner's approval cannot be read."), nil
	}
	if err := e.checkApproval(p); errors.Is(err, errMismatch) {
		e.log.Warn("an approval's signature does not verify over the task's own summary; the task is void", "task", t.ID)
		return p, mismatch(), nil
	} else if err != nil {
		e.log.Warn("an approval did not verify on the run side", "task", t.ID, "err", err)
		return p, refused(countersign.ConfirmationRequired, "the owner's approval does not verify for this task now."), nil
	}
	conn, ok := e.connectors[project.Connector]
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
	if h := sha256.Sum256(project.Policy); hex.EncodeToString(h[:]) != p.envelope.PolicyHash || conn.Build() != p.envelope.Build {
		return p, &ending{void: true}, nil
	}
	// The owner changed the project: the preparer is no longer granted it,
	// so nothing runs as that agent on it.
	if !slices.Contains(project.Agents, t.Preparer) {
		return p, &ending{void: true}, nil
	}
	return p, nil, nil
}

// checkApproval rebuilds the approval sentence from the sealed envelope
// (its display.summary included) and the kept approval, and checks its
// signature for this deployment's recipient, its callback URL (under the
// public origin, as the door checks it) and the run-side window. When the
// door checked the signature for this recipient, one that does not verify
// here is errMismatch: the door verified it over the sentence with the
// summary its request carried, and everything else the payload holds is
// rebuilt here from what the door kept, so the summary is what differs.
func (e *Enclave) checkApproval(p *prepared) error {
	a := p.approval
	at := time.Unix(a.At, 0).UTC()
	supply := countersign.SupplyHash(a.Note, a.Supplied)
	if a.TaskHash != p.task.TaskHash || a.SupplyHash != supply {
		return errors.New("the approval names another hash or supply")
	}
	if err := approval.CheckRun(e.clock(), at, p.envelope.ExpiresAt); err != nil {
		return err
	}
	sentence, err := approval.Approval{Account: p.envelope.Owner, Summary: p.envelope.Display.Summary, TaskID: p.envelope.ID,
		TaskHash: p.task.TaskHash, SupplyHash: supply, At: at}.Sentence()
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
	if e.recipient == "" {
		return errors.New("no recipient is configured")
	}
	if a.CallbackURL != nil && !approval.CallbackUnder(e.origin, *a.CallbackURL) {
		return errors.New("the approval's callback URL is not under the public origin")
	}
	err = approval.Payload{Message: sentence, Nonce: nonce, Recipient: e.recipient, CallbackURL: a.CallbackURL}.VerifySignature(key, sig)
	// Made for another deployment's recipient (or kept before the door
	// named it), a signature that fails here says nothing of the summary.
	if approval.KindOf(err) == approval.InvalidSignature && a.Recipient == e.recipient {
		return errMismatch
	}
	return err
}

// endApproved ends, in tx, a task whose run cannot begin: failed with its
// reason, or void. It is observed: the platform ended it. A refusal's
// sentence is sealed into the task's history entry when p read the
// envelope (its title and summary).
func (e *Enclave) endApproved(ctx context.Context, tx store.Tx, t store.Task, end *ending, p *prepared) error {
	to, reason := countersign.StateFailed, string(end.reason)
	if end.void {
		to, reason = countersign.StateVoid, ""
	}
	var entry []byte
	if end.refusal != "" && p != nil && p.envelope.ID == t.ID {
		entry = e.endedEntry(t, p.envelope.Display, entryResult{Text: shownSentence(end.refusal + " Nothing was written.")})
	}
	moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, From: countersign.StateApproved, To: countersign.State(string(to)),
		At: e.clock(), Actor: "platform", Run: t.AnswerRun, OutcomeClass: countersign.OutcomeObserved, FailureReason: countersign.FailureReason(reason),
		Entry: entry})
	if err != nil || !moved {
		return err
	}
	told := reason
	if told == "" {
		told = end.code
	}
	e.log.Info("answer run did not begin", "task", t.ID, "state", to, "reason", told)
	if end.refusal == "" {
		return nil
	}
	return e.recordResult(ctx, tx, t, map[string]any{"ok": false, "error": end.code + ": " + end.refusal + " Nothing was written.", "wrote": false}, "", "")
}

// recordResult seals an answer run's result for the preparer and keeps the
// tasks it opened next.
func (e *Enclave) recordResult(ctx context.Context, tx store.Tx, t store.Task, result any, next, notice string) error {
	sealed, err := e.sealResult(t, result)
	if err != nil {
		return err
	}
	return tx.RecordAnswer(ctx, t.ID, sealed, next, notice)
}

// sealResult seals an answer run's result for the preparer.
func (e *Enclave) sealResult(t store.Task, result any) ([]byte, error) {
	b, err := marshal(result)
	if err != nil {
		return nil, err
	}
	tk, err := e.keys.TaskKeys(t.KeyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return nil, err
	}
	return tk.Seal(sealing.OutcomeRecord, b)
}

// answer runs the claimed answer operation and records how it ended.
func (e *Enclave) answer(ctx context.Context, p *prepared, run string, limit time.Duration, input []byte, rk *sealing.ReceiptKey) error {
	t := p.task
	ac, end := e.answerCall(ctx, p, run)
	r := &Run{ID: run, Agent: t.Preparer, Request: input, ComputeLimit: limit, receipt: rk, Operation: p.op.Name,
		Project: Project{Owner: t.Owner, Name: p.project.Name, UUID: t.ProjectUUID, Connector: p.conn.Name,
			Build: p.conn.Build(), PolicyHash: p.envelope.PolicyHash}}
	plat := &platform{e: e, run: r, conn: p.conn}
	var out any
	var runErr error
	if end != nil {
		runErr = &connectors.Refusal{Code: countersign.TaskUnreadable, Sentence: end.refusal}
	} else {
		ac.Platform = plat
		// The report comes back whole through the handler's channel: a
		// handler given up leaves nothing behind to read.
		out, runErr = e.runHandler(ctx, r, func(ctx context.Context) (any, error) {
			return p.op.Answer(ctx, ac)
		})
	}
	rep, _ := out.(connectors.Report)
	out = rep.Result
	opened := plat.tasks()
	var next, notice string
	for _, o := range opened {
		if o.Kind == countersign.KindNotice {
			notice = o.ID
		} else if next == "" {
			next = o.ID
		}
	}
	state, outcome, reason, result, sentence := e.outcome(out, runErr)
	told := entryResult{Text: shownSentence(sentence)}
	if state == countersign.StateDone {
		told = e.shownOutcome(p.conn.Name, rep.Outcome)
	}
	entry := e.endedEntry(t, p.envelope.Display, told)
	answer, _ := marshal(result)
	sealed, err := e.sealResult(t, result)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	// The connector has answered: what it did is recorded whatever it
	// takes. While the store is unavailable the end is tried again (the
	// job cannot be: the task is answering), until the sweep's deadline
	// for a run that never reports.
	err = e.untilStored(ctx, time.Now().Add(countersign.AnswerRunDeadline), func(tx store.Tx) error {
		// The end, its result and the next turns in one statement.
		moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, From: countersign.StateAnswering, To: countersign.State(string(state)),
			At: e.clock(), Actor: "platform", Run: run, OutcomeClass: countersign.OutcomeClass(string(outcome)), FailureReason: countersign.FailureReason(string(reason)),
			Answer: &store.Answer{Result: sealed, NextTaskID: next, NoticeID: notice}, Entry: entry})
		if err != nil {
			return err
		}
		if !moved {
			// A sweep ended it (run_unfinished) while it ran: what it
			// reports now is not recorded, and nothing runs again.
			e.log.Warn("an answer run finished after its task was ended", "run", run, "task", t.ID)
			return nil
		}
		return e.sign(ctx, tx, r, p.op.Name, answer, opened)
	})
	if err != nil {
		return err
	}
	e.log.Info("answer run finished", "run", run, "task", t.ID, "state", state, "reason", reason)
	return nil
}

// storeRetry is the first wait before a transaction the store was
// unavailable for is tried again; it doubles up to storeRetryMax.
const (
	storeRetry    = 50 * time.Millisecond
	storeRetryMax = 5 * time.Second
)

// untilStored runs fn in a transaction, trying again while the store is
// unavailable, until deadline (or ctx ends).
func (e *Enclave) untilStored(ctx context.Context, deadline time.Time, fn func(store.Tx) error) error {
	wait := storeRetry
	for {
		err := e.store.Tx(ctx, fn)
		if !errors.Is(err, store.ErrUnavailable) || time.Now().Add(wait).After(deadline) {
			return err
		}
		e.log.Warn("the store is unavailable; trying again shortly", "wait", wait)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, storeRetryMax)
	}
}

// answerCall opens what the answer handler receives: the owner's supply and
// note (sealed to the reply key) and the task's files.
func (e *Enclave) answerCall(ctx context.Context, p *prepared, run string) (*connectors.AnswerCall, *ending) {
	t := p.task
	unreadable := refused(countersign.TaskUnreadable, "decryption failed.")
	ac := &connectors.AnswerCall{
		Operation: p.op.Name, Envelope: p.envelope, State: p.sealed.State, Agent: t.Preparer, Owner: t.Owner,
		Project: p.project.Name, ProjectUUID: t.ProjectUUID, Run: run, Policy: p.conn.ParsePolicy(p.project.Policy),
		Now:  e.clock(),
		Task: connectors.Task{ID: t.ID, Kind: t.Kind, Hash: t.TaskHash, Thread: t.Thread, ExpiresAt: t.ExpiresAt, Link: e.link(t.ID)},
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
	raw, err := hex.DecodeString(p.sealed.ContentKey)
	if err != nil {
		return nil, unreadable
	}
	ck, err := sealing.ContentKeyFromBytes(raw)
	if err != nil {
		return nil, unreadable
	}
	if len(p.envelope.Files) > 0 {
		if err := e.store.Tx(ctx, func(tx store.Tx) error { return e.openFiles(ctx, tx, p, ck, ac) }); err != nil {
			return nil, unreadable
		}
	}
	if p.project.Creds != nil {
		if ac.Credentials, err = e.credentials(p.project); err != nil {
			return nil, unreadable
		}
	}
	return ac, nil
}

// openFiles opens the task's files for its answer run.
func (e *Enclave) openFiles(ctx context.Context, tx store.Tx, p *prepared, ck *sealing.ContentKey, ac *connectors.AnswerCall) error {
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
func (e *Enclave) outcome(out any, runErr error) (countersign.State, countersign.OutcomeClass, countersign.FailureReason, any, string) {
	refusedWith := func(code countersign.Code, sentence string, wrote bool) (countersign.State, countersign.OutcomeClass, countersign.FailureReason, any, string) {
		r, err := countersign.RunRefused(code)
		if err != nil {
			r, _ = countersign.RunRefused(countersign.Internal)
		}
		return countersign.StateFailed, countersign.OutcomeClaimed, r, map[string]any{"ok": false, "error": string(code) + ": " + sentence, "wrote": wrote}, sentence
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
	b, err := marshal(out)
	if err != nil || len(b) == 0 || b[0] != '{' || len(b) > countersign.MaxResultBytes {
		return refusedWith(countersign.Internal, fmt.Sprintf("The connector's result is not a JSON object of at most %d bytes. Whether the write happened is not known.", countersign.MaxResultBytes), false)
	}
	return countersign.StateDone, countersign.OutcomeClaimed, "", json.RawMessage(b), ""
}
