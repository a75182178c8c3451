package calls

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"countersign"
	"countersign/sealing"
	"countersign/store"
)

// The operations every project answers, priced 0, for the preparer only.
const (
	opTaskStatus = "task_status"
	opTaskCancel = "task_cancel"
	opTaskDelete = "task_delete"
	opTasks      = "tasks"
	opTaskWait   = "task_wait"
)

// MaxTaskWait is the longest task_wait holds a call.
const MaxTaskWait = 60 * time.Second

// maxListed is the most tasks the tasks operation lists.
const maxListed = 100

func isTaskOperation(op string) bool {
	switch op {
	case opTaskStatus, opTaskCancel, opTaskDelete, opTasks, opTaskWait:
		return true
	}
	return false
}

// TaskStatus is what an agent is told of one of its tasks.
type TaskStatus struct {
	TaskID        string          `json:"task_id"`
	Kind          string          `json:"kind"`
	State         string          `json:"state"`
	Thread        string          `json:"thread"`
	CreatedAt     string          `json:"created_at"`
	ExpiresAt     string          `json:"expires_at"`
	OutcomeClass  string          `json:"outcome_class,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Reason        *string         `json:"reason,omitempty"`
	Run           string          `json:"run,omitempty"`
	FailureReason string          `json:"failure_reason,omitempty"`
	NextTaskID    string          `json:"next_task_id,omitempty"`
	NoticeTaskID  string          `json:"notice_task_id,omitempty"`
	// Status and Approvals are set while a shared task waits (SPEC §13
	// `approvers`): awaiting_owner, with how many distinct accounts have
	// approved it and how many must.
	Status    string          `json:"status,omitempty"`
	Approvals *ApprovalsCount `json:"approvals,omitempty"`
}

// ApprovalsCount is how far a shared task is from its threshold.
type ApprovalsCount struct {
	Have int `json:"have"`
	Need int `json:"need"`
}

// taskOperation serves the task operations of SPEC §5.
func (s *Service) taskOperation(ctx context.Context, d *admission, op string, body []byte) (any, error) {
	var args struct {
		Operation string `json:"operation"`
		TaskID    string `json:"task_id"`
		State     string `json:"state"`
		TimeoutS  *int   `json:"timeout_s"`
	}
	if err := countersign.DecodeStrict(body, &args); err != nil {
		var je *countersign.JSONError
		if errors.As(err, &je) && (je.Problem == countersign.JSONRepeated || je.Problem == countersign.JSONOtherCase) {
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s takes %s; %s", op, taskOpArgs[op], je.Sentence("the call"))
		}
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s takes %s", op, taskOpArgs[op])
	}
	needsID := op != opTasks
	switch {
	case needsID && !countersign.ValidTaskID(args.TaskID):
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s takes %s", op, taskOpArgs[op])
	case !needsID && args.TaskID != "", op != opTasks && args.State != "", op != opTaskWait && args.TimeoutS != nil:
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s takes %s", op, taskOpArgs[op])
	}
	switch op {
	case opTaskStatus:
		return s.taskStatus(ctx, d, args.TaskID)
	case opTaskWait:
		timeout := 30 * time.Second
		if args.TimeoutS != nil {
			if *args.TimeoutS < 0 || *args.TimeoutS > int(MaxTaskWait/time.Second) {
				return nil, countersign.Errorf(countersign.InvalidRequest, "`timeout_s` is a whole number from 0 to 60")
			}
			timeout = time.Duration(*args.TimeoutS) * time.Second
		}
		return s.taskWait(ctx, d, args.TaskID, timeout)
	case opTaskCancel:
		return s.taskCancel(ctx, d, args.TaskID)
	case opTaskDelete:
		return s.taskDelete(ctx, d, args.TaskID)
	}
	if args.State != "" && !countersign.State(args.State).Valid() {
		return nil, countersign.Errorf(countersign.InvalidRequest, "`state` is one of open, approved, answering, done, failed, rejected, cancelled, expired, void")
	}
	return s.taskList(ctx, d, args.State)
}

// taskArgs checks a task operation's call against its declared schema,
// after the one strict rule for JSON bodies, whose sentences name what
// the operation takes.
func (s *Service) taskArgs(op string, body []byte) error {
	var args struct {
		Operation string `json:"operation"`
		TaskID    any    `json:"task_id"`
		State     any    `json:"state"`
		TimeoutS  any    `json:"timeout_s"`
	}
	var je *countersign.JSONError
	if err := countersign.DecodeStrict(body, &args); errors.As(err, &je) && (je.Problem == countersign.JSONRepeated || je.Problem == countersign.JSONOtherCase) {
		return countersign.Errorf(countersign.InvalidRequest, "%s takes %s; %s", op, taskOpArgs[op], je.Sentence("the call"))
	}
	sch, ok := s.schemas.For("", op)
	if !ok {
		return countersign.Errorf(countersign.Internal, "%s has no schema", op)
	}
	if err := sch.Check(body); err != nil {
		return countersign.Errorf(countersign.InvalidRequest, "%s takes %s; %s", op, taskOpArgs[op], countersign.ErrorMessage(err))
	}
	return nil
}

var taskOpArgs = map[string]string{
	opTaskStatus: "{task_id}",
	opTaskCancel: "{task_id}",
	opTaskDelete: "{task_id}",
	opTasks:      "{state?}",
	opTaskWait:   "{task_id, timeout_s?}",
}

var errTaskNotFound = countersign.Errorf(countersign.TaskNotFound, "no such task of this agent in this project")

// preparerTask loads a task the agent prepared in this project: any other
// task, even one that exists, is task_not_found.
func preparerTask(ctx context.Context, tx store.Tasks, agent string, project store.Project, id string) (store.Task, error) {
	return preparerTaskBy(ctx, tx.Task, agent, project, id)
}

// preparerTaskBy is preparerTask with the task read by read (Task, or LockTask
// for a task about to move).
func preparerTaskBy(ctx context.Context, read func(context.Context, string) (store.Task, error), agent string, project store.Project, id string) (store.Task, error) {
	t, err := read(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (t.Preparer != agent || t.ProjectUUID != project.UUID || t.Forgotten) {
		return store.Task{}, errTaskNotFound
	}
	return t, err
}

func (s *Service) taskStatus(ctx context.Context, d *admission, id string) (TaskStatus, error) {
	agent, project := d.agent.Account, d.project
	var st TaskStatus
	err := s.admittedRead(ctx, d, func(tx callsTx) error {
		t, err := preparerTask(ctx, tx, agent, project, id)
		if err != nil {
			return err
		}
		state := countersign.StateAt(t.State, t.ExpiresAt, s.clock())
		st = TaskStatus{TaskID: t.ID, Kind: string(t.Kind), State: string(state), Thread: t.Thread,
			CreatedAt: t.CreatedAt.Format(countersign.TimeFormat), ExpiresAt: t.ExpiresAt.Format(countersign.TimeFormat),
			OutcomeClass: string(t.OutcomeClass), Run: t.AnswerRun, FailureReason: string(t.FailureReason),
			NextTaskID: t.NextTaskID, NoticeTaskID: t.NoticeTaskID}
		if t.Shared() && state == countersign.StateOpen {
			have, err := approvalsHave(ctx, tx, t)
			if err != nil {
				return err
			}
			st.Status, st.Approvals = "awaiting_owner", &ApprovalsCount{Have: have, Need: t.Threshold}
		}
		result, reason, err := tx.Outcome(ctx, t.ID)
		if err != nil {
			return err
		}
		if result == nil && reason == nil {
			return nil
		}
		tk, err := s.keys.TaskKeys(t.KeyID, t.ProjectUUID, t.Owner, t.ID)
		if err != nil {
			return err
		}
		if result != nil {
			plain, err := tk.Open(sealing.OutcomeRecord, result)
			if err != nil {
				return countersign.Errorf(countersign.TaskUnreadable, "decryption failed")
			}
			st.Result = plain
		}
		if reason != nil {
			// A reason the owner's page sealed wrongly is left out; the
			// rest of the status still tells the agent how the task ended.
			plain, err := sealing.OpenWith(tk.ReplyKey(), sealing.Rejection, t.ID, reason)
			if err != nil {
				s.log.Warn("a rejection reason does not open; it is left out", "task", t.ID)
			} else {
				text := string(plain)
				st.Reason = &text
			}
		}
		return nil
	})
	return st, err
}

// lookLimit bounds task_wait's looks at the task past its timeout.
const lookLimit = 10 * time.Second

// taskWait answers as task_status as soon as the task's state differs from
// the one it had when the call came, or when the timeout passes; a task
// already closed is answered at once. It waits on the store's task events
// (every process's, on PostgreSQL), looking at the task again now and then
// in case an event was missed. The request's end (the client gone, or serve
// shutting down) ends the wait, not a look at the task under way: the wait
// is answered with what it knows, never with the look's cancellation; the
// looks are bounded by the wait's own timeout and lookLimit beyond it.
func (s *Service) taskWait(ctx context.Context, d *admission, id string, timeout time.Duration) (TaskStatus, error) {
	agent, project := d.agent.Account, d.project
	look, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+lookLimit)
	defer cancel()
	var events <-chan store.TaskEvent
	if sub, ok := s.store.Store.(store.Subscriber); ok {
		ch, stop := sub.Subscribe(project.Owner)
		defer stop()
		events = ch
	}
	first, err := s.taskStatus(look, d, id)
	if err != nil || timeout == 0 || countersign.State(first.State).Terminal() {
		return first, err // a closed task changes no more
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var poll <-chan time.Time
	if s.taskWaitPoll > 0 {
		tick := time.NewTicker(s.taskWaitPoll)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return first, nil
		case <-deadline.C:
			return s.taskStatus(look, d, id)
		case ev, ok := <-events:
			if !ok {
				events = nil // dropped: the poll still looks, if there is one
				continue
			}
			if ev.TaskID == id && string(ev.State) != first.State {
				return s.taskStatus(look, d, id)
			}
		case <-poll:
			var state string
			err := s.store.Tx(look, func(tx callsTx) error {
				t, err := preparerTask(look, tx, agent, project, id)
				state = string(t.State)
				return err
			})
			if err != nil {
				return TaskStatus{}, err
			}
			if state != first.State {
				return s.taskStatus(look, d, id)
			}
		}
	}
}

func (s *Service) taskCancel(ctx context.Context, d *admission, id string) (any, error) {
	agent, project := d.agent.Account, d.project
	// It may share its commit with other owners' actions and be tried
	// twice (store.Grouped): each try reads the task again.
	err := s.admittedTx(store.Grouped(ctx, project.Owner), d, func(tx callsTx) error {
		// Read with its lock: the move below then waits for nothing.
		t, err := preparerTaskBy(ctx, tx.LockTask, agent, project, id)
		if err != nil {
			return err
		}
		now := s.clock()
		state := countersign.StateAt(t.State, t.ExpiresAt, now)
		cancel, err := countersign.Transition(t.Kind, state, countersign.StateCancelled, countersign.ActorAgent, "")
		if err != nil {
			return closed(state) // an expired task is closed for its preparer
		}
		moved, err := tx.MoveTask(ctx, store.Move{ID: id, Move: cancel, At: now, Unexpired: now})
		if err == nil && !moved {
			return closed("")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"task_id": id, "state": string(countersign.StateCancelled)}, nil
}

func (s *Service) taskDelete(ctx context.Context, d *admission, id string) (any, error) {
	agent, project := d.agent.Account, d.project
	err := s.admittedTx(ctx, d, func(tx callsTx) error {
		t, err := preparerTask(ctx, tx, agent, project, id)
		if err != nil {
			return err
		}
		if !t.State.Terminal() {
			return countersign.Errorf(countersign.InvalidRequest, "the task is %s: only a closed task is deleted (cancel an open one first)", t.State)
		}
		_, err = tx.ForgetTask(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"task_id": id, "deleted": true}, nil
}

type listed struct {
	TaskID    string `json:"task_id"`
	Kind      string `json:"kind"`
	State     string `json:"state"`
	Thread    string `json:"thread"`
	CreatedAt string `json:"created_at"`
}

func (s *Service) taskList(ctx context.Context, d *admission, state string) (any, error) {
	agent, project := d.agent.Account, d.project
	out := []listed{}
	now := s.clock()
	err := s.admittedRead(ctx, d, func(tx callsTx) error {
		tasks, err := tx.PreparerTasks(ctx, project.Owner, project.UUID, agent, countersign.State(state), maxListed)
		for _, t := range tasks {
			out = append(out, listed{TaskID: t.ID, Kind: string(t.Kind), State: string(countersign.StateAt(t.State, t.ExpiresAt, now)), Thread: t.Thread, CreatedAt: t.CreatedAt.Format(countersign.TimeFormat)})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"tasks": out}, nil
}

// closed is the refusal for a task that has left open.
func closed(state countersign.State) error {
	e := countersign.Errorf(countersign.TaskClosed, "the task is no longer open")
	if state != "" {
		e.Message = "the task is " + string(state)
		e.State = state
	}
	return e
}

// approvalsHave counts the distinct accounts that approved shared task t
// so far among those listed to (its owner and its approvers, never its
// preparer).
func approvalsHave(ctx context.Context, tx store.Approvals, t store.Task) (int, error) {
	others, err := tx.TaskApprovers(ctx, t.ID)
	if err != nil {
		return 0, err
	}
	list, err := tx.Approvals(ctx, t.ID)
	if err != nil {
		return 0, err
	}
	accounts := make([]string, 0, len(list))
	for _, a := range list {
		accounts = append(accounts, a.Account)
	}
	return countersign.Approvers{Owner: t.Owner, Accounts: others, Threshold: t.Threshold}.Count(accounts, t.Preparer), nil
}
