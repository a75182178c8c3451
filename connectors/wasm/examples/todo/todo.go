// Command todo is a small read/write connector as a WebAssembly module: it
// lists, adds and completes to-dos on a to-do API (todotest is its fake)
// with the project's token, which the host attaches to each request — the
// module never sees it. Adding and completing are writes: when the owner's
// policy asks to see them first, the module opens a confirm task, and the
// answer run makes the write the owner approved, once more checked
// against the policy and the day's number of writes.
//
// go generate builds todo.wasm with the standard toolchain and writes its
// manifest; both are committed, and a test holds them to what this source
// builds.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"countersign"
	connectors "countersign/connectors/wasm/guest"
	"countersign/policy"
)

//go:generate sh -c "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags='-s -buildid=' -o todo.wasm . && go run . todo.wasm > manifest.json"

// API is the to-do service's origin, a host of the manifest.
const API = "https://api.todo.example"

// defaultPerDay bounds writes a day when the policy sets no max_writes_per_day.
const defaultPerDay = 50

func init() { connectors.Register(New()) }

func main() { connectors.Main() }

const todoSchema = `{"type": "object", "properties": {
    "id": {"type": "integer", "minimum": 1}, "title": {"type": "string"}, "done": {"type": "boolean"}},
  "required": ["id", "title", "done"], "additionalProperties": false}`

// New is the to-do connector.
func New() *connectors.Connector {
	return &connectors.Connector{
		Name: "todo", Version: "1.0.0", Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{"max_writes_per_day": policy.Count},
		Hosts:      []string{"api.todo.example"},
		Credentials: &connectors.Credentials{Members: []string{"token"},
			Header: map[string]string{"Authorization": "Bearer {token}"}},
		Operations: []connectors.Operation{
			{Name: "todos_list", Kind: connectors.Read, Run: list,
				Description: "Lists the owner's to-dos.",
				Schema:      json.RawMessage(`{"type": "object", "additionalProperties": false}`),
				Examples:    []json.RawMessage{json.RawMessage(`{}`)},
				Result: json.RawMessage(`{"type": "object", "properties": {"todos": {"type": "array", "items": ` + todoSchema + `}},
  "required": ["todos"], "additionalProperties": false}`)},
			{Name: "todo_add", Kind: connectors.Write, Price: 1_000, Run: add,
				Description: "Adds a to-do to the owner's list (the owner may ask to see it first).",
				Schema: json.RawMessage(`{"type": "object", "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "what to do"}},
  "required": ["title"], "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{"title": "Renew the passport"}`)},
				Result:   json.RawMessage(todoSchema)},
			{Name: "todo_done", Kind: connectors.Write, Price: 1_000, Run: done,
				Description: "Marks one of the owner's to-dos done (the owner may ask to see it first).",
				Schema: json.RawMessage(`{"type": "object", "properties": {
    "id": {"type": "integer", "minimum": 1, "description": "the to-do's id, as todos_list gives it"}},
  "required": ["id"], "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{"id": 1}`)},
				Result:   json.RawMessage(todoSchema)},
			{Name: "confirm", Kind: connectors.Answer, Answer: confirm,
				Description: "Makes the write the owner approved.",
				Result:      json.RawMessage(todoSchema)},
		},
	}
}

type todo struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

// write is a task's sealed state: the write to make.
type write struct {
	Op    string `json:"op"`
	Title string `json:"title,omitempty"`
	ID    int    `json:"id,omitempty"`
}

func list(ctx context.Context, c *connectors.Call) (any, error) {
	if err := c.Decode(&struct{}{}); err != nil {
		return nil, err
	}
	var out struct {
		Todos []todo `json:"todos"`
	}
	if err := call(ctx, "GET", "/v1/todos", nil, &out); err != nil {
		return nil, err
	}
	if out.Todos == nil {
		out.Todos = []todo{}
	}
	return out, nil
}

func add(ctx context.Context, c *connectors.Call) (any, error) {
	var args struct {
		Title string `json:"title"`
	}
	if err := c.Decode(&args); err != nil {
		return nil, err
	}
	title := strings.TrimSpace(args.Title)
	if title == "" || !utf8.ValidString(title) {
		return nil, connectors.Refuse(countersign.InvalidRequest, "`title` is text of 1 to 200 characters")
	}
	w := write{Op: "todo_add", Title: title}
	display := countersign.Display{
		Title:   "Add a to-do",
		Summary: "Adds this to-do to your list; you can mark it done or delete it later.",
		Fields:  []countersign.Field{{Kind: countersign.FieldText, Label: "To-do", Values: []string{title}, WrittenBy: countersign.WrittenByAgent}},
	}
	return decide(ctx, c, w, display)
}

func done(ctx context.Context, c *connectors.Call) (any, error) {
	var args struct {
		ID int `json:"id"`
	}
	if err := c.Decode(&args); err != nil {
		return nil, err
	}
	// Read the to-do first: the owner is shown what it says.
	t, err := find(ctx, args.ID)
	if err != nil {
		return nil, err
	}
	w := write{Op: "todo_done", ID: t.ID}
	display := countersign.Display{
		Title:   "Mark a to-do done",
		Summary: "Marks this to-do done; it stays on your list and can be opened again.",
		Fields: []countersign.Field{
			{Kind: countersign.FieldText, Label: "To-do", Values: []string{t.Title}, WrittenBy: countersign.WrittenByProject},
			{Kind: countersign.FieldText, Label: "Number", Values: []string{strconv.Itoa(t.ID)}, WrittenBy: countersign.WrittenByProject},
		},
	}
	return decide(ctx, c, w, display)
}

// decide asks the policy about a write: refuse it, ask the owner in a
// confirm task, or make it now.
func decide(ctx context.Context, c *connectors.Call, w write, display countersign.Display) (any, error) {
	d := c.Decide(policy.Facts{})
	switch d.Outcome {
	case policy.Refuse:
		return nil, connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
	case policy.Ask:
		state, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm, Display: display,
			AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}, State: state})
		if err != nil {
			return nil, err
		}
		return connectors.AwaitingOwner(task), nil
	}
	if err := reserve(ctx, c.Policy, func(limit int) (bool, error) { return c.Reserve(ctx, policy.Direct, limit) }); err != nil {
		return nil, err
	}
	t, err := perform(ctx, w)
	if err != nil {
		return nil, err
	}
	c.Did(connectors.Did{Title: display.Title, Summary: display.Summary, Outcome: outcome(w, t)})
	return t, nil
}

// confirm makes the write the owner approved, if the policy as it is now
// still lets it happen.
func confirm(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	var w write
	if err := json.Unmarshal(a.State, &w); err != nil || (w.Op != "todo_add" && w.Op != "todo_done") {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "The task's sealed write does not read.")
	}
	if d := a.Decide(w.Op, policy.Facts{}); d.Outcome == policy.Refuse {
		return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s", d.Sentence)
	}
	if err := reserve(ctx, a.Policy, func(limit int) (bool, error) { return a.Reserve(ctx, limit) }); err != nil {
		return connectors.Report{}, connectors.Refused(countersign.ErrorCode(err), false, "%s", countersign.ErrorMessage(err))
	}
	t, err := perform(ctx, w)
	if err != nil {
		return connectors.Report{}, connectors.RefusedUnknown(countersign.ErrorCode(err), "%s", countersign.ErrorMessage(err))
	}
	return connectors.Report{Result: t, Outcome: outcome(w, t)}, nil
}

// reserve counts a write against the day's number.
func reserve(ctx context.Context, p *connectors.Policy, count func(limit int) (bool, error)) error {
	limit, ok := p.Count("max_writes_per_day")
	if !ok {
		limit = defaultPerDay
	}
	ok, err := count(limit)
	if err != nil {
		return err
	}
	if !ok {
		return connectors.Refuse(countersign.PolicyDenied, "the day's %d writes are made: the policy's max_writes_per_day", limit)
	}
	return nil
}

func perform(ctx context.Context, w write) (todo, error) {
	var t todo
	switch w.Op {
	case "todo_add":
		body, _ := json.Marshal(map[string]string{"title": w.Title})
		return t, call(ctx, "POST", "/v1/todos", body, &t)
	default:
		return t, call(ctx, "PATCH", "/v1/todos/"+strconv.Itoa(w.ID), []byte(`{"done":true}`), &t)
	}
}

func outcome(w write, t todo) connectors.Outcome {
	if w.Op == "todo_add" {
		return connectors.Outcome{Text: fmt.Sprintf("Added to-do %d", t.ID)}
	}
	return connectors.Outcome{Text: fmt.Sprintf("Marked to-do %d done", t.ID)}
}

func find(ctx context.Context, id int) (todo, error) {
	var out struct {
		Todos []todo `json:"todos"`
	}
	if err := call(ctx, "GET", "/v1/todos", nil, &out); err != nil {
		return todo{}, err
	}
	for _, t := range out.Todos {
		if t.ID == id {
			return t, nil
		}
	}
	return todo{}, connectors.Refuse(countersign.InvalidRequest, "there is no to-do %d", id)
}

// call makes one request to the API and reads its JSON answer into out.
func call(ctx context.Context, method, path string, body []byte, out any) error {
	req := connectors.Request{Method: method, URL: API + path, Body: body,
		Header: map[string][]string{"Accept": {"application/json"}}}
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	resp, err := connectors.Fetch(ctx, req)
	if err != nil {
		if he, ok := err.(*connectors.HTTPError); ok {
			return he.Err()
		}
		return err
	}
	switch {
	case resp.Status == 401 || resp.Status == 403:
		return connectors.Refuse(countersign.InvalidRequest, "the to-do service refused the project's token: the owner must correct the project's credentials")
	case resp.Status == 404:
		return connectors.Refuse(countersign.InvalidRequest, "the to-do service has no such to-do")
	case resp.Status < 200 || resp.Status > 299:
		return connectors.Refuse(countersign.Internal, "the to-do service answered %d", resp.Status)
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return connectors.Refuse(countersign.Internal, "the to-do service's answer does not read")
	}
	return nil
}
