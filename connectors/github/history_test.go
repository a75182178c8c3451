package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign"
	"countersign/connectors"
)

// history keeps what a connector's writes told the owner's history: the
// Did of each write carried out at once, and the Outcome of each approved
// write, in order.
type history struct {
	mu       sync.Mutex
	did      []connectors.Did
	outcomes []connectors.Outcome
}

func (h *history) lastDid() connectors.Did {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.did) == 0 {
		return connectors.Did{}
	}
	return h.did[len(h.did)-1]
}

func (h *history) lastOutcome() connectors.Outcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.outcomes) == 0 {
		return connectors.Outcome{}
	}
	return h.outcomes[len(h.outcomes)-1]
}

// checked has every operation of conn checked as it answers: what a read
// or a write answers without a task, and what an approved write reports,
// against the result schema the operation declares; a write carried out
// at once tells the owner's history what it did (Call.Did), one that
// opened a task or was refused tells nothing; an approved write reports
// an outcome. Every summary and outcome is one line of shown text, and an
// outcome's URL an absolute http(s) URL. What the writes told is kept in
// the history returned.
func checked(t *testing.T, conn *connectors.Connector) *history {
	t.Helper()
	hist := &history{}
	for i := range conn.Operations {
		op := &conn.Operations[i]
		if op.Result == nil {
			t.Fatalf("%s declares no result schema", op.Name)
		}
		c := jsonschema.NewCompiler()
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(op.Result))
		if err != nil {
			t.Fatalf("%s: %v", op.Name, err)
		}
		if err := c.AddResource("mem:///"+op.Name, doc); err != nil {
			t.Fatal(err)
		}
		schema, err := c.Compile("mem:///" + op.Name)
		if err != nil {
			t.Fatalf("%s's result schema: %v", op.Name, err)
		}
		fits := func(v any) {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Errorf("%s: %v", op.Name, err)
				return
			}
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err := schema.Validate(inst); err != nil {
				t.Errorf("%s answered %s, which its result schema refuses: %v", op.Name, raw, err)
			}
		}
		name, kind := op.Name, op.Kind
		if run := op.Run; run != nil {
			op.Run = func(ctx context.Context, c *connectors.Call) (any, error) {
				out, err := run(ctx, c)
				var m map[string]any
				if raw, _ := json.Marshal(out); err == nil {
					_ = json.Unmarshal(raw, &m)
				}
				done := c.Done()
				switch {
				case err == nil && m["status"] != nil:
					if done != nil {
						t.Errorf("%s opened a task and told the history it was done: %+v", name, done)
					}
				case err == nil:
					fits(out)
					if kind == connectors.Write {
						if done == nil {
							t.Errorf("%s was carried out at once and told the owner's history nothing", name)
							break
						}
						checkLine(t, name+"'s summary", done.Summary)
						checkOutcome(t, name, done.Outcome)
						hist.mu.Lock()
						hist.did = append(hist.did, *done)
						hist.mu.Unlock()
					}
				case done != nil:
					t.Errorf("%s was refused and told the history it was done: %+v", name, done)
				}
				return out, err
			}
		}
		if answer := op.Answer; answer != nil {
			op.Answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
				r, err := answer(ctx, a)
				if err == nil {
					fits(r.Result)
					checkOutcome(t, name, r.Outcome)
					hist.mu.Lock()
					hist.outcomes = append(hist.outcomes, r.Outcome)
					hist.mu.Unlock()
				}
				return r, err
			}
		}
	}
	return hist
}

func checkLine(t *testing.T, what, s string) {
	t.Helper()
	if err := countersign.ValidateSummary(s); err != nil {
		t.Errorf("%s %q: %v", what, s, err)
	}
}

func checkOutcome(t *testing.T, op string, o connectors.Outcome) {
	t.Helper()
	checkLine(t, op+"'s outcome", o.Text)
	// Every write shows where to see what it did.
	if u, err := url.Parse(o.URL); err != nil || !u.IsAbs() || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" || checkURI(o.URL) != nil {
		t.Errorf("%s's outcome %q has the URL %q", op, o.Text, o.URL)
	}
}
