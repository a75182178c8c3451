package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"countersign"
	"countersign/approval"
	"countersign/client"
)

func inboxDevices(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("devices")
	external := fset.Bool("external", false, "withdraw: sign with a wallet elsewhere")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	const usage = "usage: countersign inbox devices | devices withdraw ID [--external]"
	switch {
	case len(pos) == 0:
	case len(pos) == 2 && pos[0] == "withdraw":
		return withdrawDevice(ctx, a, dirOf(), pos[1], *external)
	default:
		return errors.New(usage)
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	devs, err := t.client.Devices(ctx)
	if err != nil {
		return t.explain(err)
	}
	tw := a.table("\tID\tSIGNED IN\tVALID UNTIL\tWALLET KEY")
	for _, d := range devs {
		this := ""
		if d.This {
			this = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", this, clean(d.ID), clean(d.CreatedAt), clean(d.ValidUntil), clean(d.SignerPubkey))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "(* this terminal)")
	return nil
}

func withdrawDevice(ctx context.Context, a *app, dir, id string, external bool) error {
	t, err := openTerminal(dir)
	if err != nil {
		return err
	}
	action := approval.ActionWithdrawDevice(id)
	if _, err := action.Text(); err != nil {
		return fmt.Errorf("%q is not a device id", clean(id))
	}
	d, err := t.device(a, true, external)
	if err != nil {
		return err
	}
	conf, err := d.Confirm(action)
	if err != nil {
		return err
	}
	if err := t.client.WithdrawDevice(ctx, id, conf); err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "device %s withdrawn\n", id)
	if id == t.sess.DeviceID {
		if err := os.Remove(filepath.Join(dir, sessionFile)); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, "it was this terminal's device: this terminal is signed out")
	}
	return nil
}

// muteArgs checks `agent|project SUBJECT`.
func muteArgs(pos []string, usage string) (string, string, error) {
	if len(pos) != 2 || (pos[0] != client.SubjectAgent && pos[0] != client.SubjectProject) {
		return "", "", errors.New("usage: " + usage)
	}
	if pos[0] == client.SubjectAgent && approval.ValidateAccountID(pos[1]) != nil {
		return "", "", fmt.Errorf("%q is not an agent's NEAR account id", clean(pos[1]))
	}
	if pos[0] == client.SubjectProject && !countersign.ValidProjectName(pos[1]) {
		return "", "", fmt.Errorf("%q is not a project name", clean(pos[1]))
	}
	return pos[0], pos[1], nil
}

func inboxMute(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("mute")
	deleteWaiting := fset.Bool("delete-waiting", false, "also cancel its waiting tasks")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	subjectIs, subject, err := muteArgs(pos, "countersign inbox mute agent|project SUBJECT [--delete-waiting]")
	if err != nil {
		return err
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	n, err := t.client.Mute(ctx, subjectIs, subject, *deleteWaiting)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "muted %s %s: its new tasks are refused", subjectIs, subject)
	if *deleteWaiting {
		fmt.Fprintf(a.stdout, "; %d waiting task(s) cancelled", n)
	}
	fmt.Fprintln(a.stdout)
	return nil
}

func inboxUnmute(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("unmute")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	subjectIs, subject, err := muteArgs(pos, "countersign inbox unmute agent|project SUBJECT")
	if err != nil {
		return err
	}
	t, err := openTerminal(dirOf())
	if err != nil {
		return err
	}
	n, err := t.client.Unmute(ctx, subjectIs, subject)
	if err != nil {
		return t.explain(err)
	}
	if n == 0 {
		fmt.Fprintf(a.stdout, "%s %s was not muted\n", subjectIs, subject)
		return nil
	}
	fmt.Fprintf(a.stdout, "unmuted %s %s\n", subjectIs, subject)
	return nil
}

func inboxMutes(ctx context.Context, a *app, args []string) error {
	t, err := a.terminalWithoutArgs("mutes", args)
	if err != nil {
		return err
	}
	mutes, err := t.client.Mutes(ctx)
	if err != nil {
		return t.explain(err)
	}
	if len(mutes) == 0 {
		fmt.Fprintln(a.stdout, "nothing is muted")
		return nil
	}
	tw := a.table("MUTED\tSUBJECT\tSINCE")
	for _, m := range mutes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", clean(m.SubjectIs), clean(m.Subject), clean(m.CreatedAt))
	}
	return tw.Flush()
}

func inboxProjects(ctx context.Context, a *app, args []string) error {
	const usage = "usage: countersign inbox projects list | projects put NAME --connector C --policy FILE [--credentials FILE] --agent A… | projects approvers NAME [ACCOUNT …] [--threshold K] | projects rm NAME"
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "list":
		return projectsList(ctx, a, args[1:])
	case "put":
		return projectsPut(ctx, a, args[1:])
	case "approvers":
		return projectsApprovers(ctx, a, args[1:])
	case "rm":
		return projectsRemove(ctx, a, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(a.stderr, usage)
		return nil
	}
	return errors.New(usage)
}

func projectsList(ctx context.Context, a *app, args []string) error {
	t, err := a.terminalWithoutArgs("projects list", args)
	if err != nil {
		return err
	}
	projects, err := t.client.Projects(ctx)
	if err != nil {
		return t.explain(err)
	}
	if len(projects) == 0 {
		fmt.Fprintln(a.stdout, "no projects")
		return nil
	}
	tw := a.table("NAME\tCONNECTOR\tAGENTS\tCREDENTIALS\tUPDATED\tPOLICY")
	for _, p := range projects {
		agents := make([]string, len(p.Agents))
		for i, ag := range p.Agents {
			agents[i] = clean(ag)
		}
		creds := "no"
		if p.Credentials {
			creds = "yes"
		}
		mode := clean(p.PolicyMode)
		if p.PolicySentence != "" {
			mode += ": " + clean(p.PolicySentence)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(p.Name), clean(p.Connector), first(strings.Join(agents, ","), "-"),
			creds, clean(p.UpdatedAt), mode)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// What each policy does, in the words of the code that decides.
	for _, p := range projects {
		fmt.Fprintf(a.stdout, "\n%s:\n", clean(p.Name))
		for _, w := range p.PolicyExplained.Writes {
			fmt.Fprintf(a.stdout, "  %s\n", clean(w.Text))
		}
		for _, r := range p.PolicyExplained.Rules {
			fmt.Fprintf(a.stdout, "  %s\n", clean(r))
		}
		for _, l := range p.PolicyExplained.Limits {
			fmt.Fprintf(a.stdout, "  limit %s\n", clean(l))
		}
		if ap := p.PolicyExplained.Approvers; ap != nil {
			fmt.Fprintf(a.stdout, "  approvers: %s\n", clean(ap.Text))
		}
	}
	return nil
}

// maxCredentialsBytes bounds a credentials file.
const maxCredentialsBytes = 64 << 10

// projectText builds the exact text an owner signs and sends to set a
// project: the JSON of {connector, policy, credentials?, agents}, the
// policy and credentials as the JSON their files hold (compacted), with no
// HTML escaping.
func projectText(connector string, policy, credentials []byte, agents []string) (string, error) {
	if !json.Valid(policy) || !bytes.HasPrefix(bytes.TrimSpace(policy), []byte("{")) {
		return "", errors.New("--policy: the policy file must hold a JSON object")
	}
	if credentials != nil && !json.Valid(credentials) {
		return "", errors.New("--credentials: the credentials file must hold JSON")
	}
	if agents == nil {
		agents = []string{}
	}
	doc := struct {
		Connector   string          `json:"connector"`
		Policy      json.RawMessage `json:"policy"`
		Credentials json.RawMessage `json:"credentials,omitempty"`
		Agents      []string        `json:"agents"`
	}{connector, policy, credentials, agents}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// readSmallFile reads a file of at most max bytes.
func readSmallFile(flagName, path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flagName, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flagName, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %s is larger than %d bytes", flagName, path, max)
	}
	return b, nil
}

func projectsPut(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("projects put")
	conn := fset.String("connector", "", "the connector it installs")
	policyFile := fset.String("policy", "", "file holding the policy (a JSON object; {} asks about nothing)")
	credsFile := fset.String("credentials", "", "file holding the credentials (JSON; sealed at once, never shown again)")
	external := fset.Bool("external", false, "sign with a wallet elsewhere")
	var agents stringList
	fset.Var(&agents, "agent", "an agent the project is granted to (repeat for several)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	const usage = "usage: countersign inbox projects put NAME --connector C --policy FILE [--credentials FILE] --agent A…"
	switch {
	case len(pos) != 1:
		return errors.New(usage)
	case !countersign.ValidProjectName(pos[0]):
		return errors.New("a project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit")
	case *conn == "":
		return errors.New("--connector: the connector to install is needed")
	case *policyFile == "":
		return errors.New("--policy: a policy file is needed (a policy of {} asks about nothing)")
	}
	name := pos[0]
	for _, ag := range agents {
		if approval.ValidateAccountID(ag) != nil {
			return fmt.Errorf("--agent %q: a NEAR account id is needed", clean(ag))
		}
	}
	policy, err := readSmallFile("--policy", *policyFile, countersign.MaxPolicyBytes)
	if err != nil {
		return err
	}
	var creds []byte
	if *credsFile != "" {
		if creds, err = readSmallFile("--credentials", *credsFile, maxCredentialsBytes); err != nil {
			return err
		}
	}
	text, err := projectText(*conn, policy, creds, agents)
	if err != nil {
		return err
	}
	t, d, err := a.terminalDevice(dirOf(), true, *external)
	if err != nil {
		return err
	}
	conf, err := d.Confirm(approval.ActionSetProject(name, text))
	if err != nil {
		return err
	}
	p, err := t.client.PutProject(ctx, name, text, conf)
	if err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "project %s (%s, uuid %s): policy %s", clean(p.Name), clean(p.Connector), clean(p.ProjectUUID), clean(p.PolicyMode))
	if p.PolicySentence != "" {
		fmt.Fprintf(a.stdout, ": %s", clean(p.PolicySentence))
	}
	fmt.Fprintf(a.stdout, "; granted to %s\n", first(clean(strings.Join(p.Agents, ", ")), "no agent"))
	return nil
}

func projectsRemove(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("projects rm")
	external := fset.Bool("external", false, "sign with a wallet elsewhere")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || !countersign.ValidProjectName(pos[0]) {
		return errors.New("usage: countersign inbox projects rm NAME")
	}
	t, d, err := a.terminalDevice(dirOf(), true, *external)
	if err != nil {
		return err
	}
	conf, err := d.Confirm(approval.ActionRemoveProject(pos[0]))
	if err != nil {
		return err
	}
	if err := t.client.DeleteProject(ctx, pos[0], conf); err != nil {
		return t.explain(err)
	}
	fmt.Fprintf(a.stdout, "project %s removed\n", pos[0])
	return nil
}
