package calls

import (
	"context"
	"encoding/json"
	"errors"

	"countersign"
	"countersign/origin"
	"countersign/sealing"
	"countersign/store"
)

// taskInput is a task's receipt's input hash: under the task's receipt key,
// over the request exactly as the task's content holds it, which is what a
// device decrypts (a request that is not valid UTF-8 is held as JSON
// writes it). How receipts are keyed is told at enclave.Keys.NewReceiptKey.
func taskInput(rk *sealing.ReceiptKey, sealedContent []byte) (string, error) {
	var c content
	if err := json.Unmarshal(sealedContent, &c); err != nil {
		return "", err
	}
	return rk.Sum([]byte(c.Request)), nil
}

// Sign signs the receipt of a finished run — its own, and one for each task
// it opened, naming the task's id and hash — and records the run's end.
func (s *Service) Sign(ctx context.Context, tx store.Runs, r *Run, operation string, answer []byte, opened []Opened) error {
	if r.Receipt == nil {
		return errors.New("enclave: a run without its receipt key")
	}
	base := origin.Receipt{
		Agent: r.Agent, At: s.clock().Format(countersign.TimeFormat), Build: r.Project.Build, Connector: r.Project.Connector,
		InputSHA256: r.Receipt.Sum(r.Request), Operation: operation, OutputSHA256: r.Receipt.Sum(answer), Owner: r.Project.Owner, Run: r.ID,
	}
	var receipts []store.TaskReceipt
	for _, o := range opened {
		if o.receipt == nil {
			return errors.New("enclave: an opened task without its receipt key")
		}
		rc := base
		rc.TaskID, rc.TaskHash = o.ID, o.Hash
		rc.InputSHA256, rc.OutputSHA256 = o.input, o.receipt.Sum(answer)
		b, err := s.keys.SignReceipt(rc)
		if err != nil {
			return err
		}
		receipts = append(receipts, store.TaskReceipt{TaskID: o.ID, Receipt: string(b)})
	}
	b, err := s.keys.SignReceipt(base)
	if err != nil {
		return err
	}
	return tx.FinishRun(ctx, r.ID, s.now().UTC(), base.OutputSHA256, string(b), receipts...)
}
