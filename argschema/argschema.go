// Package argschema compiles the JSON Schemas (2020-12) operations declare
// for their arguments and checks agents' calls against them, on the
// platform's side of the connector SDK: the SDK stays free of the validator,
// which the platform (the enclave, the connectortest harness) brings. It
// compiles the schemas of operations' results too (Operation.Result), and
// checks answers against them and against the platform's own answers
// (awaiting_owner, notified, a refusal): what the connectortest harness
// holds every answer a connector's tests get to. And it compiles the
// shapes answer operations declare of the text an owner supplies
// (Operation.SuppliedText), which the terminal inbox checks an answer
// against before the wallet is asked.
//
// A refusal is invalid_request with a sentence naming the member and why,
// never quoting the value sent (it may be anything the agent meant to keep
// to itself): "`max` is a whole number from 2 to 1000", "`task_id` is
// required", "the call has an unknown member `x`".
package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"countersign"
	"countersign/connectors"
)

// Schema is one operation's compiled argument schema.
type Schema struct {
	op       string
	raw      map[string]any // the schema as declared, for sentences
	compiled *jsonschema.Schema
}

// Compile compiles op's schema (2020-12 unless it names another draft)
// and checks its examples against it. A schema must be self-contained: it
// loads nothing from files or the network.
func Compile(connector string, op *connectors.Operation) (*Schema, error) {
	if err := op.CheckDeclaration(); err != nil {
		return nil, err
	}
	if op.Kind == connectors.Answer {
		return nil, fmt.Errorf("answer operation %s takes no arguments from agents", op.Name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(op.Schema))
	if err != nil {
		return nil, fmt.Errorf("operation %s: its schema is not JSON: %w", op.Name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "urn:countersign:" + connector + ":" + op.Name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("operation %s: its schema does not load: %w", op.Name, err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("operation %s: its schema does not compile: %w", op.Name, err)
	}
	raw, _ := doc.(map[string]any)
	s := &Schema{op: op.Name, raw: raw, compiled: compiled}
	for i, ex := range op.Examples {
		if err := s.CheckArgs(ex); err != nil {
			return nil, fmt.Errorf("operation %s: example %d does not fit its schema: %s", op.Name, i+1, countersign.ErrorMessage(err))
		}
	}
	return s, nil
}

// noLoader refuses every URL: schemas are self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas load nothing (%s)", url)
}

// Check validates an agent's call body (a JSON object with "operation")
// against the schema, the "operation" member aside.
func (s *Schema) Check(body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	}
	delete(obj, "operation")
	return s.check(obj)
}

// CheckArgs validates arguments alone (an object without "operation").
func (s *Schema) CheckArgs(args []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	}
	return s.check(v)
}

func (s *Schema) check(v any) error {
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return countersign.Errorf(countersign.InvalidRequest, "the call's arguments do not fit %s's schema", s.op)
	}
	return countersign.Errorf(countersign.InvalidRequest, "%s", s.sentence(leaf(ve)))
}

// leaf is the innermost error a reader can best act on: an unknown member
// first (it is often a misspelt one, which also leaves a required one
// missing), then a missing one, then the first other.
func leaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	rank := func(e *jsonschema.ValidationError) int {
		switch e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			return 0
		case *kind.Required:
			return 1
		}
		return 2
	}
	best := leaves[0]
	for _, l := range leaves[1:] {
		if rank(l) < rank(best) {
			best = l
		}
	}
	return best
}

// sentence words a validation error, naming the member, never its value.
func (s *Schema) sentence(ve *jsonschema.ValidationError) string {
	path := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		return member(append(path[:len(path):len(path)], k.Missing[0])) + " is required"
	case *kind.AdditionalProperties:
		name := k.Properties[0]
		if p, ok := s.foldMatch(path, name); ok {
			return "the call writes " + member(append(path[:len(path):len(path)], p)) + " in another case"
		}
		return "the call has an unknown member " + member(append(path[:len(path):len(path)], name))
	case *kind.FalseSchema:
		return "the call may not hold " + member(path)
	}
	if len(path) == 0 {
		return "the call is not a JSON object of " + s.op + "'s arguments"
	}
	if what := describe(s.at(path)); what != "" {
		return member(path) + " is " + what
	}
	return member(path) + " does not fit " + s.op + "'s schema"
}

// member names a member by its path, in backticks when every part of it is
// a plain name.
func member(path []string) string {
	if len(path) == 0 {
		return "the call"
	}
	for _, p := range path {
		if countersign.MemberName(p) == "a member" {
			return "a member"
		}
	}
	return "`" + strings.Join(path, ".") + "`"
}

// at is the declared schema of the member at path, when plain properties
// and items lead there.
func (s *Schema) at(path []string) map[string]any {
	cur := s.raw
	for _, p := range path {
		if props, ok := cur["properties"].(map[string]any); ok {
			if next, ok := props[p].(map[string]any); ok {
				cur = next
				continue
			}
		}
		if items, ok := cur["items"].(map[string]any); ok {
			cur = items
			continue
		}
		return nil
	}
	return cur
}

// foldMatch finds the declared property that name writes in another case.
func (s *Schema) foldMatch(path []string, name string) (string, bool) {
	obj := s.at(path)
	props, _ := obj["properties"].(map[string]any)
	for p := range props {
		if p != name && countersign.MemberKey(p) == countersign.MemberKey(name) {
			return p, true
		}
	}
	return "", false
}

// describe says in words what a schema accepts, from its simple keywords;
// "" when it cannot.
func describe(sch map[string]any) string {
	if sch == nil {
		return ""
	}
	if c, ok := sch["const"]; ok {
		return "exactly " + jsonText(c)
	}
	if e, ok := sch["enum"].([]any); ok && len(e) > 0 {
		vals := make([]string, len(e))
		for i, v := range e {
			vals[i] = jsonText(v)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	var types []string
	switch t := sch["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return ""
	}
	var words []string
	for _, t := range types {
		words = append(words, typeWords(t, sch))
	}
	return strings.Join(words, " or ")
}

func typeWords(t string, sch map[string]any) string {
	switch t {
	case "integer", "number":
		w := map[string]string{"integer": "a whole number", "number": "a number"}[t]
		lo, hasLo := number(sch["minimum"])
		hi, hasHi := number(sch["maximum"])
		xlo, hasXlo := number(sch["exclusiveMinimum"])
		xhi, hasXhi := number(sch["exclusiveMaximum"])
		switch {
		case hasLo && hasHi:
			w += " from " + lo + " to " + hi
		case hasLo:
			w += " of at least " + lo
		case hasHi:
			w += " of at most " + hi
		}
		if hasXlo {
			w += " above " + xlo
		}
		if hasXhi {
			w += " below " + xhi
		}
		return w
	case "string":
		w := "a string" + count(sch, "minLength", "maxLength", "characters")
		if p, ok := sch["pattern"].(string); ok {
			w += " matching " + p
		}
		return w
	case "boolean":
		return "true or false"
	case "array":
		w := "a list" + count(sch, "minItems", "maxItems", "items")
		if it, ok := sch["items"].(map[string]any); ok {
			if d := describe(it); d != "" {
				w += ", each " + d
			}
		}
		return w
	case "object":
		return "an object"
	case "null":
		return "null"
	}
	return t
}

// count words the bounds a schema sets on a length: " of 2 to 8 items".
func count(sch map[string]any, minKey, maxKey, unit string) string {
	lo, hasLo := number(sch[minKey])
	hi, hasHi := number(sch[maxKey])
	switch {
	case hasLo && hasHi:
		return " of " + lo + " to " + hi + " " + unit
	case hasLo:
		return " of at least " + lo + " " + unit
	case hasHi:
		return " of at most " + hi + " " + unit
	}
	return ""
}

// number renders a schema's numeric keyword.
func number(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(n.String()); ok {
			if r.IsInt() {
				return r.Num().String(), true
			}
			return r.FloatString(6), true
		}
	case float64:
		return fmt.Sprint(n), true
	}
	return "", false
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	return string(b)
}

// WithMember is an object's schema with one more member, required and
// listed first among the required: how a call's schema fixes "operation"
// and a task tool's names its project.
func WithMember(schema json.RawMessage, name string, member any) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, err
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[name] = member
	m["properties"] = props
	req, _ := m["required"].([]any)
	m["required"] = append([]any{name}, req...)
	return m, nil
}

// Set is the compiled schemas of a catalogue and of the task operations.
type Set struct {
	by      map[string]*Schema // "connector\x00operation"; "\x00operation" for task operations
	results map[string]*Result // the same keys; answer operations' too
}

func newSet() *Set { return &Set{by: map[string]*Schema{}, results: map[string]*Result{}} }

// NewSet compiles every read's and write's schema of every connector, and
// the task operations', every result schema declared and every answer
// operation's shape of supplied text (CompileTextShape).
func NewSet(cat connectors.Catalogue) (*Set, error) {
	s := newSet()
	for i := range connectors.PlatformOperations {
		op := &connectors.PlatformOperations[i]
		c, err := Compile("", op)
		if err != nil {
			return nil, fmt.Errorf("task operation: %w", err)
		}
		s.by["\x00"+op.Name] = c
		r, err := CompileResult("", op)
		if err == nil && r == nil {
			err = fmt.Errorf("operation %s declares no result schema", op.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("task operation: %w", err)
		}
		s.results["\x00"+op.Name] = r
	}
	names := cat.Names()
	sort.Strings(names)
	for _, n := range names {
		if err := s.add(cat[n]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Set) add(conn *connectors.Connector) error {
	for i := range conn.Operations {
		op := &conn.Operations[i]
		r, err := CompileResult(conn.Name, op)
		if err != nil {
			return fmt.Errorf("%s: %w", conn.Name, err)
		}
		if r != nil {
			s.results[conn.Name+"\x00"+op.Name] = r
		}
		if op.Kind == connectors.Answer {
			if op.SuppliedText != nil {
				if _, err := CompileTextShape(conn.Name+":"+op.Name, op.SuppliedText); err != nil {
					return fmt.Errorf("%s: answer operation %s: %w", conn.Name, op.Name, err)
				}
			}
			continue
		}
		c, err := Compile(conn.Name, op)
		if err != nil {
			return fmt.Errorf("%s: %w", conn.Name, err)
		}
		s.by[conn.Name+"\x00"+op.Name] = c
	}
	return nil
}

// CheckConnector compiles every schema a connector declares, its results'
// and its shapes of supplied text too, and checks their examples: what a
// connector's author runs in its tests (the connectortest harness does).
func CheckConnector(conn *connectors.Connector) error {
	if err := conn.Validate(); err != nil {
		return err
	}
	return newSet().add(conn)
}

// For is the schema of a connector's operation; connector "" names a task
// operation.
func (s *Set) For(connector, op string) (*Schema, bool) {
	c, ok := s.by[connector+"\x00"+op]
	return c, ok
}

// ResultFor is the result schema of a connector's operation, when it
// declares one; connector "" names a task operation.
func (s *Set) ResultFor(connector, op string) (*Result, bool) {
	r, ok := s.results[connector+"\x00"+op]
	return r, ok
}
