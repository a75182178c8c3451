package sqlstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"countersign"
	"countersign/store"
)

// stillGoing are the states of a task that has not ended: its entry is not
// listed, nor purged.
var stillGoing = "(" + sqlState(countersign.StateOpen) + ", " + sqlState(countersign.StateApproved) + ", " +
	sqlState(countersign.StateAnswering) + ")"

const putActivityCopy = `INSERT INTO activity_copies (entry_id, device_id, blob) VALUES (?, ?, ?)
	ON CONFLICT (entry_id, device_id) DO NOTHING`

func (t *tx) InsertActivity(ctx context.Context, a store.Activity, copies map[string][]byte) error {
	switch {
	case a.ID == "" || a.Owner == "" || a.ProjectUUID == "" || a.State == "":
		return errors.New("store: a history entry needs an id, an owner, a project and a state")
	case a.Via != store.ViaTask && a.Via != store.ViaDirect:
		return errors.New("store: a history entry comes about via a task or directly")
	case len(a.Sealed) == 0 || a.KeyID == 0 || a.At.IsZero():
		return errors.New("store: a history entry needs its sealed body, its key id and its time")
	}
	stmts := []stmt{{sql: `INSERT INTO activity (id, owner, project, project_uuid, connector, operation, preparer,
		via, state, failure_reason, at, key_id, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		args: []any{a.ID, a.Owner, a.Project, a.ProjectUUID, a.Connector, a.Operation, a.Preparer,
			a.Via, a.State, string(a.FailureReason), a.At.Unix(), int64(a.KeyID), a.Sealed}}}
	for device, blob := range copies {
		stmts = append(stmts, stmt{sql: putActivityCopy, args: []any{a.ID, device, blob}})
	}
	// Nothing waits for them: they go with the next round trip.
	t.later(stmts...)
	return nil
}

const activityColumns = `a.id, a.owner, a.project, a.project_uuid, a.connector, a.operation, a.preparer,
	a.via, a.state, a.failure_reason, a.at, a.key_id, a.sealed`

func scanActivity(r row, withCopy bool) (store.Activity, error) {
	var a store.Activity
	var at, keyID int64
	dest := []any{&a.ID, &a.Owner, &a.Project, &a.ProjectUUID, &a.Connector, &a.Operation, &a.Preparer,
		&a.Via, &a.State, &a.FailureReason, &at, &keyID, &a.Sealed}
	if withCopy {
		dest = append(dest, &a.DeviceCopy)
	}
	if err := r.Scan(dest...); err != nil {
		return store.Activity{}, err
	}
	a.At, a.KeyID = unix(at), uint32(keyID)
	return a, nil
}

func (t *tx) ActivityEntry(ctx context.Context, id string) (store.Activity, error) {
	return scanActivity(t.q.queryRow(ctx, "SELECT "+activityColumns+" FROM activity a WHERE a.id = ?", id), false)
}

func (t *tx) OwnerActivity(ctx context.Context, q store.ActivityQuery) ([]store.Activity, error) {
	if q.Limit <= 0 {
		return nil, errors.New("store: a page of the history needs a positive limit")
	}
	sql := "SELECT " + activityColumns + `, c.blob FROM activity a
		LEFT JOIN activity_copies c ON c.entry_id = a.id AND c.device_id = ?
		WHERE a.owner = ? AND a.state NOT IN ` + stillGoing
	args := []any{q.Device, q.Owner}
	if q.Project != "" {
		sql += " AND a.project = ?"
		args = append(args, q.Project)
	}
	if q.Preparer != "" {
		sql += " AND a.preparer = ?"
		args = append(args, q.Preparer)
	}
	if q.Before != nil {
		sql += " AND (a.at < ? OR a.at = ? AND a.id < ?)"
		args = append(args, q.Before.At.Unix(), q.Before.At.Unix(), q.Before.ID)
	}
	sql += " ORDER BY a.at DESC, a.id DESC LIMIT ?"
	args = append(args, q.Limit)
	r, err := t.q.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Activity
	for r.Next() {
		a, err := scanActivity(r, true)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, r.Err()
}

func (t *tx) ActivityToWrap(ctx context.Context, owner string, devices []string, since time.Time, limit int) ([]store.EntryToWrap, error) {
	if len(devices) == 0 || limit <= 0 {
		return nil, nil
	}
	args := []any{owner, since.Unix()}
	for _, d := range devices {
		args = append(args, d)
	}
	args = append(args, limit)
	r, err := t.q.query(ctx, `SELECT a.id, a.project_uuid, a.key_id, d.id FROM activity a
		JOIN devices d ON d.account = a.owner
		WHERE a.owner = ? AND a.at >= ? AND d.id IN (?`+strings.Repeat(", ?", len(devices)-1)+`)
		AND NOT EXISTS (SELECT 1 FROM activity_copies c WHERE c.entry_id = a.id AND c.device_id = d.id)
		ORDER BY a.at DESC, a.id DESC, d.id LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.EntryToWrap
	for r.Next() {
		var e store.EntryToWrap
		var keyID int64
		if err := r.Scan(&e.ID, &e.ProjectUUID, &keyID, &e.Device); err != nil {
			return nil, err
		}
		e.KeyID = uint32(keyID)
		out = append(out, e)
	}
	return out, r.Err()
}

func (t *tx) PutActivityCopies(ctx context.Context, copies []store.ActivityCopy) error {
	for _, c := range copies {
		t.later(stmt{sql: putActivityCopy, args: []any{c.EntryID, c.Device, c.Blob}})
	}
	return nil
}

// endEntry is what a move that ends a task writes on its history entry.
func endEntry(m store.Move) stmt {
	var sealed any
	if len(m.Entry) > 0 {
		sealed = m.Entry
	}
	return stmt{sql: `UPDATE activity SET state = ?, failure_reason = ?, at = ?, sealed = COALESCE(?, sealed)
		WHERE id = ? AND via = '` + store.ViaTask + `'`, args: []any{m.Move.To(), string(m.Move.Reason()), m.At.Unix(), sealed, m.ID}}
}
