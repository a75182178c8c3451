package argschema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/connectors/probe"
)

// op is a write with the given schema and examples.
func op(schema string, examples ...string) *connectors.Operation {
	o := &connectors.Operation{Name: "pay", Kind: connectors.Write, Description: "Pays.", Schema: json.RawMessage(schema)}
	for _, e := range examples {
		o.Examples = append(o.Examples, json.RawMessage(e))
	}
	return o
}

const paySchema = `{
  "type": "object",
  "properties": {
    "amount": {"type": "integer", "minimum": 1, "maximum": 500},
    "memo": {"type": "string", "maxLength": 10},
    "method": {"enum": ["ach", "wire"]},
    "to": {"type": "object", "properties": {"iban": {"type": "string", "pattern": "^[A-Z]{2}[0-9]+$"}}, "required": ["iban"], "additionalProperties": false},
    "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
    "rate": {"type": "number", "exclusiveMinimum": 0},
    "urgent": {"type": "boolean"},
    "Secret-Name": {"type": "string"}
  },
  "required": ["amount"],
  "additionalProperties": false
}`

// TestCheckRefusals: each refusal names the member and why, and never the
// value sent.
func TestCheckRefusals(t *testing.T) {
	t.Parallel()
	s, err := argschema.Compile("bank", op(paySchema, `{"amount": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"missing", `{"operation":"pay"}`, "`amount` is required"},
		{"too small", `{"operation":"pay","amount":0}`, "`amount` is a whole number from 1 to 500"},
		{"too big", `{"operation":"pay","amount":501}`, "`amount` is a whole number from 1 to 500"},
		{"a fraction", `{"operation":"pay","amount":1.5}`, "`amount` is a whole number from 1 to 500"},
		{"a string", `{"operation":"pay","amount":"7"}`, "`amount` is a whole number from 1 to 500"},
		{"too long", `{"operation":"pay","amount":1,"memo":"abcdefghijkl"}`, "`memo` is a string of at most 10 characters"},
		{"not in the enum", `{"operation":"pay","amount":1,"method":"cash"}`, "`method` is one of \"ach\", \"wire\""},
		{"unknown", `{"operation":"pay","amount":1,"secret":"hunter2"}`, "the call has an unknown member `secret`"},
		{"unknown and missing", `{"operation":"pay","amuont":1}`, "the call has an unknown member `amuont`"},
		{"another case", `{"operation":"pay","Amount":1}`, "the call writes `amount` in another case"},
		{"unknown with a name not shown", `{"operation":"pay","amount":1,"a b":1}`, "the call has an unknown member a member"},
		{"nested missing", `{"operation":"pay","amount":1,"to":{}}`, "`to.iban` is required"},
		{"nested pattern", `{"operation":"pay","amount":1,"to":{"iban":"x"}}`, "`to.iban` is a string matching ^[A-Z]{2}[0-9]+$"},
		{"nested unknown", `{"operation":"pay","amount":1,"to":{"iban":"DE1","bic":"x"}}`, "the call has an unknown member `to.bic`"},
		{"list too long", `{"operation":"pay","amount":1,"tags":["a","b","c"]}`, "`tags` is a list of at most 2 items, each a string"},
		{"list item", `{"operation":"pay","amount":1,"tags":[1]}`, "`tags.0` is a string"},
		{"exclusive", `{"operation":"pay","amount":1,"rate":0}`, "`rate` is a number above 0"},
		{"boolean", `{"operation":"pay","amount":1,"urgent":"yes"}`, "`urgent` is true or false"},
		{"not an object", `["pay"]`, "the call is not a JSON object"},
		{"not JSON", `{"operation":`, "the call is not a JSON object"},
	} {
		err := s.Check([]byte(tc.body))
		if countersign.ErrorCode(err) != countersign.InvalidRequest || countersign.ErrorMessage(err) != tc.want {
			t.Errorf("%s: got %v, want invalid_request: %s", tc.name, err, tc.want)
		}
		for _, secret := range []string{"hunter2", "abcdefghijkl", "cash"} {
			if strings.Contains(countersign.ErrorMessage(err), secret) {
				t.Errorf("%s: the refusal quotes the value: %v", tc.name, err)
			}
		}
	}
	for _, ok := range []string{`{"operation":"pay","amount":1}`, `{"amount":500,"memo":"rent","method":"wire","to":{"iban":"DE12"},"tags":["a"],"rate":0.5,"urgent":true}`} {
		if err := s.Check([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestCompileRefusals: a schema that does not compile, reaches outside
// itself, is not an object schema or whose example does not fit it is
// refused.
func TestCompileRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		op   *connectors.Operation
		says string
	}{
		{"not JSON", op(`{"type": "object"`), "not a JSON object schema"},
		{"not an object schema", op(`{"type": "string"}`), "not a JSON object schema"},
		{"a bad keyword value", op(`{"type": "object", "properties": {"a": {"type": "integer", "minimum": "one"}}}`), "does not compile"},
		{"a bad pattern", op(`{"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}`), "does not compile"},
		{"a reference outside", op(`{"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}`), "does not compile"},
		{"a file reference", op(`{"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}`), "does not compile"},
		{"names operation", op(`{"type": "object", "properties": {"operation": {"type": "string"}}}`), "names the member operation"},
		{"an example that does not fit", op(paySchema, `{"amount": 1}`, `{"amount": 0}`), "example 2 does not fit its schema: `amount` is a whole number from 1 to 500"},
		{"an example that is not an object", op(paySchema, `[1]`), "example 1 is not a JSON object"},
		{"no description", &connectors.Operation{Name: "pay", Kind: connectors.Write, Schema: json.RawMessage(`{"type":"object"}`)}, "no description"},
		{"a description of two lines", &connectors.Operation{Name: "pay", Kind: connectors.Write, Description: "Pays.\nAnd more.", Schema: json.RawMessage(`{"type":"object"}`)}, "one line"},
		{"no schema", &connectors.Operation{Name: "pay", Kind: connectors.Write, Description: "Pays."}, "not a JSON object schema"},
	} {
		_, err := argschema.Compile("bank", tc.op)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want …%s…", tc.name, err, tc.says)
		}
	}
}

// TestTheDeclaredSchemasCompile: the task operations' and the probe's
// schemas compile, with their examples.
func TestTheDeclaredSchemasCompile(t *testing.T) {
	t.Parallel()
	cat, err := connectors.NewCatalogue(probe.New())
	if err != nil {
		t.Fatal(err)
	}
	set, err := argschema.NewSet(cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range connectors.TaskOperations {
		if _, ok := set.For("", name); !ok {
			t.Errorf("task operation %s has no schema", name)
		}
	}
	start, ok := set.For("probe", "guess_start")
	if !ok {
		t.Fatal("guess_start has no schema")
	}
	if _, ok := set.For("probe", "guess"); ok {
		t.Fatal("an answer operation has a schema")
	}
	wait, _ := set.For("", "task_wait")
	for body, want := range map[string]string{
		`{"operation":"task_wait","task_id":"r1-1","timeout_s":61}`: "`timeout_s` is a whole number from 0 to 60",
		`{"operation":"task_wait"}`:                                 "`task_id` is required",
		`{"operation":"task_wait","task_id":"R1"}`:                  "`task_id` is a string matching ^[a-z0-9-]{1,80}$",
	} {
		if err := wait.Check([]byte(body)); countersign.ErrorMessage(err) != want {
			t.Errorf("%s: got %v, want %s", body, err, want)
		}
	}
	// A number written to cost the validator dearly is refused at once.
	begin := time.Now()
	for _, n := range []string{"1e999999999", "1e-999999999", "1.5e99999999"} {
		if err := start.Check([]byte(`{"operation":"guess_start","max":` + n + `}`)); countersign.ErrorMessage(err) != "`max` is a whole number from 2 to 1000" {
			t.Errorf("max %s: %v", n, err)
		}
	}
	if d := time.Since(begin); d > time.Second {
		t.Fatalf("three huge numbers took %s", d)
	}
}
