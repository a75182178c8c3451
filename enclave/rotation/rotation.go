// Package rotation moves the data between master keys: Rewrap seals again
// under the keyring's current key what was sealed directly under an older
// one, and CheckKeyring says whether a keyring is the one the data was
// sealed with (serve checks it at every start, doctor on demand).
package rotation

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"countersign/enclave"
	"countersign/store"
)

// Service rotates the master key's secrets.
type Service struct {
	keys  *enclave.Keys
	store store.Port[rotationTx]
	log   *slog.Logger
}

// New returns the rotation service over keys and db (log nil: the
// default logger).
func New(keys *enclave.Keys, db store.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{keys: keys, store: store.Narrow(db, func(tx store.Tx) rotationTx { return tx }), log: log}
}

// rotationTx is what rotation reads and changes in the store's
// transactions: the master-sealed secrets and the key ids in use.
type rotationTx interface {
	store.Rewrap
}

// Rewrap seals again, under the keyring's current key, every secret sealed
// directly under an older master key (project credentials, webhooks,
// idempotent answers, push subscriptions, the VAPID key: the same key
// pair, so browsers' subscriptions stay good), and returns how many it
// moved. A secret that does
// not open is left as it is and counted in skipped (its row id is logged). Task blobs stay under
// the key id that made them (see package sealing), so older ids must stay
// in the keyring until the tasks they made are purged.
func (s *Service) Rewrap(ctx context.Context) (moved, skipped int, err error) {
	bad := map[string]bool{}
	for {
		var batch []store.Sealed
		err := s.store.Tx(ctx, func(tx rotationTx) (err error) {
			batch, err = tx.SealedUnder(ctx, s.keys.Current(), 100+len(bad))
			return err
		})
		if err != nil {
			return moved, skipped, err
		}
		progress := 0
		for _, sealed := range batch {
			if !enclave.Rewraps(sealed.Kind) {
				return moved, skipped, fmt.Errorf("rewrap: unknown kind %q", sealed.Kind)
			}
			if bad[sealed.Kind+"\x00"+sealed.Row] {
				continue
			}
			keyID, blob, err := s.keys.Rewrap(sealed)
			if err != nil {
				bad[sealed.Kind+"\x00"+sealed.Row] = true
				skipped++
				s.log.Error("a sealed secret does not open; it is left under its key", "kind", sealed.Kind, "key_id", sealed.KeyID, "err", err)
				continue
			}
			err = s.store.Tx(ctx, func(tx rotationTx) error {
				ok, err := tx.ReplaceSealed(ctx, sealed, keyID, blob)
				if ok {
					progress++
				}
				return err
			})
			if err != nil {
				return moved, skipped, err
			}
		}
		moved += progress
		if progress == 0 {
			return moved, skipped, nil
		}
	}
}

// KeyringCheck is what CheckKeyring finds of the keyring against the data.
type KeyringCheck struct {
	// InUse is every master key id the data needs, with what needs it.
	InUse map[uint32][]string
	// Missing are the ids in use that the keyring lacks.
	Missing []uint32
	// Opens are the ids in use of which a sealed row opened; Wrong those
	// the keyring has of which rows were tried and none opened: the
	// keyring holds another key under that id.
	Opens, Wrong []uint32
	// Opened counts the sealed rows sampled that opened.
	Opened int
	// Failed names those that did not: what they are and their key id.
	Failed []string
}

// OpensNone reports whether the keyring is not the one the data was
// sealed with, so that the service must not start with it: a key id the
// data uses is in the keyring under another key, or the data needs key ids
// and the keyring opens none of them.
func (c KeyringCheck) OpensNone() bool {
	return len(c.Wrong) > 0 || len(c.Opens) == 0 && len(c.Missing) > 0
}

// Needs names the key ids the data needs, with what needs each: "key 1
// (tasks, run receipts)".
func (c KeyringCheck) Needs(ids []uint32) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("key %d (%s)", id, strings.Join(c.InUse[id], ", ")))
	}
	return strings.Join(parts, "; ")
}

// CheckKeyring checks that the keyring is the one the data was sealed with:
// every key id the data uses is in it, and for each, one row of each kind
// sealed under it (a task's sealed copy, a run's receipt key, project
// credentials, a webhook, an idempotent answer) opens. Past finding the ids
// in use, it reads one row of each kind per id; serve runs it at every
// start.
func (s *Service) CheckKeyring(ctx context.Context) (KeyringCheck, error) {
	var c KeyringCheck
	samples := map[uint32][]store.Sealed{}
	err := s.store.Tx(ctx, func(tx rotationTx) (err error) {
		if c.InUse, err = tx.KeyIDsInUse(ctx); err != nil {
			return err
		}
		for id := range c.InUse {
			if !s.keys.Has(id) {
				continue
			}
			if samples[id], err = tx.SealedSamples(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	for id := range c.InUse {
		if !s.keys.Has(id) {
			c.Missing = append(c.Missing, id)
			continue
		}
		opened := 0
		for _, sample := range samples[id] {
			if err := s.keys.OpenSample(sample); err != nil {
				c.Failed = append(c.Failed, fmt.Sprintf("%s under key %d", sample.Kind, sample.KeyID))
				continue
			}
			opened++
		}
		c.Opened += opened
		switch {
		case opened > 0:
			c.Opens = append(c.Opens, id)
		case len(samples[id]) > 0:
			c.Wrong = append(c.Wrong, id)
		}
	}
	for _, ids := range [][]uint32{c.Missing, c.Opens, c.Wrong} {
		slices.Sort(ids)
	}
	slices.Sort(c.Failed)
	return c, nil
}
