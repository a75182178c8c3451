package argschema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"countersign/argschema"
	"countersign/connectors"
	"countersign/connectors/probe"
)

// TestResultsCheckAnswers: the probe's and the task operations' result
// schemas compile, and each tells an answer that fits from one that does
// not, saying where.
func TestResultsCheckAnswers(t *testing.T) {
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
		if _, ok := set.ResultFor("", name); !ok {
			t.Errorf("task operation %s has no result schema", name)
		}
	}
	const status = `{"task_id":"r1-1","kind":"input","state":"done","thread":"r1-1","created_at":"2026-01-02T03:04:05Z","expires_at":"2026-01-03T03:04:05Z",` +
		`"outcome_class":"claimed","result":{"attempt":1},"run":"r2","next_task_id":"r2-1"}`
	for _, tc := range []struct {
		connector, op, answer string
		fits                  bool
		says                  string
	}{
		{"probe", "guess", `{"attempt":1,"guess":5,"verdict":"higher","max":10,"detail":"The number is higher than 5."}`, true, ""},
		{"probe", "guess", `{"attempt":2,"guess":"five","verdict":"not_a_number","max":10,"detail":"That is not a whole number."}`, true, ""},
		{"probe", "guess", `{"attempt":1,"guess":5,"verdict":"warmer","max":10,"detail":"x"}`, false, "at '/verdict'"},
		{"probe", "guess", `{"attempt":1,"guess":5,"verdict":"higher","max":10}`, false, "detail"},
		{"probe", "guess", `{"attempt":1,"guess":5,"verdict":"higher","max":10,"detail":"x","secret":7}`, false, "secret"},
		{"probe", "guess", `{"attempt":0,"guess":5,"verdict":"higher","max":10,"detail":"x"}`, false, "at '/attempt'"},
		{"probe", "guess_start", `{"ok":true}`, false, "answers only by opening a task"},
		{"", "task_status", status, true, ""},
		{"", "task_wait", `{"task_id":"r1-1","kind":"confirm","state":"open","thread":"r1-1","created_at":"2026-01-02T03:04:05Z","expires_at":"2026-01-03T03:04:05Z"}`, true, ""},
		{"", "task_status", `{"task_id":"r1-1","kind":"confirm","state":"opened","thread":"r1-1","created_at":"2026-01-02T03:04:05Z","expires_at":"2026-01-03T03:04:05Z"}`, false, "at '/state'"},
		{"", "task_status", `{"task_id":"r1-1","kind":"confirm","state":"open","thread":"r1-1","created_at":"2026-01-02 03:04:05","expires_at":"2026-01-03T03:04:05Z"}`, false, "at '/created_at'"},
		{"", "task_status", `{"task_id":"r1-1","kind":"confirm","state":"failed","thread":"r1-1","created_at":"2026-01-02T03:04:05Z","expires_at":"2026-01-03T03:04:05Z","failure_reason":"run_refused:conflict"}`, true, ""},
		{"", "tasks", `{"tasks":[]}`, true, ""},
		{"", "tasks", `{"tasks":[{"task_id":"r1-1","kind":"notice","state":"done","thread":"r1-1","created_at":"2026-01-02T03:04:05Z"}]}`, true, ""},
		{"", "tasks", `{"tasks":null}`, false, "at '/tasks'"},
		{"", "task_cancel", `{"task_id":"r1-1","state":"cancelled"}`, true, ""},
		{"", "task_cancel", `{"task_id":"r1-1","state":"open"}`, false, "at '/state'"},
		{"", "task_delete", `{"task_id":"r1-1","deleted":true}`, true, ""},
		{"", "task_delete", `{"task_id":"r1-1"}`, false, "deleted"},
	} {
		r, ok := set.ResultFor(tc.connector, tc.op)
		if !ok {
			t.Errorf("%s %s has no result schema", tc.connector, tc.op)
			continue
		}
		err := r.Check([]byte(tc.answer))
		if (err == nil) != tc.fits || err != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s %s %s: got %v, want fits %v …%s…", tc.connector, tc.op, tc.answer, err, tc.fits, tc.says)
		}
	}
}

// TestTaskAnswersAndRefusals: what AwaitingOwner and Notified write fits
// the platform's schemas of them, and a refusal fits its own; a changed
// one does not.
func TestTaskAnswersAndRefusals(t *testing.T) {
	t.Parallel()
	task := connectors.Task{ID: "r1-1", Hash: strings.Repeat("ab", 32), Thread: "r1-1", ExpiresAt: time.Now().Add(time.Hour), Link: "https://inbox.example/#/tasks/r1-1"}
	awaiting, _ := json.Marshal(connectors.AwaitingOwner(task))
	notified, _ := json.Marshal(connectors.Notified(task))
	if err := argschema.CheckTaskAnswer(awaiting, false); err != nil {
		t.Error(err)
	}
	if err := argschema.CheckTaskAnswer(notified, true); err != nil {
		t.Error(err)
	}
	if err := argschema.CheckTaskAnswer(awaiting, true); err == nil {
		t.Error("awaiting_owner fits the notified answer")
	}
	if err := argschema.CheckTaskAnswer([]byte(strings.Replace(string(awaiting), `"link"`, `"url"`, 1)), false); err == nil {
		t.Error("an awaiting_owner answer without its link fits")
	}
	for body, fits := range map[string]bool{
		`{"success":false,"error":"display_invalid: the title is empty"}`: true,
		`{"success":false,"error":"the title is empty"}`:                  false,
		`{"success":true,"error":"invalid_request: x"}`:                   false,
		`{"success":false,"error":"invalid_request: x","state":"open"}`:   false,
	} {
		if err := argschema.CheckRefusal([]byte(body)); (err == nil) != fits {
			t.Errorf("%s: fits %v (%v)", body, err == nil, err)
		}
	}
}

// TestResultCompileRefusals: a result schema that does not compile, refers
// elsewhere (it is embedded in other documents), or is TaskOnly for an
// answer operation is refused, and a catalogue holding one does not build.
func TestResultCompileRefusals(t *testing.T) {
	t.Parallel()
	withResult := func(kind connectors.OpKind, result string) *connectors.Operation {
		o := &connectors.Operation{Name: "pay", Kind: kind, Description: "Pays.", Result: json.RawMessage(result)}
		if kind != connectors.Answer {
			o.Schema = json.RawMessage(`{"type": "object"}`)
		}
		return o
	}
	for _, tc := range []struct {
		name string
		op   *connectors.Operation
		says string
	}{
		{"not an object", withResult(connectors.Write, `true`), "not a JSON object"},
		{"a bad keyword value", withResult(connectors.Write, `{"type": "object", "properties": {"a": {"minimum": "one"}}}`), "does not compile"},
		{"a reference inside", withResult(connectors.Write, `{"$defs": {"a": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/a"}}}`), "uses $ref"},
		{"a reference outside", withResult(connectors.Read, `{"properties": {"a": {"$ref": "https://example.com/a.json"}}}`), "uses $ref"},
		{"an id", withResult(connectors.Read, `{"$id": "https://example.com/r.json", "type": "object"}`), "uses $id"},
		{"task only, for an answer", withResult(connectors.Answer, string(connectors.TaskOnly)), "cannot be TaskOnly"},
	} {
		_, err := argschema.CompileResult("bank", tc.op)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want …%s…", tc.name, err, tc.says)
		}
	}
	// A member may be named like a keyword.
	if _, err := argschema.CompileResult("bank", withResult(connectors.Read, `{"type": "object", "properties": {"$ref": {"type": "string"}}}`)); err != nil {
		t.Errorf("a member named $ref: %v", err)
	}
	if r, err := argschema.CompileResult("bank", &connectors.Operation{Name: "pay", Kind: connectors.Read, Description: "Pays.", Schema: json.RawMessage(`{"type": "object"}`)}); r != nil || err != nil {
		t.Errorf("no result declared: %v, %v", r, err)
	}
	bad := probe.New()
	bad.Operations[1].Result = json.RawMessage(`{"type": "object", "properties": {"a": {"pattern": "("}}}`)
	if err := argschema.CheckConnector(bad); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Errorf("a connector with a broken result schema: %v", err)
	}
}
