package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
	"countersign/agentmcp"
	"countersign/client"
)

func init() {
	commands["mcp"] = command{"as an agent: the service's connectors as MCP tools over stdio (--server URL, COUNTERSIGN_AGENT_KEY)", runMCP}
}

// runMCP serves MCP on standard input and output: each tool call is a call
// of the service at --server with the agent key.
func runMCP(ctx context.Context, a *app, args []string) error {
	fset, newClient := a.agentFlags("mcp")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("usage: countersign mcp [--server URL] [--key ak_…] (the key is better given as COUNTERSIGN_AGENT_KEY)")
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	// The catalogue is read once, at start; the grants before each list
	// and call, and every 10 seconds to announce a change.
	cat, err := c.Catalogue(ctx)
	if err != nil {
		return fmt.Errorf("read the service's catalogue at %s: %v", c.BaseURL, err)
	}
	door := &clientDoor{c: c}
	// Request ids count again from 1 in each process: this one's calls are
	// told apart from another's by a scope of its own.
	var scope [16]byte
	_, _ = rand.Read(scope[:])
	srv := agentmcp.New(agentmcp.Config{Door: door, Catalogue: catalogueOf(cat), Version: version,
		Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err := srv.Sync(ctx); err != nil {
		return fmt.Errorf("list the projects granted to this key: %v", err)
	}
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = srv.Sync(ctx)
			}
		}
	}()
	in := a.stdin
	if in == nil {
		in = os.Stdin
	}
	err = srv.MCP().Run(ctx, agentmcp.Stdio(in, a.stdout, hex.EncodeToString(scope[:]), mcp.DefaultMaxLineLength))
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// clientDoor is the agent API over HTTP.
type clientDoor struct{ c *client.Client }

// catalogueOf is what agents may call of the service's catalogue.
func catalogueOf(cat client.Catalogue) agentmcp.Catalogue {
	out := agentmcp.Catalogue{}
	for _, conn := range cat.Connectors {
		for _, o := range conn.Operations {
			if o.Kind == "answer" {
				continue
			}
			out[conn.Name] = append(out[conn.Name], agentmcp.Operation{Name: o.Name, Kind: o.Kind, Price: o.Price, Description: o.Description,
				Schema: o.Schema, Result: o.Result, Tasks: conn.Tasks})
		}
	}
	return out
}

func (d *clientDoor) Grants(ctx context.Context) ([]countersign.Grant, error) {
	gs, err := d.c.AgentProjects(ctx)
	if err != nil {
		return nil, refusalOf(err)
	}
	out := make([]countersign.Grant, len(gs))
	for i, g := range gs {
		out[i] = countersign.Grant{Owner: g.Owner, Project: g.Project, Connector: g.Connector}
	}
	return out, nil
}

func (d *clientDoor) Call(ctx context.Context, owner, project, idempotencyKey string, body []byte) ([]byte, error) {
	out, err := d.c.CallRaw(ctx, owner, project, body, &client.CallOptions{IdempotencyKey: idempotencyKey})
	var r *client.Refusal
	if errors.As(err, &r) {
		return out, nil // the refusal is the answer
	}
	if err != nil {
		return nil, refusalOf(err)
	}
	return out, nil
}

// refusalOf is a client's failure as the refusal a tool reports.
func refusalOf(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Reason != "" {
		return &countersign.Error{Code: countersign.Code(ce.Reason), Message: ce.Message}
	}
	return &countersign.Error{Code: countersign.TaskStoreUnavailable, Message: "the service cannot be reached; try again shortly"}
}
