package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"countersign"
)

// jsonKind is the JSON type of a value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// value is one JSON value, read without losing what encoding/json's
// Unmarshal hides: the order of an object's members, and their repetition.
// Repeated members are refused by the caller, which knows where the object
// stands in the policy and can say so.
type value struct {
	kind    jsonKind
	text    string // a string's contents, a number's literal text, true or false
	items   []value
	members []member
}

type member struct {
	name string
	val  value
}

// maxDepth bounds nesting. The deepest thing a policy holds is a rule's `op`
// list: policy → rules → rule → when → op, five levels; anything deeper is
// unreadable anyway, and the bound keeps reading flat and cheap.
const maxDepth = 5

// syntaxError says why bytes are not a policy's JSON; its sentence never
// quotes the input beyond a member's safe name.
type syntaxError struct{ sentence string }

func (e *syntaxError) Error() string { return e.sentence }

// readJSON reads exactly one JSON value from raw, refusing invalid JSON,
// trailing data and nesting deeper than maxDepth.
func readJSON(raw []byte) (value, error) {
	// Syntax first, with the standard library's own checker, which refuses
	// trailing data too; Unmarshal then finds the byte where it goes wrong.
	if !json.Valid(raw) {
		var skip json.RawMessage
		err := json.Unmarshal(raw, &skip)
		var se *json.SyntaxError
		switch {
		case len(bytes.Trim(raw, " \t\r\n")) == 0:
			return value{}, &syntaxError{"the policy is empty"}
		case errors.As(err, &se) && se.Offset < int64(len(raw)):
			// Offset counts the bytes read, the wrong one included: it
			// is the wrong byte's position counting from 1.
			return value{}, &syntaxError{fmt.Sprintf("the policy is not valid JSON (at byte %d)", se.Offset)}
		case errors.As(err, &se):
			return value{}, &syntaxError{"the policy is not valid JSON (it ends too soon)"}
		}
		return value{}, &syntaxError{"the policy is not valid JSON"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	r := reader{dec: dec}
	v, err := r.value(0)
	if err != nil {
		return value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return value{}, &syntaxError{"the policy holds more than one JSON value"}
	}
	return v, nil
}

type reader struct{ dec *json.Decoder }

func (r *reader) value(depth int) (value, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return value{}, &syntaxError{"the policy is not valid JSON"}
	}
	return r.from(tok, depth)
}

func (r *reader) from(tok json.Token, depth int) (value, error) {
	switch t := tok.(type) {
	case nil:
		return value{kind: jsonNull}, nil
	case bool:
		if t {
			return value{kind: jsonBool, text: "true"}, nil
		}
		return value{kind: jsonBool, text: "false"}, nil
	case json.Number:
		return value{kind: jsonNumber, text: string(t)}, nil
	case string:
		return value{kind: jsonString, text: t}, nil
	case json.Delim:
		if depth >= maxDepth {
			return value{}, &syntaxError{"the policy is nested too deeply"}
		}
		if t == '[' {
			return r.array(depth + 1)
		}
		if t == '{' {
			return r.object(depth + 1)
		}
	}
	return value{}, &syntaxError{"the policy is not valid JSON"}
}

func (r *reader) array(depth int) (value, error) {
	v := value{kind: jsonArray}
	for {
		tok, err := r.dec.Token()
		if err != nil {
			return value{}, &syntaxError{"the policy is not valid JSON"}
		}
		if tok == json.Delim(']') {
			return v, nil
		}
		item, err := r.from(tok, depth)
		if err != nil {
			return value{}, err
		}
		v.items = append(v.items, item)
	}
}

func (r *reader) object(depth int) (value, error) {
	v := value{kind: jsonObject}
	for {
		tok, err := r.dec.Token()
		if err != nil {
			return value{}, &syntaxError{"the policy is not valid JSON"}
		}
		if tok == json.Delim('}') {
			return v, nil
		}
		name, ok := tok.(string)
		if !ok {
			return value{}, &syntaxError{"the policy is not valid JSON"}
		}
		val, err := r.value(depth)
		if err != nil {
			return value{}, err
		}
		v.members = append(v.members, member{name: name, val: val})
	}
}

// repeated returns the name, as first written, of the first member an
// object names twice, by the service's one rule for JSON: two names are one
// when they are equal ignoring case (countersign.MemberKey, Unicode simple
// case folding). other says whether the two are spelled differently.
func (v *value) repeated() (name string, other, ok bool) {
	if len(v.members) < 2 {
		return "", false, false
	}
	seen := make(map[string]string, len(v.members))
	for _, m := range v.members {
		key := countersign.MemberKey(m.name)
		if first, dup := seen[key]; dup {
			return first, first != m.name, true
		}
		seen[key] = m.name
	}
	return "", false, false
}

// inAnotherCase returns the one of names that name spells in another case,
// or "" when it spells none of them.
func inAnotherCase(name string, names ...string) string {
	key := countersign.MemberKey(name)
	for _, n := range names {
		if n != name && countersign.MemberKey(n) == key {
			return n
		}
	}
	return ""
}
