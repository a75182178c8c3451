package connectortest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"countersign"
	"countersign/connectors"
)

// Answer plays the owner approving task — supplied is the plaintext of the
// owner's text or file (nil for a confirm task), note the owner's note to
// the agent ("" for none) — and the answer run the platform then starts as
// the task's preparer. It returns the result the run reported (checked
// against the answer operation's Result, when it declares one: a result
// that does not fit fails the test), the tasks the
// run opened (the thread's next turn, or a notice), and either a refusal of
// the approval (a *countersign.Error, before any run), the run's
// *connectors.Refusal, or another error of the run.
//
// The task is found by its id. The run is handed the task as it was opened,
// whatever the copy passed in holds: its sealed state, its files' bytes and
// its parsed envelope. The policy it reads is Policy as it is now.
func (h *Harness) Answer(ctx context.Context, task Opened, supplied []byte, note string) (json.RawMessage, []Opened, error) {
	rec, env, err := h.approve(task.Task.ID, supplied, note)
	if err != nil {
		return nil, nil, err
	}
	op, ok := h.conn.Operation(env.AnswerBy.Operation)
	if !ok || op.Kind != connectors.Answer {
		h.finish(rec, countersign.StateFailed, countersign.FailOperationUnknown, nil)
		return nil, nil, fmt.Errorf("task %s failed before its run: %s is not an answer operation of %s", env.ID, env.AnswerBy.Operation, h.conn.Name)
	}
	if op.Price != 0 {
		h.finish(rec, countersign.StateFailed, countersign.FailOperationPriced, nil)
		return nil, nil, fmt.Errorf("task %s failed before its run: %s is priced", env.ID, op.Name)
	}
	h.finish(rec, countersign.StateAnswering, "", nil)

	spec := rec.opened.Spec // never changed after OpenTask recorded it
	files := make([][]byte, len(spec.Files))
	for i, f := range spec.Files {
		files[i] = bytes.Clone(f.Data)
	}
	pol := h.conn.ParsePolicy(h.Policy)
	r := h.newRun(op.Name, env.Owner, env.Preparer, env.Project, env.ProjectUUID, pol)
	call := &connectors.AnswerCall{
		Operation: op.Name, Task: rec.opened.Task, Envelope: env,
		State: bytes.Clone(spec.State), Supplied: bytes.Clone(supplied), Note: note, Files: files,
		Agent: env.Preparer, Owner: env.Owner, Project: env.Project, ProjectUUID: env.ProjectUUID,
		Run: r.id, Policy: pol, Credentials: bytes.Clone(h.Credentials),
		Now: h.now(), Platform: r,
	}
	out, err := h.within(ctx, r, op, func(ctx context.Context) (any, error) { return op.Answer(ctx, call) })
	opened := r.tasks()
	if err != nil {
		var refusal *connectors.Refusal
		if errors.As(err, &refusal) {
			reason, rerr := countersign.RunRefused(refusal.Code)
			if rerr != nil {
				reason = countersign.FailRunUnfinished
			}
			h.finish(rec, countersign.StateFailed, reason, nil)
			return nil, opened, err
		}
		// Only a Refusal says whether the write happened.
		h.finish(rec, countersign.StateFailed, countersign.FailRunUnfinished, nil)
		return nil, opened, fmt.Errorf("%s run: %w", op.Name, err)
	}
	report, _ := out.(connectors.Report)
	result, err := marshal(report.Result)
	switch {
	case err != nil:
		err = fmt.Errorf("%s run: its result does not marshal: %w", op.Name, err)
	case len(result) == 0 || result[0] != '{':
		err = fmt.Errorf("%s run: its result is not a JSON object", op.Name)
	case len(result) > countersign.MaxResultBytes:
		err = fmt.Errorf("%s run: its result is %d bytes, over %d", op.Name, len(result), countersign.MaxResultBytes)
	}
	if err != nil {
		h.finish(rec, countersign.StateFailed, countersign.FailRunUnfinished, nil)
		return nil, opened, err
	}
	h.finish(rec, countersign.StateDone, "", result)
	// The service takes any object of at most 16 KiB; the result the
	// operation declares is what its tests hold it to.
	if r, ok := h.schemas.ResultFor(h.conn.Name, op.Name); ok {
		if err := r.Check(result); err != nil {
			return nil, opened, h.drift(fmt.Errorf("%s run: %w", op.Name, err))
		}
	}
	return result, opened, nil
}

// approve checks an approval as the inbox does before any run, in the
// inbox's order, and moves the task to approved, or to expired or void.
func (h *Harness) approve(id string, supplied []byte, note string) (*record, countersign.Envelope, error) {
	supplyLimit, noteLimit := countersign.MaxSuppliedBytes-sealOverhead, countersign.MaxNoteBytes-sealOverhead
	if h.SupplyLimit > 0 {
		supplyLimit, noteLimit = h.SupplyLimit, h.SupplyLimit
	}
	if len(supplied) > supplyLimit || len(note) > noteLimit {
		return nil, countersign.Envelope{}, countersign.Errorf(countersign.InvalidRequest, "a supply or a note is larger than 8 KiB")
	}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, ok := h.byID[id]
	if !ok {
		return nil, countersign.Envelope{}, countersign.Errorf(countersign.TaskNotFound, "no such task")
	}
	env, err := countersign.ParseEnvelope(rec.opened.Envelope)
	if err != nil {
		return nil, countersign.Envelope{}, fmt.Errorf("read the envelope of task %s: %w", id, err)
	}
	switch state := rec.status.State; {
	case state != countersign.StateOpen:
		return nil, env, &countersign.Error{Code: countersign.TaskClosed, Message: "the task is " + string(state), State: state}
	case !now.Before(env.ExpiresAt):
		rec.status.State = countersign.StateExpired // as the platform's sweep ends it
		return nil, env, &countersign.Error{Code: countersign.TaskExpired, Message: "the task expired before the approval arrived", State: state}
	case env.Kind == countersign.KindNotice:
		return nil, env, countersign.Errorf(countersign.InvalidRequest, "a notice asks nothing: acknowledge it instead")
	case env.AnswerBy.Supplies == countersign.SuppliesNone && supplied != nil:
		return nil, env, countersign.Errorf(countersign.InvalidRequest, "this task takes no supply; approve it without one")
	case env.AnswerBy.Supplies != countersign.SuppliesNone && supplied == nil:
		return nil, env, countersign.Errorf(countersign.InvalidRequest, "this task needs the owner's %s", env.AnswerBy.Supplies)
	}
	if _, err := countersign.Transition(env.Kind, rec.status.State, countersign.StateApproved, countersign.ActorOwner, ""); err != nil {
		return nil, env, err
	}
	rec.status.State = countersign.StateApproved
	if h.NoVoid {
		return rec, env, nil
	}
	sum := sha256.Sum256(h.Policy)
	switch {
	case hex.EncodeToString(sum[:]) != env.PolicyHash:
		rec.status.State = countersign.StateVoid
		return nil, env, countersign.Errorf(countersign.TaskVoid, "the project's policy changed after the task was opened")
	case h.conn.Build() != env.Build:
		rec.status.State = countersign.StateVoid
		return nil, env, countersign.Errorf(countersign.TaskVoid, "the connector's build changed after the task was opened")
	}
	return rec, env, nil
}

// finish moves a task on from approved or answering.
func (h *Harness) finish(rec *record, to countersign.State, reason countersign.FailureReason, result json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := countersign.Transition(rec.opened.Task.Kind, rec.status.State, to, countersign.ActorPlatform, reason); err != nil && h.t != nil {
		h.t.Errorf("connectortest: task %s cannot move from %s to %s: %v", rec.opened.Task.ID, rec.status.State, to, err)
	}
	rec.status = Status{State: to, FailureReason: reason, Result: result}
}
