package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/gorilla/mux"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"countersign/argschema"
	"countersign/connectors"
	"countersign/inbox"
)

// The OpenAPI document (GET /openapi.json, OpenAPI 3.1) is built from the
// router's own routes, the Go types each handler reads and writes (their
// JSON Schemas inferred from the types), and the connectors' declared
// operations: the /call body is a oneOf of every operation's arguments
// schema, discriminated by "operation". A route without a description
// below is still in the document, marked undocumented, and the router test
// refuses it.

// routeDoc describes one route (method and path template) of the router.
type routeDoc struct {
	summary string
	auth    string       // "agent", "owner", "" (public)
	request reflect.Type // the JSON body it reads; nil: none
	// response is the JSON answer of a success; content, when set, is the
	// media type of an answer that is not JSON.
	response reflect.Type
	content  string
	query    []queryParam
	// optionalBody: the body may be left out.
	optionalBody bool
}

type queryParam struct{ name, description string }

func typ[T any]() reflect.Type { return reflect.TypeFor[T]() }

// routeDocs are the routes' descriptions, by "METHOD path" (DocPath).
var routeDocs = map[string]routeDoc{
	"GET /":                                {summary: "The web inbox's page", content: "text/html"},
	"GET /assets/{file}":                   {summary: "The web inbox's bundle, content-hashed names, cached for a year", content: "text/javascript"},
	"HEAD /assets/{file}":                  {summary: "The web inbox's bundle (headers only)", content: "text/javascript"},
	"GET /healthz":                         {summary: "The service, its version and its schema", response: typ[healthAnswer]()},
	"GET /readyz":                          {summary: "Whether the store answers (503 when it does not)", response: typ[readyAnswer]()},
	"GET /connectors":                      {summary: "The connector catalogue: operations with kind, price, description, argument and result schemas, and an answer operation's shape of the text the owner supplies; the task operations", response: typ[catalogueAnswer]()},
	"GET /.well-known/countersign-run-key": {summary: "The run keys that sign receipts (SPEC §11)", response: typ[runKeysAnswer]()},
	"GET /openapi.json":                    {summary: "This document", content: "application/json"},
	"POST /call/{owner}/{project}": {summary: "Call an operation of a project (SPEC §5): the output, awaiting_owner with a task, or a refusal",
		auth: "agent", response: typ[json.RawMessage]()},
	"GET /agent/projects": {summary: "The projects granted to this agent key", auth: "agent", response: typ[grantsAnswer]()},
	"POST /mcp":           {summary: "MCP over streamable HTTP (SPEC §16): a JSON-RPC message", auth: "agent", request: typ[json.RawMessage](), content: "text/event-stream"},
	"GET /mcp":            {summary: "MCP over streamable HTTP: the session's stream of notifications", auth: "agent", content: "text/event-stream"},
	"DELETE /mcp":         {summary: "MCP over streamable HTTP: end the session", auth: "agent"},

	"POST /inbox/session":   {summary: "Sign a device in with a signed sentence (SPEC §7)", request: typ[inbox.SignInRequest](), response: typ[signedIn]()},
	"DELETE /inbox/session": {summary: "Sign this device out", auth: "owner", response: typ[revokedAnswer]()},
	"GET /inbox/devices":    {summary: "The account's signed-in devices", auth: "owner", response: typ[devicesAnswer]()},
	"DELETE /inbox/devices/{id}": {summary: "Withdraw a device, with a confirmation", auth: "owner",
		request: typ[confirmationRequest](), response: typ[revokedAnswer]()},
	"GET /inbox/tasks": {summary: "One page of the account's inbox: its own tasks and those of other owners whose projects name it among their approvers (role, approvals)", auth: "owner", response: typ[taskPage](),
		query: []queryParam{{"show", "waiting (default) or closed"}, {"before", "the id of the last task of the previous page"}, {"limit", "1 to 100"}}},
	"DELETE /inbox/tasks": {summary: "Cancel the open tasks of a preparer or a project", auth: "owner", response: typ[countAnswer](),
		query: []queryParam{{"preparer", "an agent account"}, {"project", "a project name"}}},
	"GET /inbox/tasks/{id}":           {summary: "One task (its content is ciphertext)", auth: "owner", response: typ[inbox.TaskView]()},
	"DELETE /inbox/tasks/{id}":        {summary: "Cancel an open task", auth: "owner", response: typ[inbox.Moved]()},
	"GET /inbox/tasks/{id}/files/{n}": {summary: "A task's file n, as ciphertext", auth: "owner", response: typ[fileAnswer]()},
	"GET /inbox/tasks/{id}/origin":    {summary: "The receipt of the run that opened the task (SPEC §11)", auth: "owner", response: typ[inbox.Origin]()},
	"GET /inbox/tasks/{id}/events":    {summary: "The task's moves", auth: "owner", response: typ[historyAnswer]()},
	"POST /inbox/tasks/{id}/approve": {summary: "Approve a task with a wallet signature over its summary, hash and supply (SPEC §7); the summary only rebuilds the sentence and is never kept. A task that needs the approvals of several accounts (SPEC §13 approvers) is approved by each with their own account's signature, nothing supplied and no note: it stays open (state open, approvals) until the threshold is reached, then moves to approved once; the same account twice is 409 conflict, the task's preparer 403 confirmation_required", auth: "owner",
		request: typ[inbox.ApproveRequest](), response: typ[inbox.Approved]()},
	"POST /inbox/tasks/approve": {summary: "Approve 2–10 open confirm tasks of one project with one wallet signature over the batch sentence naming each summary (SPEC §6, §7); all are approved or none, a refusal names its task (task_id), and the summaries only rebuild the sentence; a task that needs the approvals of several accounts is refused (approve it alone)", auth: "owner",
		request: typ[inbox.BatchApproveRequest](), response: typ[inbox.BatchApproved]()},
	"POST /inbox/tasks/{id}/reject": {summary: "Reject a task, with a reason sealed to its reply key; any approver of a task that needs several accounts' approvals may reject it, and one rejection ends it (rejected_by)", auth: "owner",
		request: typ[rejectRequest](), optionalBody: true, response: typ[inbox.Moved]()},
	"POST /inbox/tasks/{id}/acknowledge": {summary: "Got it: close a notice", auth: "owner", response: typ[inbox.Moved]()},
	"POST /inbox/unlock":                 {summary: "Wrap the content key of every waiting task of the account's inbox (its own and those it approves) to every current device", auth: "owner", response: typ[waitingAnswer]()},
	"POST /inbox/mutes":                  {summary: "Mute an agent or a project", auth: "owner", request: typ[muteRequest](), response: typ[countAnswer]()},
	"GET /inbox/mutes":                   {summary: "The mutes", auth: "owner", response: typ[mutesAnswer]()},
	"DELETE /inbox/mutes":                {summary: "Lift a mute", auth: "owner", request: typ[unmuteRequest](), response: typ[countAnswer]()},
	"GET /inbox/projects":                {summary: "The owner's projects", auth: "owner", response: typ[projectsAnswer]()},
	"PUT /inbox/projects/{name}": {summary: "Set a project, with a confirmation", auth: "owner",
		request: typ[projectRequest](), response: typ[inbox.ProjectView]()},
	"POST /inbox/projects/{name}/allow": {summary: "What \"Always allow this\" sets the project to (SPEC §13): the project text to confirm and PUT, with the rule allowing the write `when` names inserted first, and its sentence; changes nothing", auth: "owner",
		request: typ[inbox.AllowRequest](), response: typ[inbox.AllowProposal]()},
	"DELETE /inbox/projects/{name}": {summary: "Remove a project, with a confirmation", auth: "owner",
		request: typ[confirmationRequest](), response: typ[deletedAnswer]()},
	"GET /inbox/events": {summary: "Server-Sent Events: task events {task_id, state} of the account's inbox (its own tasks and those it approves; a task whose approvals changed is told with state open), a heartbeat every 15 s", auth: "owner", content: "text/event-stream"},
	"PUT /inbox/webhook": {summary: "Name the webhook's URL, with a confirmation; the answer shows the secret once", auth: "owner",
		request: typ[webhookRequest](), response: typ[inbox.WebhookView]()},
	"GET /inbox/webhook": {summary: "The webhook", auth: "owner", response: typ[inbox.WebhookView]()},
	"DELETE /inbox/webhook": {summary: "Remove the webhook, with a confirmation", auth: "owner",
		request: typ[confirmationRequest](), response: typ[removedAnswer]()},
	"GET /inbox/webhook/deliveries": {summary: "The last 100 delivery attempts", auth: "owner", response: typ[deliveriesAnswer]()},
	"POST /inbox/webhook/test":      {summary: "Send a ping event now", auth: "owner", response: typ[inbox.DeliveryView]()},
	"PUT /inbox/push": {summary: "Set this device's Web Push subscription (SPEC §10): a known push service's endpoint and its keys, sealed at once",
		auth: "owner", request: typ[inbox.PushRequest](), response: typ[inbox.PushView]()},
	"DELETE /inbox/push":        {summary: "Remove this device's Web Push subscription", auth: "owner", response: typ[inbox.PushView]()},
	"GET /inbox/push/key":       {summary: "The service's VAPID public key, the applicationServerKey browsers subscribe with", auth: "owner", response: typ[inbox.PushKeyView]()},
	"GET /sw.js":                {summary: "The web inbox's service worker: shows a fixed notification for each push and opens the inbox", content: "text/javascript"},
	"GET /manifest.webmanifest": {summary: "The web inbox's web app manifest (a Home Screen app on iOS receives pushes)", content: "application/manifest+json"},
}

// templateVar is a path variable with its pattern, as gorilla/mux writes it.
var templateVar = regexp.MustCompile(`\{([a-z_]+)(:[^}]*)?\}`)

// DocPath is a router template as the document names it: variables
// without their patterns, a prefix route as {file} under it.
func DocPath(tpl string, prefix bool) string {
	p := templateVar.ReplaceAllString(tpl, "{$1}")
	if prefix {
		p += "{file}"
	}
	return p
}

// Route is one method of one route of the router.
type Route struct {
	Method, Template string
	Prefix           bool
}

// Routes lists the router's routes, by method.
func (s *Server) Routes() []Route {
	var out []Route
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		prefix := isPrefix(route)
		for _, m := range methods {
			out = append(out, Route{Method: m, Template: tpl, Prefix: prefix})
		}
		return nil
	})
	return out
}

// isPrefix tells whether a route matches every path under its template.
func isPrefix(route *mux.Route) bool {
	re, err := route.GetPathRegexp()
	return err == nil && !strings.HasSuffix(re, "$")
}

// docPathOf is the path the document names a route by.
func docPathOf(route *mux.Route) string {
	tpl, _ := route.GetPathTemplate()
	return DocPath(tpl, isPrefix(route))
}

var (
	// typeSchemas are how the Go types the handlers use appear in JSON.
	typeSchemas = map[reflect.Type]*jsonschema.Schema{
		typ[[]byte]():          {Types: []string{"null", "string"}, ContentEncoding: "base64"},
		typ[json.RawMessage](): {Description: "any JSON value"},
	}
	schemaName = regexp.MustCompile(`[^A-Za-z0-9._-]`)
)

// openAPI builds the document.
func (s *Server) openAPI() ([]byte, error) {
	components := map[string]any{}
	ref := func(t reflect.Type) (map[string]any, error) {
		name := schemaName.ReplaceAllString(strings.TrimPrefix(t.String(), "httpapi."), "_")
		if _, ok := components[name]; !ok {
			sch, err := forType(t)
			if err != nil {
				return nil, err
			}
			components[name] = sch
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}, nil
	}
	components["OwnerError"] = mustSchema(typ[ownerError]())
	callBody, callAnswer, err := s.callSchemas(components)
	if err != nil {
		return nil, err
	}
	paths := map[string]map[string]any{}
	for _, rt := range s.Routes() {
		path := DocPath(rt.Template, rt.Prefix)
		doc, documented := routeDocs[rt.Method+" "+path]
		op := map[string]any{"summary": doc.summary, "operationId": operationID(rt.Method, path)}
		if !documented {
			op["summary"] = "undocumented"
		}
		var params []any
		for _, m := range templateVar.FindAllStringSubmatch(rt.Template, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		if rt.Prefix {
			params = append(params, map[string]any{"name": "file", "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range doc.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.description, "schema": map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		switch doc.auth {
		case "agent":
			op["security"] = []any{map[string]any{"agentKey": []string{}}}
		case "owner":
			op["security"] = []any{map[string]any{"ownerSession": []string{}}, map[string]any{"sessionCookie": []string{}}}
		default:
			op["security"] = []any{} // public: no credentials
		}
		isCall := rt.Method+" "+rt.Template == "POST /call/{owner}/{project}"
		if isCall {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": callBody}}}
		} else if doc.request != nil {
			sch, err := ref(doc.request)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": !doc.optionalBody, "content": map[string]any{"application/json": map[string]any{"schema": sch}}}
		}
		responses := map[string]any{}
		switch {
		case doc.response != nil:
			sch, err := ref(doc.response)
			if err != nil {
				return nil, err
			}
			if isCall {
				sch = callAnswer
			}
			responses["200"] = map[string]any{"description": "the answer", "content": map[string]any{"application/json": map[string]any{"schema": sch}}}
		case doc.content != "":
			responses["200"] = map[string]any{"description": "the answer", "content": map[string]any{doc.content: map[string]any{}}}
		default:
			responses["200"] = map[string]any{"description": "the answer"}
		}
		errRef := "#/components/schemas/OwnerError"
		if doc.auth == "agent" {
			errRef = "#/components/schemas/AgentRefusal"
		}
		if rt.Template != "/" && !rt.Prefix && rt.Template != "/readyz" {
			responses["4XX"] = map[string]any{"description": "a refusal", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": errRef}}}}
			responses["5XX"] = map[string]any{"description": "the service or the store is unavailable", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": errRef}}}}
		}
		if rt.Template == "/mcp" {
			// The MCP SDK answers its own refusals in plain text, and a
			// notification or a response with 202 and no body.
			for _, class := range []string{"4XX", "5XX"} {
				content := responses[class].(map[string]any)["content"].(map[string]any)
				content["text/plain"] = map[string]any{}
				content["application/json"] = map[string]any{"schema": map[string]any{"anyOf": []any{
					map[string]any{"$ref": errRef},
					map[string]any{"type": "object", "required": []string{"jsonrpc", "error"}, "description": "a JSON-RPC error",
						"properties": map[string]any{"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"description": "the request's id, or null"},
							"error": map[string]any{"type": "object", "required": []string{"code", "message"},
								"properties": map[string]any{"code": map[string]any{"type": "integer"}, "message": map[string]any{"type": "string"}}}}},
				}}}
			}
			responses["202"] = map[string]any{"description": "accepted (a notification or a response)"}
			if rt.Method == http.MethodDelete {
				responses = map[string]any{"204": map[string]any{"description": "the session ended"}, "4XX": responses["4XX"], "5XX": responses["5XX"]}
			}
			if rt.Method == http.MethodPost {
				responses["200"] = map[string]any{"description": "the JSON-RPC answer, as JSON or as an event stream",
					"content": map[string]any{"application/json": map[string]any{}, "text/event-stream": map[string]any{}}}
			}
		}
		if rt.Prefix {
			responses["404"] = map[string]any{"description": "no such file", "content": map[string]any{"text/plain": map[string]any{}}}
		}
		if rt.Template == "/readyz" {
			sch, _ := ref(typ[readyAnswer]())
			responses["503"] = map[string]any{"description": "the store does not answer", "content": map[string]any{"application/json": map[string]any{"schema": sch}}}
		}
		op["responses"] = responses
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.Method)] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Countersign", "version": s.opts.Version,
			"description": "An owner-confirmation inbox: the agent API (/call, /agent/projects, /mcp) and the owner's inbox API (/inbox/…)."},
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"servers":           []any{map[string]any{"url": s.serverURL(), "description": "this service"}},
		"paths":             paths,
		"components": map[string]any{
			"schemas": components,
			"securitySchemes": map[string]any{
				"agentKey":     map[string]any{"type": "http", "scheme": "bearer", "description": "an agent key, ak_…"},
				"ownerSession": map[string]any{"type": "http", "scheme": "bearer", "description": "an owner's session token, os_…"},
				"sessionCookie": map[string]any{"type": "apiKey", "in": "cookie", "name": s.browser.cookieName(),
					"description": "the web page's session: " + SecureSessionCookie + " where the cookie is Secure, " + SessionCookie + " on a plain http loopback origin"},
			},
		},
	}
	return json.MarshalIndent(doc, "", " ")
}

// serverURL is where the document's paths are served: the public URL, or
// the document's own origin when none is set.
func (s *Server) serverURL() string {
	if u := strings.TrimSuffix(s.opts.PublicURL, "/"); u != "" {
		return u
	}
	return "/"
}

// forType is the JSON Schema of a Go type, as the handlers' bodies appear.
func forType(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
}

func mustSchema(t reflect.Type) *jsonschema.Schema {
	sch, err := forType(t)
	if err != nil {
		panic(err)
	}
	return sch
}

// callSchemas puts each operation's call schema into components, with
// what the call answers, and returns the /call body's schema and its 200
// answer's.
//
// The body is a oneOf of the operations' call schemas (call.<connector>.
// <operation>: the arguments schema with "operation" fixed to its name),
// discriminated by operation. OpenAPI cannot make an answer depend on the
// request's body, so each operation's answer is a component of its own,
// answer.<connector>.<operation> — an anyOf of its declared result
// (result.<connector>.<operation>), awaiting_owner and notified when its
// connector opens tasks, and the refusal — which its call schema names in
// x-countersign-answer; the 200 answer is an anyOf of them all. Task
// operations are keyed task.<operation>, and task_status's result is an
// anyOf of the answer operations' results.
func (s *Server) callSchemas(components map[string]any) (body, answer map[string]any, err error) {
	const prefix = "#/components/schemas/"
	ref := func(name string) map[string]any { return map[string]any{"$ref": prefix + name} }
	for name, raw := range map[string]json.RawMessage{"AwaitingOwner": connectors.AwaitingOwnerSchema,
		"Notified": connectors.NotifiedSchema, "AgentRefusal": connectors.RefusalSchema} {
		if components[name], err = schemaMap(raw); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	names := s.opts.Connectors.Names()
	sort.Strings(names)
	// result names the component of an operation's declared result, ""
	// when it has none of its own.
	result := func(key string, op connectors.Operation) (string, error) {
		switch {
		case op.Result == nil:
			components["UndeclaredResult"] = map[string]any{"type": "object", "title": "undeclared result",
				"description": "The operation declares no schema of its output: a JSON object."}
			return "UndeclaredResult", nil
		case connectors.IsTaskOnly(op.Result):
			return "", nil
		}
		m, err := schemaMap(op.Result)
		if err != nil {
			return "", fmt.Errorf("%s: its result: %w", key, err)
		}
		if _, ok := m["title"]; !ok {
			m["title"] = op.Name + " result"
		}
		components["result."+key] = m
		return "result." + key, nil
	}
	// The answer operations' results: what task_status carries as result.
	var reported []any
	for _, n := range names {
		for _, op := range s.opts.Connectors[n].Operations {
			if op.Kind != connectors.Answer {
				continue
			}
			name, err := result(n+"."+op.Name, op)
			if err != nil {
				return nil, nil, err
			}
			if !slices.ContainsFunc(reported, func(r any) bool { return r.(map[string]any)["$ref"] == prefix+name }) {
				reported = append(reported, ref(name))
			}
		}
	}

	var calls, answers []any
	mapping := map[string]any{}
	seen := map[string]int{}
	add := func(key, connector string, op connectors.Operation, tasks bool) error {
		m, err := argschema.WithMember(op.Schema, "operation", map[string]any{"const": op.Name})
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		m["description"] = op.Description
		m["x-countersign-answer"] = prefix + "answer." + key
		components["call."+key] = m
		calls = append(calls, ref("call."+key))
		seen[op.Name]++
		mapping[op.Name] = prefix + "call." + key
		var of []any
		name, err := result(key, op)
		if err != nil {
			return err
		}
		if name != "" {
			if r, ok := components[name].(map[string]any); ok && connector == "" && len(reported) > 0 {
				if props, ok := r["properties"].(map[string]any); ok && props["result"] != nil {
					res, _ := props["result"].(map[string]any)
					props["result"] = map[string]any{"type": "object", "description": res["description"], "anyOf": reported}
				}
			}
			of = append(of, ref(name))
		}
		if tasks {
			of = append(of, ref("AwaitingOwner"), ref("Notified"))
		}
		of = append(of, ref("AgentRefusal"))
		who := "every project"
		if connector != "" {
			who = "a " + connector + " project"
		}
		components["answer."+key] = map[string]any{"title": op.Name + " answer",
			"description": "What POST /call answers to " + op.Name + " of " + who + ": its output, a task it opened, or a refusal.",
			"anyOf":       of}
		answers = append(answers, ref("answer."+key))
		return nil
	}
	for _, op := range connectors.PlatformOperations {
		if err := add("task."+op.Name, "", op, false); err != nil {
			return nil, nil, err
		}
	}
	for _, n := range names {
		c := s.opts.Connectors[n]
		for _, op := range c.Operations {
			if op.Kind == connectors.Answer {
				continue
			}
			if err := add(n+"."+op.Name, n, op, c.Tasks); err != nil {
				return nil, nil, err
			}
		}
	}
	for name, n := range seen {
		if n > 1 { // two connectors' operations of one name: no one mapping
			delete(mapping, name)
		}
	}
	answer = map[string]any{"description": "The answer to the operation the body names, answer.<connector>.<operation> " +
		"(its call schema names it in x-countersign-answer): the operation's output, awaiting_owner or notified when it opened a task, " +
		"or a refusal {success: false, error}.", "anyOf": answers}
	return map[string]any{"oneOf": calls, "discriminator": map[string]any{"propertyName": "operation", "mapping": mapping}}, answer, nil
}

// schemaMap reads a declared schema for the document.
func schemaMap(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func operationID(method, path string) string {
	p := strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_", "-", "_").Replace(strings.Trim(path, "/"))
	if p == "" {
		p = "root"
	}
	return strings.ToLower(method) + "_" + p
}

// openAPIDoc serves GET /openapi.json.
func (s *Server) openAPIDoc(w http.ResponseWriter, _ *http.Request) {
	doc, err := s.OpenAPI()
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(doc)
}

// OpenAPI is the document GET /openapi.json serves.
func (s *Server) OpenAPI() ([]byte, error) {
	s.docOnce.Do(func() { s.doc, s.docErr = s.openAPI() })
	return s.doc, s.docErr
}

// docCache holds the built document and its checker.
type docCache struct {
	docOnce   sync.Once
	doc       []byte
	docErr    error
	checkOnce sync.Once
	checker   *checker
	checkErr  error
}

// Handles tells whether the router serves method on path, and the route's
// template in the document's terms.
func (s *Server) Handles(method, path string) (string, bool) {
	r, err := http.NewRequest(method, path, nil)
	if err != nil {
		return "", false
	}
	var match mux.RouteMatch
	if !s.router.Match(r, &match) || match.Route == nil || match.MatchErr != nil {
		return "", false
	}
	return docPathOf(match.Route), true
}

// CheckResponse checks an answer the server gave to r against the
// document: its route and method are in it, its status is one the
// operation names (or its class, 4XX and 5XX), and a JSON answer fits the
// schema of that response. Tests run it on every answer they get.
func (s *Server) CheckResponse(r *http.Request, status int, contentType string, body []byte) error {
	var match mux.RouteMatch
	if !s.router.Match(r, &match) || match.Route == nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil // no route: the router's own refusal
		}
		return fmt.Errorf("%s %s: no route, yet %d", r.Method, r.URL.Path, status)
	}
	path := docPathOf(match.Route)
	doc, err := s.OpenAPI()
	if err != nil {
		return err
	}
	s.checkOnce.Do(func() { s.checker, s.checkErr = newChecker(doc) })
	if s.checkErr != nil {
		return s.checkErr
	}
	return s.checker.check(path, strings.ToLower(r.Method), status, contentType, body)
}

// checker validates answers against the document's response schemas.
type checker struct {
	doc      map[string]any
	compiler *validator.Compiler
	mu       sync.Mutex
	compiled map[string]*validator.Schema
}

func newChecker(doc []byte) (*checker, error) {
	parsed, err := validator.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	if err := c.AddResource("urn:countersign:openapi", parsed); err != nil {
		return nil, err
	}
	m, _ := parsed.(map[string]any)
	return &checker{doc: m, compiler: c, compiled: map[string]*validator.Schema{}}, nil
}

func (c *checker) check(path, method string, status int, contentType string, body []byte) error {
	paths, _ := c.doc["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[method].(map[string]any)
	if op == nil {
		return fmt.Errorf("%s %s is not in the document", method, path)
	}
	responses, _ := op["responses"].(map[string]any)
	code := fmt.Sprint(status)
	resp, ok := responses[code].(map[string]any)
	if !ok {
		code = fmt.Sprintf("%dXX", status/100)
		if resp, ok = responses[code].(map[string]any); !ok {
			return fmt.Errorf("%s %s answered %d, which the document does not name", method, path, status)
		}
	}
	content, _ := resp["content"].(map[string]any)
	media := strings.TrimSpace(strings.Split(contentType, ";")[0])
	if len(content) == 0 {
		return nil
	}
	if _, ok := content[media]; !ok {
		return fmt.Errorf("%s %s answered %d as %q, which the document does not name", method, path, status, media)
	}
	if media != "application/json" {
		return nil
	}
	mt, _ := content[media].(map[string]any)
	if _, ok := mt["schema"]; !ok {
		return nil
	}
	ptr := "#/paths/" + escapePointer(path) + "/" + method + "/responses/" + code + "/content/application~1json/schema"
	c.mu.Lock()
	sch, ok := c.compiled[ptr]
	if !ok {
		var err error
		if sch, err = c.compiler.Compile("urn:countersign:openapi" + ptr); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("%s %s: the document's schema does not compile: %w", method, path, err)
		}
		c.compiled[ptr] = sch
	}
	c.mu.Unlock()
	v, err := validator.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not JSON", method, path, status)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that does not fit the document: %v", method, path, status, err)
	}
	return nil
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
