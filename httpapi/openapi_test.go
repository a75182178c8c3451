package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"countersign/connectors/gmail"
	"countersign/connectors/mercury"
	"countersign/httpapi"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// sample fills a document path's variables.
var sample = strings.NewReplacer("{owner}", "alice.near", "{project}", "probe", "{id}", "r0a1b2c3d4e5f6a7b8c9d0e1f2-1",
	"{n}", "0", "{name}", "probe", "{file}", "app.js")

// TestOpenAPIMatchesTheRouter: GET /openapi.json is an OpenAPI 3.1
// document kin-openapi loads and validates; every route of the router is
// in it, described, and every path and method in it is served by a route
// of that template; the /call body is the operations' schemas, one of them
// by operation.
func TestOpenAPIMatchesTheRouter(t *testing.T) {
	t.Parallel()
	// The real connectors' schemas are in the document too.
	w := servicetest.New(t, storetest.SQLite(t), servicetest.WithConnector(gmail.New(gmail.Config{})), servicetest.WithConnector(mercury.New(mercury.Config{})))
	resp, err := http.Get(w.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %s", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the document does not validate: %v", err)
	}

	// Router → document.
	routes := w.API.Routes()
	if len(routes) < 40 {
		t.Fatalf("the router walk found %d routes", len(routes))
	}
	for _, rt := range routes {
		path := httpapi.DocPath(rt.Template, rt.Prefix)
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("%s %s is served but not in the document", rt.Method, path)
			continue
		}
		if s := item.GetOperation(rt.Method).Summary; s == "" || s == "undocumented" {
			t.Errorf("%s %s is not described", rt.Method, path)
		}
	}
	// Document → router.
	n := 0
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			n++
			got, ok := w.API.Handles(method, sample.Replace(path))
			if !ok || got != path {
				t.Errorf("%s %s is in the document, but the router serves it as %q (%v)", method, path, got, ok)
			}
		}
	}
	if n != len(routes) {
		t.Errorf("the document has %d operations, the router %d routes", n, len(routes))
	}
	// The /call body: every operation, discriminated by operation.
	call := doc.Paths.Value("/call/{owner}/{project}").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	var refs []string
	for _, s := range call.OneOf {
		refs = append(refs, s.Ref)
	}
	joined := strings.Join(refs, " ")
	for _, want := range []string{"call.probe.guess_start", "call.ledger.pay", "call.task.task_wait", "call.task.tasks"} {
		if !strings.Contains(joined, "#/components/schemas/"+want) {
			t.Errorf("the /call body has no %s: %v", want, refs)
		}
	}
	if call.Discriminator == nil || call.Discriminator.PropertyName != "operation" || call.Discriminator.Mapping["guess_start"].Ref != "#/components/schemas/call.probe.guess_start" {
		t.Errorf("the /call body's discriminator %+v", call.Discriminator)
	}
	start := doc.Components.Schemas["call.probe.guess_start"].Value
	if start.Properties["operation"].Value.Const != "guess_start" || start.Properties["max"].Value.Max == nil || *start.Properties["max"].Value.Max != 1000 {
		t.Errorf("guess_start's call schema %+v", start)
	}
	// A body that fits one operation's schema validates; one that fits none
	// does not.
	for body, ok := range map[string]bool{
		`{"operation":"guess_start","max":10}`:       true,
		`{"operation":"task_wait","task_id":"r1-1"}`: true,
		`{"operation":"guess_start","max":1001}`:     false,
		`{"operation":"pay"}`:                        false,
		`{"operation":"guess_start","unknown":true}`: false,
	} {
		var v any
		_ = json.Unmarshal([]byte(body), &v)
		err := call.VisitJSON(v, openapi3.EnableJSONSchema2020())
		if (err == nil) != ok {
			t.Errorf("%s: valid %v, want %v (%v)", body, err == nil, ok, err)
		}
	}
}

// TestCheckResponseRefuses: the check every servicetest answer passes
// through can fail: a body that does not fit, a status not named, a route
// not served.
func TestCheckResponseRefuses(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	get := func(path string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, path, nil)
		return r
	}
	for _, tc := range []struct {
		r      *http.Request
		status int
		body   string
		fits   bool
	}{
		{get("/healthz"), 200, `{"service":"countersign","version":"1","schema":8}`, true},
		{get("/healthz"), 200, `{"service":1,"version":"1","schema":8}`, false},
		{get("/healthz"), 200, `{"service":"countersign","version":"1","schema":8,"extra":1}`, false},
		{get("/healthz"), 201, `{}`, false},
		{get("/inbox/tasks"), 401, `{"error":"a session is needed","reason":"session_required","terminal":true}`, true},
		{get("/inbox/tasks"), 401, `{"error":"a session is needed"}`, false},
		{get("/inbox/tasks"), 200, `{"tasks":[],"more":false}`, true},
		{get("/inbox/tasks"), 200, `{"tasks":[{"id":"x"}],"more":false}`, false},
	} {
		err := w.API.CheckResponse(tc.r, tc.status, "application/json", []byte(tc.body))
		if (err == nil) != tc.fits {
			t.Errorf("%s %d %s: fits %v, want %v (%v)", tc.r.URL.Path, tc.status, tc.body, err == nil, tc.fits, err)
		}
	}
}

// TestOpenAPITypesEachCallsAnswer: the /call answer is typed per
// operation: each call schema names its answer component (x-countersign-
// answer), an anyOf of the operation's declared result, the task answers
// when its connector opens tasks, and the refusal; the 200 answer is the
// anyOf of them all. Real answers of a game fit their operation's answer
// and not another's.
func TestOpenAPITypesEachCallsAnswer(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	raw, err := w.API.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	refs := func(list openapi3.SchemaRefs) []string {
		var out []string
		for _, r := range list {
			out = append(out, strings.TrimPrefix(r.Ref, "#/components/schemas/"))
		}
		return out
	}
	answer := doc.Paths.Value("/call/{owner}/{project}").Post.Responses.Value("200").Value.Content.Get("application/json").Schema.Value
	all := strings.Join(refs(answer.AnyOf), " ")
	for _, want := range []string{"answer.probe.guess_start", "answer.ledger.pay", "answer.task.task_status", "answer.task.tasks"} {
		if !strings.Contains(all, want) {
			t.Errorf("the 200 answer has no %s: %s", want, all)
		}
		call := schemas["call."+strings.TrimPrefix(want, "answer.")].Value
		if call.Extensions["x-countersign-answer"] != "#/components/schemas/"+want {
			t.Errorf("call.%s names its answer %v", strings.TrimPrefix(want, "answer."), call.Extensions["x-countersign-answer"])
		}
	}
	for name, want := range map[string]string{
		"answer.probe.guess_start": "AwaitingOwner Notified AgentRefusal", // TaskOnly: no output of its own
		"answer.task.task_status":  "result.task.task_status AgentRefusal",
		"answer.task.task_cancel":  "result.task.task_cancel AgentRefusal",
		"answer.ledger.pay":        "UndeclaredResult AwaitingOwner Notified AgentRefusal",
	} {
		if got := strings.Join(refs(schemas[name].Value.AnyOf), " "); got != want {
			t.Errorf("%s is the anyOf of %s, want %s", name, got, want)
		}
	}
	if got := strings.Join(refs(schemas["result.task.task_status"].Value.Properties["result"].Value.AnyOf), " "); got != "UndeclaredResult result.probe.guess" {
		t.Errorf("task_status's result is the anyOf of %s", got)
	}

	// A game, played through the API: each answer fits its operation's
	// answer and not another operation's.
	fits := func(name string, body []byte) bool {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()) == nil
	}
	agent := w.AgentClient()
	started, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", map[string]any{"max": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(started, &a)
	if err := w.Enclave.Answers.Answer(ctx, a.TaskID, w.Approve(a.TaskID, []byte("3"))); err != nil {
		t.Fatal(err)
	}
	status, err := agent.Call(ctx, w.Owner.Account, "probe", "task_status", map[string]any{"task_id": a.TaskID}, nil)
	if err != nil || !strings.Contains(string(status), `"verdict":"lower"`) {
		t.Fatalf("task_status: %s %v", status, err)
	}
	refused, _ := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", map[string]any{"max": 1}, nil)
	listed, err := agent.Call(ctx, w.Owner.Account, "probe", "tasks", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer []byte
		fits   map[string]bool
	}{
		{started, map[string]bool{"answer.probe.guess_start": true, "answer.task.task_status": false, "answer.ledger.pay": true}},
		{status, map[string]bool{"answer.task.task_status": true, "answer.task.task_wait": true, "answer.probe.guess_start": false, "answer.task.tasks": false}},
		{refused, map[string]bool{"answer.probe.guess_start": true, "answer.task.task_status": true}},
		{listed, map[string]bool{"answer.task.tasks": true, "answer.task.task_status": false}},
		{[]byte(`{"ok":true}`), map[string]bool{"answer.probe.guess_start": false, "answer.task.task_cancel": false}},
	} {
		for name, want := range tc.fits {
			if got := fits(name, tc.answer); got != want {
				t.Errorf("%s fits %s: %v, want %v", tc.answer, name, got, want)
			}
		}
	}
}
