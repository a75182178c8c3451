package servicetest

import (
	"context"
	"encoding/json"

	"countersign/connectors"
)

// Notes is a connector (WithConnector) whose writes are carried out at
// once, never asked: "note" tells the owner's history what it did
// (connectors.Call.Did) with the title, summary, outcome text and link its
// call names; "plain" tells nothing; "look" is a read. Each write counts
// one effect under its run's id.
func Notes(effects *Effects) *connectors.Connector {
	note := json.RawMessage(`{"type": "object", "properties": {"title": {"type": "string"}, "summary": {"type": "string"},
		"outcome": {"type": "string"}, "url": {"type": "string"}}, "additionalProperties": false}`)
	empty := json.RawMessage(`{"type": "object", "additionalProperties": false}`)
	return &connectors.Connector{Name: "notes", Version: "1.0.0", Operations: []connectors.Operation{
		{Name: "note", Kind: connectors.Write, Description: "Writes a note at once and tells the owner's history.", Schema: note,
			Run: func(_ context.Context, c *connectors.Call) (any, error) {
				var args struct {
					Title   string `json:"title"`
					Summary string `json:"summary"`
					Outcome string `json:"outcome"`
					URL     string `json:"url"`
				}
				if err := c.Decode(&args); err != nil {
					return nil, err
				}
				effects.Add(c.Run)
				c.Did(connectors.Did{Title: args.Title, Summary: args.Summary, Outcome: connectors.Outcome{Text: args.Outcome, URL: args.URL}})
				return map[string]any{"ok": true}, nil
			}},
		{Name: "plain", Kind: connectors.Write, Description: "Writes at once and tells nothing.", Schema: empty,
			Run: func(_ context.Context, c *connectors.Call) (any, error) {
				effects.Add(c.Run)
				return map[string]any{"ok": true}, nil
			}},
		{Name: "look", Kind: connectors.Read, Description: "Reads.", Schema: empty,
			Run: func(context.Context, *connectors.Call) (any, error) { return map[string]any{"ok": true}, nil }},
	}}
}
