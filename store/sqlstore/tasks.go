package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"countersign"
	"countersign/store"
)

func (t *tx) LockOwner(ctx context.Context, owner string) error {
	lock, ok := t.db.e.lockOwner(owner)
	if !ok {
		return nil
	}
	_, err := t.q.exec(ctx, lock.sql, lock.args...)
	return err
}

func (t *tx) OwnerGate(ctx context.Context, owner, preparer, project string, now time.Time, thread string) (store.Gate, error) {
	var g store.Gate
	// The statements run in order, so the reads see the owner's tasks
	// under the lock, as they would one round trip at a time. The owner's
	// webhook is read with them, for the task this gate lets in, and the
	// task it continues.
	lock, locks := t.db.e.lockOwner(owner)
	var stmts []stmt
	if locks {
		stmts = append(stmts, lock)
	}
	stmts = append(stmts, []stmt{
		{sql: gateQuery, args: []any{preparer, owner, preparer, project, owner, owner}},
		{sql: activeDevicesQuery, args: []any{owner, now.Unix()}},
	}...)
	if thread != "" {
		stmts = append(stmts, stmt{sql: "SELECT " + taskColumns + " FROM tasks WHERE id = ?", args: []any{thread}})
	}
	r, err := t.send(ctx, stmts...)
	if err != nil {
		return g, err
	}
	defer r.close()
	if locks {
		if err := r.exec(); err != nil {
			return g, err
		}
	}
	var muted int
	var webhook *string
	if g.Load, err = scanLoad(withColumns{r.row(), []any{&muted, &webhook}}); err != nil {
		return g, err
	}
	g.Muted = muted > 0
	webhookID := deref(webhook)
	devices, err := r.rows()
	if err != nil {
		return g, err
	}
	if g.Devices, err = scanDevices(devices); err != nil {
		return g, err
	}
	if thread != "" {
		k, err := scanTask(r.row())
		if err == nil {
			g.Thread = &k
		} else if !errors.Is(err, store.ErrNotFound) {
			return g, err
		}
	}
	t.gated = &gatedOwner{owner: owner, webhookID: webhookID}
	return g, r.close()
}

// gatedOwner is what a transaction read of an owner in OwnerGate, under
// the owner's lock, for the task it goes on to insert.
type gatedOwner struct{ owner, webhookID string }

func (t *tx) InsertTask(ctx context.Context, k store.Task, c store.TaskCiphertext) error {
	// The task, its files and device copies and its notification go in
	// one round trip.
	stmts := []stmt{{sql: insertTask, args: []any{
		k.ID, k.Owner, k.Preparer, k.Project, k.ProjectUUID, k.Connector,
		k.Kind, k.State, k.Thread, k.Run, k.Operation, k.Supplies, k.ReplyPubkey, k.TaskHash,
		int64(k.KeyID), k.ContentSize, k.CreatedAt.Unix(), k.ExpiresAt.Unix(), k.CreatedAt.Unix(), c.Sealed, c.Content, k.Threshold, ""}}}
	for n, f := range c.Files {
		stmts = append(stmts, stmt{sql: "INSERT INTO task_files (task_id, n, size, blob) VALUES (?, ?, ?, ?)",
			args: []any{k.ID, n, int64(len(f)), f}})
	}
	for device, blob := range c.DeviceCopies {
		stmts = append(stmts, stmt{sql: putDeviceCopy, args: []any{k.ID, device, blob}})
	}
	t.tell(store.TaskEvent{Owner: k.Owner, TaskID: k.ID, State: k.State})
	var webhookID string
	if g := t.gated; g != nil && g.owner == k.Owner {
		// The gate read the owner's webhook under the owner's lock: the
		// rows go out with the commit, or with the webhook's event.
		t.later(stmts...)
		webhookID = g.webhookID
	} else if err := t.execThenScan(ctx, stmts, stmt{sql: webhookOf, args: []any{k.Owner}}, &webhookID); err != nil && !errors.Is(err, store.ErrNotFound) {
		// Without a gate, the owner's webhook is read in the same round
		// trip as the rows.
		return err
	}
	return t.outbox(ctx, k.ID, k.Kind, webhookID, "", k.State, k.CreatedAt.Unix())
}

// insertTask inserts a task; its receipt, the last argument, is "" until
// the run that opened it ends, unless that end is in the same transaction
// and finds the insert still pending (foldReceipt).
const insertTask = `INSERT INTO tasks (id, owner, preparer, project, project_uuid, connector,
		kind, state, thread, run, operation, supplies, reply_pubkey, task_hash, key_id, content_size,
		created_at, expires_at, state_at, sealed, content, threshold, receipt)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// foldReceipt puts a task's receipt into its INSERT when that is still
// pending in this transaction (a run that opened the task and ended in one
// transaction): the row is written once, with its receipt, instead of
// written and then updated. It reports whether it found the insert.
func (t *tx) foldReceipt(id, receipt string) bool {
	for i := range t.pending {
		s := &t.pending[i]
		if s.sql == insertTask && s.args[0] == id {
			args := append([]any(nil), s.args...)
			args[len(args)-1] = receipt
			s.args = args
			return true
		}
	}
	return false
}

const taskColumns = `id, owner, preparer, project, project_uuid, connector, kind, state, thread, run,
	operation, supplies, reply_pubkey, task_hash, key_id, content_size, created_at, expires_at,
	closed_at, outcome_class, failure_reason, answer_run, next_task_id, notice_task_id, forgotten, state_at,
	threshold, rejected_by`

func scanTask(r row) (store.Task, error) {
	var k store.Task
	var keyID, created, expires int64
	var closed *int64
	var outcome, failure, answerRun, next, notice *string
	var forgotten, stateAt, threshold int64
	err := r.Scan(&k.ID, &k.Owner, &k.Preparer, &k.Project, &k.ProjectUUID, &k.Connector, &k.Kind,
		&k.State, &k.Thread, &k.Run, &k.Operation, &k.Supplies, &k.ReplyPubkey, &k.TaskHash, &keyID,
		&k.ContentSize, &created, &expires, &closed, &outcome, &failure, &answerRun, &next, &notice, &forgotten, &stateAt,
		&threshold, &k.RejectedBy)
	if err != nil {
		return store.Task{}, err
	}
	k.KeyID = uint32(keyID)
	k.Threshold = int(threshold)
	k.Forgotten = forgotten != 0
	k.StateAt = time.Unix(stateAt, 0).UTC()
	k.CreatedAt = time.Unix(created, 0).UTC()
	k.ExpiresAt = time.Unix(expires, 0).UTC()
	if closed != nil {
		k.ClosedAt = time.Unix(*closed, 0).UTC()
	}
	k.OutcomeClass = countersign.OutcomeClass(deref(outcome))
	k.FailureReason = countersign.FailureReason(deref(failure))
	k.AnswerRun = deref(answerRun)
	k.NextTaskID, k.NoticeTaskID = deref(next), deref(notice)
	return k, nil
}

// tasks runs a query of taskColumns and reads every row.
func (t *tx) tasks(ctx context.Context, q string, args ...any) ([]store.Task, error) {
	r, err := t.q.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Task
	for r.Next() {
		k, err := scanTask(r)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, r.Err()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// null stores "" as NULL.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (t *tx) Task(ctx context.Context, id string) (store.Task, error) {
	return scanTask(t.q.queryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = ?", id))
}

func (t *tx) LockTask(ctx context.Context, id string) (store.Task, error) {
	k, seen, err := t.taskSeen(ctx, id, t.db.e.forUpdate())
	if err != nil {
		return store.Task{}, err
	}
	t.locked = &lockedTask{task: k, webhookID: seen.Webhook}
	return k, nil
}

func (t *tx) HoldTask(_ context.Context, k store.Task, seen store.Seen) error {
	if k.ID == "" {
		return store.ErrNotFound
	}
	t.later(held(fmt.Errorf("store: task %s: %w", k.ID, store.ErrStale),
		"SELECT 1 FROM tasks WHERE id = ? AND state = ? AND kind = ?"+asSeen+t.db.e.forUpdate(),
		k.ID, k.State, k.Kind, seen.Owner, seen.Threshold, null(seen.Webhook)))
	t.locked = &lockedTask{task: k, webhookID: seen.Webhook}
	return nil
}

func (t *tx) TaskSeen(ctx context.Context, id string) (store.Task, store.Seen, error) {
	return t.taskSeen(ctx, id, "")
}

// taskSeen is TaskSeen, the task read with lock (a locking clause).
func (t *tx) taskSeen(ctx context.Context, id, lock string) (store.Task, store.Seen, error) {
	tasks, seen, err := t.tasksSeen(ctx, []string{id}, lock)
	if err == nil && tasks[0].ID == "" {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Task{}, store.Seen{}, err
	}
	return tasks[0], seen[0], nil
}

func (t *tx) TasksSeen(ctx context.Context, ids []string) ([]store.Task, []store.Seen, error) {
	return t.tasksSeen(ctx, ids, "")
}

// tasksSeen reads each task (with lock, a locking clause) and its owner's
// webhook, all in one round trip; a task that does not exist is a zero Task.
func (t *tx) tasksSeen(ctx context.Context, ids []string, lock string) ([]store.Task, []store.Seen, error) {
	stmts := make([]stmt, 0, len(ids))
	for _, id := range ids {
		stmts = append(stmts, taskSeenStmts(id, lock)...)
	}
	r, err := t.send(ctx, stmts...)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	tasks, seen := make([]store.Task, len(ids)), make([]store.Seen, len(ids))
	for i := range ids {
		if tasks[i], seen[i], err = scanSeen(r); err != nil {
			return nil, nil, err
		}
	}
	return tasks, seen, r.close()
}

// taskSeenStmts read a task (with lock, a locking clause) and its owner's
// webhook, in one statement; scanSeen reads its result.
func taskSeenStmts(id, lock string) []stmt {
	return []stmt{{sql: "SELECT " + taskColumns + ", " + ownersWebhook + " FROM tasks WHERE id = ?" + lock, args: []any{id}}}
}

// scanSeen reads the result of taskSeenStmts: a task that does not exist
// is a zero Task and a zero Seen.
func scanSeen(r results) (store.Task, store.Seen, error) {
	var webhook *string
	k, err := scanTask(withColumns{r.row(), []any{&webhook}})
	if errors.Is(err, store.ErrNotFound) {
		return store.Task{}, store.Seen{}, nil
	}
	if err != nil {
		return store.Task{}, store.Seen{}, err
	}
	return k, seenOf(k, webhook), nil
}

// ownersWebhook is a column of a query of tasks: the id of the task's
// owner's webhook (NULL for none).
const ownersWebhook = "(SELECT id FROM webhooks WHERE webhooks.owner = tasks.owner)"

// asSeen requires a task's row to be as a store.Seen says: its owner, its
// threshold and its owner's webhook (arguments: owner, threshold, webhook
// or nil).
const asSeen = " AND owner = ? AND threshold = ? AND " + ownersWebhook + " IS NOT DISTINCT FROM ?"

// seenOf is what a later move of k needs, with its owner's webhook as
// read (nil for none).
func seenOf(k store.Task, webhook *string) store.Seen {
	return store.Seen{Owner: k.Owner, Threshold: k.Threshold, Webhook: deref(webhook)}
}

// withColumns is a row of a task's columns and then more, read into
// what Scan is given and then into more.
type withColumns struct {
	r    row
	more []any
}

func (w withColumns) Scan(dest ...any) error { return w.r.Scan(append(dest, w.more...)...) }

func (t *tx) MoveTask(ctx context.Context, m store.Move) (bool, error) {
	mv := m.Move
	if mv.IsZero() {
		return false, store.ErrNoMove
	}
	steps := []store.Step{{Move: mv, At: m.At, Run: m.Run}}
	if th := m.Through; th != nil {
		if th.Move.IsZero() || th.Move.Kind() != mv.Kind() || th.Move.To() != mv.From() {
			return false, store.ErrNoMove
		}
		steps = []store.Step{*th, steps[0]}
	}
	from := steps[0].Move.From()
	q, args := moveStatement(m)
	var owner, webhookID string
	var kind countersign.Kind
	var threshold int64
	// checkedMove is the move's UPDATE when it waits for nothing: its
	// event and drops go in its statement.
	var checkedMove *stmt
	if l := t.locked; l != nil && l.task.ID == m.ID {
		// The transaction holds the task's row: whether it moves is known
		// here, and its UPDATE waits for nothing. It is a checked write all
		// the same, should the lock ever not hold.
		k := l.task
		if k.State != from || k.Kind != mv.Kind() || !m.Unexpired.IsZero() && k.ExpiresAt.Unix() <= m.Unexpired.Unix() {
			return false, nil
		}
		c := checked(fmt.Errorf("store: the locked task %s did not move: %w", m.ID, store.ErrConflict), q, args...)
		checkedMove = &c
		owner, kind, webhookID, threshold = k.Owner, k.Kind, l.webhookID, int64(k.Threshold)
		l.task.State = mv.To()
	} else if s := m.Seen; s != nil {
		// What the outbox needs was read before the transaction: the
		// UPDATE requires it to be so still, and fails the transaction if
		// it moves nothing.
		q += asSeen
		args = append(args, s.Owner, s.Threshold, null(s.Webhook))
		c := checked(fmt.Errorf("store: task %s: %w", m.ID, store.ErrStale), q, args...)
		checkedMove = &c
		owner, kind, webhookID, threshold = s.Owner, mv.Kind(), s.Webhook, int64(s.Threshold)
	} else {
		// The move, what it drops from the task's row, and what the
		// outbox needs to know (the owner, the kind, the owner's webhook)
		// in one statement.
		var webhook *string
		err := t.q.queryRow(ctx, q+" RETURNING owner, kind, "+ownersWebhook+", threshold",
			args...).Scan(&owner, &kind, &webhook, &threshold)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		if webhook != nil {
			webhookID = *webhook
		}
	}
	// Its events, its other drops and its notifications go with the
	// transaction's next round trip; its event and drops in the move's
	// own statement where that waits for nothing.
	drops := dropsOf(m)
	var stmts []stmt
	if drops.Files {
		stmts = append(stmts, stmt{sql: "DELETE FROM task_files WHERE task_id = ?", args: []any{m.ID}})
	}
	if drops.DeviceCopies {
		stmts = append(stmts, stmt{sql: "DELETE FROM device_copies WHERE task_id = ?", args: []any{m.ID}})
	}
	// Its events (two for a move made through another) in one INSERT.
	events := stmt{sql: "INSERT INTO task_events (task_id, owner, from_state, to_state, actor, run, at) VALUES "}
	for i, st := range steps {
		if i > 0 {
			events.sql += ", "
		}
		events.sql += "(?, ?, ?, ?, ?, ?, ?)"
		events.args = append(events.args, m.ID, owner, st.Move.From(), st.Move.To(), st.Move.By(), st.Run, st.At.Unix())
	}
	stmts = append(stmts, events)
	if mv.Ends() {
		stmts = append(stmts, endEntry(m))
	}
	if drops.Sealed && threshold > 0 {
		// A shared task's approvals lose their signed records with it.
		stmts = append(stmts, stmt{sql: "UPDATE task_approvals SET approval = NULL WHERE task_id = ?", args: []any{m.ID}})
	}
	for _, st := range steps {
		t.tell(store.TaskEvent{Owner: owner, TaskID: m.ID, State: st.Move.To()})
	}
	// Nothing waits for their results: they go with the next round trip.
	if checkedMove != nil {
		stmts = t.db.e.with(*checkedMove, stmts)
	}
	t.later(stmts...)
	for _, st := range steps {
		if webhookID != "" {
			if err := t.outbox(ctx, m.ID, kind, webhookID, "", st.Move.To(), st.At.Unix()); err != nil {
				return true, err
			}
		}
		if threshold > 0 {
			if err := t.toApprovers(ctx, m.ID, kind, st.Move.To(), st.At.Unix()); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// dropsOf is what m drops from its task, with what its Through drops.
func dropsOf(m store.Move) countersign.Dropped {
	d := m.Move.Drops()
	if th := m.Through; th != nil {
		f := th.Move.Drops()
		d.Content, d.DeviceCopies, d.Files, d.Sealed = d.Content || f.Content, d.DeviceCopies || f.DeviceCopies, d.Files || f.Files, d.Sealed || f.Sealed
	}
	return d
}

// moveStatement is the UPDATE of a move: compare-and-set on the task's id,
// state (the one Through leaves, if set) and kind.
func moveStatement(m store.Move) (string, []any) {
	mv := m.Move
	from := mv.From()
	if m.Through != nil {
		from = m.Through.Move.From()
	}
	var closed any
	if mv.Ends() {
		closed = m.At.Unix()
	}
	drops := dropsOf(m)
	q := `UPDATE tasks SET state = ?, closed_at = ?, state_at = ?,
		outcome_class = COALESCE(?, outcome_class), failure_reason = COALESCE(?, failure_reason),
		answer_run = COALESCE(?, answer_run), rejected_by = COALESCE(?, rejected_by),
		content = CASE WHEN ? THEN NULL ELSE content END,
		sealed = CASE WHEN ? THEN NULL ELSE sealed END,
		approval = CASE WHEN ? THEN NULL ELSE COALESCE(?, approval) END,
		result = CASE WHEN ? THEN ? ELSE result END,
		next_task_id = CASE WHEN ? THEN ? ELSE next_task_id END,
		notice_task_id = CASE WHEN ? THEN ? ELSE notice_task_id END
		WHERE id = ? AND state = ? AND kind = ?`
	a := m.Answer
	if a == nil {
		a = &store.Answer{}
	}
	answered := m.Answer != nil
	var by any
	if mv.To() == countersign.StateRejected {
		by = null(m.By)
	}
	args := []any{mv.To(), closed, m.At.Unix(), null(string(mv.Outcome())), null(string(mv.Reason())), null(m.AnswerRun), by,
		drops.Content, drops.Sealed, drops.Sealed, m.Approval,
		answered, a.Result, answered, null(a.NextTaskID), answered, null(a.NoticeID), m.ID, from, mv.Kind()}
	if !m.Unexpired.IsZero() {
		q += " AND expires_at > ?"
		args = append(args, m.Unexpired.Unix())
	}
	return q, args
}

func (t *tx) Sealed(ctx context.Context, id string) ([]byte, uint32, error) {
	var blob []byte
	var keyID int64
	if err := t.q.queryRow(ctx, "SELECT sealed, key_id FROM tasks WHERE id = ?", id).Scan(&blob, &keyID); err != nil {
		return nil, 0, err
	}
	if blob == nil {
		return nil, 0, store.ErrNotFound
	}
	return blob, uint32(keyID), nil
}

func (t *tx) RunInputs(ctx context.Context, id string) (store.RunInputs, error) {
	r, err := t.send(ctx, runInputsStmts(id, t.db.e.forUpdate())...)
	if err != nil {
		return store.RunInputs{}, err
	}
	defer r.close()
	in, err := scanRunInputs(r)
	if err != nil {
		return in, err
	}
	t.locked = &lockedTask{task: in.Task, webhookID: in.Seen.Webhook}
	return in, r.close()
}

// runInputsStmts read what RunInputs reads of task id (with lock, a locking
// clause, on the task's row); scanRunInputs reads their results. The
// project and the preparer are found through the task's row, so nothing
// waits for the task to be read first.
func runInputsStmts(id, lock string) []stmt {
	return []stmt{
		{sql: "SELECT " + taskColumns + ", sealed, key_id, approval, " + ownersWebhook + " FROM tasks WHERE id = ?" + lock, args: []any{id}},
		{sql: projectAndAgents + "p.project_uuid = (SELECT project_uuid FROM tasks WHERE id = ?)", args: []any{id}},
		{sql: approvalsQuery, args: []any{id}},
		{sql: "SELECT " + agentColumns + " FROM agents a WHERE a.account = (SELECT preparer FROM tasks WHERE id = ?)", args: []any{id}}}
}

func scanRunInputs(r results) (store.RunInputs, error) {
	var in store.RunInputs
	var keyID int64
	var webhook *string
	var err error
	if in.Task, err = scanTask(withColumns{r.row(), []any{&in.Sealed, &keyID, &in.Approval, &webhook}}); err != nil {
		return in, err
	}
	in.KeyID = uint32(keyID)
	in.Seen = seenOf(in.Task, webhook)
	projects, err := r.rows()
	if err != nil {
		return in, err
	}
	p, err := scanProjectAndAgents(projects)
	if err == nil {
		in.Project = &p
	} else if !errors.Is(err, store.ErrNotFound) {
		return in, err
	}
	approvals, err := r.rows()
	if err != nil {
		return in, err
	}
	if in.Approvals, err = scanApprovals(approvals); err != nil {
		return in, err
	}
	a, err := scanAgent(r.row())
	if err == nil {
		in.Preparer = &a
	} else if !errors.Is(err, store.ErrNotFound) {
		return in, err
	}
	return in, nil
}

// lockedTask is a task whose row the transaction holds (RunInputs read it
// FOR UPDATE; on SQLite a writing transaction holds the whole database),
// as it is now, and its owner's webhook.
type lockedTask struct {
	task      store.Task
	webhookID string
}

func (t *tx) Content(ctx context.Context, id string) ([]byte, error) {
	var blob []byte
	if err := t.q.queryRow(ctx, "SELECT content FROM tasks WHERE id = ?", id).Scan(&blob); err != nil {
		return nil, err
	}
	if blob == nil {
		return nil, store.ErrNotFound
	}
	return blob, nil
}

func (t *tx) File(ctx context.Context, id string, n int) ([]byte, error) {
	var blob []byte
	err := t.q.queryRow(ctx, "SELECT blob FROM task_files WHERE task_id = ? AND n = ?", id, n).Scan(&blob)
	return blob, err
}

func (t *tx) Files(ctx context.Context, id string) ([]int64, error) {
	r, err := t.q.query(ctx, "SELECT size FROM task_files WHERE task_id = ? ORDER BY n", id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var sizes []int64
	for r.Next() {
		var s int64
		if err := r.Scan(&s); err != nil {
			return nil, err
		}
		sizes = append(sizes, s)
	}
	return sizes, r.Err()
}

func (t *tx) DeviceCopy(ctx context.Context, id, deviceID string) ([]byte, error) {
	var blob []byte
	err := t.q.queryRow(ctx, "SELECT blob FROM device_copies WHERE task_id = ? AND device_id = ?", id, deviceID).Scan(&blob)
	return blob, err
}

const putDeviceCopy = `INSERT INTO device_copies (task_id, device_id, blob) VALUES (?, ?, ?)
	ON CONFLICT (task_id, device_id) DO UPDATE SET blob = excluded.blob`

func (t *tx) PutDeviceCopy(ctx context.Context, id, deviceID string, blob []byte) error {
	_, err := t.q.exec(ctx, putDeviceCopy, id, deviceID, blob)
	return err
}

func (t *tx) Events(ctx context.Context, id string) ([]store.Event, error) {
	r, err := t.q.query(ctx, "SELECT task_id, from_state, to_state, actor, run, at FROM task_events WHERE task_id = ? ORDER BY id", id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Event
	for r.Next() {
		var e store.Event
		var at int64
		if err := r.Scan(&e.TaskID, &e.From, &e.To, &e.Actor, &e.Run, &at); err != nil {
			return nil, err
		}
		e.At = time.Unix(at, 0).UTC()
		out = append(out, e)
	}
	return out, r.Err()
}

// loadColumns and loadFrom are the owner's load (preparer, then owner):
// its open tasks, the preparer's open and approved ones, and the bytes
// the open ones hold.
var (
	loadColumns = `COALESCE(SUM(CASE WHEN state = ` + sqlState(countersign.StateOpen) + ` THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN preparer = ? AND state IN (` + sqlState(countersign.StateOpen) + `, ` + sqlState(countersign.StateApproved) + `) THEN 1 ELSE 0 END), 0),
	SUM(CASE WHEN state = ` + sqlState(countersign.StateOpen) + ` THEN content_size ELSE 0 END)`
	loadFrom = ` FROM tasks WHERE owner = ? AND state IN (` + sqlState(countersign.StateOpen) + `, ` + sqlState(countersign.StateApproved) + `)`
)

var ownerLoadQuery = "SELECT " + loadColumns + loadFrom

// gateQuery is what OwnerGate reads of the owner beside its devices, in
// one statement: the load (preparer), whether the preparer or the project
// is muted (owner, preparer, project) and the owner's webhook (owner), of
// the owner's tasks (owner).
var gateQuery = "SELECT " + loadColumns + ", (" + mutedQuery + "), (" + webhookOf + ")" + loadFrom

func (t *tx) OwnerLoad(ctx context.Context, owner, preparer string) (store.Load, error) {
	return scanLoad(t.q.queryRow(ctx, ownerLoadQuery, preparer, owner))
}

func scanLoad(r row) (store.Load, error) {
	var l store.Load
	var waiting *int64
	err := r.Scan(&l.OwnerOpen, &l.PreparerActive, &waiting)
	if waiting != nil {
		l.WaitingContent = *waiting
	}
	return l, err
}

func (t *tx) Outcome(ctx context.Context, id string) ([]byte, []byte, error) {
	var result, reason []byte
	err := t.q.queryRow(ctx, "SELECT result, reason FROM tasks WHERE id = ?", id).Scan(&result, &reason)
	return result, reason, err
}

func (t *tx) SetReason(ctx context.Context, id string, reason []byte) error {
	n, err := t.q.exec(ctx, "UPDATE tasks SET reason = ? WHERE id = ?", reason, id)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

func (t *tx) LockWaiting(ctx context.Context, id string) (bool, error) {
	q := "SELECT COUNT(*) FROM (SELECT id FROM tasks WHERE id = ? AND state = " + sqlState(countersign.StateOpen) + t.db.e.forUpdate() + ") locked"
	var n int
	err := t.q.queryRow(ctx, q, id).Scan(&n)
	return n == 1, err
}

// sqlState writes a task state as an SQL string literal. States are the
// domain's constants, never input, and hold only [a-z].
func sqlState(s countersign.State) string { return "'" + string(s) + "'" }
