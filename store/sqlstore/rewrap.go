package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"countersign/store"
)

// sealedTables are where master-sealed secrets live: the columns that make
// the row id (joined with NUL), the key id and blob columns, the WHERE
// that finds one row by those columns, and what else a secret sealed
// again sets in its row.
var sealedTables = []sealedTable{
	// A project's version moves with its credentials (store.Project).
	{"project", "projects", "project_uuid", "creds_key_id", "creds", "project_uuid = ?", ", version = version + 1"},
	{"webhook", "webhooks", "owner", "key_id", "sealed", "owner = ?", ""},
	{"call", "idempotency", "agent, owner, project, key", "answer_key_id", "answer", "agent = ? AND owner = ? AND project = ? AND key = ?", ""},
	{"push", "devices", "id", "push_key_id", "push_sealed", "id = ?", ""},
	{"vapid", "push_keys", "id", "key_id", "sealed", "id = ?", ""},
}

type sealedTable struct{ kind, table, row, keyCol, blobCol, where, resealSets string }

// sampledTables are sealedTables and the other rows sealed under a master
// key: runs' receipt keys and tasks' sealed copies (the keys of a task's
// blobs derive from the id in its row).
var sampledTables = append([]sealedTable{
	{"run", "runs", "id", "receipt_key_id", "receipt_key", "", ""},
	{"task", "tasks", "project_uuid, owner, id", "key_id", "sealed", "", ""},
}, sealedTables...)

func (t *tx) SealedSamples(ctx context.Context, keyID uint32) ([]store.Sealed, error) {
	var out []store.Sealed
	for _, s := range sampledTables {
		parts := len(strings.Split(s.row, ","))
		row := make([]string, parts)
		var blob []byte
		dest := make([]any, 0, parts+1)
		for i := range row {
			dest = append(dest, &row[i])
		}
		err := t.q.queryRow(ctx, fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s = ? AND %s IS NOT NULL LIMIT 1",
			s.row, s.blobCol, s.table, s.keyCol, s.blobCol), int64(keyID)).Scan(append(dest, &blob)...)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, store.Sealed{Kind: s.kind, Row: strings.Join(row, "\x00"), KeyID: keyID, Blob: blob})
	}
	return out, nil
}

func (t *tx) SealedUnder(ctx context.Context, current uint32, limit int) ([]store.Sealed, error) {
	var out []store.Sealed
	for _, s := range sealedTables {
		parts := len(strings.Split(s.row, ","))
		q := fmt.Sprintf("SELECT %s, %s, %s FROM %s WHERE %s IS NOT NULL AND %s <> ? LIMIT ?",
			s.row, s.keyCol, s.blobCol, s.table, s.blobCol, s.keyCol)
		r, err := t.q.query(ctx, q, int64(current), limit)
		if err != nil {
			return nil, err
		}
		for r.Next() {
			row := make([]string, parts)
			var keyID int64
			var blob []byte
			dest := make([]any, 0, parts+2)
			for i := range row {
				dest = append(dest, &row[i])
			}
			if err := r.Scan(append(dest, &keyID, &blob)...); err != nil {
				r.Close()
				return nil, err
			}
			out = append(out, store.Sealed{Kind: s.kind, Row: strings.Join(row, "\x00"), KeyID: uint32(keyID), Blob: blob})
		}
		err = r.Err()
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *tx) ReplaceSealed(ctx context.Context, old store.Sealed, keyID uint32, blob []byte) (bool, error) {
	for _, s := range sealedTables {
		if s.kind != old.Kind {
			continue
		}
		args := []any{int64(keyID), blob}
		parts := strings.Split(old.Row, "\x00")
		if len(parts) != len(strings.Split(s.row, ",")) {
			return false, fmt.Errorf("store: a %s row id has %d parts", s.kind, len(parts))
		}
		for _, p := range parts {
			args = append(args, p)
		}
		args = append(args, int64(old.KeyID))
		n, err := t.q.exec(ctx, fmt.Sprintf("UPDATE %s SET %s = ?, %s = ?%s WHERE %s AND %s = ?", s.table, s.keyCol, s.blobCol, s.resealSets, s.where, s.keyCol), args...)
		return n == 1, err
	}
	return false, fmt.Errorf("store: unknown sealed kind %q", old.Kind)
}

// keyColumns are the columns that name a master key id, and what they seal.
var keyColumns = []struct{ table, col, what string }{
	{"tasks", "key_id", "tasks"},
	{"tasks", "result_key_id", "task results"},
	{"projects", "creds_key_id", "project credentials"},
	{"webhooks", "key_id", "webhooks"},
	{"idempotency", "answer_key_id", "idempotent answers"},
	{"idempotency", "body_key_id", "idempotent calls' hashes"},
	{"runs", "receipt_key_id", "run receipts"},
	{"activity", "key_id", "history entries"},
	{"devices", "push_key_id", "push subscriptions"},
	{"push_keys", "key_id", "the push key"},
}

func (t *tx) KeyIDsInUse(ctx context.Context) (map[uint32][]string, error) {
	out := map[uint32][]string{}
	for _, c := range keyColumns {
		r, err := t.q.query(ctx, fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL AND %s <> 0", c.col, c.table, c.col, c.col))
		if err != nil {
			return nil, err
		}
		for r.Next() {
			var id int64
			if err := r.Scan(&id); err != nil {
				r.Close()
				return nil, err
			}
			out[uint32(id)] = append(out[uint32(id)], c.what)
		}
		err = r.Err()
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
