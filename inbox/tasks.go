package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/origin"
	"countersign/store"
)

// Keeper is what the door asks of the part of the service that holds the
// master key. The door itself never holds it.
type Keeper interface {
	// Unlock wraps the content key of each waiting task in the account's
	// inbox (its own, and the shared tasks it is listed an approver of)
	// to each of its current devices that has no copy yet; it returns how
	// many tasks are waiting.
	Unlock(ctx context.Context, owner string) (int, error)
	// SealCredentials seals a project's credentials under the master key.
	SealCredentials(projectUUID string, creds []byte) (keyID uint32, blob []byte, err error)
	// SealBatch seals, for the answer run of task t approved in a batch,
	// the summaries the batch sentence names, under the task's own keys:
	// the door keeps the blob with the approval, never the summaries.
	SealBatch(t store.Task, summaries []string) ([]byte, error)
}

// FileView is a file of a waiting task: its number and size.
type FileView struct {
	N    int   `json:"n"`
	Size int64 `json:"size"`
}

// TaskView is a task as the device of its owner, or of one of its
// approvers, sees it: metadata in clear, what it shows as ciphertext only.
type TaskView struct {
	ID string `json:"id"`
	// Owner is the task's owner; Role is the session's account's part in
	// it: RoleOwner, or RoleApprover for a shared task of another owner
	// (SPEC §13 `approvers`).
	Owner         string     `json:"owner" jsonschema:"the task's owner (the account whose project it is)"`
	Role          string     `json:"role" jsonschema:"this session's part in the task: owner, or approver for a task of another owner whose project's policy names this account among its approvers (SPEC §13 approvers); an approver may see, approve and reject it, nothing else"`
	Project       string     `json:"project"`
	ProjectUUID   string     `json:"project_uuid"`
	Connector     string     `json:"connector"`
	Preparer      string     `json:"preparer"`
	Kind          string     `json:"kind"`
	State         string     `json:"state"`
	Thread        string     `json:"thread"`
	CreatedAt     string     `json:"created_at"`
	ExpiresAt     string     `json:"expires_at"`
	Run           string     `json:"run,omitempty"`
	FailureReason string     `json:"failure_reason,omitempty"`
	ReplyPubkey   *string    `json:"reply_pubkey"`
	TaskHash      string     `json:"task_hash"`
	Content       []byte     `json:"content"`
	DeviceCopy    []byte     `json:"device_copy"`
	Locked        bool       `json:"locked"`
	Files         []FileView `json:"files"`
	// Approvals is who approved a shared task so far and how many it
	// needs (absent for a task its owner alone approves).
	Approvals *ApprovalsView `json:"approvals,omitempty" jsonschema:"for a task that needs the approvals of several accounts (its project's approvers): who approved it so far and how many it needs; absent for a task its owner alone approves"`
	// RejectedBy names the account that rejected a rejected task.
	RejectedBy string `json:"rejected_by,omitempty" jsonschema:"the account that rejected a rejected task: the owner or one of its approvers"`
}

// The parts an account has in a task it sees.
const (
	RoleOwner    = "owner"
	RoleApprover = "approver"
)

// List limits.
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
)

var errTaskNotFound = countersign.Errorf(countersign.TaskNotFound, "no such task")

// ownTask loads a task of the session's owner; another owner's task is
// task_not_found, exactly as a missing one, even one the session's account
// approves: what only the owner does (cancel, Got it, a task's history, a
// batch) is refused so.
func ownTask(ctx context.Context, tx lookupTx, sess Session, id string) (store.Task, error) {
	if !countersign.ValidTaskID(id) {
		return store.Task{}, errTaskNotFound
	}
	t, err := tx.Task(ctx, id)
	return owned(sess, t, err)
}

// owned is t, read with err, if it is the session's account's own task;
// otherwise errTaskNotFound (a task that does not exist reads as a zero
// Task, or store.ErrNotFound).
func owned(sess Session, t store.Task, err error) (store.Task, error) {
	if errors.Is(err, store.ErrNotFound) || err == nil && (t.ID == "" || t.Owner != sess.AccountID) {
		return store.Task{}, errTaskNotFound
	}
	return t, err
}

// inboxTask loads a task the session's account sees in its inbox: its
// own, or a shared task it is listed an approver of (SPEC §13). Any other
// task is task_not_found, exactly as a missing one.
func inboxTask(ctx context.Context, tx lookupTx, sess Session, id string) (store.Task, error) {
	if !countersign.ValidTaskID(id) {
		return store.Task{}, errTaskNotFound
	}
	t, err := tx.Task(ctx, id)
	return visible(ctx, tx, sess, t, err)
}

// inboxTaskSeen is inboxTask with what a move of the task in a later
// transaction needs (store.Move.Seen), read in the same round trip.
func inboxTaskSeen(ctx context.Context, tx lookupTx, sess Session, id string) (store.Task, store.Seen, error) {
	if !countersign.ValidTaskID(id) {
		return store.Task{}, store.Seen{}, errTaskNotFound
	}
	t, seen, err := tx.TaskSeen(ctx, id)
	t, err = visible(ctx, tx, sess, t, err)
	return t, seen, err
}

// readTaskSeen is inboxTaskSeen, from what AuthenticateTask read with the
// session when ctx holds that.
func readTaskSeen(ctx context.Context, tx lookupTx, sess Session, id string) (store.Task, store.Seen, error) {
	r, ok := ctx.Value(readWithKey{}).(readWith)
	if !ok || r.device != sess.DeviceID || r.id != id {
		return inboxTaskSeen(ctx, tx, sess, id)
	}
	if r.task.ID == "" {
		return store.Task{}, store.Seen{}, errTaskNotFound
	}
	t, err := visible(ctx, tx, sess, r.task, nil)
	if err != nil {
		return store.Task{}, store.Seen{}, err
	}
	return t, r.seen, nil
}

// visible is t, read with err, if sess may see it: its owner's, or a shared
// task's listed approver's; otherwise errTaskNotFound.
func visible(ctx context.Context, tx lookupTx, sess Session, t store.Task, err error) (store.Task, error) {
	if errors.Is(err, store.ErrNotFound) {
		return store.Task{}, errTaskNotFound
	}
	if err != nil || t.Owner == sess.AccountID {
		return t, err
	}
	if listed, err := approverOf(ctx, tx, t, sess.AccountID); err != nil || !listed {
		return store.Task{}, orNotFound(err)
	}
	return t, nil
}

// approverOf reports whether account is listed an approver of t (never
// for a task its owner alone approves).
func approverOf(ctx context.Context, tx store.Approvals, t store.Task, account string) (bool, error) {
	if !t.Shared() {
		return false, nil
	}
	approvers, err := tx.TaskApprovers(ctx, t.ID)
	return slices.Contains(approvers, account), err
}

func orNotFound(err error) error {
	if err == nil {
		return errTaskNotFound
	}
	return err
}

// role is the session's account's part in a task it sees.
func role(sess Session, t store.Task) string {
	if t.Owner == sess.AccountID {
		return RoleOwner
	}
	return RoleApprover
}

// actor is who the session's account is to t when it moves it: its owner,
// or an approver of a shared task of another owner.
func actor(sess Session, t store.Task) countersign.Actor {
	if t.Owner == sess.AccountID {
		return countersign.ActorOwner
	}
	return countersign.ActorApprover
}

// view renders a task for the session's device, with its ciphertext when it
// is waiting at now (a task past its expiry is shown expired, without it).
// errLeftOpen is view's word for a task read as open whose content was
// gone by the time view read it: an approval, a rejection or a cancel
// committed in between (a listing is not a snapshot).
var errLeftOpen = errors.New("inbox: the task left open while it was read")

func view(ctx context.Context, tx viewTx, sess Session, t store.Task, now time.Time) (TaskView, error) {
	state := countersign.StateAt(t.State, t.ExpiresAt, now)
	v := TaskView{ID: t.ID, Owner: t.Owner, Role: role(sess, t), Project: t.Project, ProjectUUID: t.ProjectUUID, Connector: t.Connector,
		Preparer: t.Preparer, Kind: string(t.Kind), State: string(state), Thread: t.Thread,
		CreatedAt: t.CreatedAt.Format(countersign.TimeFormat), ExpiresAt: t.ExpiresAt.Format(countersign.TimeFormat),
		Run: t.AnswerRun, FailureReason: string(t.FailureReason), TaskHash: t.TaskHash, Files: []FileView{}}
	if t.ReplyPubkey != "" {
		v.ReplyPubkey = &t.ReplyPubkey
	}
	if t.State == countersign.StateRejected {
		v.RejectedBy = t.RejectedBy
	}
	var err error
	if t.Shared() {
		if v.Approvals, err = approvalsView(ctx, tx, sess, t); err != nil {
			return v, err
		}
	}
	if state != countersign.StateOpen {
		return v, nil
	}
	if v.Content, err = tx.Content(ctx, t.ID); errors.Is(err, store.ErrNotFound) {
		return v, errLeftOpen // moved since its row was read: its content is gone
	} else if err != nil {
		return v, err
	}
	v.DeviceCopy, err = tx.DeviceCopy(ctx, t.ID, sess.DeviceID)
	if errors.Is(err, store.ErrNotFound) {
		v.Locked, err = true, nil
	}
	if err != nil {
		return v, err
	}
	sizes, err := tx.Files(ctx, t.ID)
	for n, s := range sizes {
		v.Files = append(v.Files, FileView{N: n, Size: s})
	}
	return v, err
}

// Tasks lists the waiting tasks (with their ciphertext) or closed ones
// (without) in the account's inbox, its own and those it approves for
// others, newest first, limit at a time after the task before.
func (s *Service) Tasks(ctx context.Context, sess Session, show, before string, limit int) ([]TaskView, bool, error) {
	if show == "" {
		show = "waiting"
	}
	if show != "waiting" && show != "closed" {
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "show is waiting or closed")
	}
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "limit is a number from 1 to %d", MaxListLimit)
	}
	out := []TaskView{}
	more := false
	now := s.clock()
	err := s.store.Tx(ctx, func(tx doorTx) error {
		var cursor *store.Task
		if before != "" {
			t, err := inboxTask(ctx, tx, sess, before)
			if err != nil {
				return countersign.Errorf(countersign.InvalidRequest, "before names no task of yours")
			}
			cursor = &t
		}
		tasks, err := tx.InboxTasks(ctx, sess.AccountID, show == "waiting", cursor, limit+1)
		if err != nil {
			return err
		}
		if len(tasks) > limit {
			tasks, more = tasks[:limit], true
		}
		for _, t := range tasks {
			v, err := view(ctx, tx, sess, t, now)
			if errors.Is(err, errLeftOpen) {
				continue // no longer waiting: the next listing shows it closed
			}
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, more, storeErr(err)
}

// Task returns one task of the account's inbox.
func (s *Service) Task(ctx context.Context, sess Session, id string) (TaskView, error) {
	var v TaskView
	now := s.clock()
	err := s.store.Tx(ctx, func(tx doorTx) error {
		t, err := inboxTask(ctx, tx, sess, id)
		if err != nil {
			return err
		}
		v, err = view(ctx, tx, sess, t, now)
		if errors.Is(err, errLeftOpen) {
			// It moved meanwhile: show it as it is now.
			if t, err = inboxTask(ctx, tx, sess, id); err != nil {
				return err
			}
			v, err = view(ctx, tx, sess, t, now)
		}
		return err
	})
	return v, storeErr(err)
}

// File returns file n of a waiting task, as ciphertext.
func (s *Service) File(ctx context.Context, sess Session, id string, n int) ([]byte, error) {
	var blob []byte
	err := s.store.Tx(ctx, func(tx doorTx) error {
		t, err := inboxTask(ctx, tx, sess, id)
		if err != nil {
			return err
		}
		if state := countersign.StateAt(t.State, t.ExpiresAt, s.clock()); state != countersign.StateOpen {
			return closed(state)
		}
		blob, err = tx.File(ctx, id, n)
		if errors.Is(err, store.ErrNotFound) {
			return countersign.Errorf(countersign.InvalidRequest, "the task has no file %d", n)
		}
		return err
	})
	return blob, storeErr(err)
}

// Origin is the run that made a task.
type Origin struct {
	Run          string          `json:"run"`
	Operation    string          `json:"operation"`
	InputSHA256  string          `json:"input_sha256"`
	OutputSHA256 string          `json:"output_sha256"`
	Receipt      json.RawMessage `json:"receipt"`
}

// Origin returns the run that prepared a task, with its signed receipt.
func (s *Service) Origin(ctx context.Context, sess Session, id string) (Origin, error) {
	var o Origin
	err := s.store.Tx(ctx, func(tx doorTx) error {
		t, err := inboxTask(ctx, tx, sess, id)
		if err != nil {
			return err
		}
		r, err := tx.Run(ctx, t.Run)
		if err != nil {
			return err
		}
		// The hashes shown are the task receipt's, keyed under the task's
		// receipt key, which the device can check; the run row's own are
		// keyed under a key only the enclave side holds.
		o = Origin{Run: r.ID, Operation: r.Operation, Receipt: json.RawMessage("null")}
		receipt, err := tx.TaskReceipt(ctx, t.ID)
		if err != nil || receipt == "" {
			return err
		}
		var signed origin.Signed
		if err := json.Unmarshal([]byte(receipt), &signed); err != nil {
			return err
		}
		o.Receipt = json.RawMessage(receipt)
		o.InputSHA256, o.OutputSHA256 = signed.Receipt.InputSHA256, signed.Receipt.OutputSHA256
		return nil
	})
	return o, storeErr(err)
}

// errExpired refuses a move of an open task whose expiry has come, before the
// sweep records it.
var errExpired = &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired", State: countersign.StateExpired}

// closed is the refusal for a task no longer open.
func closed(state countersign.State) error {
	return &countersign.Error{Code: countersign.TaskClosed, Message: "the task is " + string(state), State: state}
}

// ApproveRequest is the body of POST /inbox/tasks/{id}/approve.
type ApproveRequest struct {
	TaskHash string `json:"task_hash"`
	// Summary is the summary the signed sentence names (the envelope's
	// display.summary, SPEC §7); "" (or absent) signs the sentence without
	// one. The door only rebuilds the sentence with it: it is never kept
	// or logged, and the answer run checks the signature again against the
	// envelope's own summary.
	Summary  string       `json:"summary,omitempty"`
	Approval Confirmation `json:"approval"`
	Supplied []byte       `json:"supplied,omitempty"`
	Note     []byte       `json:"note,omitempty"`
}

// record is the approval the door keeps for the answer run to check again
// (approval.Record), signed by account.
func (s *Service) record(account string, c Confirmation, taskHash, supplyHash string, supplied, note []byte) approval.Record {
	return approval.Record{Account: account, At: c.At, PublicKey: c.PublicKey, Signature: c.Signature, Nonce: c.Nonce,
		CallbackURL: c.CallbackURL, Recipient: s.recipient, TaskHash: taskHash, SupplyHash: supplyHash, Supplied: supplied, Note: note}
}

// Approved is the answer to an approval: the task's state after it
// (approved with its run, or, for a shared task short of its threshold,
// still open) and, for a shared task, its approvals.
type Approved struct {
	ID        string         `json:"id"`
	State     string         `json:"state" jsonschema:"approved, or open while a task that needs the approvals of several accounts has fewer than it needs (this approval was recorded)"`
	Run       string         `json:"run,omitempty" jsonschema:"the answer run, once the task is approved"`
	Approvals *ApprovalsView `json:"approvals,omitempty" jsonschema:"for a task that needs the approvals of several accounts: its approvals, this one included"`
}

// Approve checks an approval at the door and, in one transaction, spends its
// nonce, moves the task open → approved and queues its answer run. Every
// check that can refuse without the chain comes before the signature is
// verified, and every refusal writes nothing and spends nothing. The
// sentence is rebuilt with the request's summary, which the door cannot
// compare with the task's (it holds only ciphertext): the answer run does.
func (s *Service) Approve(ctx context.Context, sess Session, id string, req ApproveRequest) (Approved, error) {
	now := s.clock()
	if req.Summary != "" {
		if err := countersign.ValidateSummary(req.Summary); err != nil {
			return Approved{}, countersign.Errorf(countersign.InvalidRequest, "%s", countersign.ErrorMessage(err))
		}
	}
	if len(req.Supplied) > countersign.MaxSuppliedBytes || len(req.Note) > countersign.MaxNoteBytes {
		return Approved{}, countersign.Errorf(countersign.InvalidRequest, "a supply or a note is larger than 8 KiB")
	}
	if req.Supplied != nil && len(req.Supplied) == 0 || req.Note != nil && len(req.Note) == 0 {
		return Approved{}, countersign.Errorf(countersign.InvalidRequest, "a supply or a note is empty: leave it out instead")
	}
	var t store.Task
	var seen store.Seen
	err := s.store.Read(ctx, func(tx doorTx) (err error) {
		t, seen, err = readTaskSeen(ctx, tx, sess, id)
		return err
	})
	if err != nil {
		return Approved{}, storeErr(err)
	}
	if t.Shared() {
		return s.approveShared(ctx, sess, t, req, now)
	}
	if err := checkApproval(now, t, req); err != nil {
		return Approved{}, err
	}
	v, at, supplyHash, err := s.verifyApproval(ctx, sess, t, req)
	if err != nil {
		return Approved{}, err
	}
	record, err := s.record(sess.AccountID, req.Approval, t.TaskHash, supplyHash, req.Supplied, req.Note).Marshal()
	if err != nil {
		return Approved{}, err
	}
	approve, err := countersign.Transition(t.Kind, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, "")
	if err != nil {
		return Approved{}, err
	}
	run := countersign.NewRunID()
	// The move is made from the task as it was read, and goes with the
	// commit; if the task or its owner's webhook changed since, it is made
	// again from the task as it is now. The transaction may share its
	// commit with other owners' actions and be tried twice
	// (store.Grouped): each try makes the move again.
	err = store.FromSeen(func(fromSeen bool) error {
		return s.store.Tx(store.Grouped(ctx, t.Owner), func(tx doorTx) error {
			// The move also requires the task not to have expired meanwhile
			// (the signature check may have waited on the chain).
			m := store.Move{ID: t.ID, Move: approve, At: now, Run: run, AnswerRun: run, Unexpired: s.clock(), Approval: record}
			if fromSeen {
				m.Seen = &seen
			}
			if err := moveToApproved(ctx, tx, m); err != nil {
				return err
			}
			if err := tx.SpendNonce(ctx, sess.AccountID, v.Nonce[:], at.Add(approval.ConfirmationMaxAge+time.Minute)); err != nil {
				return err
			}
			return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: t.ID, Run: run})
		})
	})
	if err != nil {
		return Approved{}, storeErr(usedAlready(err, countersign.ConfirmationRequired, approvalUsed))
	}
	s.log.Info("task approved", "task", t.ID, "owner", sess.AccountID, "run", run)
	return Approved{ID: t.ID, State: string(countersign.StateApproved), Run: run}, nil
}

// moveToApproved makes m, a move of an open task to approved; a task that
// did not move is told why: it expired before the approval arrived, or it
// is closed.
func moveToApproved(ctx context.Context, tx doorTx, m store.Move) error {
	moved, err := tx.MoveTask(ctx, m)
	if err != nil || moved {
		return err
	}
	cur, err := tx.Task(ctx, m.ID)
	if err != nil {
		return err
	}
	if cur.State == countersign.StateOpen {
		return &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: cur.State}
	}
	return closed(cur.State)
}

// checkApproval is every check of an approval of t that needs neither the
// chain nor a write, in the order their refusals are told.
func checkApproval(now time.Time, t store.Task, req ApproveRequest) error {
	switch {
	case t.State != countersign.StateOpen:
		return closed(t.State)
	case !now.Before(t.ExpiresAt):
		return &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: t.State}
	case t.Kind == countersign.KindNotice:
		return countersign.Errorf(countersign.InvalidRequest, "a notice asks nothing: acknowledge it instead")
	case t.Supplies == countersign.SuppliesNone && req.Supplied != nil:
		return countersign.Errorf(countersign.InvalidRequest, "this task takes no supply; approve it without one")
	case t.Supplies != countersign.SuppliesNone && req.Supplied == nil:
		return countersign.Errorf(countersign.InvalidRequest, "this task needs the owner's %s", t.Supplies)
	case req.TaskHash != t.TaskHash:
		return countersign.Errorf(countersign.ConfirmationRequired, "the approval names another task hash")
	}
	at := time.Unix(req.Approval.At, 0).UTC()
	if err := approval.CheckConfirmation(now, at); err != nil {
		return countersign.Errorf(countersign.ConfirmationRequired, "the approval is older than 10 minutes or from the future; sign it again")
	}
	if !at.Before(t.ExpiresAt) {
		return &countersign.Error{Code: countersign.TaskExpired, Message: "the approval is dated at or after the task's expiry", State: t.State}
	}
	return nil
}

// verifyApproval checks the approval's signature over the approve sentence
// of the session's account (the summary the request names), its key a
// full-access key of that account on chain. It returns what verified, the
// approval's time and its supply hash.
func (s *Service) verifyApproval(ctx context.Context, sess Session, t store.Task, req ApproveRequest) (approval.Verified, time.Time, string, error) {
	at := time.Unix(req.Approval.At, 0).UTC()
	supplyHash := countersign.SupplyHash(req.Note, req.Supplied)
	sentence, err := approval.Approval{Account: sess.AccountID, Summary: req.Summary, TaskID: t.ID, TaskHash: t.TaskHash,
		SupplyHash: supplyHash, At: at}.Sentence()
	if err != nil {
		return approval.Verified{}, at, "", countersign.Errorf(countersign.InvalidRequest, "the approval cannot be built for this task")
	}
	v, err := approval.Verify(ctx, s.keys, s.claim(sess.AccountID, sentence, req.Approval.signed()))
	if err != nil {
		return approval.Verified{}, at, "", signatureRefusal(err, countersign.ConfirmationRequired)
	}
	return v, at, supplyHash, nil
}

// Moved is the answer to a reject, acknowledge or cancel.
type Moved struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// Reject refuses a task, with an optional reason sealed to its reply key.
// Any approver of a shared task may reject it, as its owner may (SPEC §13):
// one rejection ends it, naming who rejected it.
func (s *Service) Reject(ctx context.Context, sess Session, id string, reason []byte) (Moved, error) {
	if len(reason) > countersign.MaxReasonBytes {
		return Moved{}, countersign.Errorf(countersign.InvalidRequest, "the reason is larger than 8 KiB")
	}
	return s.move(ctx, sess, id, countersign.StateRejected, inboxTask, func(tx doorTx, t store.Task) error {
		if t.Kind == countersign.KindNotice {
			return countersign.Errorf(countersign.InvalidRequest, "a notice asks nothing: acknowledge it instead")
		}
		if reason != nil {
			return tx.SetReason(ctx, id, reason)
		}
		return nil
	})
}

// locking is a lookup's transaction that reads the task with its row's
// lock (store.Tasks.LockTask).
type locking struct{ lookupTx }

func (l locking) Task(ctx context.Context, id string) (store.Task, error) { return l.LockTask(ctx, id) }

// Acknowledge is the owner's "Got it" on a notice.
func (s *Service) Acknowledge(ctx context.Context, sess Session, id string) (Moved, error) {
	return s.move(ctx, sess, id, countersign.StateDone, ownTask, func(_ doorTx, t store.Task) error {
		if t.Kind != countersign.KindNotice {
			return countersign.Errorf(countersign.InvalidRequest, "only a notice is acknowledged; approve or reject this task")
		}
		return nil
	})
}

// Cancel deletes a waiting task.
func (s *Service) Cancel(ctx context.Context, sess Session, id string) (Moved, error) {
	return s.move(ctx, sess, id, countersign.StateCancelled, ownTask, nil)
}

// move closes an open task the session's account may close (lookup: its
// own, or one of its inbox) in one transaction.
func (s *Service) move(ctx context.Context, sess Session, id string, to countersign.State,
	lookup func(context.Context, lookupTx, Session, string) (store.Task, error), check func(doorTx, store.Task) error) (Moved, error) {
	now := s.clock()
	err := s.store.Tx(ctx, func(tx doorTx) error {
		// The task is read with its row's lock, so its move asks the
		// database nothing and goes with the commit.
		t, err := lookup(ctx, locking{tx}, sess, id)
		if err != nil {
			return err
		}
		if t.State != countersign.StateOpen {
			return closed(t.State)
		}
		if countersign.StateAt(t.State, t.ExpiresAt, now) == countersign.StateExpired {
			return errExpired
		}
		if check != nil {
			if err := check(tx, t); err != nil {
				return err
			}
		}
		m, err := countersign.Transition(t.Kind, countersign.StateOpen, to, actor(sess, t), "")
		if err != nil {
			return err
		}
		moved, err := tx.MoveTask(ctx, store.Move{ID: id, Move: m, At: now, By: sess.AccountID, Unexpired: now})
		if err == nil && !moved {
			cur, err := tx.Task(ctx, id)
			if err != nil {
				return err
			}
			if countersign.StateAt(cur.State, cur.ExpiresAt, now) == countersign.StateExpired && cur.State == countersign.StateOpen {
				return errExpired
			}
			return closed(cur.State)
		}
		return err
	})
	if err != nil {
		return Moved{}, storeErr(err)
	}
	return Moved{ID: id, State: string(to)}, nil
}

// CancelMatching deletes the owner's waiting tasks of a preparer and/or a
// project ("" matches any) and returns how many.
func (s *Service) CancelMatching(ctx context.Context, sess Session, preparer, project string) (int, error) {
	n := 0
	err := s.store.Tx(ctx, func(tx doorTx) error {
		var err error
		n, err = cancelWaiting(ctx, tx, sess.AccountID, preparer, project, s.clock())
		return err
	})
	return n, storeErr(err)
}

func cancelWaiting(ctx context.Context, tx cancelTx, owner, preparer, project string, now time.Time) (int, error) {
	tasks, err := tx.OwnerTasks(ctx, owner, true, nil, countersign.MaxOpenTasksPerOwner*2)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		if preparer != "" && t.Preparer != preparer || project != "" && t.Project != project {
			continue
		}
		cancel, err := countersign.Transition(t.Kind, countersign.StateOpen, countersign.StateCancelled, countersign.ActorOwner, "")
		if err != nil {
			return 0, err
		}
		moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, Move: cancel, At: now, Unexpired: now})
		if err != nil {
			return 0, err
		}
		if moved {
			n++
		}
	}
	return n, nil
}

// Unlock wraps the content keys of the waiting tasks in the account's inbox
// (its own and those it approves) to every current device of its, through
// the keeper.
func (s *Service) Unlock(ctx context.Context, sess Session) (int, error) {
	return s.keeper.Unlock(ctx, sess.AccountID)
}

// Events gives the task events of the account's inbox as they commit: its
// own tasks' and those of the shared tasks it approves (a task's approvals
// changing is told as an event of its state, open).
func (s *Service) Events(sess Session) (<-chan store.TaskEvent, func(), error) {
	sub, ok := s.store.Store.(store.Subscriber)
	if !ok {
		return nil, nil, countersign.Errorf(countersign.Internal, "this store gives no events")
	}
	ch, stop := sub.Subscribe(sess.AccountID)
	return ch, stop, nil
}

// HistoryEntry is one state change of a task, as the owner's audit trail
// shows it: no content.
type HistoryEntry struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Actor string `json:"actor"`
	Run   string `json:"run,omitempty"`
	At    string `json:"at"`
}

// History lists a task's state changes, oldest first.
func (s *Service) History(ctx context.Context, sess Session, id string) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	err := s.store.Tx(ctx, func(tx doorTx) error {
		if _, err := ownTask(ctx, tx, sess, id); err != nil {
			return err
		}
		events, err := tx.Events(ctx, id)
		for _, e := range events {
			out = append(out, HistoryEntry{From: string(e.From), To: string(e.To), Actor: string(e.Actor), Run: e.Run, At: e.At.Format(countersign.TimeFormat)})
		}
		return err
	})
	return out, storeErr(err)
}
