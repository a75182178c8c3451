package device

import (
	"context"
	"errors"
	"fmt"

	"countersign"
	"countersign/approval"
	"countersign/client"
)

// ErrBatch is wrapped by the refusal of tasks that cannot be approved in
// one batch: fewer than two or more than ten, not all confirm tasks of one
// project taking no supply, one without a summary, or a sentence longer
// than 1,000 bytes (approval.ErrBatchTooLong; see BatchPlan to split).
var ErrBatch = errors.New("device: these tasks cannot be approved in one batch")

// BatchLines are the lines and summaries of opened tasks, in order, as a
// batch sentence names them (nothing supplied).
func BatchLines(tasks []*Opened) ([]approval.BatchLine, []string) {
	lines := make([]approval.BatchLine, len(tasks))
	summaries := make([]string, len(tasks))
	for i, o := range tasks {
		lines[i] = approval.BatchLine{ID: o.Envelope.ID, TaskHash: o.TaskHash, SupplyHash: countersign.SupplyHash(nil, nil)}
		summaries[i] = o.Envelope.Display.Summary
	}
	return lines, summaries
}

// BatchApproveRequest builds the signed approval of 2–10 opened confirm
// tasks of one project, nothing supplied, in the order given (SPEC §7):
//
//	Approve in Countersign as {account}: {n} tasks of {project}: {summary 1}; {summary 2}; …. Tasks {lines hash}. At {now}.
//
// naming the summary of each envelope the device decrypted, signed by
// d.Signer for the device's recipient at the device's clock. Nothing is
// signed when a check refuses.
func (d *Device) BatchApproveRequest(tasks []*Opened) (client.BatchApproveRequest, error) {
	if len(tasks) < approval.MinBatchTasks || len(tasks) > approval.MaxBatchTasks {
		return client.BatchApproveRequest{}, fmt.Errorf("%w: a batch approves %d to %d tasks, not %d", ErrBatch, approval.MinBatchTasks, approval.MaxBatchTasks, len(tasks))
	}
	first := tasks[0]
	for _, o := range tasks {
		ab, err := asks(o)
		if err != nil {
			return client.BatchApproveRequest{}, err
		}
		e := o.Envelope
		switch {
		case e.Kind != countersign.KindConfirm || ab.Supplies != countersign.SuppliesNone:
			return client.BatchApproveRequest{}, fmt.Errorf("%w: task %s is not a yes-or-no (confirm) task", ErrBatch, e.ID)
		case e.ProjectUUID != first.Envelope.ProjectUUID:
			return client.BatchApproveRequest{}, fmt.Errorf("%w: task %s is of the project %s, not %s", ErrBatch, e.ID, e.Project, first.Envelope.Project)
		case e.Display.Summary == "":
			return client.BatchApproveRequest{}, fmt.Errorf("%w: task %s has no summary; approve it alone", ErrBatch, e.ID)
		}
	}
	if d.Signer == nil {
		return client.BatchApproveRequest{}, errors.New("device: no signer to sign the approval")
	}
	lines, summaries := BatchLines(tasks)
	at := d.now()
	sentence, err := approval.BatchApproval{Account: d.Account, Project: first.Envelope.Project, Tasks: lines, Summaries: summaries, At: at}.Sentence()
	if err != nil {
		return client.BatchApproveRequest{}, fmt.Errorf("%w: %w", ErrBatch, err)
	}
	recipient, err := d.recipient()
	if err != nil {
		return client.BatchApproveRequest{}, err
	}
	signed, err := d.Signer.Sign(sentence, recipient)
	if err != nil {
		return client.BatchApproveRequest{}, fmt.Errorf("device: sign the approval of %d tasks: %w", len(tasks), err)
	}
	req := client.BatchApproveRequest{Approval: client.Confirmation{At: at.Unix(), Signed: signed}, Summaries: summaries}
	for _, l := range lines {
		req.Tasks = append(req.Tasks, client.BatchLine{ID: l.ID, TaskHash: l.TaskHash, SupplyHash: l.SupplyHash})
	}
	return req, nil
}

// BatchApprove builds the approval of opened tasks with BatchApproveRequest
// and sends it with d.Client: all are approved or none.
func (d *Device) BatchApprove(ctx context.Context, tasks []*Opened) (client.BatchApproved, error) {
	if d.Client == nil {
		return client.BatchApproved{}, errors.New("device: no client to send the approval")
	}
	req, err := d.BatchApproveRequest(tasks)
	if err != nil {
		return client.BatchApproved{}, err
	}
	return d.Client.BatchApprove(ctx, req)
}
