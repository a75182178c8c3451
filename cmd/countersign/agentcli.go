package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"countersign/client"
)

func init() {
	commands["call"] = command{"as an agent: call OWNER/PROJECT OPERATION [JSON]", runCall}
	commands["status"] = command{"as an agent: status --project OWNER/PROJECT TASK [--wait]", runStatus}
}

// agentFlags is a command's flag set with --server and --key; the function
// it returns makes the agent's client from them (or from COUNTERSIGN_SERVER
// and COUNTERSIGN_AGENT_KEY).
func (a *app) agentFlags(name string) (*flag.FlagSet, func() (*client.Client, error)) {
	fset := a.flags(name)
	server := fset.String("server", "", "the service's URL (COUNTERSIGN_SERVER, default http://127.0.0.1:8080)")
	key := fset.String("key", "", "the agent key (COUNTERSIGN_AGENT_KEY)")
	return fset, func() (*client.Client, error) {
		c := &client.Client{BaseURL: first(*server, a.getenv("COUNTERSIGN_SERVER"), "http://127.0.0.1:8080"), AgentKey: first(*key, a.getenv("COUNTERSIGN_AGENT_KEY"))}
		if c.AgentKey == "" {
			return nil, errors.New("an agent key is needed: --key or COUNTERSIGN_AGENT_KEY")
		}
		return c, nil
	}
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func splitProject(s string) (string, string, error) {
	owner, project, ok := strings.Cut(s, "/")
	if !ok || owner == "" || project == "" || strings.Contains(project, "/") {
		return "", "", fmt.Errorf("%q is not OWNER/PROJECT", s)
	}
	return owner, project, nil
}

func runCall(ctx context.Context, a *app, args []string) error {
	fset, newClient := a.agentFlags("call")
	idem := fset.String("idempotency-key", "", "send an Idempotency-Key: a retry with it returns the first answer")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return errors.New("usage: countersign call [--server URL] [--key ak_…] OWNER/PROJECT OPERATION [JSON]")
	}
	owner, project, err := splitProject(pos[0])
	if err != nil {
		return err
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	body := map[string]any{}
	if len(pos) == 3 {
		dec := json.NewDecoder(strings.NewReader(pos[2]))
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil {
			return fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
	}
	out, err := c.Call(ctx, owner, project, pos[1], body, &client.CallOptions{IdempotencyKey: *idem})
	var refusal *client.Refusal
	if err != nil && !errors.As(err, &refusal) {
		return err
	}
	printJSON(a, out)
	if refusal != nil {
		return exitError{1}
	}
	return nil
}

func runStatus(ctx context.Context, a *app, args []string) error {
	fset, newClient := a.agentFlags("status")
	projectFlag := fset.String("project", "", "OWNER/PROJECT the task belongs to (COUNTERSIGN_PROJECT)")
	wait := fset.Bool("wait", false, "wait up to 60 seconds for the task's state to change (a closed task answers at once)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: countersign status --project OWNER/PROJECT TASK [--wait]")
	}
	owner, project, err := splitProject(first(*projectFlag, a.getenv("COUNTERSIGN_PROJECT")))
	if err != nil {
		return fmt.Errorf("--project: %v", err)
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	seconds := 0
	if *wait {
		seconds = 60
	}
	st, err := c.Status(ctx, owner, project, pos[0], seconds)
	if err != nil {
		return err
	}
	out, _ := json.Marshal(st)
	printJSON(a, out)
	return nil
}

func printJSON(a *app, raw []byte) {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	fmt.Fprintln(a.stdout, b.String())
}
