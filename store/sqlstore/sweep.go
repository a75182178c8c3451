package sqlstore

import (
	"context"
	"time"

	"countersign"
	"countersign/store"
)

func (t *tx) RecordAnswer(ctx context.Context, id string, result []byte, next, notice string) error {
	n, err := t.q.exec(ctx, "UPDATE tasks SET result = ?, next_task_id = ?, notice_task_id = ? WHERE id = ?",
		result, null(next), null(notice), id)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

const setTaskReceipt = "UPDATE tasks SET receipt = ? WHERE id = ?"

func (t *tx) SetTaskReceipt(ctx context.Context, id, receipt string) error {
	n, err := t.q.exec(ctx, setTaskReceipt, receipt, id)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

func (t *tx) TaskReceipt(ctx context.Context, id string) (string, error) {
	var r string
	err := t.q.queryRow(ctx, "SELECT receipt FROM tasks WHERE id = ?", id).Scan(&r)
	return r, err
}

func (t *tx) Heartbeat(ctx context.Context, runner string, at time.Time) error {
	_, err := t.q.exec(ctx, `INSERT INTO runners (id, seen_at) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, runner, at.Unix())
	return err
}

func (t *tx) Stale(ctx context.Context, now, approvedBefore, answeringBefore, deadBefore time.Time, limit int) ([]store.Task, error) {
	return t.tasks(ctx, "SELECT "+taskColumns+` FROM tasks WHERE
		state = `+sqlState(countersign.StateOpen)+` AND expires_at <= ?
		OR state = `+sqlState(countersign.StateApproved)+` AND state_at <= ?
		OR state = `+sqlState(countersign.StateAnswering)+` AND (state_at <= ? OR NOT EXISTS (
			SELECT 1 FROM runs JOIN runners ON runners.id = runs.runner
			WHERE runs.id = tasks.answer_run AND runners.seen_at > ?))
		ORDER BY state_at, id LIMIT ?`,
		now.Unix(), approvedBefore.Unix(), answeringBefore.Unix(), deadBefore.Unix(), limit)
}

func (t *tx) Purge(ctx context.Context, now, outcomesBefore, callsBefore, oldBefore time.Time) (int, error) {
	total := 0
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DELETE FROM task_events WHERE task_id IN (SELECT id FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?)", []any{outcomesBefore.Unix()}},
		{"DELETE FROM task_files WHERE task_id IN (SELECT id FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?)", []any{outcomesBefore.Unix()}},
		{"DELETE FROM device_copies WHERE task_id IN (SELECT id FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?)", []any{outcomesBefore.Unix()}},
		{"DELETE FROM task_approvers WHERE task_id IN (SELECT id FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?)", []any{outcomesBefore.Unix()}},
		{"DELETE FROM task_approvals WHERE task_id IN (SELECT id FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?)", []any{outcomesBefore.Unix()}},
		{"DELETE FROM tasks WHERE closed_at IS NOT NULL AND closed_at < ?", []any{outcomesBefore.Unix()}},
		// A run, with its receipt, goes with the last task it opened or the
		// task it answers; a run that has neither once it is as old as a
		// purged outcome. A task is opened after its run started and closes
		// before its outcome is purged, so the run goes in the same purge
		// as its last task.
		{`DELETE FROM runs WHERE started_at < ?
			AND NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.run = runs.id)
			AND (runs.task_id = '' OR NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.id = runs.task_id))`, []any{outcomesBefore.Unix()}},
		{"DELETE FROM webhook_events WHERE at < ?", []any{outcomesBefore.Unix()}},
		{"DELETE FROM webhook_attempts WHERE at < ?", []any{outcomesBefore.Unix()}},
		{"DELETE FROM nonces WHERE expires_at < ?", []any{now.Unix()}},
		{"DELETE FROM idempotency WHERE created_at < ?", []any{callsBefore.Unix()}},
		{"DELETE FROM spend WHERE at < ?", []any{outcomesBefore.Unix()}},
		// History entries go with the outcomes; so do the copies of their
		// keys, and at once those of a device that ended (one a sign-in's
		// unlock wrapped to while the device was being ended).
		{"DELETE FROM activity_copies WHERE entry_id IN (SELECT id FROM activity WHERE at < ? AND state NOT IN " + stillGoing + ")", []any{outcomesBefore.Unix()}},
		{"DELETE FROM activity WHERE at < ? AND state NOT IN " + stillGoing, []any{outcomesBefore.Unix()}},
		{"DELETE FROM activity_copies WHERE device_id IN (SELECT id FROM devices WHERE ended_at IS NOT NULL)", nil},
		// A device's push subscription ends with its session, when it runs
		// out as when it is ended; a delivery left behind (its job lost)
		// goes with the outcomes.
		{"UPDATE devices SET push_key_id = NULL, push_sealed = NULL WHERE push_sealed IS NOT NULL AND valid_until <= ?", []any{now.Unix()}},
		{"DELETE FROM push_deliveries WHERE created_at < ?", []any{outcomesBefore.Unix()}},
		{"DELETE FROM daily_counts WHERE day < ?", []any{oldBefore.UTC().Format("2006-01-02")}},
		{"DELETE FROM runners WHERE seen_at < ?", []any{oldBefore.Unix()}},
	} {
		n, err := t.q.exec(ctx, q.sql, q.args...)
		if err != nil {
			return total, err
		}
		total += int(n)
	}
	return total, nil
}
