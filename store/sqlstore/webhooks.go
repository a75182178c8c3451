package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/riverqueue/river"

	"countersign"
	"countersign/store"
)

func (t *tx) PutWebhook(ctx context.Context, w store.Webhook) error {
	_, err := t.q.exec(ctx, `INSERT INTO webhooks (owner, id, set_at, set_by_key, key_id, sealed) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner) DO UPDATE SET id = excluded.id, set_at = excluded.set_at, set_by_key = excluded.set_by_key,
		key_id = excluded.key_id, sealed = excluded.sealed`,
		w.Owner, w.ID, w.SetAt.Unix(), w.SetByKey, int64(w.KeyID), w.Sealed)
	return err
}

func (t *tx) Webhook(ctx context.Context, owner string) (store.Webhook, error) {
	var w store.Webhook
	var at, keyID int64
	err := t.q.queryRow(ctx, "SELECT owner, id, set_at, set_by_key, key_id, sealed FROM webhooks WHERE owner = ?", owner).
		Scan(&w.Owner, &w.ID, &at, &w.SetByKey, &keyID, &w.Sealed)
	w.SetAt, w.KeyID = unix(at), uint32(keyID)
	return w, err
}

func (t *tx) DeleteWebhook(ctx context.Context, owner string) (bool, error) {
	n, err := t.q.exec(ctx, "DELETE FROM webhooks WHERE owner = ?", owner)
	return n == 1, err
}

func (t *tx) WebhookEvent(ctx context.Context, id string) (store.WebhookEvent, error) {
	var e store.WebhookEvent
	var at int64
	err := t.q.queryRow(ctx, `SELECT id, owner, webhook_id, type, task_id, preparer, project, kind, run, failure_reason, at, receiver
		FROM webhook_events WHERE id = ?`, id).
		Scan(&e.ID, &e.Owner, &e.WebhookID, &e.Type, &e.TaskID, &e.Preparer, &e.Project, &e.Kind, &e.Run, &e.FailureReason, &at, &e.Receiver)
	e.At = unix(at)
	return e, err
}

func (t *tx) RecordAttempt(ctx context.Context, a store.WebhookAttempt) error {
	_, err := t.q.exec(ctx, `INSERT INTO webhook_attempts (owner, event_id, type, task_id, attempt, status_code, error, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.Owner, a.EventID, a.Type, a.TaskID, a.Attempt, a.StatusCode, a.Error, a.At.Unix())
	return err
}

func (t *tx) Attempts(ctx context.Context, owner string, limit int) ([]store.WebhookAttempt, error) {
	r, err := t.q.query(ctx, `SELECT owner, event_id, type, task_id, attempt, status_code, error, at FROM webhook_attempts
		WHERE owner = ? ORDER BY id DESC LIMIT ?`, owner, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.WebhookAttempt
	for r.Next() {
		var a store.WebhookAttempt
		var at int64
		if err := r.Scan(&a.Owner, &a.EventID, &a.Type, &a.TaskID, &a.Attempt, &a.StatusCode, &a.Error, &at); err != nil {
			return nil, err
		}
		a.At = unix(at)
		out = append(out, a)
	}
	return out, r.Err()
}

func (t *tx) AttemptCount(ctx context.Context, eventID string) (int, error) {
	var n int
	err := t.q.queryRow(ctx, "SELECT COUNT(*) FROM webhook_attempts WHERE event_id = ?", eventID).Scan(&n)
	return n, err
}

// deliveryJobOpts: attempts are counted and spaced by the webhook schedule
// (the job snoozes between them), not by the queue's retries.
var deliveryJobOpts = &river.InsertOpts{MaxAttempts: 3}

// webhookOf reads the id of an owner's webhook.
const webhookOf = "SELECT id FROM webhooks WHERE owner = ?"

// outbox writes the webhook event of a task reaching state, and queues its
// delivery, when the account has a webhook and the move has an event: the
// owner's (receiver ""), or an approver's of a shared task.
func (t *tx) outbox(ctx context.Context, id string, kind countersign.Kind, webhookID, receiver string, state countersign.State, at int64) error {
	typ := countersign.EventFor(kind, state)
	if webhookID == "" || typ == "" {
		return nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	eventID := "evt_" + hex.EncodeToString(b[:])
	if _, err := t.q.exec(ctx, `INSERT INTO webhook_events (id, owner, webhook_id, type, task_id, preparer, project, kind, run, failure_reason, at, receiver)
		SELECT ?, owner, ?, ?, id, preparer, project, kind, COALESCE(answer_run, ''), COALESCE(failure_reason, ''), ?, ?
		FROM tasks WHERE id = ?`, eventID, webhookID, typ, at, receiver, id); err != nil {
		return err
	}
	job := store.DeliveryJob{EventID: eventID, WebhookID: webhookID}
	// The queue writes on the driver's transaction: what is pending first.
	if err := t.flush(ctx); err != nil {
		return err
	}
	_, err := t.db.e.insertJobs(ctx, t, []river.InsertManyParams{{Args: job, InsertOpts: deliveryJobOpts}})
	return err
}
