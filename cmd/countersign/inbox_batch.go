package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/inbox"
)

// approveMany approves several waiting confirm tasks with as few
// signatures as SPEC §7 allows: the tasks of one project in batches of at
// most 10 whose sentence fits 1,000 bytes (split otherwise, saying so), a
// task left alone, or without a summary, with the single sentence. Every
// task is opened and its receipt verified before anything is signed.
func approveMany(ctx context.Context, a *app, dir string, ids []string, external bool) error {
	for i, id := range ids {
		if !countersign.ValidTaskID(id) {
			return fmt.Errorf("%q is not a task id", clean(id))
		}
		if slices.Contains(ids[:i], id) {
			return fmt.Errorf("task %s is named twice", id)
		}
	}
	t, d, err := a.terminalDevice(dir, true, external)
	if err != nil {
		return err
	}
	var opened, sharedTasks []*device.Opened
	for _, id := range ids {
		v, o, _, err := t.openVerified(ctx, d, id, "approve", "approve task %s", " (nothing was signed)")
		if err != nil {
			return err
		}
		ab := o.Envelope.AnswerBy
		switch {
		case ab == nil:
			return fmt.Errorf("task %s is a notice and asks nothing: countersign inbox ack %s (nothing was signed)", id, id)
		case o.Envelope.Kind != countersign.KindConfirm || ab.Supplies != countersign.SuppliesNone:
			return fmt.Errorf("task %s needs a %s answer: approve it alone with --text or --file (nothing was signed)", id, ab.Supplies)
		}
		if why := refuseSharedApproval(v, t.account, false); why != "" {
			return errors.New(why + " (nothing was signed)")
		}
		if shared(v) {
			// The service refuses a batch holding a task several
			// accounts approve: each approval of it is signed alone.
			sharedTasks = append(sharedTasks, o)
			continue
		}
		opened = append(opened, o)
	}
	if len(sharedTasks) > 0 {
		fmt.Fprintf(a.stdout, "%d of the tasks need the approvals of several accounts, which a signature over several tasks does not give: each is approved alone\n", len(sharedTasks))
	}
	// The tasks of each project, in the order given.
	var projects []string
	byProject := map[string][]*device.Opened{}
	for _, o := range opened {
		uuid := o.Envelope.ProjectUUID
		if byProject[uuid] == nil {
			projects = append(projects, uuid)
		}
		byProject[uuid] = append(byProject[uuid], o)
	}
	if len(projects) > 1 {
		fmt.Fprintf(a.stdout, "the tasks are of %d projects: one signature (or more) each, as a signature approves tasks of one project\n", len(projects))
	}
	for _, uuid := range projects {
		tasks := byProject[uuid]
		project := tasks[0].Envelope.Project
		var batchable, alone []*device.Opened
		for _, o := range tasks {
			if o.Envelope.Display.Summary == "" {
				alone = append(alone, o)
			} else {
				batchable = append(batchable, o)
			}
		}
		if len(alone) > 0 && len(tasks) > 1 {
			fmt.Fprintf(a.stdout, "%d of the tasks of project %s have no summary and are approved one by one\n", len(alone), clean(project))
		}
		lines, summaries := device.BatchLines(batchable)
		plan, err := approval.BatchPlan(d.Account, project, lines, summaries, time.Now().UTC().Truncate(time.Second))
		if err != nil {
			return err
		}
		if len(plan) > 1 {
			fmt.Fprintf(a.stdout, "the %d tasks of project %s take %d signatures: one signature approves at most %d tasks in a sentence of at most %d bytes\n",
				len(batchable), clean(project), len(plan), approval.MaxBatchTasks, approval.MaxBatchSentenceBytes)
		}
		for _, g := range plan {
			if g[1]-g[0] == 1 {
				alone = append(alone, batchable[g[0]])
				continue
			}
			group := batchable[g[0]:g[1]]
			got, err := d.BatchApprove(ctx, group)
			if err != nil {
				if errors.Is(err, device.ErrBatch) {
					return err
				}
				if refused := batchRefused(err, len(group)); refused != nil {
					return refused
				}
				return t.explain(err)
			}
			fmt.Fprintf(a.stdout, "approved %d tasks of project %s with one signature:\n", len(got.Tasks), clean(project))
			for i, st := range got.Tasks {
				fmt.Fprintf(a.stdout, "  task %s (%s): run %s\n", clean(st.ID), clean(group[i].Envelope.Display.Title), clean(st.Run))
			}
		}
		for _, o := range alone {
			st, err := d.Approve(ctx, o, nil, "")
			if err != nil {
				return t.explain(err)
			}
			fmt.Fprintf(a.stdout, "approved task %s (%s) alone: run %s\n", o.Envelope.ID, clean(o.Envelope.Display.Title), clean(st.Run))
		}
	}
	for _, o := range sharedTasks {
		st, err := d.Approve(ctx, o, nil, "")
		if err != nil {
			return t.explain(err)
		}
		fmt.Fprintf(a.stdout, "approved task %s (%s) alone: ", o.Envelope.ID, clean(o.Envelope.Display.Title))
		switch {
		case st.Approvals == nil:
			fmt.Fprintf(a.stdout, "run %s\n", clean(st.Run))
		case st.State == string(countersign.StateApproved):
			fmt.Fprintf(a.stdout, "%d of %d approvals, run %s\n", st.Approvals.Have, st.Approvals.Need, clean(st.Run))
		default:
			fmt.Fprintf(a.stdout, "%d of %d approvals, it waits for %d more\n", st.Approvals.Have, st.Approvals.Need, st.Approvals.Need-st.Approvals.Have)
		}
	}
	return nil
}

// inboxAllow is "Always allow this" (SPEC §13) in the terminal: from a
// waiting confirm task whose connector declares rule conditions, the rule
// allowing writes like it from now on (the same operation and values, the
// amount at most this one) is shown, inserted first in the project's
// policy with the owner's confirmation, and, with --approve, the task is
// approved in the same step.
func inboxAllow(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("allow")
	approve := fset.Bool("approve", false, "approve the task too, in the same step")
	external := fset.Bool("external", false, "sign with a wallet elsewhere: print each sentence, read its JSON answer on standard input")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	id, err := taskArg(pos, "countersign inbox allow ID [--approve] [--external]")
	if err != nil {
		return err
	}
	t, d, err := a.terminalDevice(dirOf(), true, *external)
	if err != nil {
		return err
	}
	v, o, _, err := t.openVerified(ctx, d, id, "allow", "allow what task %s asks", "")
	if err != nil {
		return err
	}
	if v.Role == client.RoleApprover {
		return fmt.Errorf("task %s is %s's: only its owner changes the policy of its project; you may approve or reject it", id, clean(v.Owner))
	}
	if *approve {
		if why := refuseSharedApproval(v, t.account, false); why != "" {
			return errors.New(why + "; nothing was signed")
		}
	}
	projects, err := t.client.Projects(ctx)
	if err != nil {
		return t.explain(err)
	}
	i := slices.IndexFunc(projects, func(p client.Project) bool { return p.ProjectUUID == o.Envelope.ProjectUUID })
	if i < 0 {
		return fmt.Errorf("the project %s of task %s is no longer there", clean(o.Envelope.Project), id)
	}
	p := projects[i]
	cat, err := catalogue()
	if err != nil {
		return err
	}
	conn, ok := cat[p.Connector]
	if !ok {
		return fmt.Errorf("this terminal does not know the connector %s", clean(p.Connector))
	}
	op, allow, err := conn.AlwaysAllow([]byte(p.Policy), o.Request, o.Envelope)
	if err != nil {
		return fmt.Errorf("task %s cannot be always allowed: %v", id, err)
	}
	text, err := inbox.ProjectText(p.Connector, allow.Policy, p.Agents)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "always allow in project %s, before every other rule:\n  %s\n", clean(p.Name), clean(allow.Sentence))
	if allow.Moved {
		fmt.Fprintf(a.stdout, "`confirm` named %s, which a rule cannot widen: it is taken out of `confirm`, and the rules ask about every other %s as `confirm` did\n", op, op)
	}
	fmt.Fprintf(a.stdout, "policy: %s\n", clean(string(allow.Policy)))
	conf, err := d.Confirm(approval.ActionSetProject(p.Name, text))
	if err != nil {
		return err
	}
	saved, err := t.client.PutProject(ctx, p.Name, text, conf)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "project %s: policy %s, the rule is rule 1\n", clean(saved.Name), clean(saved.PolicyMode))
	if !*approve {
		fmt.Fprintf(a.stdout, "task %s still waits: countersign inbox approve %s, or allow it again with --approve\n", id, id)
		return nil
	}
	st, err := d.Approve(ctx, o, nil, "")
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "approved task %s (%s)\n", id, clean(o.Envelope.Display.Title))
	if st.Approvals != nil {
		sharedApproved(a.stdout, st, o.Envelope.Preparer)
		return nil
	}
	fmt.Fprintf(a.stdout, "run: %s\n", clean(st.Run))
	return nil
}
