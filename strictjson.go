package countersign

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// JSONProblem says what DecodeStrict found wrong with a JSON text.
type JSONProblem uint8

// What DecodeStrict refuses.
const (
	JSONMalformed JSONProblem = iota + 1 // not one valid JSON value (or empty)
	JSONNotObject                        // v takes an object and the text is another value
	JSONTrailing                         // more than one JSON value
	JSONRepeated                         // one object names a member twice, ignoring case
	JSONOtherCase                        // a member written in another case than v's own
	JSONUnknown                          // a member v has no place for
	JSONWrongType                        // a value v cannot hold
)

// JSONError is DecodeStrict's refusal. Member names the member concerned,
// safe to show: in backticks when it is a plain name (ASCII letters, digits,
// _ and -, at most 64), "a member" otherwise; for JSONOtherCase it is the
// name as v spells it. It is "" when no member is concerned.
type JSONError struct {
	Problem JSONProblem
	Member  string
}

// Sentence says what is wrong with what (such as "the body"), never quoting
// a value.
func (e *JSONError) Sentence(what string) string {
	switch e.Problem {
	case JSONNotObject:
		return what + " is not a JSON object"
	case JSONTrailing:
		return what + " holds more than one JSON value"
	case JSONRepeated:
		return what + " names " + e.Member + " twice (member names are compared ignoring case)"
	case JSONOtherCase:
		return what + " writes " + e.Member + " in another case"
	case JSONUnknown:
		return what + " has an unknown member " + e.Member
	case JSONWrongType:
		return e.Member + " has the wrong type"
	}
	return what + " is not valid JSON"
}

func (e *JSONError) Error() string { return e.Sentence("the JSON") }

// DecodeStrict decodes data, exactly one JSON value, into v (a non-nil
// pointer) as encoding/json does, but refuses what encoding/json lets
// through and a reader could take two ways:
//
//   - two members of one object whose names are equal ignoring case
//     (Unicode simple case folding, strings.EqualFold, which is how
//     encoding/json matches names), at any depth, also inside values v keeps
//     as json.RawMessage or any: encoding/json would keep the last;
//   - a member of an object decoded into a struct whose name is not
//     exactly the field's (`TASK_ID` for `task_id`), at any depth;
//   - members v has no field for, and trailing data.
//
// The first problem in the order of the text decides; an error is always a
// *JSONError. Every JSON body the service reads goes through this rule (the
// policy reader applies MemberKey itself).
func DecodeStrict(data []byte, v any) error {
	if !utf8.Valid(data) {
		return &JSONError{Problem: JSONMalformed}
	}
	if !json.Valid(data) {
		if json.Valid(bytes.TrimRight(firstValue(data), " \t\r\n")) && len(bytes.TrimSpace(data)) > 0 {
			return &JSONError{Problem: JSONTrailing}
		}
		return &JSONError{Problem: JSONMalformed}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &JSONError{Problem: JSONWrongType, Member: "the value"}
	}
	if err := (&jsonWalk{data: data}).value(rv.Type().Elem(), true); err != nil {
		return err
	}
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			if typ.Field == "" {
				if takesObject(rv.Type().Elem()) {
					return &JSONError{Problem: JSONNotObject}
				}
				return &JSONError{Problem: JSONWrongType, Member: "the value"}
			}
			return &JSONError{Problem: JSONWrongType, Member: pathName(typ.Field)}
		}
		if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &JSONError{Problem: JSONUnknown, Member: MemberName(strings.Trim(rest, `"`))}
		}
		// A value an UnmarshalJSON method refuses.
		return &JSONError{Problem: JSONWrongType, Member: "a value"}
	}
	return nil
}

// firstValue returns data up to the end of its first JSON value, or data
// when it does not begin with one.
func firstValue(data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return data
	}
	return data[:dec.InputOffset()]
}

// takesObject reports whether t decodes only from a JSON object.
func takesObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// pathName shows a dotted path of members (encoding/json's
// UnmarshalTypeError.Field) as MemberName shows one name.
func pathName(path string) string {
	for _, name := range strings.Split(path, ".") {
		if MemberName(name) == "a member" {
			return "a member"
		}
	}
	return "`" + path + "`"
}

// MemberKey is the key under which two member names are one name: equal
// keys for names equal under Unicode simple case folding
// (strings.EqualFold), different keys otherwise.
func MemberKey(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		// The smallest code point of r's folding orbit stands for all.
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}

// MemberName shows a member's name in a sentence: in backticks when it is a
// plain name (1–64 of ASCII letters, digits, _ and -), "a member" otherwise,
// so a sentence never carries what a name could hide.
func MemberName(name string) string {
	if len(name) == 0 || len(name) > 64 {
		return "a member"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "a member"
		}
	}
	return "`" + name + "`"
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// jsonWalk reads a JSON text that json.Valid accepted, beside the type it
// decodes into. It reads the bytes themselves: the text is known to be
// valid, so it only has to find its way (encoding/json's tokens cost an
// allocation each).
type jsonWalk struct {
	data []byte
	i    int
}

// next skips white space and returns the byte at it.
func (w *jsonWalk) next() byte {
	for w.i < len(w.data) {
		switch c := w.data[w.i]; c {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return c
		}
	}
	return 0
}

// str reads the string at i (its opening quote) and returns its value,
// escapes decoded as encoding/json decodes them.
func (w *jsonWalk) str() string {
	start, escaped := w.skipStr()
	raw := w.data[start:w.i]
	if !escaped {
		return string(raw[1 : len(raw)-1])
	}
	var v string
	_ = json.Unmarshal(raw, &v) // valid, as the whole text is
	return v
}

// skipStr passes the string at i (its opening quote), returning where it
// began and whether it holds an escape.
func (w *jsonWalk) skipStr() (start int, escaped bool) {
	start = w.i
	for w.i++; w.data[w.i] != '"'; w.i++ {
		if w.data[w.i] == '\\' {
			escaped = true
			w.i++
		}
	}
	w.i++
	return start, escaped
}

// value reads one value beside t, the type it decodes into; t is nil
// where any value may come (json.RawMessage, any, a type decoding
// itself).
func (w *jsonWalk) value(t reflect.Type, top bool) error {
	t = decodesInto(t)
	c := w.next()
	if top && t != nil && takesObject(t) && c != '{' {
		return &JSONError{Problem: JSONNotObject}
	}
	switch c {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		w.i++
		if w.next() == ']' {
			w.i++
			return nil
		}
		for {
			if err := w.value(elem, false); err != nil {
				return err
			}
			c := w.next()
			w.i++ // ',' or ']'
			if c == ']' {
				return nil
			}
		}
	case '{':
		return w.object(t)
	case '"':
		w.skipStr()
	default: // a number, true, false or null
		for w.i < len(w.data) {
			switch w.data[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			w.i++
		}
	}
	return nil
}

// object reads the object at i beside t.
func (w *jsonWalk) object(t reflect.Type) error {
	w.i++
	if w.next() == '}' {
		w.i++
		return nil
	}
	m, seen := membersOf(t), map[string]string{}
	for {
		w.next()
		name := w.str()
		w.next()
		w.i++ // ':'
		child, err := m.next(seen, name)
		if err != nil {
			return err
		}
		if err := w.value(child, false); err != nil {
			return err
		}
		c := w.next()
		w.i++ // ',' or '}'
		if c == '}' {
			return nil
		}
	}
}

// decodesInto is what a value decoded into t is read beside: t without
// its pointers, or nil where any value may come (json.RawMessage, any, a
// type decoding itself).
func decodesInto(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		return nil
	}
	return t
}

// memberRule is the rule for the member names of one object decoded into a
// type: none twice, ignoring case, and for a struct only its fields, as
// it spells them.
type memberRule struct {
	fields map[string]reflect.Type // a struct's, by exact name
	folded map[string]string       // MemberKey → the field's name
	elem   reflect.Type            // a map's values
}

// membersOf is the rule for an object decoded into t (from decodesInto).
func membersOf(t reflect.Type) memberRule {
	var m memberRule
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		m.fields, m.folded = jsonFields(t)
	case t.Kind() == reflect.Map:
		m.elem = t.Elem()
	}
	return m
}

// next checks the member named name, the object's next after those in
// seen (MemberKey → the name as first written, kept by the caller), and
// returns the type its value decodes into.
func (m memberRule) next(seen map[string]string, name string) (reflect.Type, error) {
	key := MemberKey(name)
	if first, dup := seen[key]; dup {
		return nil, &JSONError{Problem: JSONRepeated, Member: MemberName(first)}
	}
	seen[key] = name
	if m.fields == nil {
		return m.elem, nil
	}
	ft, exact := m.fields[name]
	switch own, other := m.folded[key]; {
	case exact:
		return ft, nil
	case other:
		return nil, &JSONError{Problem: JSONOtherCase, Member: MemberName(own)}
	}
	return nil, &JSONError{Problem: JSONUnknown, Member: MemberName(name)}
}

// jsonFields returns the members a struct decodes, as encoding/json names
// them: exported fields by their json tag or name, embedded structs'
// fields promoted, "-" left out.
func jsonFields(t reflect.Type) (map[string]reflect.Type, map[string]string) {
	if f, ok := structFields.Load(t); ok {
		f := f.(*fieldsOf)
		return f.fields, f.folded
	}
	fields, folded := findFields(t)
	structFields.Store(t, &fieldsOf{fields, folded})
	return fields, folded
}

// structFields holds jsonFields' answers by type (the types are the
// program's own, so it stays small); they are never changed.
var structFields sync.Map

type fieldsOf struct {
	fields map[string]reflect.Type
	folded map[string]string
}

// findFields is jsonFields, found by reflection.
func findFields(t reflect.Type) (map[string]reflect.Type, map[string]string) {
	fields := map[string]reflect.Type{}
	folded := map[string]string{}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		if depth > 8 {
			return
		}
		var embedded []reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					embedded = append(embedded, et) // shallower fields win
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, ok := fields[name]; !ok {
				fields[name] = f.Type
				folded[MemberKey(name)] = name
			}
		}
		for _, et := range embedded {
			add(et, depth+1)
		}
	}
	add(t, 0)
	return fields, folded
}
