package github

import (
	"context"
	"encoding/json"
	"errors"

	"countersign"
	"countersign/connectors"
	"countersign/policy"
)

// write serves the thirteen writes: checked, prepared, then carried out
// at once or put to the owner in a task, as the policy says.
func (g *GitHub) write(ctx context.Context, c *connectors.Call) (any, error) {
	w, err := args(c)
	if err != nil {
		return nil, err
	}
	if n := w.scope().files; n > MaxChangedFiles {
		return nil, countersign.Errorf(countersign.TaskTooLarge, "this write changes %d files; a task covers at most %d: split it", n, MaxChangedFiles)
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	// What refuses without the write's values comes before GitHub is
	// asked anything; the rules need the branch, which may be the default
	// one, known once prepared.
	if d := c.Policy.Gate(c.Operation); d.Outcome == policy.Refuse {
		return nil, countersign.Errorf(countersign.Code(d.Code), "%s", d.Sentence)
	}
	if err := bounded(c.Policy, w); err != nil {
		return nil, err
	}
	cl, err := g.client(c.Credentials)
	if err != nil {
		return nil, err
	}
	old, err := w.prepare(ctx, cl)
	if err != nil {
		return nil, err
	}
	// The default branch is known now: check the branch again.
	if err := bounded(c.Policy, w); err != nil {
		return nil, err
	}
	d := c.Decide(facts(w))
	if d.Outcome == policy.Refuse {
		return nil, countersign.Errorf(countersign.Code(d.Code), "%s", d.Sentence)
	}
	if d.Outcome == policy.Ask {
		spec := taskSpec(w, old)
		state, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		spec.Kind, spec.State = countersign.KindConfirm, state
		spec.AnswerBy = &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}
		task, err := c.OpenTask(ctx, spec)
		if err != nil {
			return nil, err
		}
		return connectors.AwaitingOwner(task), nil
	}
	if ok, err := c.Reserve(ctx, policy.Direct, writesPerDay(c.Policy)); err != nil {
		return nil, err
	} else if !ok {
		return nil, countersign.Errorf(countersign.PolicyDenied, "the day's %d direct writes of this agent in this project are made", writesPerDay(c.Policy))
	}
	res, err := w.execute(ctx, cl)
	if err != nil {
		e := refusal(err, w.doing())
		if mayHaveWritten(err) {
			return nil, countersign.Errorf(countersign.Internal, "%s; the write may or may not have happened: read before writing again", countersign.ErrorMessage(e))
		}
		return nil, e
	}
	res["ok"] = true
	c.Did(connectors.Did{Title: title(w), Summary: w.summary(old).String(), Outcome: g.outcome(w, res)})
	return res, nil
}

// confirm carries out an approved write: the policy as it is now, the
// day's count, then the sealed write and nothing else (but for what a
// write reads again, rechecked).
func (g *GitHub) confirm(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	w, err := parseState(a.State)
	if err != nil {
		return connectors.Report{}, connectors.Refused(countersign.TaskUnreadable, false, "The sealed write does not read.")
	}
	if d := a.Decide(w.name(), facts(w)); d.Outcome == policy.Refuse {
		return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s.", d.Sentence)
	}
	if err := bounded(a.Policy, w); err != nil {
		return connectors.Report{}, notWritten(err)
	}
	cl, err := g.client(a.Credentials)
	if err != nil {
		return connectors.Report{}, notWritten(err)
	}
	if r, ok := w.(rechecked); ok {
		if err := r.recheck(ctx, cl); err != nil {
			return connectors.Report{}, err
		}
	}
	if ok, err := a.Reserve(ctx, writesPerDay(a.Policy)); err != nil {
		return connectors.Report{}, err
	} else if !ok {
		return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The day's %d confirmed writes of this agent in this project are made.", writesPerDay(a.Policy))
	}
	res, err := w.execute(ctx, cl)
	if err != nil {
		return connectors.Report{}, failed(w, err)
	}
	res["ok"] = true
	return connectors.Report{Result: res, Outcome: g.outcome(w, res)}, nil
}

// failed words a write GitHub did not make after the approval.
func failed(w write, err error) error {
	var e *apiError
	if !errors.As(err, &e) {
		return connectors.Refused(countersign.Internal, false, "The write failed before GitHub was asked.")
	}
	r := refusal(err, w.doing())
	if e.Unknown {
		// Only a 4xx proves nothing happened; the task still fails.
		return connectors.RefusedUnknown(countersign.Internal, "%s; the write may or may not have happened: look on GitHub before preparing it again.", countersign.ErrorMessage(r))
	}
	if c, ok := w.(conflicting); ok {
		if err := c.conflict(e); err != nil {
			return err
		}
	}
	return notWritten(r)
}

// notWritten is a refusal before anything was written, in err's words.
func notWritten(err error) error {
	return connectors.Refused(countersign.ErrorCode(err), false, "%s.", countersign.ErrorMessage(err))
}
