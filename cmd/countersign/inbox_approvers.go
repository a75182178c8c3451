package main

// M-of-N approvers (SPEC §7, §13 `approvers`) in the terminal: an
// approver's view of the shared tasks of other owners (list, show, approve,
// reject, watch), and the owner's editor of a project's approvers and
// threshold (`projects approvers`).
//
// Choices where the contract is silent:
//
//   - A shared task's approvals are written "1 of 2": how many distinct
//     accounts approved it, of how many it needs (the owner counting as
//     one, the preparer never).
//   - approve refuses, before anything is signed, a shared task this
//     account approved already (the service would say 409 conflict), and a
//     --note, which a shared approval does not take.
//   - approve ID ID … approves each shared task alone, with a signature of
//     its own, and says so: the service refuses a batch holding one.
//   - `projects approvers NAME ACCOUNT… --threshold K` rewrites only the
//     `approvers` member of the project's policy as the service holds it
//     (every other member keeps its place and value), sends the project
//     with its agents and without credentials (which keeps them), and asks
//     the usual confirmation signature. Without accounts it takes
//     `approvers` out: the owner alone approves. Everything the service
//     would refuse about the list is refused here first, and nothing is
//     sent.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/inbox"
)

// shared reports whether a task needs the approvals of several accounts.
func shared(v client.TaskView) bool { return v.Approvals != nil }

// approvalsCount says how far a shared task is: "1 of 2", with ", you
// approved" once this account has.
func approvalsCount(a *client.Approvals) string {
	s := fmt.Sprintf("%d of %d", a.Have, a.Need)
	if a.Approved {
		s += ", you approved"
	}
	return s
}

// awaited lists the approvers of a shared task who have not approved it,
// leaving out its preparer (who never approves).
func awaited(a *client.Approvals, preparer string) []string {
	var out []string
	for _, acc := range a.Approvers {
		if acc == preparer || slices.ContainsFunc(a.By, func(b client.ApprovalBy) bool { return b.Account == acc }) {
			continue
		}
		out = append(out, acc)
	}
	return out
}

// whoText names an account for this terminal's account: "you" for itself,
// "(owner)" after the owner.
func whoText(acc, owner, me string) string {
	s := clean(acc)
	switch {
	case acc == me && acc == owner:
		s += " (you, the owner)"
	case acc == me:
		s += " (you)"
	case acc == owner:
		s += " (owner)"
	}
	return s
}

// writeShared prints what a task shows about its owner and approvers: the
// owner when it is another account's task this account approves, and for
// a shared task how many approved, who and when, and who may (and, while
// it waits, whether this account has yet).
func writeShared(w io.Writer, owner, role string, a *client.Approvals, me string, waiting bool) {
	if role == client.RoleApprover {
		if waiting {
			fmt.Fprintf(w, "owner: %s (its project names you among its approvers: you may approve or reject this task, with your own account)\n", clean(owner))
		} else {
			fmt.Fprintf(w, "owner: %s (its project names you among its approvers)\n", clean(owner))
		}
	}
	if a == nil {
		return
	}
	fmt.Fprintf(w, "approvals: %d of %d needed", a.Have, a.Need)
	if len(a.By) == 0 {
		fmt.Fprint(w, "; none yet")
	}
	for i, b := range a.By {
		sep := ", "
		if i == 0 {
			sep = "; approved by "
		}
		fmt.Fprintf(w, "%s%s at %s", sep, whoText(b.Account, owner, me), clean(b.At))
	}
	if waiting && !a.Approved && slices.Contains(a.Approvers, me) {
		fmt.Fprint(w, "; not yet by you")
	}
	fmt.Fprintln(w)
	who := make([]string, len(a.Approvers))
	for i, acc := range a.Approvers {
		who[i] = whoText(acc, owner, me)
	}
	fmt.Fprintf(w, "approvers: %s\n", strings.Join(who, ", "))
}

// sharedApproved prints the answer to an approval of a shared task: the
// approval recorded and what it still waits for, or the task approved and
// its run.
func sharedApproved(w io.Writer, st client.TaskState, preparer string) {
	a := st.Approvals
	if st.State == string(countersign.StateApproved) {
		fmt.Fprintf(w, "approvals: %d of %d: the task is approved\n", a.Have, a.Need)
		fmt.Fprintf(w, "run: %s\n", clean(st.Run))
		fmt.Fprintf(w, "how it ends: countersign inbox show %s (or watch); a failure is printed as FAILED\n", clean(st.ID))
		return
	}
	left := awaited(a, preparer)
	for i := range left {
		left[i] = clean(left[i])
	}
	fmt.Fprintf(w, "approvals: %d of %d: your approval is recorded; the task waits for %d more, of %s\n",
		a.Have, a.Need, a.Need-a.Have, strings.Join(left, ", "))
	fmt.Fprintln(w, "countersign inbox watch tells when it moves")
}

// refuseSharedApproval says why this account's approval of shared task v
// would be refused, before anything is signed; "" when it would not.
func refuseSharedApproval(v client.TaskView, me string, note bool) string {
	switch {
	case !shared(v):
		return ""
	case v.Approvals.Approved:
		return fmt.Sprintf("you approved task %s already (%d of %d needed); it waits for the other approvers", clean(v.ID), v.Approvals.Have, v.Approvals.Need)
	case v.Preparer == me:
		return fmt.Sprintf("task %s was prepared by %s, this account: the agent that prepared a task never approves it", clean(v.ID), clean(me))
	case note:
		return fmt.Sprintf("task %s needs the approvals of several accounts and takes no note: approve it without --note", clean(v.ID))
	}
	return ""
}

// onlyTheOwner words a task_not_found refusal of what only a task's owner
// does (cancel, ack) for a task this account sees as one of its approvers;
// any other error is left as it is.
func (t *terminal) onlyTheOwner(ctx context.Context, id, verb string, err error) error {
	if client.Reason(err) != "task_not_found" {
		return err
	}
	v, gerr := t.client.Task(ctx, id)
	if gerr != nil || v.Role != client.RoleApprover {
		return err
	}
	return fmt.Errorf("task %s is %s's: only its owner may %s it; as one of its approvers you may approve or reject it", clean(id), clean(v.Owner), verb)
}

// batchRefused words a refusal of a batch approval that names one of its
// tasks.
func batchRefused(err error, n int) error {
	var ce *client.Error
	if !errors.As(err, &ce) || ce.TaskID == "" {
		return nil
	}
	return fmt.Errorf("the service refused the %d tasks because of task %s (%s: %s); none of them was approved", n, clean(ce.TaskID), clean(ce.Reason), clean(ce.Message))
}

const approversUsage = "usage: countersign inbox projects approvers NAME [ACCOUNT …] [--threshold K] [--external]"

// projectsApprovers sets who approves a project's confirm tasks besides
// its owner, and how many distinct accounts must: the owner's editor of
// `approvers` (SPEC §13).
func projectsApprovers(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("projects approvers")
	threshold := fset.Int("threshold", 0, "how many distinct accounts, you counting as one, must approve (1 to 1 + the accounts)")
	external := fset.Bool("external", false, "sign with a wallet elsewhere")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New(approversUsage)
	}
	name, accounts := pos[0], pos[1:]
	if !countersign.ValidProjectName(name) {
		return errors.New("a project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit")
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	k := *threshold
	if len(accounts) == 0 {
		if isSet(fset, "threshold") && k != 1 {
			return fmt.Errorf("--threshold %d: with no other account you alone approve (threshold 1); nothing was sent", k)
		}
		k = 1
	} else if !isSet(fset, "threshold") {
		return fmt.Errorf("--threshold K is needed: how many of you and the %d account(s) must approve (1 to %d); nothing was sent", len(accounts), 1+len(accounts))
	}
	if why := checkApprovers(t.account, accounts, k); why != "" {
		return errors.New(why + "; nothing was sent")
	}
	projects, err := t.client.Projects(ctx)
	if err != nil {
		return t.explain(err)
	}
	i := slices.IndexFunc(projects, func(p client.Project) bool { return p.Name == name })
	if i < 0 {
		return fmt.Errorf("there is no project %s (countersign inbox projects list); nothing was sent", name)
	}
	p := projects[i]
	if cur := p.PolicyExplained.Approvers; cur != nil && slices.Equal(cur.Accounts, accounts) && cur.Threshold == k ||
		cur == nil && len(accounts) == 0 && !hasApprovers(p.Policy) {
		fmt.Fprintf(a.stdout, "project %s has these approvers already; nothing was sent\n", clean(name))
		return nil
	}
	policy, err := withApprovers([]byte(p.Policy), accounts, k)
	if err != nil {
		return fmt.Errorf("the policy of project %s cannot be read here (%v): set it whole with projects put", clean(name), err)
	}
	text, err := inbox.ProjectText(p.Connector, policy, p.Agents)
	if err != nil {
		return err
	}
	if len(accounts) == 0 {
		fmt.Fprintf(a.stdout, "project %s: you alone approve its writes that ask\n", clean(name))
	} else {
		who := make([]string, len(accounts))
		for i, acc := range accounts {
			who[i] = clean(acc)
		}
		fmt.Fprintf(a.stdout, "project %s: %s of you and %s approve its writes that ask\n", clean(name), thresholdWord(k, 1+len(accounts)), strings.Join(who, ", "))
	}
	fmt.Fprintf(a.stdout, "policy: %s\n", clean(string(policy)))
	d, err := t.device(a, true, *external)
	if err != nil {
		return err
	}
	conf, err := d.Confirm(approval.ActionSetProject(name, text))
	if err != nil {
		return err
	}
	saved, err := t.client.PutProject(ctx, name, text, conf)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "project %s: policy %s", clean(saved.Name), clean(saved.PolicyMode))
	if saved.PolicySentence != "" {
		fmt.Fprintf(a.stdout, ": %s", clean(saved.PolicySentence))
	}
	fmt.Fprintln(a.stdout)
	if ap := saved.PolicyExplained.Approvers; ap != nil {
		fmt.Fprintf(a.stdout, "%s\n", clean(ap.Text))
	}
	// The tasks waiting were opened under the policy before: as any change
	// of policy, this one leaves them to be void if approved.
	fmt.Fprintln(a.stdout, "a task of the project already waiting keeps the threshold it was opened with, and an approver taken off no longer sees it; approved, it is void (its policy changed) and its agent asks again")
	return nil
}

// checkApprovers says what is wrong with accounts as the approvers of a
// project of owner with threshold k, or "" when nothing is: at most
// countersign.MaxApprovers NEAR account ids, each once, never the owner;
// k from 1 to 1 + len(accounts).
func checkApprovers(owner string, accounts []string, k int) string {
	if len(accounts) > countersign.MaxApprovers {
		return fmt.Sprintf("%d accounts: a project names at most %d approvers besides you", len(accounts), countersign.MaxApprovers)
	}
	for i, acc := range accounts {
		switch {
		case approval.ValidateAccountID(acc) != nil:
			return fmt.Sprintf("%q is not a NEAR account id", clean(acc))
		case acc == owner:
			return fmt.Sprintf("%s is you, the owner, who approves already: name the other accounts", clean(acc))
		case slices.Contains(accounts[:i], acc):
			return fmt.Sprintf("%s is named twice", clean(acc))
		}
	}
	if k < 1 || k > 1+len(accounts) {
		return fmt.Sprintf("--threshold %d: from 1 to %d (you and %d account(s))", k, 1+len(accounts), len(accounts))
	}
	return ""
}

// hasApprovers reports whether a policy's text holds an `approvers`
// member at its top level.
func hasApprovers(policy string) bool {
	members, err := policyMembers([]byte(policy))
	return err == nil && slices.ContainsFunc(members, func(m policyMember) bool { return m.name == approversMember })
}

const approversMember = "approvers"

// policyMember is one member of a policy's top-level object: its name and
// its value's JSON, compacted.
type policyMember struct {
	name  string
	value []byte
}

// policyMembers reads the members of a policy's top-level object in their
// order.
func policyMembers(policy []byte) ([]policyMember, error) {
	dec := json.NewDecoder(bytes.NewReader(policy))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("the policy is not a JSON object")
	}
	var out []policyMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		out = append(out, policyMember{name, b.Bytes()})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("the policy's object does not end")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the policy has text after its object")
	}
	return out, nil
}

// withApprovers is policy with its `approvers` member set to accounts and
// threshold k, in the place it had (last when it had none), or taken out
// when accounts is empty; every other member keeps its place and value.
func withApprovers(policy []byte, accounts []string, k int) ([]byte, error) {
	members, err := policyMembers(policy)
	if err != nil {
		return nil, err
	}
	var value []byte
	if len(accounts) > 0 {
		v := struct {
			Accounts  []string `json:"accounts"`
			Threshold int      `json:"threshold"`
		}{accounts, k}
		if value, err = marshalNoEscape(v); err != nil {
			return nil, err
		}
	}
	var out []policyMember
	placed := false
	for _, m := range members {
		if m.name != approversMember {
			out = append(out, m)
			continue
		}
		if !placed && value != nil {
			out = append(out, policyMember{approversMember, value})
		}
		placed = true
	}
	if !placed && value != nil {
		out = append(out, policyMember{approversMember, value})
	}
	b := []byte{'{'}
	for i, m := range out {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := marshalNoEscape(m.name)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, name...), ':'), m.value...)
	}
	return append(b, '}'), nil
}

// marshalNoEscape is json.Marshal without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// thresholdWord is "each" when every listed account must approve, the
// number otherwise.
func thresholdWord(k, of int) string {
	if k == of {
		return "each"
	}
	return strconv.Itoa(k)
}
