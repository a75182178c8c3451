package enclave

import (
	"context"
	"fmt"

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
