package inbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/store"
)

// M-of-N approval at the door (SPEC §7, §13 `approvers`, wave 3): a shared
// task waits, open, recording each account's approval, until the
// threshold of distinct accounts has approved it; then it moves to
// approved once. The answer run counts and verifies every approval again.

// ApprovalsView is who approved a shared task so far.
type ApprovalsView struct {
	// Have is how many distinct accounts that may approve it have; Need
	// is the threshold.
	Have int `json:"have" jsonschema:"how many distinct accounts among approvers approved it"`
	Need int `json:"need" jsonschema:"how many distinct accounts must approve it (the policy's threshold); it moves to approved once have reaches need"`
	// Approvers are the accounts that may approve it: the owner first,
	// then the others listed for it, in byte order.
	Approvers []string `json:"approvers" jsonschema:"the accounts that may approve it: the owner first, then the other approvers listed for it"`
	// By is who approved it, oldest first, with when the service
	// accepted each approval.
	By []ApprovalBy `json:"by" jsonschema:"who approved it, oldest first"`
	// Approved tells whether the session's own account approved it.
	Approved bool `json:"approved" jsonschema:"whether this session's account approved it already (a second approval is refused 409 conflict)"`
}

// ApprovalBy is one account's approval of a shared task.
type ApprovalBy struct {
	Account string `json:"account"`
	At      string `json:"at" jsonschema:"when the service accepted the approval (YYYY-MM-DDTHH:MM:SSZ)"`
}

// approvalsView reads who approved shared task t so far.
func approvalsView(ctx context.Context, tx store.Approvals, sess Session, t store.Task) (*ApprovalsView, error) {
	others, err := tx.TaskApprovers(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	list, err := tx.Approvals(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	return viewOf(sess, t, others, list), nil
}

// viewOf is what approvalsView reads, rendered.
func viewOf(sess Session, t store.Task, others []string, list []store.Approval) *ApprovalsView {
	rule := countersign.Approvers{Owner: t.Owner, Accounts: others, Threshold: t.Threshold}
	v := &ApprovalsView{Need: t.Threshold, Approvers: rule.All(), By: []ApprovalBy{}}
	var accounts []string
	for _, a := range list {
		if !rule.Includes(a.Account) {
			continue // taken off since (DropApprover takes its approvals too)
		}
		accounts = append(accounts, a.Account)
		v.By = append(v.By, ApprovalBy{Account: a.Account, At: a.At.Format(countersign.TimeFormat)})
		v.Approved = v.Approved || a.Account == sess.AccountID
	}
	v.Have = rule.Count(accounts, t.Preparer)
	return v
}

// approveShared is Approve for a shared task: the session's account (its
// owner or a listed approver) signs the approve sentence with its own
// account; its approval is recorded once, under the task's row lock, and
// the task moves to approved, with its run queued, when the threshold of
// distinct accounts is reached, and stays open otherwise. The preparer
// never approves its own task, and an account approves once (conflict).
// Every check that can refuse without the chain comes before the
// signature is verified; every refusal writes and spends nothing.
func (s *Service) approveShared(ctx context.Context, sess Session, t store.Task, req ApproveRequest, now time.Time) (Approved, error) {
	if err := checkApproval(now, t, req); err != nil {
		return Approved{}, err
	}
	if req.Note != nil {
		return Approved{}, countersign.Errorf(countersign.InvalidRequest, "a task that waits for the approvals of several accounts takes no note; approve it without one")
	}
	if sess.AccountID == t.Preparer {
		return Approved{}, countersign.Errorf(countersign.ConfirmationRequired, "the agent that prepared this task cannot approve it")
	}
	var list []store.Approval
	if err := s.store.Read(ctx, func(tx doorTx) (err error) {
		list, err = tx.Approvals(ctx, t.ID)
		return err
	}); err != nil {
		return Approved{}, storeErr(err)
	}
	if slices.ContainsFunc(list, func(a store.Approval) bool { return a.Account == sess.AccountID }) {
		return Approved{}, approvedAlready(t)
	}
	v, at, supplyHash, err := s.verifyApproval(ctx, sess, t, req)
	if err != nil {
		return Approved{}, err
	}
	record, err := s.record(sess.AccountID, req.Approval, t.TaskHash, supplyHash, nil, nil).Marshal()
	if err != nil {
		return Approved{}, err
	}
	out := Approved{ID: t.ID, State: string(countersign.StateOpen)}
	run := countersign.NewRunID()
	err = s.store.Tx(ctx, func(tx doorTx) error {
		out = Approved{ID: t.ID, State: string(countersign.StateOpen)}
		// The task's row, locked while open: a parallel approval waits
		// here and then counts this one, so the threshold is crossed once.
		open, err := tx.LockWaiting(ctx, t.ID)
		if err != nil {
			return err
		}
		if !open {
			cur, err := tx.Task(ctx, t.ID)
			if err != nil {
				return err
			}
			return closed(cur.State)
		}
		if !s.clock().Before(t.ExpiresAt) {
			return &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: countersign.StateOpen}
		}
		others, err := tx.TaskApprovers(ctx, t.ID)
		if err != nil {
			return err
		}
		if sess.AccountID != t.Owner && !slices.Contains(others, sess.AccountID) {
			return errTaskNotFound // taken off its approvers meanwhile
		}
		if err := tx.SpendNonce(ctx, sess.AccountID, v.Nonce[:], at.Add(approval.ConfirmationMaxAge+time.Minute)); err != nil {
			return err
		}
		added, err := tx.AddApproval(ctx, store.Approval{TaskID: t.ID, Account: sess.AccountID, At: now, Record: record})
		if err != nil {
			return err
		}
		if !added {
			return approvedAlready(t)
		}
		list, err := tx.Approvals(ctx, t.ID)
		if err != nil {
			return err
		}
		out.Approvals = viewOf(sess, t, others, list)
		if out.Approvals.Have < t.Threshold {
			// Still open: everyone who sees it is told its approvals
			// changed.
			return tx.NotifyTask(ctx, t.ID, countersign.StateOpen)
		}
		approve, err := countersign.Transition(t.Kind, countersign.StateOpen, countersign.StateApproved, actor(sess, t), "")
		if err != nil {
			return err
		}
		moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, Move: approve, At: now, Run: run, AnswerRun: run, Unexpired: s.clock()})
		if err != nil {
			return err
		}
		if !moved {
			return &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: countersign.StateOpen}
		}
		out.State, out.Run = string(countersign.StateApproved), run
		return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: t.ID, Run: run})
	})
	if err != nil {
		return Approved{}, storeErr(usedAlready(err, countersign.ConfirmationRequired, approvalUsed))
	}
	if out.Run != "" {
		s.log.Info("task approved", "task", t.ID, "owner", t.Owner, "by", sess.AccountID, "run", run,
			"approvals", out.Approvals.Have, "threshold", t.Threshold)
	} else {
		s.log.Info("task approval recorded", "task", t.ID, "owner", t.Owner, "by", sess.AccountID,
			"approvals", out.Approvals.Have, "threshold", t.Threshold)
	}
	return out, nil
}

// approvedAlready refuses an account's second approval of a shared task.
func approvedAlready(t store.Task) error {
	return countersign.Errorf(countersign.Conflict, "%s", fmt.Sprintf("you approved this task already; it waits for %d approvals in all", t.Threshold))
}
