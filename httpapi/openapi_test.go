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
