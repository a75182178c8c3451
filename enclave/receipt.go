package enclave

import (
	"context"
	"crypto/ed25519"
	"encoding/json"

	"countersign"
	"countersign/origin"
	"countersign/store"
)

// sign signs the receipt of a finished run — its own, and one for each task
// it opened, naming the task's id and hash — and records the run's end.
func (e *Enclave) sign(ctx context.Context, tx store.Tx, r *Run, operation string, answer []byte, opened []Opened) error {
	keyID := e.keys.Current()
	key, err := e.keys.RunKey(keyID)
	if err != nil {
		return err
	}
	base := origin.Receipt{
		Agent: r.Agent, At: e.clock().Format(countersign.TimeFormat), Build: r.Project.Build, Connector: r.Project.Connector,
		InputSHA256: sum(r.Request), Operation: operation, OutputSHA256: sum(answer), Owner: r.Project.Owner, Run: r.ID,
	}
	for _, o := range opened {
		rc := base
		rc.TaskID, rc.TaskHash = o.ID, o.Hash
		b, err := json.Marshal(origin.Sign(key, keyID, rc))
		if err != nil {
			return err
		}
		if err := tx.SetTaskReceipt(ctx, o.ID, string(b)); err != nil {
			return err
		}
	}
	b, err := json.Marshal(origin.Sign(key, keyID, base))
	if err != nil {
		return err
	}
	return tx.FinishRun(ctx, r.ID, e.now().UTC(), base.OutputSHA256, string(b))
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
