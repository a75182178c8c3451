// Package unlock wraps, on the enclave side, the keys of what an account's
// devices may read to the devices that signed in since it was sealed: the
// content keys of the tasks waiting in its inbox and the keys of its
// history's entries. It is the door's inbox.Keeper.
package unlock

import (
	"context"
	"crypto/ecdh"
	"log/slog"
	"slices"
	"time"

	"countersign"
	"countersign/enclave"
	"countersign/enclave/calls"
	"countersign/enclave/history"
	"countersign/store"
)

// Service unlocks accounts' tasks and history for their new devices.
type Service struct {
	keys    *enclave.Keys
	store   store.Port[unlockTx]
	history *history.Writer
	now     func() time.Time
	log     *slog.Logger
}

// Config is what a Service is built from.
type Config struct {
	enclave.Deps
}

// New returns the unlock service.
func New(c Config) *Service {
	c.Deps = c.Deps.WithDefaults()
	return &Service{keys: c.Keys, store: store.Narrow(c.Store, func(tx store.Tx) unlockTx { return tx }),
		history: history.New(c.Keys, c.Logger), now: c.Now, log: c.Logger}
}

// unlockTx is what unlocking reads and writes: the account's devices and
// waiting tasks, their sealed copies and device copies, their approvers,
// and the history's entries and copies.
type unlockTx interface {
	store.Tasks
	store.TaskLists
	store.TaskKeys
	store.Approvals
	store.Devices
	store.History
}

// SealCredentials seals a project's credentials under the master key, for
// the door (inbox.Keeper).
func (s *Service) SealCredentials(projectUUID string, creds []byte) (uint32, []byte, error) {
	return s.keys.SealCredentials(projectUUID, creds)
}

// SealBatch seals the summaries of a batch approval for the answer run of
// task t, for the door (inbox.Keeper; enclave.Keys.SealBatch).
func (s *Service) SealBatch(t store.Task, summaries []string) ([]byte, error) {
	return s.keys.SealBatch(t, summaries)
}

// unlockBatch bounds the entries one unlock transaction wraps.
const unlockBatch = 500

// deviceKeys are the keys of the account's current devices whose sign-in
// statements the key-holder checks (enclave.Keys.CheckedKeys).
func (s *Service) deviceKeys(ctx context.Context, tx unlockTx, owner string, now time.Time) (map[string]*ecdh.PublicKey, error) {
	devices, err := tx.ActiveDevices(ctx, owner, now)
	if err != nil {
		return nil, err
	}
	return s.keys.CheckedKeys(devices, now), nil
}

// wrapEntries wraps, in tx, the keys of up to unlockBatch entries of the
// owner's last 30 days to the devices that have no copy; more says that a
// next batch may find some (it wrote a full one).
func (s *Service) wrapEntries(ctx context.Context, tx unlockTx, owner string, devices map[string]*ecdh.PublicKey, now time.Time) (more bool, err error) {
	if len(devices) == 0 {
		return false, nil
	}
	ids := make([]string, 0, len(devices))
	for id := range devices {
		ids = append(ids, id)
	}
	todo, err := tx.ActivityToWrap(ctx, owner, ids, now.Add(-countersign.OutcomeKept), unlockBatch)
	if err != nil {
		return false, err
	}
	copies, err := s.history.Copies(owner, todo, devices)
	if err != nil {
		return false, err
	}
	// A full batch of which nothing could be wrapped would come back
	// whole: that is where the unlock stops.
	return len(todo) == unlockBatch && len(copies) > 0, tx.PutActivityCopies(ctx, copies)
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
func (s *Service) Unlock(ctx context.Context, owner string) (int, error) {
	waiting := 0
	more := false
	err := s.store.Tx(ctx, func(tx unlockTx) error {
		now := s.now().UTC()
		devices, err := s.deviceKeys(ctx, tx, owner, now)
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
			blob, keyID, err := tx.Sealed(ctx, t.ID)
			if err != nil {
				return err
			}
			sc, _, err := s.keys.OpenSealed(t, blob, keyID)
			if err != nil {
				s.log.Error("cannot open a waiting task's sealed copy to unlock it", "task", t.ID, "err", err)
				continue
			}
			ck, err := sc.Key()
			if err != nil {
				return err
			}
			for id := range missing {
				blob, err := s.keys.WrapContentKey(devices[id], t.ID, ck)
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
		more, err2 = s.wrapEntries(ctx, tx, owner, devices, now)
		return err2
	})
	if err == nil && more {
		err = s.entries(ctx, owner)
	}
	return waiting, calls.Transport(err)
}

// entries wraps the keys of the owner's entries of the last 30 days
// (ended or not) to each current device that has no copy, a batch per
// transaction, until none is left.
func (s *Service) entries(ctx context.Context, owner string) error {
	for more := true; more; {
		err := s.store.Tx(ctx, func(tx unlockTx) error {
			now := s.now().UTC()
			devices, err := s.deviceKeys(ctx, tx, owner, now)
			if err != nil {
				return err
			}
			more, err = s.wrapEntries(ctx, tx, owner, devices, now)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
