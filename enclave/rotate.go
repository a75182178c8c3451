package enclave

import (
	"context"
	"fmt"
	"slices"

	"countersign/sealing"
	"countersign/store"
)

// purposes maps what the store calls each master-sealed secret to its
// sealing purpose.
var purposes = map[string]sealing.SecretPurpose{
	"project": sealing.ProjectCredentials,
	"webhook": sealing.WebhookSecret,
	"call":    callAnswer,
}

// Rewrap seals again, under the keyring's current key, every secret sealed
// directly under an older master key (project credentials, webhooks,
// idempotent answers), and returns how many it moved. A secret that does
// not open is left as it is and counted in skipped (its row id is logged). Task blobs stay under
// the key id that made them (see package sealing), so older ids must stay
// in the keyring until the tasks they made are purged.
func (e *Enclave) Rewrap(ctx context.Context) (moved, skipped int, err error) {
	bad := map[string]bool{}
	for {
		var batch []store.Sealed
		err := e.store.Tx(ctx, func(tx store.Tx) (err error) {
			batch, err = tx.SealedUnder(ctx, e.keys.Current(), 100+len(bad))
			return err
		})
		if err != nil {
			return moved, skipped, err
		}
		progress := 0
		for _, s := range batch {
			p, ok := purposes[s.Kind]
			if !ok {
				return moved, skipped, fmt.Errorf("rewrap: unknown kind %q", s.Kind)
			}
			if bad[s.Kind+"\x00"+s.Row] {
				continue
			}
			keyID, blob, err := e.keys.Rewrap(s.KeyID, p, s.Row, s.Blob)
			if err != nil {
				bad[s.Kind+"\x00"+s.Row] = true
				skipped++
				e.log.Error("a sealed secret does not open; it is left under its key", "kind", s.Kind, "key_id", s.KeyID, "err", err)
				continue
			}
			err = e.store.Tx(ctx, func(tx store.Tx) error {
				ok, err := tx.ReplaceSealed(ctx, s, keyID, blob)
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
	// Opened counts the sealed secrets sampled that opened.
	Opened int
	// Failed names those that did not: what they are and their key id.
	Failed []string
}

// CheckKeyring checks that the keyring is the one the data was sealed with:
// every key id the data uses is in it, and a sample of the secrets sealed
// directly under the master key (up to 20 of each kind) opens.
func (e *Enclave) CheckKeyring(ctx context.Context) (KeyringCheck, error) {
	var c KeyringCheck
	var sample []store.Sealed
	err := e.store.Tx(ctx, func(tx store.Tx) (err error) {
		if c.InUse, err = tx.KeyIDsInUse(ctx); err != nil {
			return err
		}
		sample, err = tx.SealedUnder(ctx, 0, 20)
		return err
	})
	if err != nil {
		return c, err
	}
	for id := range c.InUse {
		if !e.keys.Has(id) {
			c.Missing = append(c.Missing, id)
		}
	}
	slices.Sort(c.Missing)
	for _, s := range sample {
		if !e.keys.Has(s.KeyID) {
			continue // reported as missing
		}
		if _, err := e.keys.Open(s.KeyID, purposes[s.Kind], s.Row, s.Blob); err != nil {
			c.Failed = append(c.Failed, fmt.Sprintf("%s under key %d", s.Kind, s.KeyID))
			continue
		}
		c.Opened++
	}
	return c, nil
}
