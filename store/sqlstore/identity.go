package sqlstore

import (
	"context"
	"time"

	"countersign/store"
)

func (t *tx) SpendNonce(_ context.Context, account string, nonce []byte, expires time.Time) error {
	t.later(checked(store.ErrSpent, "INSERT INTO nonces (account, nonce, expires_at) VALUES (?, ?, ?)",
		account, nonce, expires.Unix()))
	return nil
}

func (t *tx) InsertDevice(ctx context.Context, d store.Device) error {
	_, err := t.q.exec(ctx, `INSERT INTO devices (id, account, device_pubkey, signer_pubkey, token_hash,
		statement, created_at, valid_until, key_checked_at, key_gone, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		(SELECT COALESCE(MAX(seq), 0) + 1 FROM devices WHERE account = ?))`,
		d.ID, d.Account, d.DevicePubkey, d.SignerPubkey, d.TokenHash, d.Statement,
		d.CreatedAt.Unix(), d.ValidUntil.Unix(), d.KeyCheckedAt.Unix(), d.KeyGone, d.Account)
	return err
}

const deviceColumns = `id, account, device_pubkey, signer_pubkey, token_hash, statement, created_at,
	valid_until, ended_at, end_reason, key_checked_at, key_gone, push_key_id, push_sealed`

func scanDevice(r row) (store.Device, error) {
	var d store.Device
	var created, validUntil, checked int64
	var ended, pushKeyID *int64
	var reason *string
	err := r.Scan(&d.ID, &d.Account, &d.DevicePubkey, &d.SignerPubkey, &d.TokenHash, &d.Statement,
		&created, &validUntil, &ended, &reason, &checked, &d.KeyGone, &pushKeyID, &d.Push)
	if err != nil {
		return store.Device{}, err
	}
	if pushKeyID != nil {
		d.PushKeyID = uint32(*pushKeyID)
	}
	d.CreatedAt, d.ValidUntil, d.KeyCheckedAt = unix(created), unix(validUntil), unix(checked)
	if ended != nil {
		d.EndedAt = unix(*ended)
	}
	d.EndReason = deref(reason)
	return d, nil
}

func unix(s int64) time.Time { return time.Unix(s, 0).UTC() }

func (t *tx) Device(ctx context.Context, id string) (store.Device, error) {
	return scanDevice(t.q.queryRow(ctx, "SELECT "+deviceColumns+" FROM devices WHERE id = ?", id))
}

const deviceByToken = "SELECT " + deviceColumns + " FROM devices WHERE token_hash = ?"

func (t *tx) DeviceByToken(ctx context.Context, hash []byte) (store.Device, error) {
	return scanDevice(t.q.queryRow(ctx, deviceByToken, hash))
}

func (t *tx) DeviceWithTask(ctx context.Context, hash []byte, id string) (store.Device, store.Task, store.Seen, error) {
	r, err := t.send(ctx, append([]stmt{{sql: deviceByToken, args: []any{hash}}}, taskSeenStmts(id, "")...)...)
	if err != nil {
		return store.Device{}, store.Task{}, store.Seen{}, err
	}
	defer r.close()
	d, err := scanDevice(r.row())
	if err != nil {
		return store.Device{}, store.Task{}, store.Seen{}, err
	}
	k, seen, err := scanSeen(r)
	if err != nil {
		return store.Device{}, store.Task{}, store.Seen{}, err
	}
	return d, k, seen, r.close()
}

const activeDevicesQuery = "SELECT " + deviceColumns + ` FROM devices
	WHERE account = ? AND ended_at IS NULL AND valid_until > ? ORDER BY created_at, seq`

func (t *tx) ActiveDevices(ctx context.Context, account string, now time.Time) ([]store.Device, error) {
	r, err := t.q.query(ctx, activeDevicesQuery, account, now.Unix())
	if err != nil {
		return nil, err
	}
	return scanDevices(r)
}

// scanDevices reads rows of devices, and closes them.
func scanDevices(r rows) ([]store.Device, error) {
	defer r.Close()
	var out []store.Device
	for r.Next() {
		d, err := scanDevice(r)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, r.Err()
}

func (t *tx) EndDevice(ctx context.Context, id, reason string, at time.Time) (bool, error) {
	// Its push subscription goes with it.
	n, err := t.q.exec(ctx, `UPDATE devices SET ended_at = ?, end_reason = ?, push_key_id = NULL, push_sealed = NULL
		WHERE id = ? AND ended_at IS NULL`, at.Unix(), reason, id)
	if err != nil || n != 1 {
		return false, err
	}
	// An ended device's key copies go with it (its history entries' with
	// the next round trip): whoever holds the database and the lost
	// device's private key reads nothing more.
	if _, err = t.q.exec(ctx, "DELETE FROM device_copies WHERE device_id = ?", id); err != nil {
		return false, err
	}
	t.later(stmt{sql: "DELETE FROM activity_copies WHERE device_id = ?", args: []any{id}})
	// Its open event streams end on every process when this commits.
	return true, t.signal(ctx, store.StreamSignal{Kind: store.SessionEnded, Device: id})
}

func (t *tx) RecordKeyCheck(ctx context.Context, id string, at time.Time, gone int) error {
	_, err := t.q.exec(ctx, "UPDATE devices SET key_checked_at = ?, key_gone = ? WHERE id = ?", at.Unix(), gone, id)
	return err
}
