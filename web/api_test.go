package web_test

// The page's reader of the service's answers (src/api.ts) against the
// service itself: every answer a real service gives the routes the page
// calls is read, and the same answers made malformed as the OpenAPI
// document tells (a required member gone, a member of a kind it does not
// allow) are refused.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"countersign/servicetest"
	"countersign/store/storetest"
)

// sample is one answer, or one made malformed, and whether the page must
// read it.
type sample struct {
	Route string          `json:"route"`
	Body  json.RawMessage `json:"body"`
	Read  bool            `json:"read"`
	What  string          `json:"what"`
}

func TestAPIReadsAnswersAsTheDocument(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	id := w.Pay()
	raw, err := w.API.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// answerSchema is the schema of a route's 200 answer.
	answerSchema := func(route string) map[string]any {
		method, path, _ := strings.Cut(route, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		resp, _ := op["responses"].(map[string]any)["200"].(map[string]any)
		content, _ := resp["content"].(map[string]any)["application/json"].(map[string]any)
		ref, _ := content["schema"].(map[string]any)["$ref"].(string)
		sch := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		if sch == nil {
			t.Fatalf("%s: no answer schema in the document", route)
		}
		return sch
	}
	do := func(method, path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, w.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+w.Owner.Client.Session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	// The answers the page reads, as the service gives them.
	routes := []struct{ route, path string }{
		{"GET /inbox/tasks", "/inbox/tasks?show=waiting"},
		{"GET /inbox/tasks", "/inbox/tasks?show=closed"},
		{"GET /inbox/tasks/{id}", "/inbox/tasks/" + id},
		{"GET /inbox/tasks/{id}/origin", "/inbox/tasks/" + id + "/origin"},
		{"GET /.well-known/countersign-run-key", "/.well-known/countersign-run-key"},
		{"GET /connectors", "/connectors"},
		{"GET /inbox/projects", "/inbox/projects"},
		{"GET /inbox/devices", "/inbox/devices"},
		{"GET /inbox/mutes", "/inbox/mutes"},
		{"GET /inbox/webhook", "/inbox/webhook"},
		{"GET /inbox/webhook/deliveries", "/inbox/webhook/deliveries"},
		{"GET /inbox/activity", "/inbox/activity?limit=20"},
		{"POST /inbox/unlock", "/inbox/unlock"},
	}
	var samples []sample
	for _, r := range routes {
		method, _, _ := strings.Cut(r.route, " ")
		status, body := do(method, r.path)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, r.path, status, body)
		}
		samples = append(samples, sample{Route: r.route, Body: body, Read: true, What: "as the service answered " + r.path})
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", r.path, err)
		}
		sch := answerSchema(r.route)
		for _, bad := range malformed(v, sch) {
			samples = append(samples, sample{Route: r.route, Body: bad.body, What: bad.what + " in the answer to " + r.path})
		}
	}
	// A task whose member is of another kind, deep in the waiting list.
	_, body := do("GET", "/inbox/tasks?show=waiting")
	var page map[string]any
	_ = json.Unmarshal(body, &page)
	tasks, _ := page["tasks"].([]any)
	if len(tasks) == 0 {
		t.Fatalf("the waiting list is empty: %s", body)
	}
	tasks[0].(map[string]any)["task_hash"] = 7
	deep, _ := json.Marshal(page)
	samples = append(samples,
		sample{Route: "GET /inbox/tasks", Body: deep, What: "a waiting task's task_hash a number"},
		sample{Route: "GET /inbox/tasks", Body: json.RawMessage(`null`), What: "null"},
		sample{Route: "GET /inbox/tasks", Body: json.RawMessage(`[]`), What: "an array"},
		sample{Route: "GET /inbox/tasks", Body: json.RawMessage(`{"tasks": null, "more": false}`), Read: true, What: "no tasks, as null"})

	// A refusal as the service words it.
	status, refused := do("GET", "/inbox/tasks/"+id+"x")
	if status < 400 {
		t.Fatalf("a task of no such id: %d", status)
	}
	var want struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(refused, &want)
	if want.Error == "" || want.Reason == "" {
		t.Fatalf("the refusal: %s", refused)
	}

	in, _ := json.Marshal(map[string]any{"samples": samples, "refusal": json.RawMessage(refused), "status": status})
	script := `(async () => {
  const cs = await import(window.BUNDLE);
  const input = ` + string(in) + `;
  const out = { read: [], refusal: null, foreign: null };
  for (const s of input.samples) {
    try {
      cs.readAnswer(s.route, s.body);
      out.read.push({ read: true, error: "" });
    } catch (e) {
      out.read.push({ read: false, error: (e instanceof cs.Unreadable ? "" : "not Unreadable: ") + String(e && e.message) });
    }
  }
  const r = cs.readRefusal(input.status, input.refusal);
  out.refusal = { status: r.status, reason: r.reason, message: r.message, task: r.taskID };
  const f = cs.readRefusal(502, { error: 5, reason: ["x"] });
  out.foreign = { status: f.status, reason: f.reason, message: f.message, task: f.taskID };
  return out;
})()`
	type refusal struct {
		Status  int    `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Task    string `json:"task"`
	}
	type result struct {
		Read []struct {
			Read  bool   `json:"read"`
			Error string `json:"error"`
		} `json:"read"`
		Refusal refusal `json:"refusal"`
		Foreign refusal `json:"foreign"`
	}
	ctx := tab(t)
	got := run(t, ctx, "the page's reader of answers", chromedp.Evaluate[result](script, chromedp.EvalAwaitPromise))
	if len(got.Read) != len(samples) {
		t.Fatalf("%d samples read, want %d", len(got.Read), len(samples))
	}
	refusedOnes := 0
	for i, s := range samples {
		g := got.Read[i]
		switch {
		case s.Read && !g.Read:
			t.Errorf("%s (%s): refused: %s", s.What, s.Route, g.Error)
		case !s.Read && g.Read:
			t.Errorf("%s (%s): read, yet malformed: %s", s.What, s.Route, s.Body)
		case !s.Read && strings.HasPrefix(g.Error, "not Unreadable"):
			t.Errorf("%s (%s): refused as %s", s.What, s.Route, g.Error)
		case !s.Read:
			refusedOnes++
		}
	}
	if refusedOnes < 30 {
		t.Errorf("only %d malformed answers were tried", refusedOnes)
	}
	if got.Refusal != (refusal{Status: status, Reason: want.Reason, Message: want.Error}) {
		t.Errorf("the refusal read as %+v, want %d %q %q", got.Refusal, status, want.Reason, want.Error)
	}
	if got.Foreign != (refusal{Status: 502, Message: "the service answered 502"}) {
		t.Errorf("a body that is no refusal of the service read as %+v", got.Foreign)
	}
}

type badAnswer struct {
	body json.RawMessage
	what string
}

// malformed makes v wrong in every way the schema of its answer tells:
// each required member left out, and each member the answer has made a
// value of a kind the schema does not allow.
func malformed(v map[string]any, sch map[string]any) []badAnswer {
	var out []badAnswer
	props, _ := sch["properties"].(map[string]any)
	req, _ := sch["required"].([]any)
	with := func(name string, f func(m map[string]any)) json.RawMessage {
		m := map[string]any{}
		for k, x := range v {
			m[k] = x
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	for _, r := range req {
		name := r.(string)
		out = append(out, badAnswer{with(name, func(m map[string]any) { delete(m, name) }), "no " + name})
	}
	for name := range v {
		p, _ := props[name].(map[string]any)
		wrong, ok := wrongKind(p)
		if !ok {
			continue
		}
		out = append(out, badAnswer{with(name, func(m map[string]any) { m[name] = wrong }), name + " of another kind"})
	}
	return out
}

// wrongKind is a value of a kind a schema does not allow; false when it
// allows any.
func wrongKind(p map[string]any) (any, bool) {
	var kinds []string
	switch t := p["type"].(type) {
	case string:
		kinds = []string{t}
	case []any:
		for _, k := range t {
			kinds = append(kinds, k.(string))
		}
	}
	if len(kinds) == 0 {
		return nil, false
	}
	has := func(k string) bool {
		for _, x := range kinds {
			if x == k {
				return true
			}
		}
		return false
	}
	switch {
	case !has("string"):
		return "x", true
	case !has("boolean"):
		return true, true
	case !has("integer") && !has("number"):
		return 7, true
	case !has("array"):
		return []any{}, true
	case !has("object"):
		return map[string]any{}, true
	}
	return nil, false
}
