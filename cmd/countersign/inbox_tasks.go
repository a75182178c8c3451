package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"countersign"
	"countersign/argschema"
	"countersign/client"
	"countersign/connectors"
	"countersign/device"
	"countersign/inbox"
	"countersign/origin"
)

// taskArg checks that the positional arguments are one task id.
func taskArg(pos []string, usage string) (string, error) {
	if len(pos) != 1 {
		return "", errors.New("usage: " + usage)
	}
	if !countersign.ValidTaskID(pos[0]) {
		return "", fmt.Errorf("%q is not a task id", clean(pos[0]))
	}
	return pos[0], nil
}

// isSet reports whether a flag was given.
func isSet(fset *flag.FlagSet, name string) bool {
	set := false
	fset.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func inboxList(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("list")
	closed := fset.Bool("closed", false, "list tasks that left open (they show nothing any more)")
	limit := fset.Int("limit", 0, fmt.Sprintf("at most this many tasks, 1 to %d (default %d)", inbox.MaxListLimit, inbox.DefaultListLimit))
	before := fset.String("before", "", "list the tasks after this one (the last id of the previous page)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 0:
		return errors.New("usage: countersign inbox list [--closed] [--limit N] [--before ID]")
	case *limit < 0 || *limit > inbox.MaxListLimit:
		return fmt.Errorf("--limit: 1 to %d", inbox.MaxListLimit)
	case *before != "" && !countersign.ValidTaskID(*before):
		return errors.New("--before: a task id is needed")
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	show := client.ShowWaiting
	if *closed {
		show = client.ShowClosed
	}
	page, err := t.client.Tasks(ctx, show, *before, *limit)
	if err != nil {
		return t.explain(err)
	}
	if len(page.Tasks) == 0 {
		fmt.Fprintf(a.stdout, "no %s tasks\n", show)
		return nil
	}
	// Tasks of other owners this account approves, and tasks several
	// accounts approve, add who owns them and how far their approvals are.
	withShared := slices.ContainsFunc(page.Tasks, func(v client.TaskView) bool { return shared(v) || v.Role == client.RoleApprover })
	header := "ID\tKIND\tSTATE\tPREPARER\tPROJECT\tEXPIRES\tLOCKED"
	if withShared {
		header = "ID\tKIND\tSTATE\tPREPARER\tOWNER\tPROJECT\tEXPIRES\tLOCKED\tAPPROVALS"
	}
	tw := a.table(header)
	for _, v := range page.Tasks {
		state := v.State
		switch v.State {
		case string(countersign.StateFailed):
			state = "FAILED"
		case string(countersign.StateVoid):
			state = "VOID"
		}
		if v.FailureReason != "" {
			state += " (" + v.FailureReason + ")"
		}
		if v.RejectedBy != "" && shared(v) {
			state += " by " + v.RejectedBy
		}
		locked := "no"
		switch {
		case v.State != string(countersign.StateOpen):
			locked = "-"
		case v.Locked:
			locked = "yes"
		}
		if !withShared {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(v.ID), clean(v.Kind), clean(state), clean(v.Preparer),
				clean(v.Project), clean(v.ExpiresAt), locked)
			continue
		}
		owner, approvals := "you", "-"
		if v.Role == client.RoleApprover {
			owner = clean(v.Owner)
		}
		if shared(v) {
			approvals = approvalsCount(v.Approvals)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(v.ID), clean(v.Kind), clean(state), clean(v.Preparer),
			owner, clean(v.Project), clean(v.ExpiresAt), locked, approvals)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.More {
		flagClosed := ""
		if *closed {
			flagClosed = " --closed"
		}
		fmt.Fprintf(a.stdout, "more: countersign inbox list%s --before %s\n", flagClosed, clean(page.Tasks[len(page.Tasks)-1].ID))
	}
	return nil
}

// openTask fetches a waiting task and opens it on this device. A task that
// is not waiting is returned without being opened (nil).
func (t *terminal) openTask(ctx context.Context, d *device.Device, id string) (client.TaskView, *device.Opened, error) {
	v, err := t.client.Task(ctx, id)
	if err != nil {
		return v, nil, t.explain(err)
	}
	if v.State != string(countersign.StateOpen) || v.Content == nil {
		return v, nil, nil
	}
	if v.Locked {
		return v, nil, fmt.Errorf("task %s is locked on this device (it holds no copy of its key): run `countersign inbox unlock`, then try again", clean(id))
	}
	o, err := d.Open(v)
	if err != nil {
		return v, nil, err
	}
	return v, o, nil
}

// textShape is the shape the answer operation of an opened task declares
// of the text the owner supplies, as the service's catalogue shows it for
// the build that made the task; nil when the task takes no text, the
// operation declares none, or the catalogue cannot tell (it cannot be
// fetched, no longer lists that build, or its shape does not compile
// here): the answer run still judges whatever text it gets.
func (t *terminal) textShape(ctx context.Context, e countersign.Envelope) *argschema.TextShape {
	if e.AnswerBy == nil || e.AnswerBy.Supplies != countersign.SuppliesText {
		return nil
	}
	cs, err := t.client.Connectors(ctx)
	if err != nil {
		return nil
	}
	for _, c := range cs {
		if c.Build != e.Build {
			continue
		}
		for _, op := range c.Operations {
			if op.Name == e.AnswerBy.Operation && op.Kind == string(connectors.Answer) && op.SuppliedText != nil {
				shape, err := argschema.CompileTextShape(op.Name, op.SuppliedText)
				if err != nil {
					return nil
				}
				return shape
			}
		}
	}
	return nil
}

// notWaiting is the refusal for a task that shows nothing any more.
func notWaiting(v client.TaskView) error {
	return fmt.Errorf("task %s is %s and shows nothing any more", clean(v.ID), clean(v.State))
}

// receipt checks the proof of origin of an opened task against the run
// keys pinned at login. It returns the preparing run when the receipt
// verifies, or why not as a verdict; err is for a failure to ask the
// service at all.
// openVerified opens a waiting task to act on it (verb: "approve",
// "allow") and verifies its receipt, refusing a task that is not open or
// whose receipt does not verify: refusing is "refusing to {refusing}: its
// receipt is NOT VERIFIED", with tail (" (nothing was signed)") after
// each refusal's sentence. It returns the task as the service listed it,
// as this device opened it, and the run that made it.
func (t *terminal) openVerified(ctx context.Context, d *device.Device, id, verb, refusing, tail string) (client.TaskView, *device.Opened, string, error) {
	v, o, err := t.openTask(ctx, d, id)
	if err != nil {
		return v, nil, "", err
	}
	if o == nil {
		return v, nil, "", fmt.Errorf("task %s is %s: there is nothing to %s%s", clean(v.ID), clean(v.State), verb, tail)
	}
	run, why, err := t.receipt(ctx, o)
	if err != nil {
		return v, nil, "", err
	}
	if why != "" {
		return v, nil, "", fmt.Errorf("refusing to "+refusing+": its receipt is NOT VERIFIED: %s%s", id, why, tail)
	}
	return v, o, run, nil
}

func (t *terminal) receipt(ctx context.Context, o *device.Opened) (run string, notVerified string, err error) {
	e := o.Envelope
	org, err := t.client.Origin(ctx, e.ID)
	if err != nil {
		if client.Reason(err) == "task_not_found" {
			return "", "the service has no proof of origin for the task", nil
		}
		return "", "", t.explain(err)
	}
	why := verifyReceipt(t.sess.RunKeys, org.Receipt, o)
	if why != "" {
		return "", why, nil
	}
	run, _ = preparingRun(e.ID)
	return run, "", nil
}

// verifyReceipt says why a receipt does not prove that the service's run
// made the opened task, or "" when it does.
func verifyReceipt(pinned map[string]string, raw json.RawMessage, o *device.Opened) string {
	e := o.Envelope
	run, ok := preparingRun(e.ID)
	if !ok {
		return "the task id does not name the run that prepared it"
	}
	keys, err := pinnedKeys(pinned)
	if err != nil {
		return "no run keys were pinned at login: log in again"
	}
	var signed origin.Signed
	if json.Unmarshal(raw, &signed) == nil && signed.Signature != "" {
		if _, ok := keys[signed.KeyID]; !ok {
			return fmt.Sprintf("the receipt is signed with run key %d, which was not pinned at login (log in again if the service has a new key)", signed.KeyID)
		}
	}
	// The input is keyed under the task's receipt key (SPEC §11): the
	// device recomputes it over the raw request it decrypted.
	task := origin.Task{ID: e.ID, Hash: o.TaskHash, Owner: e.Owner, Preparer: e.Preparer, Build: e.Build, Run: run,
		Input: o.ReceiptInputMatches}
	if err := keys.Verify(raw, task); err != nil {
		return strings.TrimPrefix(err.Error(), "origin: ")
	}
	return ""
}

// preparingRun is the run a task id names: <run id>-<n>.
func preparingRun(id string) (string, bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || !countersign.ValidRunID(id[:i]) {
		return "", false
	}
	n := id[i+1:]
	if n == "" || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
		return "", false
	}
	return id[:i], true
}

// verdict words a receipt check for the owner.
func verdict(run, notVerified string) string {
	if notVerified != "" {
		return "NOT VERIFIED: " + notVerified
	}
	return "verified (run " + run + ")"
}

func inboxShow(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("show")
	raw := fset.Bool("raw", false, "print the envelope's exact bytes (no newline: pipe them to sha256sum to see the task hash)")
	request := fset.Bool("request", false, "print the agent's call body that prepared the task")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	id, err := taskArg(pos, "countersign inbox show ID [--raw | --request]")
	if err != nil {
		return err
	}
	if *raw && *request {
		return errors.New("--raw or --request, not both")
	}
	t, d, err := a.terminalDevice(dirOf(), false, false)
	if err != nil {
		return err
	}
	v, o, err := t.openTask(ctx, d, id)
	if err != nil {
		return err
	}
	if o == nil {
		if *raw || *request {
			return notWaiting(v)
		}
		writeClosed(a.stdout, v, t.account)
		return nil
	}
	switch {
	case *raw:
		_, err := a.stdout.Write(o.EnvelopeBytes)
		return err
	case *request:
		_, err := fmt.Fprintln(a.stdout, clean(string(o.Request)))
		return err
	}
	run, why, err := t.receipt(ctx, o)
	if err != nil {
		return err
	}
	p := preview{Envelope: o.Envelope, TaskHash: o.TaskHash, State: v.State, Receipt: verdict(run, why), Now: time.Now(),
		Role: v.Role, Approvals: v.Approvals, Me: t.account}
	if shape := t.textShape(ctx, o.Envelope); shape != nil {
		p.Expected = shape.Description()
	}
	p.write(a.stdout)
	return nil
}

// writeClosed prints what is left of a task that left open: its outcome,
// and for a shared task who approved it or who rejected it. me is this
// terminal's account.
func writeClosed(w io.Writer, v client.TaskView, me string) {
	fmt.Fprintf(w, "task: %s (%s, %s)\n", clean(v.ID), clean(v.Kind), clean(v.State))
	fmt.Fprintf(w, "from: %s in project %s (%s)\n", clean(v.Preparer), clean(v.Project), clean(v.Connector))
	writeShared(w, v.Owner, v.Role, v.Approvals, me, false)
	if v.RejectedBy != "" && (shared(v) || v.Role == client.RoleApprover) {
		fmt.Fprintf(w, "rejected by: %s\n", whoText(v.RejectedBy, v.Owner, me))
	}
	if v.Run != "" {
		fmt.Fprintf(w, "run: %s\n", clean(v.Run))
	}
	switch v.State {
	case string(countersign.StateFailed):
		// A failure after the owner's approval is said loudly.
		fmt.Fprintf(w, "FAILED (%s): %s\n", clean(v.FailureReason), clean(device.Ending(v.State, v.FailureReason)))
		fmt.Fprintf(w, "countersign inbox activity says what happened\n")
	case string(countersign.StateVoid):
		fmt.Fprintln(w, "NOT CARRIED OUT (void): nothing was written; countersign inbox activity says why")
	}
	fmt.Fprintln(w, "It is no longer waiting and shows nothing any more: a task that leaves open loses its content.")
}

func inboxApprove(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("approve")
	text := fset.String("text", "", "the answer, as text (a task that takes text or a file)")
	file := fset.String("file", "", "the answer, read from this file")
	note := fset.String("note", "", "a note for the agent, sealed to the task")
	hash := fset.String("hash", "", "approve only if the task's hash is this one (as show printed it)")
	external := fset.Bool("external", false, "sign with a wallet elsewhere: print the sentence, read its JSON answer on standard input")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		for _, f := range []string{"text", "file", "note", "hash"} {
			if isSet(fset, f) {
				return fmt.Errorf("--%s approves one task: approve several only as they are (yes or no, nothing supplied)", f)
			}
		}
		return approveMany(ctx, a, dirOf(), pos, *external)
	}
	id, err := taskArg(pos, "countersign inbox approve ID [ID …] [--text T | --file F] [--note N] [--hash H] [--external]")
	if err != nil {
		return err
	}
	hasText, hasFile := isSet(fset, "text"), isSet(fset, "file")
	if hasText && hasFile {
		return errors.New("--text or --file, not both")
	}
	var supplied []byte
	switch {
	case hasText:
		supplied = []byte(*text)
	case hasFile:
		if supplied, err = readAnswerFile(*file); err != nil {
			return err
		}
	}
	t, d, err := a.terminalDevice(dirOf(), true, *external)
	if err != nil {
		return err
	}
	v, o, run, err := t.openVerified(ctx, d, id, "approve", "approve task %s", "")
	if err != nil {
		return err
	}
	if why := refuseSharedApproval(v, t.account, isSet(fset, "note")); why != "" {
		return errors.New(why + "; nothing was signed")
	}
	ab := o.Envelope.AnswerBy
	switch {
	case *hash != "" && *hash != o.TaskHash:
		return fmt.Errorf("task %s has the hash %s, not %s: show it again", id, o.TaskHash, clean(*hash))
	case ab == nil:
		return fmt.Errorf("task %s is a notice and asks nothing: countersign inbox ack %s", id, id)
	case ab.Supplies != countersign.SuppliesNone && supplied == nil:
		return fmt.Errorf("task %s needs a %s answer: --text T or --file F", id, ab.Supplies)
	case ab.Supplies == countersign.SuppliesNone && supplied != nil:
		return fmt.Errorf("task %s asks yes or no and takes no answer: approve it without --text or --file", id)
	}
	// The text is held to the shape the connector declares before the
	// wallet is asked: the service cannot read it (it is sealed to the
	// task's reply key), and the answer run would refuse it only after a
	// signature.
	if shape := t.textShape(ctx, o.Envelope); shape != nil && supplied != nil {
		if err := shape.Check(supplied); err != nil {
			return fmt.Errorf("the answer does not fit task %s: expected %s; nothing was signed, and the task still waits", id, clean(shape.Description()))
		}
	}
	summary := o.Envelope.Display.Summary
	if *external || t.sess.Wallet == "" {
		// The wallet is elsewhere: say what its sentence approves before
		// asking for it.
		fmt.Fprintf(a.stderr, "Approving task %s: %s\n", id, clean(first(summary, o.Envelope.Display.Title)))
	}
	st, err := d.Approve(ctx, o, supplied, *note)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "approved task %s (%s), prepared by run %s\n", id, clean(o.Envelope.Display.Title), run)
	if summary != "" {
		fmt.Fprintf(a.stdout, "you approved: %s\n", clean(summary))
	}
	if st.Approvals != nil {
		// One of several accounts' approvals: the task moves once enough
		// have approved.
		sharedApproved(a.stdout, st, o.Envelope.Preparer)
		return nil
	}
	fmt.Fprintf(a.stdout, "run: %s\n", clean(st.Run))
	fmt.Fprintln(a.stdout, "how it ends: countersign inbox activity (or watch); a failure is printed as FAILED")
	return nil
}

// readAnswerFile reads an answer file, refusing one larger than an answer
// can be.
func readAnswerFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, countersign.MaxSuppliedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--file: %v", err)
	}
	if len(b) > countersign.MaxSuppliedBytes {
		return nil, fmt.Errorf("--file: %s is larger than an answer may be (%d bytes sealed)", path, countersign.MaxSuppliedBytes)
	}
	return b, nil
}

func inboxReject(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("reject")
	reason := fset.String("reason", "", "why, for the agent (sealed to the task)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	id, err := taskArg(pos, "countersign inbox reject ID [--reason R]")
	if err != nil {
		return err
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	var sealed []byte
	if *reason != "" {
		d, err := t.device(a, false, false)
		if err != nil {
			return err
		}
		v, o, err := t.openTask(ctx, d, id)
		if err != nil {
			return err
		}
		if o == nil {
			return notWaiting(v)
		}
		if sealed, err = device.SealRejection(o, *reason); err != nil {
			return err
		}
	}
	st, err := t.client.Reject(ctx, id, sealed)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "task %s: %s\n", id, clean(st.State))
	return nil
}

// simpleTask runs a move of a task that needs no device: ack and cancel.
func simpleTask(ctx context.Context, a *app, args []string, name string, move func(*client.Client, context.Context, string) (client.TaskState, error)) error {
	fset, dirOf := a.inboxFlags(name)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	id, err := taskArg(pos, "countersign inbox "+name+" ID")
	if err != nil {
		return err
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	st, err := move(t.client, ctx, id)
	if err != nil {
		return t.explain(t.onlyTheOwner(ctx, id, name, err))
	}
	fmt.Fprintf(a.stdout, "task %s: %s\n", id, clean(st.State))
	return nil
}

func inboxAck(ctx context.Context, a *app, args []string) error {
	return simpleTask(ctx, a, args, "ack", (*client.Client).Acknowledge)
}

func inboxCancel(ctx context.Context, a *app, args []string) error {
	return simpleTask(ctx, a, args, "cancel", (*client.Client).Cancel)
}

func inboxUnlock(ctx context.Context, a *app, args []string) error {
	t, err := a.terminalWithoutArgs("unlock", args)
	if err != nil {
		return err
	}
	n, err := t.client.Unlock(ctx)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "%d waiting task(s), now readable on every signed-in device of %s\n", n, t.account)
	return nil
}

// sharedEvent is what watch adds to the event of a task several accounts
// approve, or of another owner's task this account approves: its owner
// and project and how far its approvals are (an event of an open task
// is often an approval), or who rejected it; "" for any other task, or
// when the task cannot be read now. plain holds the tasks found to be
// neither, which stay so: they are not fetched again.
func (t *terminal) sharedEvent(ctx context.Context, ev client.TaskEvent, plain map[string]bool) string {
	if ev.State == string(countersign.StateFailed) || ev.State == string(countersign.StateVoid) || plain[ev.TaskID] {
		return ""
	}
	v, err := t.client.Task(ctx, ev.TaskID)
	if err != nil {
		return ""
	}
	if !shared(v) && v.Role != client.RoleApprover {
		if len(plain) >= 10_000 {
			clear(plain)
		}
		plain[ev.TaskID] = true
		return ""
	}
	owner := "yours"
	if v.Role == client.RoleApprover {
		owner = "of " + clean(v.Owner)
	}
	out := fmt.Sprintf(" (project %s %s", clean(v.Project), owner)
	if shared(v) {
		out += ": approvals " + approvalsCount(v.Approvals)
	}
	if ev.State == string(countersign.StateRejected) && v.RejectedBy != "" {
		out += "; rejected by " + whoText(v.RejectedBy, v.Owner, t.account)
	}
	return out + ")"
}

// Reconnection delays of watch.
const (
	watchRetryMin = time.Second
	watchRetryMax = 30 * time.Second
)

func inboxWatch(ctx context.Context, a *app, args []string) error {
	t, err := a.terminalWithoutArgs("watch", args)
	if err != nil {
		return err
	}
	delay := watchRetryMin
	connected := false
	plain := map[string]bool{}
	for {
		events, err := t.client.Events(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			var ce *client.Error
			if errors.As(err, &ce) && ce.Terminal {
				return t.explain(err)
			}
			fmt.Fprintf(a.stderr, "watch: %s; trying again in %s\n", oneLine(t.explain(err)), delay)
		default:
			if !connected {
				fmt.Fprintf(a.stderr, "watching the inbox of %s (Ctrl-C stops)\n", t.account)
			} else {
				fmt.Fprintln(a.stderr, "watch: connected again; events may have been missed: countersign inbox list")
			}
			connected, delay = true, watchRetryMin
			for ev := range events {
				switch ev.State {
				case string(countersign.StateFailed):
					// A failure after the owner's approval is said loudly.
					fmt.Fprintf(a.stdout, "%s %s FAILED (countersign inbox activity says what happened)\n", time.Now().UTC().Format(countersign.TimeFormat), clean(ev.TaskID))
					continue
				case string(countersign.StateVoid):
					// So is an approved task that was not carried out.
					fmt.Fprintf(a.stdout, "%s %s VOID, not carried out (countersign inbox activity says why)\n", time.Now().UTC().Format(countersign.TimeFormat), clean(ev.TaskID))
					continue
				}
				fmt.Fprintf(a.stdout, "%s %s %s%s\n", time.Now().UTC().Format(countersign.TimeFormat), clean(ev.TaskID), clean(ev.State), t.sharedEvent(ctx, ev, plain))
			}
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintf(a.stderr, "watch: the event stream ended; connecting again in %s\n", delay)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, watchRetryMax)
	}
}
