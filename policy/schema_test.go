package policy

import (
	"strings"
	"testing"
)

func TestSchemasOfTheConnectorsValidate(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]Schema{"mercury": mercury, "github": github, "gmail": gmail, "probe": probe, "empty": {}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSchemaRefusals(t *testing.T) {
	t.Parallel()
	amount := AmountRange("amount", "min_usd", "max_usd")
	for _, tc := range []struct {
		name   string
		schema Schema
		want   string
	}{
		{"write not a name", Schema{Writes: []string{"Pay"}}, `write "Pay" is not an operation name`},
		{"empty write", Schema{Writes: []string{""}}, `write "" is not an operation name`},
		{"write twice", Schema{Writes: []string{"a", "a"}}, `write "a" is declared twice`},
		{"read not a name", Schema{Reads: []string{"a-b"}}, `read "a-b" is not an operation name`},
		{"read and write", Schema{Writes: []string{"a"}, Reads: []string{"a"}}, `read "a" is declared twice`},
		{"read twice", Schema{Reads: []string{"a", "a"}}, `read "a" is declared twice`},
		{"key confirm", Schema{Keys: map[string]KeyKind{"confirm": List}}, `key "confirm" cannot be a policy key`},
		{"key rules", Schema{Keys: map[string]KeyKind{"rules": List}}, `key "rules" cannot be a policy key`},
		{"key not a name", Schema{Keys: map[string]KeyKind{"Max": Count}}, `key "Max" cannot be a policy key`},
		{"key without kind", Schema{Keys: map[string]KeyKind{"max": 0}}, `key "max" has no valid kind`},
		{"key of unknown kind", Schema{Keys: map[string]KeyKind{"max": WriteList + 1}}, `key "max" has no valid kind`},
		{"zero condition", Schema{Conditions: []Condition{{}}}, "condition 1 has no valid name"},
		{"condition twice", Schema{Conditions: []Condition{amount, AnyOf("amount", "x", "y")}}, `condition "amount" is declared twice`},
		{"member op", Schema{Conditions: []Condition{AnyOf("method", "op", "ach")}}, `"op" cannot be a member of`},
		{"member not a name", Schema{Conditions: []Condition{AnyOf("method", "Methods", "ach")}}, `"Methods" cannot be a member of`},
		{"member twice", Schema{Conditions: []Condition{amount, Equals("payee", "max_usd", "saved")}}, `member "max_usd" is declared twice`},
		{"range on one member", Schema{Conditions: []Condition{AmountRange("amount", "usd", "usd")}}, `member "usd" is declared twice`},
		{"no values", Schema{Conditions: []Condition{AnyOf("method", "methods")}}, `condition "method" declares no values`},
		{"value twice", Schema{Conditions: []Condition{Equals("payee", "payee", "new", "new")}}, `value "new" is not a distinct lower-case word`},
		{"value not a word", Schema{Conditions: []Condition{Equals("payee", "payee", "New")}}, `value "New" is not a distinct lower-case word`},
		{"carries a read", Schema{Reads: []string{"r"}, Carries: map[string][]string{"r": nil}}, `Carries names "r", which is not a declared write`},
		{"carries unknown", Schema{Writes: []string{"w"}, Carries: map[string][]string{"w": {"amount"}}}, `w carries "amount", which is not a declared condition`},
		{"carries twice", Schema{Writes: []string{"w"}, Conditions: []Condition{amount}, Carries: map[string][]string{"w": {"amount", "amount"}}}, `w carries "amount" twice`},
		{"noun of a read", Schema{Nouns: map[string]string{"r": "thing"}}, `Nouns names "r", which is not a declared write`},
		{"empty noun", Schema{Writes: []string{"w"}, Nouns: map[string]string{"w": ""}}, "Nouns: w has no usable noun"},
		{"noun with a line break", Schema{Writes: []string{"w"}, Nouns: map[string]string{"w": "a\nb"}}, "Nouns: w has no usable noun"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.schema.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			// Parse fails closed on such a schema, even for the empty policy.
			p := Parse([]byte("{}"), tc.schema)
			if p.Mode() != Broken || !strings.HasPrefix(p.Sentence(), "this connector declares its policy wrongly: ") {
				t.Fatalf("Parse with a bad schema: %s %q", p.Mode(), p.Sentence())
			}
		})
	}
}

func TestConditionPhrase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Condition
		want string
	}{
		{AmountRange("amount", "min_usd", "max_usd"), "bounds an amount"},
		{AmountRange("fee", "min_fee", "max_fee"), "bounds a fee"},
		{AnyOf("method", "methods", "ach"), "names a method"},
		{Equals("payee", "payee", "new"), "names a payee"},
		{Equals("origin", "origin", "us"), "names an origin"},
	} {
		if got := tc.c.phrase(); got != tc.want {
			t.Errorf("phrase of %s = %q, want %q", tc.c.name, got, tc.want)
		}
	}
}

func TestConditionValuesAreCopied(t *testing.T) {
	t.Parallel()
	values := []string{"ach", "wire"}
	c := AnyOf("method", "methods", values...)
	values[0] = "check"
	if c.values[0] != "ach" {
		t.Fatalf("AnyOf kept the caller's slice: %v", c.values)
	}
}

func TestPolicyKeepsItsOwnCopyOfTheSchema(t *testing.T) {
	t.Parallel()
	s := Schema{
		Writes:     []string{"pay"},
		Conditions: []Condition{AnyOf("method", "methods", "ach", "wire")},
		Carries:    map[string][]string{"pay": {"method"}},
	}
	p := mustParse(t, `{"rules":[{"when":{"methods":["wire"]},"then":"refuse"}]}`, s)
	s.Conditions[0] = AnyOf("other", "others", "x")
	s.Writes[0] = "other"
	s.Carries["pay"] = nil
	d := p.Decide("pay", Facts{Words: map[string]string{"method": "wire"}})
	if d.Outcome != Refuse || d.Rule != 1 {
		t.Fatalf("a change to the schema after Parse changed the policy: %+v", d)
	}
}
