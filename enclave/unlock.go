package enclave

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"countersign"
	"countersign/sealing"
	"countersign/store"
)

// openSealed opens a task's sealed copy.
func (e *Enclave) openSealed(ctx context.Context, tx store.TaskKeys, t store.Task) (sealedCopy, *sealing.TaskKeys, error) {
	blob, keyID, err := tx.Sealed(ctx, t.ID)
	if err != nil {
		return sealedCopy{}, nil, err
	}
	return e.openSealedBlob(t, blob, keyID)
}

// openSealedBlob opens a task's sealed copy as read from its row.
func (e *Enclave) openSealedBlob(t store.Task, blob []byte, keyID uint32) (sealedCopy, *sealing.TaskKeys, error) {
	tk, err := e.keys.TaskKeys(keyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return sealedCopy{}, nil, err
	}
	plain, err := tk.Open(sealing.TaskRecord, blob)
	if err != nil {
		return sealedCopy{}, nil, err
	}
	var sc sealedCopy
	if err := json.Unmarshal(plain, &sc); err != nil {
		return sealedCopy{}, nil, fmt.Errorf("sealed copy of %s: %w", t.ID, err)
	}
	return sc, tk, nil
}

// maxUnlocked bounds the waiting tasks one unlock wraps keys of: an
// account's own (at most 20) and those it approves for others.
const maxUnlocked = 200

// Unlock wraps the content key of each waiting task in the account's
// inbox (its own, and those of others' it is listed an approver of, SPEC
// §13) to each of its current devices (whose sign-in statement checks
// out) that has no copy yet, and then the key of each entry of the
// account's own history of the last 30 days. It returns how many tasks
// are waiting.
func (e *Enclave) Unlock(ctx context.Context, owner string) (int, error) {
	waiting := 0
	more := false
	err := e.store.Tx(ctx, func(tx enclaveTx) error {
		now := e.now().UTC()
		devices, err := e.deviceKeys(ctx, tx, owner, now)
		if err != nil {
			return err
		}
		tasks, err := tx.InboxTasks(ctx, owner, true, nil, maxUnlocked)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			if countersign.StateAt(t.State, t.ExpiresAt, now) != countersign.StateOpen {
				continue // expired: nothing more is wrapped for it
			}
			waiting++
			// Lock the task while it is still open: an approval or a
			// cancel waits, and then deletes what this writes.
			open, err := tx.LockWaiting(ctx, t.ID)
			if err != nil {
				return err
			}
			if !open {
				continue
			}
			if t.Owner != owner {
				// Still its approver, now that the task is locked: an
				// approver taken off meanwhile gets nothing.
				approvers, err := tx.TaskApprovers(ctx, t.ID)
				if err != nil {
					return err
				}
				if !slices.Contains(approvers, owner) {
					waiting--
					continue
				}
			}
			have, err := tx.DeviceCopies(ctx, t.ID)
			if err != nil {
				return err
			}
			missing := map[string]bool{}
			for id := range devices {
				missing[id] = true
			}
			for _, id := range have {
				delete(missing, id)
			}
			if len(missing) == 0 {
				continue
			}
			sc, _, err := e.openSealed(ctx, tx, t)
			if err != nil {
				e.log.Error("cannot open a waiting task's sealed copy to unlock it", "task", t.ID, "err", err)
				continue
			}
			raw, err := hex.DecodeString(sc.ContentKey)
			if err != nil {
				return err
			}
			ck, err := sealing.ContentKeyFromBytes(raw)
			if err != nil {
				return err
			}
			for id := range missing {
				blob, err := sealing.WrapContentKey(devices[id], t.ID, ck)
				if err != nil {
					return err
				}
				if err := tx.PutDeviceCopy(ctx, t.ID, id, blob); err != nil {
					return err
				}
			}
		}
		// The history's entries, a first batch in the same transaction.
		var err2 error
		more, err2 = e.wrapEntries(ctx, tx, owner, devices, now)
		return err2
	})
	if err == nil && more {
		err = e.unlockEntries(ctx, owner)
	}
	return waiting, transport(err)
}

// SealBatch seals, for the answer run of task t approved in a batch, the
// summaries the batch sentence names (SPEC §7): under the task's own keys
// (sealing.BatchRecord, bound to its id), so the run can rebuild the signed
// sentence while nothing a task shows is kept in clear. The door keeps the
// blob with the task's approval, which leaving approved drops.
func (e *Enclave) SealBatch(t store.Task, summaries []string) ([]byte, error) {
	tk, err := e.keys.TaskKeys(t.KeyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(summaries)
	if err != nil {
		return nil, err
	}
	return tk.Seal(sealing.BatchRecord, b)
}

// openBatch opens what SealBatch sealed for the task of tk.
func openBatch(tk *sealing.TaskKeys, blob []byte) ([]string, error) {
	plain, err := tk.Open(sealing.BatchRecord, blob)
	if err != nil {
		return nil, err
	}
	var summaries []string
	if err := json.Unmarshal(plain, &summaries); err != nil {
		return nil, err
	}
	return summaries, nil
}
