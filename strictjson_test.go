package countersign

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

type strictInner struct {
	Amount int `json:"amount"`
}

type strictEmbedded struct {
	Nonce string `json:"nonce"`
}

type strictArgs struct {
	strictEmbedded
	TaskID  string            `json:"task_id"`
	Kay     string            `json:"kay"`
	Inner   *strictInner      `json:"inner"`
	Items   []strictInner     `json:"items"`
	Raw     json.RawMessage   `json:"raw"`
	Any     any               `json:"any"`
	Map     map[string]string `json:"map"`
	Skipped string            `json:"-"`
}

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		problem    JSONProblem // 0: accepted
		sentence   string
	}{
		{"every member", `{"nonce":"n","task_id":"a","kay":"k","inner":{"amount":1},"items":[{"amount":2}],"raw":{"a":1,"b":[{"c":2}]},"any":{"x":[1]},"map":{"a":"1","b":"2"}}`, 0, ""},
		{"empty object", ` {} `, 0, ""},
		{"null members", `{"inner":null,"raw":null,"any":null}`, 0, ""},
		{"repeated", `{"task_id":"a","task_id":"b"}`, JSONRepeated, "the body names `task_id` twice (member names are compared ignoring case)"},
		{"repeated in another case", `{"task_id":"a","TASK_ID":"b"}`, JSONRepeated, "the body names `task_id` twice (member names are compared ignoring case)"},
		{"repeated escaped", `{"task_id":"a","\u0074ask_id":"b"}`, JSONRepeated, "the body names `task_id` twice (member names are compared ignoring case)"},
		{"repeated Kelvin sign", `{"kay":"a","\u212aay":"b"}`, JSONRepeated, "the body names `kay` twice (member names are compared ignoring case)"},
		{"repeated long s", `{"task_id":"a","ta\u017fk_id":"b"}`, JSONRepeated, "the body names `task_id` twice (member names are compared ignoring case)"},
		{"unknown before repeated", `{"x":1,"X":2}`, JSONUnknown, "the body has an unknown member `x`"},
		{"repeated in a nested struct", `{"inner":{"amount":1,"Amount":2}}`, JSONRepeated, "the body names `amount` twice (member names are compared ignoring case)"},
		{"repeated in a list", `{"items":[{"amount":1},{"amount":1,"amount":2}]}`, JSONRepeated, "the body names `amount` twice (member names are compared ignoring case)"},
		{"repeated in raw JSON", `{"raw":{"a":{"b":1,"b":2}}}`, JSONRepeated, "the body names `b` twice (member names are compared ignoring case)"},
		{"repeated in any", `{"any":[{"k":1,"K":2}]}`, JSONRepeated, "the body names `k` twice (member names are compared ignoring case)"},
		{"repeated in a map", `{"map":{"a":"1","A":"2"}}`, JSONRepeated, "the body names `a` twice (member names are compared ignoring case)"},
		{"repeated, not plain", `{"raw":{"a b":1,"A B":2}}`, JSONRepeated, "the body names a member twice (member names are compared ignoring case)"},
		{"another case", `{"TASK_ID":"a"}`, JSONOtherCase, "the body writes `task_id` in another case"},
		{"another case, Kelvin sign", `{"\u212aay":"a"}`, JSONOtherCase, "the body writes `kay` in another case"},
		{"another case, embedded", `{"Nonce":"a"}`, JSONOtherCase, "the body writes `nonce` in another case"},
		{"another case, nested", `{"inner":{"AMOUNT":1}}`, JSONOtherCase, "the body writes `amount` in another case"},
		{"another case, in a list", `{"items":[{"amount":1},{"aMount":1}]}`, JSONOtherCase, "the body writes `amount` in another case"},
		{"unknown", `{"task_id":"a","memo":"x"}`, JSONUnknown, "the body has an unknown member `memo`"},
		{"unknown, field left out", `{"Skipped":"x"}`, JSONUnknown, "the body has an unknown member `Skipped`"},
		{"unknown, nested", `{"inner":{"amount":1,"cents":2}}`, JSONUnknown, "the body has an unknown member `cents`"},
		{"wrong type", `{"task_id":5}`, JSONWrongType, "`task_id` has the wrong type"},
		{"wrong type, nested", `{"inner":{"amount":"5"}}`, JSONWrongType, "`inner.amount` has the wrong type"},
		{"an array", `[]`, JSONNotObject, "the body is not a JSON object"},
		{"a string", `"x"`, JSONNotObject, "the body is not a JSON object"},
		{"null", `null`, JSONNotObject, "the body is not a JSON object"},
		{"two objects", `{} {}`, JSONTrailing, "the body holds more than one JSON value"},
		{"an object and more", `{"task_id":"a"}x`, JSONTrailing, "the body holds more than one JSON value"},
		{"empty", ``, JSONMalformed, "the body is not valid JSON"},
		{"cut short", `{"task_id":`, JSONMalformed, "the body is not valid JSON"},
		{"invalid UTF-8", "{\"task_id\":\"\xff\"}", JSONMalformed, "the body is not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v strictArgs
			err := DecodeStrict([]byte(c.body), &v)
			if c.problem == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("got %v, want a *JSONError", err)
			}
			if je.Problem != c.problem || je.Sentence("the body") != c.sentence {
				t.Fatalf("got %d %q, want %d %q", je.Problem, je.Sentence("the body"), c.problem, c.sentence)
			}
		})
	}
	var v strictArgs
	if err := DecodeStrict([]byte(`{"nonce":"n","task_id":"a","inner":{"amount":3},"raw":{"z":1}}`), &v); err != nil ||
		v.Nonce != "n" || v.TaskID != "a" || v.Inner.Amount != 3 || string(v.Raw) != `{"z":1}` {
		t.Fatalf("decoded %+v, %v", v, err)
	}
	if err := DecodeStrict([]byte(`{}`), v); err == nil {
		t.Fatal("decoded into a value that is not a pointer")
	}
}

// TestStrictRefusesWhatEncodingJSONTakes: every case-variant the rule
// refuses is one encoding/json binds to the field, so the refusal matters.
func TestStrictRefusesWhatEncodingJSONTakes(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"TASK_ID":"a"}`, `{"\u212aay":"a"}`, `{"task_id":"a","TASK_ID":"b"}`} {
		var v strictArgs
		if err := json.Unmarshal([]byte(body), &v); err != nil || v.TaskID == "" && v.Kay == "" {
			t.Fatalf("encoding/json no longer binds %s: %v", body, err)
		}
		if DecodeStrict([]byte(body), &v) == nil {
			t.Fatalf("accepted %s", body)
		}
	}
}

// TestMemberKeyIsEqualFold: two one-character names have one key exactly
// when strings.EqualFold says they are equal.
func TestMemberKeyIsEqualFold(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		k := MemberKey(string(r))
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if MemberKey(string(f)) != k {
				t.Fatalf("%U and %U fold together but have different keys", r, f)
			}
		}
		if !strings.EqualFold(string(r), k) {
			t.Fatalf("%U has the key %q, which is not equal to it ignoring case", r, k)
		}
	}
	if MemberKey("Task_ID") != MemberKey("task_id") || MemberKey("task_id") == MemberKey("task_ıd") {
		t.Fatal("MemberKey is not EqualFold on names")
	}
}

// FuzzDecodeStrict: whatever the bytes, DecodeStrict never panics, refuses
// with a *JSONError, and accepts only what encoding/json accepts too and
// what holds no two member names equal ignoring case.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":1,"A":2}`, `{"task_id":"x"}`, `{"TASK_ID":"x"}`,
		`{"a":{"b":[{"c":1,"C":2}]}}`, `[1,2]`, `"x"`, `{"a":1} {}`, "{\"\xff\":1}", `{"tasK_id":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var st struct {
			TaskID string          `json:"task_id"`
			Extra  json.RawMessage `json:"extra"`
		}
		for _, v := range []any{&st, new(map[string]any), new(any)} {
			err := DecodeStrict(data, v)
			if err != nil {
				var je *JSONError
				if !errors.As(err, &je) {
					t.Fatalf("a refusal that is not a *JSONError: %T %v", err, err)
				}
				continue
			}
			if !json.Valid(data) {
				t.Fatalf("accepted what is not JSON: %q", data)
			}
			if dup := repeatedName(t, data); dup != "" {
				t.Fatalf("accepted %q, which repeats %q ignoring case", data, dup)
			}
		}
	})
}

// repeatedName walks a valid JSON text and returns a member name that stands
// twice in one object ignoring case, or "".
func repeatedName(t *testing.T, data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next string is a member name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: v == '{', names: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
			}
		default:
			if top != nil && top.object {
				if top.key {
					name, _ := v.(string)
					k := MemberKey(name)
					if top.names[k] {
						return name
					}
					top.names[k] = true
					top.key = false
				} else {
					top.key = true
				}
			}
		}
	}
}

// FuzzJSONWalk: on every valid JSON text, the walk over bytes that
// DecodeStrict uses finds what a walk over encoding/json's tokens finds
// (tokenWalk, below): the same refusal, naming the same member, or none.
func FuzzJSONWalk(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"A":2}`, `{"task_id":"x","TASK_ID":"y"}`, `{"\u0074ask_id":"x"}`,
		`{"kay":1,"\u212aay":2}`, `{"items":[{"amount":1},{"aMount":1}]}`, `{"raw":{"a b":1,"A B":2}}`,
		`{"inner":{"amount":"5","cents":[true,false,null,-1.5e3]}}`, " \t{\"map\" : {\"a\\\"b\" : \"\\u00e9\\\\\" } }\n",
		`{"any":[{"k":1},{"k":2,"K":3}]}`, `"x"`, `12`, `null`, `{"nonce":"n","Nonce":"m"}`, `{"x":{"y":[[],[{}]]}}`} {
		f.Add([]byte(s))
	}
	type fuzzArgs struct {
		TaskID string          `json:"task_id"`
		Extra  json.RawMessage `json:"extra"`
	}
	types := []reflect.Type{reflect.TypeFor[strictArgs](), reflect.TypeFor[fuzzArgs](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[any](), reflect.TypeFor[[]strictInner]()}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) || !json.Valid(data) {
			return
		}
		for _, typ := range types {
			got := (&jsonWalk{data: data}).value(typ, true)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			want := tokenWalk(dec, typ, true)
			if !sameRefusal(got, want) {
				t.Fatalf("%s into %v: the walk says %v, the tokens %v", data, typ, got, want)
			}
		}
	})
}

func sameRefusal(a, b error) bool {
	var x, y *JSONError
	if errors.As(a, &x) != errors.As(b, &y) {
		return false
	}
	if x == nil {
		return a == nil && b == nil
	}
	return *x == *y
}

// tokenWalk is the walk over encoding/json's tokens that DecodeStrict
// used before it read the bytes itself, with the same rule for each
// object's members: FuzzJSONWalk's reference for finding the way.
func tokenWalk(dec *json.Decoder, t reflect.Type, top bool) error {
	t = decodesInto(t)
	tok, err := dec.Token()
	if err != nil {
		return &JSONError{Problem: JSONMalformed}
	}
	d, ok := tok.(json.Delim)
	if top && t != nil && takesObject(t) && d != '{' {
		return &JSONError{Problem: JSONNotObject}
	}
	if !ok {
		return nil
	}
	if d == '[' {
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := tokenWalk(dec, elem, false); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	m, seen := membersOf(t), map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &JSONError{Problem: JSONMalformed}
		}
		child, err := m.next(seen, tok.(string))
		if err != nil {
			return err
		}
		if err := tokenWalk(dec, child, false); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// BenchmarkDecodeStrict decodes an agent's call as the service reads it.
func BenchmarkDecodeStrict(b *testing.B) {
	body := []byte(`{"owner":"alice.near","project":"probe","operation":"guess_start","args":{"max":1000,"memo":"a turn \u00e9"}}`)
	var v struct {
		Owner     string          `json:"owner"`
		Project   string          `json:"project"`
		Operation string          `json:"operation"`
		Args      json.RawMessage `json:"args"`
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeStrict(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
