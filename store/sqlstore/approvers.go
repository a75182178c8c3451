package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"countersign"
	"countersign/store"
)

// The approvers of shared tasks (SPEC §13 `approvers`) and their approvals.

func (t *tx) ShareTask(ctx context.Context, k store.Task, accounts []string) error {
	if k.Threshold < 1 || len(accounts) == 0 {
		return fmt.Errorf("store: a shared task needs a threshold and approvers")
	}
	stmts := make([]stmt, 0, len(accounts))
	for _, a := range accounts {
		stmts = append(stmts, stmt{sql: "INSERT INTO task_approvers (task_id, account) VALUES (?, ?)", args: []any{k.ID, a}})
	}
	// They go with the next round trip: the look-up of the approvers'
	// webhooks, or the commit.
	t.later(stmts...)
	return t.toApprovers(ctx, k.ID, k.Kind, k.State, k.CreatedAt.Unix())
}

// toApprovers tells the approvers of a shared task that it reached state:
// a task event each and, when the state has a webhook event, one in the
// outbox of each approver that has a webhook (receiver: the approver).
func (t *tx) toApprovers(ctx context.Context, id string, kind countersign.Kind, state countersign.State, at int64) error {
	if err := t.db.e.taskEvents(ctx, t, id, state, false); err != nil {
		return err
	}
	if countersign.EventFor(kind, state) == "" {
		return nil
	}
	r, err := t.q.query(ctx, `SELECT a.account, w.id FROM task_approvers a JOIN webhooks w ON w.owner = a.account
		WHERE a.task_id = ? ORDER BY a.account`, id)
	if err != nil {
		return err
	}
	type hook struct{ account, id string }
	var hooks []hook
	for r.Next() {
		var h hook
		if err := r.Scan(&h.account, &h.id); err != nil {
			r.Close()
			return err
		}
		hooks = append(hooks, h)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return err
	}
	for _, h := range hooks {
		if err := t.outbox(ctx, id, kind, h.id, h.account, state, at); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) TaskApprovers(ctx context.Context, id string) ([]string, error) {
	r, err := t.q.query(ctx, "SELECT account FROM task_approvers WHERE task_id = ? ORDER BY account", id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var a string
		if err := r.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, r.Err()
}

// InboxTasks reads the account's own tasks and the shared tasks it is an
// approver of apart, each through its own index and cut at a page, and then
// merges them: a page reads at most two pages of tasks, however many tasks
// the service holds. (One query with "owner = ? OR id IN (…)" was read
// through neither index: PostgreSQL walked every waiting task of every
// owner, or every task, for each page.)
func (t *tx) InboxTasks(ctx context.Context, account string, waiting bool, before *store.Task, limit int) ([]store.Task, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: a list of tasks needs a positive limit, not %d", limit)
	}
	q, args := inboxTasksQuery(account, waiting, before, limit)
	return t.tasks(ctx, q, args...)
}

func inboxTasksQuery(account string, waiting bool, before *store.Task, limit int) (string, []any) {
	page, pageArgs := taskPage(waiting, before)
	q := "SELECT * FROM (SELECT " + taskColumns + " FROM tasks WHERE owner = ?" + page + newestFirst + ") owned" +
		" UNION ALL SELECT * FROM (SELECT " + taskColumns + " FROM tasks" +
		" WHERE id IN (SELECT task_id FROM task_approvers WHERE account = ?) AND owner <> ?" + page + newestFirst + ") shared" +
		newestFirst
	args := append([]any{account}, pageArgs...)
	args = append(args, limit, account, account)
	return q, append(append(args, pageArgs...), limit, limit)
}

func (t *tx) AddApproval(ctx context.Context, a store.Approval) (bool, error) {
	if a.TaskID == "" || a.Account == "" || a.Record == nil {
		return false, fmt.Errorf("store: an approval needs its task, account and record")
	}
	n, err := t.q.exec(ctx, `INSERT INTO task_approvals (task_id, account, at, approval) VALUES (?, ?, ?, ?)
		ON CONFLICT (task_id, account) DO NOTHING`, a.TaskID, a.Account, a.At.Unix(), a.Record)
	return n == 1, err
}

const approvalsQuery = "SELECT task_id, account, at, approval FROM task_approvals WHERE task_id = ? ORDER BY at, account"

func (t *tx) Approvals(ctx context.Context, id string) ([]store.Approval, error) {
	r, err := t.q.query(ctx, approvalsQuery, id)
	if err != nil {
		return nil, err
	}
	return scanApprovals(r)
}

func scanApprovals(r rows) ([]store.Approval, error) {
	defer r.Close()
	var out []store.Approval
	for r.Next() {
		var a store.Approval
		var at int64
		if err := r.Scan(&a.TaskID, &a.Account, &at, &a.Record); err != nil {
			return nil, err
		}
		a.At = unix(at)
		out = append(out, a)
	}
	return out, r.Err()
}

func (t *tx) DropApprover(ctx context.Context, projectUUID, account string) ([]string, error) {
	// The waiting tasks it is listed for, locked: an unlock wrapping a key
	// to its devices, or an approval, waits and then finds it gone.
	q := `SELECT id FROM tasks WHERE project_uuid = ? AND state = ` + sqlState(countersign.StateOpen) + `
		AND id IN (SELECT task_id FROM task_approvers WHERE account = ?) ORDER BY id`
	q += t.db.e.forUpdate()
	r, err := t.q.query(ctx, q, projectUUID, account)
	if err != nil {
		return nil, err
	}
	var ids []string
	for r.Next() {
		var id string
		if err := r.Scan(&id); err != nil {
			r.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	r.Close()
	if err := r.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
	idArgs := make([]any, len(ids))
	for i, id := range ids {
		idArgs[i] = id
	}
	with := func(first []any, rest ...any) []any { return append(append(first, idArgs...), rest...) }
	stmts := []stmt{
		{sql: "DELETE FROM task_approvals WHERE account = ? AND task_id IN " + in, args: with([]any{account})},
		{sql: "DELETE FROM device_copies WHERE task_id IN " + in + " AND device_id IN (SELECT id FROM devices WHERE account = ?)", args: with(nil, account)},
		{sql: "DELETE FROM task_approvers WHERE account = ? AND task_id IN " + in, args: with([]any{account})},
	}
	// The account is told on its event streams that each left its inbox.
	for _, id := range ids {
		t.tell(store.TaskEvent{Owner: account, TaskID: id, State: countersign.StateOpen})
	}
	_, err = t.q.execAll(ctx, stmts)
	return ids, err
}

func (t *tx) DevicesOf(ctx context.Context, accounts []string, now time.Time) ([]store.Device, error) {
	if len(accounts) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(accounts)+1)
	for _, a := range accounts {
		args = append(args, a)
	}
	args = append(args, now.Unix())
	r, err := t.q.query(ctx, "SELECT "+deviceColumns+" FROM devices WHERE account IN ("+
		strings.TrimSuffix(strings.Repeat("?, ", len(accounts)), ", ")+
		") AND ended_at IS NULL AND valid_until > ? ORDER BY account, created_at, seq", args...)
	if err != nil {
		return nil, err
	}
	return scanDevices(r)
}

func (t *tx) NotifyTask(ctx context.Context, id string, state countersign.State) error {
	return t.db.e.taskEvents(ctx, t, id, state, true)
}
