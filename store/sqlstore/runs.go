package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"countersign"
	"countersign/store"
)

func (t *tx) InsertRun(ctx context.Context, r store.Run) error {
	if r.ID == "" {
		return errors.New("store: a run needs an id")
	}
	var finished any
	if !r.FinishedAt.IsZero() {
		finished = r.FinishedAt.Unix()
	}
	// Nothing waits for its result: it goes with the transaction's next
	// round trip (the charge, or the commit), whose error a taken id is.
	t.later(stmt{sql: `INSERT INTO runs (id, agent, owner, project_uuid, operation, price,
		compute_limit_ms, task_id, input_sha256, output_sha256, receipt, started_at, finished_at, runner,
		receipt_key_id, receipt_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args: []any{
		r.ID, r.Agent, r.Owner, r.ProjectUUID, r.Operation, r.Price, r.ComputeLimit.Milliseconds(),
		r.TaskID, r.InputSHA256, r.OutputSHA256, r.Receipt, r.StartedAt.Unix(), finished, r.Runner,
		int64(r.ReceiptKeyID), r.ReceiptKey}})
	return nil
}

// FinishRun records a run's end once, with the receipts of the tasks it
// opened: a run that finished already keeps its receipt, and a second
// FinishRun is ErrConflict. The writes are checked ones and wait for
// nothing: they go with the transaction's next round trip, on a run's end
// its COMMIT.
func (t *tx) FinishRun(_ context.Context, id string, at time.Time, outputSHA256, receipt string, tasks ...store.TaskReceipt) error {
	// Checked writes: nothing waits for them, they go with the commit.
	t.later(checked(fmt.Errorf("store: finish run %s: %w: no such run, or it finished already", id, store.ErrConflict),
		"UPDATE runs SET finished_at = ?, output_sha256 = ?, receipt = ? WHERE id = ? AND finished_at IS NULL",
		at.Unix(), outputSHA256, receipt, id))
	for _, r := range tasks {
		if t.foldReceipt(r.TaskID, r.Receipt) {
			continue
		}
		t.later(checked(fmt.Errorf("store: the receipt of task %s: %w", r.TaskID, store.ErrNotFound),
			setTaskReceipt, r.Receipt, r.TaskID))
	}
	return nil
}

func (t *tx) Run(ctx context.Context, id string) (store.Run, error) {
	var r store.Run
	var limitMS, started, keyID int64
	var finished *int64
	err := t.q.queryRow(ctx, `SELECT id, agent, owner, project_uuid, operation, price, compute_limit_ms,
		task_id, input_sha256, output_sha256, receipt, started_at, finished_at, runner, receipt_key_id, receipt_key
		FROM runs WHERE id = ?`, id).
		Scan(&r.ID, &r.Agent, &r.Owner, &r.ProjectUUID, &r.Operation, &r.Price, &limitMS,
			&r.TaskID, &r.InputSHA256, &r.OutputSHA256, &r.Receipt, &started, &finished, &r.Runner, &keyID, &r.ReceiptKey)
	if err != nil {
		return store.Run{}, err
	}
	r.ReceiptKeyID = uint32(keyID)
	r.ComputeLimit = time.Duration(limitMS) * time.Millisecond
	r.StartedAt = unix(started)
	if finished != nil {
		r.FinishedAt = unix(*finished)
	}
	return r, nil
}

// ClaimCall inserts the claim if no call holds its key; otherwise it reads
// the call that does. On PostgreSQL a concurrent claim of the same key waits
// for the first one's transaction: if it commits, the insert does nothing
// and the read sees it; if it rolls back, the insert claims.
func (t *tx) ClaimCall(ctx context.Context, c store.IdempotentCall) (store.IdempotentCall, bool, error) {
	if c.Agent == "" || c.Owner == "" || c.Project == "" || c.Key == "" || c.BodySHA256 == "" || c.BodyKeyID == 0 {
		return store.IdempotentCall{}, false, errors.New("store: an idempotent call needs an agent, an owner, a project, a key and its body's keyed hash with its key id")
	}
	if c.CreatedAt.IsZero() {
		// A claim is kept for a while after it was made; without a time it
		// would be purged at once and the call could run again.
		return store.IdempotentCall{}, false, errors.New("store: an idempotent call needs the time it was made")
	}
	n, err := t.q.exec(ctx, `INSERT INTO idempotency (agent, owner, project, key, body_sha256, body_key_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, owner, project, key) DO NOTHING`,
		c.Agent, c.Owner, c.Project, c.Key, c.BodySHA256, int64(c.BodyKeyID), c.CreatedAt.Unix())
	if err != nil {
		return store.IdempotentCall{}, false, fmt.Errorf("store: claim an idempotency key: %w", err)
	}
	if n == 1 {
		c.AnswerKeyID, c.Answer = 0, nil
		c.CreatedAt = unix(c.CreatedAt.Unix())
		return c, true, nil
	}
	first, err := t.call(ctx, c.Agent, c.Owner, c.Project, c.Key)
	if err != nil {
		return store.IdempotentCall{}, false, fmt.Errorf("store: read a claimed idempotency key: %w", err)
	}
	return first, false, nil
}

func (t *tx) call(ctx context.Context, agent, owner, project, key string) (store.IdempotentCall, error) {
	var c store.IdempotentCall
	var keyID *int64
	var created, bodyKeyID int64
	err := t.q.queryRow(ctx, `SELECT agent, owner, project, key, body_sha256, body_key_id, answer_key_id, answer, created_at
		FROM idempotency WHERE agent = ? AND owner = ? AND project = ? AND key = ?`, agent, owner, project, key).
		Scan(&c.Agent, &c.Owner, &c.Project, &c.Key, &c.BodySHA256, &bodyKeyID, &keyID, &c.Answer, &created)
	if err != nil {
		return store.IdempotentCall{}, err
	}
	c.BodyKeyID = uint32(bodyKeyID)
	if keyID != nil {
		c.AnswerKeyID = uint32(*keyID)
	}
	c.CreatedAt = unix(created)
	return c, nil
}

// AnswerCall stores the answer once, on the claim with the same key and
// body: ErrNotFound if there is no such claim, ErrConflict if it was
// answered already.
func (t *tx) AnswerCall(ctx context.Context, c store.IdempotentCall) error {
	if len(c.Answer) == 0 {
		return errors.New("store: an idempotent call's answer is empty")
	}
	n, err := t.q.exec(ctx, `UPDATE idempotency SET answer_key_id = ?, answer = ?
		WHERE agent = ? AND owner = ? AND project = ? AND key = ? AND body_sha256 = ? AND body_key_id = ? AND answer IS NULL`,
		int64(c.AnswerKeyID), c.Answer, c.Agent, c.Owner, c.Project, c.Key, c.BodySHA256, int64(c.BodyKeyID))
	if err != nil {
		return fmt.Errorf("store: answer an idempotent call: %w", err)
	}
	if n == 1 {
		return nil
	}
	first, err := t.call(ctx, c.Agent, c.Owner, c.Project, c.Key)
	switch {
	case err != nil:
		return fmt.Errorf("store: answer an idempotent call: %w", err)
	case first.BodySHA256 != c.BodySHA256 || first.BodyKeyID != c.BodyKeyID:
		return fmt.Errorf("store: answer an idempotent call: %w: the key was claimed with another body", store.ErrNotFound)
	}
	return fmt.Errorf("store: answer an idempotent call: %w: it was answered already", store.ErrConflict)
}

// PreparerTasks reads newest first, breaking ties of created_at by id
// (descending) so that pages are stable.
func (t *tx) PreparerTasks(ctx context.Context, owner, projectUUID, preparer string, state countersign.State, limit int) ([]store.Task, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: a list of tasks needs a positive limit, not %d", limit)
	}
	q, args := preparerTasksQuery(owner, projectUUID, preparer, state, limit)
	out, err := t.tasks(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: tasks of preparer %s: %w", preparer, err)
	}
	return out, nil
}

// preparerTasksQuery reads through (owner, preparer, project_uuid,
// created_at, id) in the order shown: a page without a state reads a page
// of tasks; with one, it reads on until it has a page of tasks in it.
func preparerTasksQuery(owner, projectUUID, preparer string, state countersign.State, limit int) (string, []any) {
	q := "SELECT " + taskColumns + " FROM tasks WHERE owner = ? AND preparer = ? AND forgotten = 0"
	args := []any{owner, preparer}
	if projectUUID != "" {
		q += " AND project_uuid = ?"
		args = append(args, projectUUID)
	}
	if state != "" {
		q += " AND state = ?"
		args = append(args, state)
	}
	return q + newestFirst, append(args, limit)
}

// ForgetTask marks a closed task forgotten; an open, approved or answering
// task, a task forgotten already and a missing one are left alone (false).
func (t *tx) ForgetTask(ctx context.Context, id string) (bool, error) {
	n, err := t.q.exec(ctx, `UPDATE tasks SET forgotten = 1
		WHERE id = ? AND forgotten = 0 AND state NOT IN (?, ?, ?)`, id, countersign.StateOpen, countersign.StateApproved, countersign.StateAnswering)
	if err != nil {
		return false, fmt.Errorf("store: forget task %s: %w", id, err)
	}
	return n == 1, nil
}
