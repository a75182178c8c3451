package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign/connectors"
)

// Result is one operation's compiled result schema.
type Result struct {
	name     string // "connector's operation", for messages
	taskOnly bool
	compiled *jsonschema.Schema
}

// CompileResult compiles op's result schema (2020-12 unless it names
// another draft); nil, nil when op declares none. A result schema refers
// to nothing ($ref, $dynamicRef, $id, $anchor): the OpenAPI document and
// the MCP tools' output schemas embed it where a reference would no longer
// lead where it led.
func CompileResult(connector string, op *connectors.Operation) (*Result, error) {
	if op.Result == nil {
		return nil, nil
	}
	if err := op.CheckDeclaration(); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(op.Result))
	if err != nil {
		return nil, fmt.Errorf("operation %s: its result schema is not JSON: %w", op.Name, err)
	}
	if kw := referring(doc); kw != "" {
		return nil, fmt.Errorf("operation %s: its result schema uses %s; it must refer to nothing, as it is embedded in other documents", op.Name, kw)
	}
	compiled, err := compile("urn:countersign:result:"+connector+":"+op.Name, doc)
	if err != nil {
		return nil, fmt.Errorf("operation %s: its result schema does not compile: %w", op.Name, err)
	}
	name := op.Name
	if connector != "" {
		name = connector + "'s " + op.Name
	}
	return &Result{name: name, taskOnly: connectors.IsTaskOnly(op.Result), compiled: compiled}, nil
}

// compile compiles one self-contained schema document.
func compile(url string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// referring names a keyword of a schema that refers elsewhere or names a
// place to be referred to, "" when there is none. Names of members
// (under properties and the like) are names, not keywords.
func referring(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			switch k {
			case "$ref", "$dynamicRef", "$id", "$anchor", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor":
				return k
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				if m, ok := sub.(map[string]any); ok {
					for _, s := range m {
						if kw := referring(s); kw != "" {
							return kw
						}
					}
				}
				continue
			}
			if kw := referring(sub); kw != "" {
				return kw
			}
		}
	case []any:
		for _, sub := range x {
			if kw := referring(sub); kw != "" {
				return kw
			}
		}
	}
	return ""
}

// TaskOnly tells whether the operation answers only by opening a task.
func (r *Result) TaskOnly() bool { return r.taskOnly }

// Check tells whether out, an operation's own output or an answer
// operation's reported result, fits the result schema. Its error says
// where and why, quoting the schema's words; it is for tests and logs.
func (r *Result) Check(out []byte) error {
	if r.taskOnly {
		return fmt.Errorf("%s answers only by opening a task, yet answered with an output of its own", r.name)
	}
	return check(r.compiled, r.name+"'s result", out)
}

func check(s *jsonschema.Schema, what string, out []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%s does not fit its schema: %s", what, detail(ve))
		}
		return fmt.Errorf("%s does not fit its schema: %w", what, err)
	}
	return nil
}

// detail words a validation failure as the validator does, on one line,
// without the schema's URL.
func detail(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	if len(lines) > 1 {
		lines = lines[1:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimLeft(strings.TrimSpace(l), "- ")
	}
	return strings.Join(lines, "; ")
}

// The platform's own answers, compiled once.
var platform = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for name, raw := range map[string]json.RawMessage{
		"awaiting_owner": connectors.AwaitingOwnerSchema,
		"notified":       connectors.NotifiedSchema,
		"refusal":        connectors.RefusalSchema,
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("the %s schema: %w", name, err)
		}
		if out[name], err = compile("urn:countersign:answer:"+name, doc); err != nil {
			return nil, fmt.Errorf("the %s schema: %w", name, err)
		}
	}
	return out, nil
})

// CheckTaskAnswer tells whether out is the platform's answer to a call
// that opened a task: awaiting_owner (notice false) or notified.
func CheckTaskAnswer(out []byte, notice bool) error {
	schemas, err := platform()
	if err != nil {
		return err
	}
	name := "awaiting_owner"
	if notice {
		name = "notified"
	}
	return check(schemas[name], "the "+name+" answer", out)
}

// CheckRefusal tells whether out is a refusal as agents read one,
// {"success": false, "error": "<code>: <sentence>"}.
func CheckRefusal(out []byte) error {
	schemas, err := platform()
	if err != nil {
		return err
	}
	return check(schemas["refusal"], "the refusal", out)
}
