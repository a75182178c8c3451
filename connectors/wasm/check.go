package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"countersign"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/policy"
)

// Finding is one line of a check: what was checked, whether it holds, and
// what was seen.
type Finding struct {
	What string
	OK   bool
	Note string
}

// Check checks the connector in dir as an author would before deploying
// it, and as the service will at start: the manifest reads and holds, the
// declared connector validates with every schema compiling and every
// example fitting its schema, the module compiles and serves exactly the
// manifest's operations; then a dry prepare of each read's and write's
// examples, with a policy asking about every write and no request leaving
// (http_do refuses): each answer must fit its declared result, each task
// must pass the platform's checks of what a task shows, and no run may
// fail of its own (internal_error: a trap, a limit overrun, an error of the
// module's). It returns the findings in order, and the loaded module when
// it loaded.
func (h *Host) Check(ctx context.Context, dir string) ([]Finding, *Module) {
	var out []Finding
	m, err := h.loadDir(ctx, dir)
	if err != nil {
		return append(out, Finding{What: "load", Note: err.Error()}), nil
	}
	man := m.Manifest
	var ops []string
	for _, op := range man.Operations {
		ops = append(ops, op.Name+" ("+op.Kind+")")
	}
	out = append(out,
		Finding{What: "manifest", OK: true, Note: fmt.Sprintf("%s %s, abi %d; schemas compile and examples fit", man.Name, man.Version, man.ABI)},
		Finding{What: "module", OK: true, Note: fmt.Sprintf("%s, %d bytes, compiled in %s; build %s", man.Module, m.Size, m.Compile.Round(time.Millisecond), m.Build)},
		Finding{What: "operations", OK: true, Note: "the module serves " + strings.Join(ops, ", ")},
	)
	if len(man.Egress.Hosts) > 0 {
		note := "reaches " + strings.Join(man.Egress.Hosts, ", ")
		if cr := man.Egress.Credentials; cr != nil {
			var how []string
			for _, name := range sortedKeys(cr.Header) {
				how = append(how, "header "+name)
			}
			for _, name := range sortedKeys(cr.Query) {
				how = append(how, "query "+name)
			}
			note += "; the project's credentials {" + strings.Join(cr.Members, ", ") + "} go in " + strings.Join(how, ", ")
		}
		out = append(out, Finding{What: "egress", OK: true, Note: note})
	}
	schemas, err := argschema.NewSet(connectors.Catalogue{m.Connector.Name: m.Connector})
	if err != nil {
		return append(out, Finding{What: "schemas", Note: err.Error()}), m
	}
	var writes []string
	for _, op := range m.Connector.Operations {
		if op.Kind == connectors.Write {
			writes = append(writes, op.Name)
		}
	}
	askAll, _ := json.Marshal(map[string][]string{"confirm": writes})
	pol := m.Connector.ParsePolicy(askAll)
	if len(writes) == 0 {
		pol = m.Connector.ParsePolicy([]byte(`{}`))
	}
	dry := *m
	dry.dry = true
	dryConn, _ := dry.connector()
	for _, op := range dryConn.Operations {
		if op.Kind == connectors.Answer {
			continue
		}
		for i, ex := range op.Examples {
			out = append(out, dry.prepare(ctx, &op, i, ex, pol, schemas))
		}
	}
	return out, m
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// prepare runs one example dry and says what it did.
func (m *Module) prepare(ctx context.Context, op *connectors.Operation, i int, ex json.RawMessage, pol *policy.Policy, schemas *argschema.Set) Finding {
	f := Finding{What: fmt.Sprintf("example %s #%d", op.Name, i+1)}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(ex, &args)
	args["operation"], _ = json.Marshal(op.Name)
	body, _ := json.Marshal(args)
	p := &dryPlatform{conn: m.Connector}
	call := &connectors.Call{Operation: op.Name, Args: body, Agent: "check.near", Owner: "author.near", Project: m.Manifest.Name,
		ProjectUUID: "00000000-0000-4000-8000-000000000000", Run: countersign.NewRunID(), Policy: pol, Now: time.Now(), Platform: p}
	v, err := op.Run(ctx, call)
	switch {
	case errors.Is(err, errModuleFailed):
		f.Note = "failed: the module reported an error of its own (the agent reads internal_error: internal error)"
		return f
	case err != nil && countersign.ErrorCode(err) == countersign.Internal:
		f.Note = "failed: " + string(countersign.Internal) + ": " + countersign.ErrorMessage(err)
		return f
	case err != nil:
		f.OK, f.Note = true, "refused "+string(countersign.ErrorCode(err))+": "+countersign.ErrorMessage(err)
		return f
	case p.err != nil:
		f.Note = "a task it opened is refused: " + string(countersign.ErrorCode(p.err)) + ": " + countersign.ErrorMessage(p.err)
		return f
	}
	raw, _ := v.(json.RawMessage)
	if len(p.opened) > 0 {
		var a struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(raw, &a)
		if a.Status == "awaiting_owner" || a.Status == "notified" {
			if err := argschema.CheckTaskAnswer(raw, a.Status == "notified"); err != nil {
				f.Note = "its answer does not fit: " + err.Error()
				return f
			}
			t := p.opened[0]
			f.OK, f.Note = true, fmt.Sprintf("%s: a %s task %q", a.Status, t.Kind, t.Display.Title)
			if t.Display.Summary != "" {
				f.Note += fmt.Sprintf(" (%s)", t.Display.Summary)
			}
			return f
		}
	}
	if r, ok := schemas.ResultFor(m.Connector.Name, op.Name); ok {
		if err := r.Check(raw); err != nil {
			f.Note = "its answer does not fit its result schema: " + err.Error()
			return f
		}
	}
	f.OK, f.Note = true, "answered "+clip(string(raw), 120)
	return f
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// dryPlatform opens tasks as the platform checks them, and keeps them.
type dryPlatform struct {
	conn   *connectors.Connector
	opened []connectors.TaskSpec
	err    error
}

func (p *dryPlatform) OpenTask(_ context.Context, spec connectors.TaskSpec, thread string) (connectors.Task, error) {
	err := p.conn.CanOpen(spec)
	if err == nil {
		_, err = spec.Check(len(p.opened))
	}
	if err == nil {
		err = countersign.ValidateDisplay(spec.Display)
	}
	if err == nil {
		files := make([]countersign.File, len(spec.Files))
		for i, f := range spec.Files {
			sum := sha256.Sum256(f.Data)
			files[i] = countersign.File{Name: f.Name, ContentType: f.ContentType, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f.Data))}
		}
		err = countersign.ValidateFiles(files)
	}
	if err != nil {
		p.err = err
		return connectors.Task{}, err
	}
	p.opened = append(p.opened, spec)
	id := fmt.Sprintf("check-%d", len(p.opened))
	return connectors.Task{ID: id, Kind: spec.Kind, Hash: strings.Repeat("0", 64), Thread: id,
		ExpiresAt: time.Now().Add(countersign.DefaultTaskLife).UTC().Truncate(time.Second), Link: "https://countersign.invalid/#/tasks/" + id}, nil
}

func (p *dryPlatform) Reserve(context.Context, policy.Kind, int) (bool, error) { return true, nil }

func (p *dryPlatform) Spend(context.Context, string, policy.Cents, policy.Cents) (bool, error) {
	return true, nil
}

func (p *dryPlatform) Unspend(context.Context, string) error { return nil }
