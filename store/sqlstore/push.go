package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"countersign/store"
)

// vapidRow is the id of the one VAPID key pair's row.
const vapidRow = "vapid"

func (t *tx) PushKey(ctx context.Context) (store.PushKey, error) {
	var k store.PushKey
	var keyID, created int64
	err := t.q.queryRow(ctx, "SELECT public_key, key_id, sealed, created_at FROM push_keys WHERE id = ?", vapidRow).
		Scan(&k.PublicKey, &keyID, &k.Sealed, &created)
	k.KeyID, k.CreatedAt = uint32(keyID), unix(created)
	return k, err
}

func (t *tx) InsertPushKey(ctx context.Context, k store.PushKey) (bool, error) {
	n, err := t.q.exec(ctx, `INSERT INTO push_keys (id, public_key, key_id, sealed, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, vapidRow, k.PublicKey, int64(k.KeyID), k.Sealed, k.CreatedAt.Unix())
	return n == 1, err
}

func (t *tx) PutPush(ctx context.Context, deviceID string, keyID uint32, sealed []byte) (bool, error) {
	if len(sealed) == 0 {
		return false, fmt.Errorf("store: a push subscription without its sealed bytes")
	}
	n, err := t.q.exec(ctx, "UPDATE devices SET push_key_id = ?, push_sealed = ? WHERE id = ? AND ended_at IS NULL",
		int64(keyID), sealed, deviceID)
	return n == 1, err
}

func (t *tx) DeletePush(ctx context.Context, deviceID string, sealed []byte) (bool, error) {
	q, args := "UPDATE devices SET push_key_id = NULL, push_sealed = NULL WHERE id = ? AND push_sealed IS NOT NULL", []any{deviceID}
	if sealed != nil {
		q, args = q+" AND push_sealed = ?", append(args, sealed)
	}
	n, err := t.q.exec(ctx, q, args...)
	return n == 1, err
}

// pushJobOpts: attempts are counted in the delivery's row and spaced by the
// webhook schedule (the job snoozes between them), not by the queue's
// retries.
var pushJobOpts = &river.InsertOpts{MaxAttempts: 3}

func (t *tx) QueuePushes(ctx context.Context, taskID string, devices []string, at time.Time) error {
	if len(devices) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, 0, len(devices))
	for _, d := range devices {
		t.later(stmt{sql: "INSERT INTO push_deliveries (task_id, device_id, created_at) VALUES (?, ?, ?)", args: []any{taskID, d, at.Unix()}})
		params = append(params, river.InsertManyParams{Args: store.PushJob{TaskID: taskID, DeviceID: d}, InsertOpts: pushJobOpts})
	}
	// The rows go with what is pending, first: the queue writes on the
	// driver's transaction.
	if err := t.flush(ctx); err != nil {
		return err
	}
	_, err := t.db.e.insertJobs(ctx, t, params)
	return err
}

func (t *tx) PushDelivery(ctx context.Context, taskID, deviceID string) (store.PushDelivery, error) {
	d := store.PushDelivery{TaskID: taskID, DeviceID: deviceID}
	var created int64
	err := t.q.queryRow(ctx, "SELECT attempts, created_at FROM push_deliveries WHERE task_id = ? AND device_id = ?", taskID, deviceID).
		Scan(&d.Attempts, &created)
	d.CreatedAt = unix(created)
	return d, err
}

func (t *tx) ClaimPushAttempt(ctx context.Context, taskID, deviceID string, attempts int) (bool, error) {
	n, err := t.q.exec(ctx, "UPDATE push_deliveries SET attempts = attempts + 1 WHERE task_id = ? AND device_id = ? AND attempts = ?",
		taskID, deviceID, attempts)
	return n == 1, err
}

func (t *tx) DeletePushDelivery(ctx context.Context, taskID, deviceID string) error {
	_, err := t.q.exec(ctx, "DELETE FROM push_deliveries WHERE task_id = ? AND device_id = ?", taskID, deviceID)
	return err
}
