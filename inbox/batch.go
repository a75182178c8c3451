package inbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/store"
)

// BatchApproveRequest is the body of POST /inbox/tasks/approve (SPEC §6,
// wave 3): 2–10 open confirm tasks of one project, nothing supplied, one
// signature over the batch sentence (SPEC §7) naming Summaries[i] for
// Tasks[i]. The summaries only rebuild the sentence: the door keeps none
// of them, in clear or otherwise (it asks the keeper to seal them to each
// task for its answer run).
type BatchApproveRequest struct {
	Tasks     []approval.BatchLine `json:"tasks"`
	Approval  Confirmation         `json:"approval"`
	Summaries []string             `json:"summaries"`
}

// BatchApproved is the answer to a batch approval: each task approved, in
// the order of the request.
type BatchApproved struct {
	Tasks []Approved `json:"tasks"`
}

// noSupply is the supply hash of an approval that supplies nothing.
var noSupply = countersign.SupplyHash(nil, nil)

// refuseTask is a refusal about one task of a batch: its sentence starts
// by naming the task, and the body names it (task_id).
func refuseTask(id string, err error) error {
	var ce *countersign.Error
	if !errors.As(err, &ce) {
		return err
	}
	out := *ce
	out.Task = id
	out.Message = "task " + id + ": " + ce.Message
	return &out
}

// BatchApprove checks a batch approval at the door and, in one
// transaction, moves every task open → approved with its approval, spends
// the signature's nonce once and queues each task's answer run: all or
// none. Each task is checked as if it were approved alone (it is the
// owner's, open, unexpired, a confirm task that takes no supply, of the
// batch's one project, with the hash signed), and every check that can
// refuse without the chain comes before the signature is verified. A
// refusal names the task it is about, writes nothing and spends nothing.
func (s *Service) BatchApprove(ctx context.Context, sess Session, req BatchApproveRequest) (BatchApproved, error) {
	now := s.clock()
	n := len(req.Tasks)
	switch {
	case n < approval.MinBatchTasks || n > approval.MaxBatchTasks:
		return BatchApproved{}, countersign.Errorf(countersign.InvalidRequest, "a batch approves %d to %d tasks; approve one task alone at /inbox/tasks/{id}/approve", approval.MinBatchTasks, approval.MaxBatchTasks)
	case len(req.Summaries) != n:
		return BatchApproved{}, countersign.Errorf(countersign.InvalidRequest, "a batch names one summary per task, in the order of the tasks")
	}
	for i, l := range req.Tasks {
		if !countersign.ValidTaskID(l.ID) {
			return BatchApproved{}, countersign.Errorf(countersign.TaskNotFound, "task %d of the batch: no such task", i+1)
		}
		for _, before := range req.Tasks[:i] {
			if before.ID == l.ID {
				return BatchApproved{}, refuseTask(l.ID, countersign.Errorf(countersign.InvalidRequest, "the batch names the task twice"))
			}
		}
		if l.SupplyHash != noSupply {
			return BatchApproved{}, refuseTask(l.ID, countersign.Errorf(countersign.InvalidRequest, "a batch supplies nothing: its supply hash is that of nothing supplied (%s)", noSupply))
		}
		if s := req.Summaries[i]; s == "" {
			return BatchApproved{}, refuseTask(l.ID, countersign.Errorf(countersign.InvalidRequest, "a task approved in a batch has a summary: approve a task without one alone"))
		} else if err := countersign.ValidateSummary(s); err != nil {
			return BatchApproved{}, refuseTask(l.ID, countersign.Errorf(countersign.InvalidRequest, "%s", countersign.ErrorMessage(err)))
		}
	}
	// The tasks, and what their moves need, in one round trip; an id that
	// cannot be a task's is not looked up, and reads as a task not found.
	var tasks []store.Task
	var seen []store.Seen
	err := s.store.Read(ctx, func(tx doorTx) error {
		ids := make([]string, n)
		for i, l := range req.Tasks {
			if countersign.ValidTaskID(l.ID) {
				ids[i] = l.ID
			}
		}
		var err error
		tasks, seen, err = tx.TasksSeen(ctx, ids)
		return err
	})
	if err != nil {
		return BatchApproved{}, storeErr(err)
	}
	for i, l := range req.Tasks {
		if _, err := owned(sess, tasks[i], nil); err != nil {
			return BatchApproved{}, refuseTask(l.ID, err)
		}
	}
	first := tasks[0]
	for i, t := range tasks {
		var refusal error
		switch {
		case t.State != countersign.StateOpen:
			refusal = closed(t.State)
		case !now.Before(t.ExpiresAt):
			refusal = &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: t.State}
		case t.Shared():
			refusal = countersign.Errorf(countersign.InvalidRequest, "this task waits for %d approvals of several accounts: approve it alone", t.Threshold)
		case t.Kind != countersign.KindConfirm:
			refusal = countersign.Errorf(countersign.InvalidRequest, "a batch approves confirm tasks only, and this is a %s: approve it alone", t.Kind)
		case t.Supplies != countersign.SuppliesNone:
			refusal = countersign.Errorf(countersign.InvalidRequest, "this task needs the owner's %s: approve it alone", t.Supplies)
		case t.ProjectUUID != first.ProjectUUID:
			refusal = countersign.Errorf(countersign.InvalidRequest, "the task is of the project %s, not %s: a batch approves tasks of one project", t.Project, first.Project)
		case req.Tasks[i].TaskHash != t.TaskHash:
			refusal = countersign.Errorf(countersign.ConfirmationRequired, "the approval names another task hash")
		}
		if refusal != nil {
			return BatchApproved{}, refuseTask(t.ID, refusal)
		}
	}
	at := time.Unix(req.Approval.At, 0).UTC()
	if err := approval.CheckConfirmation(now, at); err != nil {
		return BatchApproved{}, countersign.Errorf(countersign.ConfirmationRequired, "the approval is older than 10 minutes or from the future; sign it again")
	}
	for _, t := range tasks {
		if !at.Before(t.ExpiresAt) {
			return BatchApproved{}, refuseTask(t.ID, &countersign.Error{Code: countersign.TaskExpired, Message: "the approval is dated at or after the task's expiry", State: t.State})
		}
	}
	sentence, err := approval.BatchApproval{Account: sess.AccountID, Project: first.Project, Tasks: req.Tasks, Summaries: req.Summaries, At: at}.Sentence()
	if errors.Is(err, approval.ErrBatchTooLong) {
		return BatchApproved{}, countersign.Errorf(countersign.InvalidRequest, "%s", err.Error())
	}
	if err != nil {
		return BatchApproved{}, countersign.Errorf(countersign.InvalidRequest, "the batch approval cannot be built for these tasks")
	}
	v, err := approval.Verify(ctx, s.keys, s.claim(sess.AccountID, sentence, req.Approval.signed()))
	if err != nil {
		return BatchApproved{}, signatureRefusal(err, countersign.ConfirmationRequired)
	}
	records := make([][]byte, n)
	for i, t := range tasks {
		sealed, err := s.keeper.SealBatch(t, req.Summaries)
		if err != nil {
			return BatchApproved{}, fmt.Errorf("seal the batch's summaries for %s: %w", t.ID, err)
		}
		r := s.record(sess.AccountID, req.Approval, t.TaskHash, noSupply, nil, nil)
		r.Batch = &approval.BatchRecord{Tasks: req.Tasks, Summaries: sealed}
		if records[i], err = r.Marshal(); err != nil {
			return BatchApproved{}, err
		}
	}
	out := BatchApproved{Tasks: make([]Approved, n)}
	for i, t := range tasks {
		run := countersign.NewRunID()
		out.Tasks[i] = Approved{ID: t.ID, State: string(countersign.StateApproved), Run: run}
	}
	// Tasks are moved in the order of their ids, whatever the request's,
	// so two batches sharing tasks take their rows in one order.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case tasks[a].ID < tasks[b].ID:
			return -1
		case tasks[a].ID > tasks[b].ID:
			return 1
		}
		return 0
	})
	b := &keptBatch{sess: sess, now: now, at: at, nonce: v.Nonce[:], tasks: tasks, seen: seen, records: records, order: order, out: out}
	// The moves are made from the tasks as read, and go with the commit;
	// if a task or the owner's webhook changed since, they are made again
	// from the tasks as they are now.
	err = store.FromSeen(func(fromSeen bool) error {
		return s.store.Tx(ctx, func(tx doorTx) error { return s.keepBatch(ctx, tx, b, fromSeen) })
	})
	if err != nil {
		return BatchApproved{}, storeErr(usedAlready(err, countersign.ConfirmationRequired, approvalUsed))
	}
	for _, a := range out.Tasks {
		s.log.Info("task approved", "task", a.ID, "owner", sess.AccountID, "run", a.Run, "batch", n)
	}
	return out, nil
}

// keptBatch is a batch approval checked and ready to be kept.
type keptBatch struct {
	sess    Session
	now, at time.Time // when it arrived, when it was signed
	nonce   []byte
	tasks   []store.Task
	seen    []store.Seen // what the moves need of each task, as read
	records [][]byte     // each task's approval record
	order   []int        // the tasks in the order of their ids
	out     BatchApproved
}

// keepBatch moves a batch's tasks to approved in tx (from what was read
// of them when fromSeen), spends the batch's nonce and hands their answer
// runs over.
func (s *Service) keepBatch(ctx context.Context, tx doorTx, b *keptBatch, fromSeen bool) error {
	for _, i := range b.order {
		t, run := b.tasks[i], b.out.Tasks[i].Run
		approve, err := countersign.Transition(t.Kind, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner, "")
		if err != nil {
			return refuseTask(t.ID, err)
		}
		// The move also requires the task not to have expired meanwhile
		// (the signature check may have waited on the chain).
		m := store.Move{ID: t.ID, Move: approve, At: b.now, Run: run, AnswerRun: run, Unexpired: s.clock(), Approval: b.records[i]}
		if fromSeen {
			m.Seen = &b.seen[i]
		}
		if err := moveToApproved(ctx, tx, m); err != nil {
			return refuseTask(t.ID, err)
		}
	}
	if err := tx.SpendNonce(ctx, b.sess.AccountID, b.nonce, b.at.Add(approval.ConfirmationMaxAge+time.Minute)); err != nil {
		return err
	}
	for i, t := range b.tasks {
		if err := tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: t.ID, Run: b.out.Tasks[i].Run}); err != nil {
			return err
		}
	}
	return nil
}
