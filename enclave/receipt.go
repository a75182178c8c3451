package enclave

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"

	"countersign"
	"countersign/origin"
	"countersign/sealing"
	"countersign/store"
)

// Receipt hashes are keyed (SPEC §11, amended): a receipt's input_sha256 and
// output_sha256 are HMAC-SHA256 under the receipt's key, never bare hashes
// of a small request or result that a reader of the database could test
// guesses against.
//
//   - A task's receipt (naming its id and hash) is keyed under the task's
//     receipt key, derived from its content key, so every device that opens
//     the task recomputes the input hash over the request it decrypted.
//   - A run's own receipt (kept in its row) is keyed under a random key
//     sealed under the master key in the same row, purged with it.
//   - An idempotent call's body hash is keyed under a key derived from the
//     master key, bound to the call's row, with the key id beside it.
const (
	// runReceiptKey seals a run's own receipt key, bound to the run's id.
	runReceiptKey = sealing.SecretPurpose("run-receipt-key")
	// callBody keys an idempotent call's body hash.
	callBody = sealing.SecretPurpose("call-body")
)

// newReceiptKey gives a run its own receipt key, and the key sealed (with
// the master key id) for its row.
func (e *Enclave) newReceiptKey(runID string) (*sealing.ReceiptKey, uint32, []byte, error) {
	rk := sealing.NewReceiptKey()
	keyID, sealed, err := e.keys.Seal(runReceiptKey, runID, rk.Bytes())
	if err != nil {
		return nil, 0, nil, fmt.Errorf("seal a run's receipt key: %w", err)
	}
	return rk, keyID, sealed, nil
}

// bodyHash is the keyed hash of an idempotent call's body under master key
// keyID, bound to the call's row.
func (e *Enclave) bodyHash(keyID uint32, c store.IdempotentCall, body []byte) (string, error) {
	return e.keys.MAC(keyID, callBody, idemRow(c), body)
}

// taskInput is a task's receipt's input hash: under the task's receipt key,
// over the request exactly as the task's content holds it, which is what a
// device decrypts (a request that is not valid UTF-8 is held as JSON
// writes it).
func taskInput(rk *sealing.ReceiptKey, sealedContent []byte) (string, error) {
	var c content
	if err := json.Unmarshal(sealedContent, &c); err != nil {
		return "", err
	}
	return rk.Sum([]byte(c.Request)), nil
}

// sign signs the receipt of a finished run — its own, and one for each task
// it opened, naming the task's id and hash — and records the run's end.
func (e *Enclave) sign(ctx context.Context, tx store.Runs, r *Run, operation string, answer []byte, opened []Opened) error {
	if r.receipt == nil {
		return errors.New("enclave: a run without its receipt key")
	}
	keyID := e.keys.Current()
	key, err := e.keys.RunKey(keyID)
	if err != nil {
		return err
	}
	base := origin.Receipt{
		Agent: r.Agent, At: e.clock().Format(countersign.TimeFormat), Build: r.Project.Build, Connector: r.Project.Connector,
		InputSHA256: r.receipt.Sum(r.Request), Operation: operation, OutputSHA256: r.receipt.Sum(answer), Owner: r.Project.Owner, Run: r.ID,
	}
	var receipts []store.TaskReceipt
	for _, o := range opened {
		if o.receipt == nil {
			return errors.New("enclave: an opened task without its receipt key")
		}
		rc := base
		rc.TaskID, rc.TaskHash = o.ID, o.Hash
		rc.InputSHA256, rc.OutputSHA256 = o.input, o.receipt.Sum(answer)
		b, err := json.Marshal(origin.Sign(key, keyID, rc))
		if err != nil {
			return err
		}
		receipts = append(receipts, store.TaskReceipt{TaskID: o.ID, Receipt: string(b)})
	}
	b, err := json.Marshal(origin.Sign(key, keyID, base))
	if err != nil {
		return err
	}
	return tx.FinishRun(ctx, r.ID, e.now().UTC(), base.OutputSHA256, string(b), receipts...)
}

// RunKeys are the service's run public keys by key id, as
// GET /.well-known/countersign-run-key publishes them; Current is the one
// that signs now.
func (e *Enclave) RunKeys() (current uint32, keys map[uint32]string, err error) {
	keys = map[uint32]string{}
	for _, id := range e.keys.IDs() {
		k, err := e.keys.RunKey(id)
		if err != nil {
			return 0, nil, err
		}
		keys[id] = origin.FormatKey(k.Public().(ed25519.PublicKey))
	}
	return e.keys.Current(), keys, nil
}
