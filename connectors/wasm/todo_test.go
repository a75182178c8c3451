package wasm_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors/connectortest"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/examples/todo/todotest"
	"countersign/connectors/wasm/wasmtest"
	"countersign/egress"
	"countersign/policy"
)

const todoToken = "todo-token-0c9e"

// todoWorld is the to-do example on a harness, its API a loopback fake.
func todoWorld(t *testing.T) (*connectortest.Harness, *todotest.Fake) {
	t.Helper()
	fake := todotest.New(todoToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	m := wasmtest.Load(t, wasmtest.Example("todo"), wasm.Options{Egress: egress.Options{AllowPrivate: true},
		Redirect: map[string]string{"api.todo.example": srv.URL}})
	h := connectortest.New(t, m.Connector)
	h.Credentials = []byte(`{"token": "` + todoToken + `"}`)
	return h, fake
}

// TestTodoThroughTheHarness: the to-do example passes the connectortest
// harness as a compiled-in connector does: a read, a write the policy
// asks about (a confirm task with its summary, the write made by the
// answer run once approved), a write made at once (told to the owner's
// history), a write the policy refuses, the day's number, and the
// upstream's refusals in the contract's words.
func TestTodoThroughTheHarness(t *testing.T) {
	t.Parallel()
	h, fake := todoWorld(t)
	fake.Add("Water the plants")

	out, err := h.Call(ctx, `{"operation": "todos_list"}`)
	if err != nil || string(out) != `{"todos":[{"id":1,"title":"Water the plants","done":false}]}` {
		t.Fatalf("todos_list: %s %v", out, err)
	}

	// Asked first: a confirm task, nothing written until the answer.
	h.Policy = []byte(`{"confirm": ["todo_add", "todo_done"]}`)
	out, err = h.Call(ctx, `{"operation": "todo_add", "title": "Renew the passport"}`)
	if err != nil {
		t.Fatal(err)
	}
	task, err := h.Awaiting(out)
	if err != nil {
		t.Fatal(err)
	}
	d := task.Spec.Display
	if task.Spec.Kind != countersign.KindConfirm || d.Title != "Add a to-do" || d.Summary == "" ||
		len(d.Fields) != 1 || d.Fields[0].Values[0] != "Renew the passport" || d.Fields[0].WrittenBy != countersign.WrittenByAgent {
		t.Fatalf("the task shows %+v", task.Spec)
	}
	if len(fake.Todos()) != 1 {
		t.Fatal("the write happened before the owner's approval")
	}
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil || string(res) != `{"id":2,"title":"Renew the passport","done":false}` {
		t.Fatalf("the answer: %s %v", res, err)
	}
	if s, _ := h.Status(task.Task.ID); s.State != countersign.StateDone || len(fake.Todos()) != 2 {
		t.Fatalf("after the answer: %+v, %v", s, fake.Todos())
	}
	if h.Count(policy.Confirmed) != 1 {
		t.Fatalf("confirmed writes counted %d", h.Count(policy.Confirmed))
	}

	// todo_done reads the to-do first, so the owner sees its title.
	out, err = h.Call(ctx, `{"operation": "todo_done", "id": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	done, err := h.Awaiting(out)
	if err != nil || done.Spec.Display.Fields[0].Values[0] != "Water the plants" || done.Spec.Display.Summary == "" {
		t.Fatalf("todo_done's task: %+v %v", done.Spec, err)
	}
	// The policy changes before the answer runs: the answer refuses, and
	// nothing is written.
	h.NoVoid = true
	h.Policy = []byte(`{"confirm": ["todo_add", "todo_done"], "max_writes_per_day": 1}`)
	_, _, err = h.Answer(ctx, done, nil, "")
	if got := connectortest.Text(err); got != "policy_denied: the day's 1 writes are made: the policy's max_writes_per_day Nothing was written." {
		t.Fatalf("over the day's number: %q", got)
	}
	if fake.Todos()[0].Done {
		t.Fatal("the to-do was marked done over the day's number")
	}
	h.NoVoid = false

	// Allowed at once: the write happens in the call.
	h.Policy = []byte(`{}`)
	out, err = h.Call(ctx, `{"operation": "todo_done", "id": 1}`)
	if err != nil || string(out) != `{"id":1,"title":"Water the plants","done":true}` || !fake.Todos()[0].Done {
		t.Fatalf("todo_done at once: %s %v", out, err)
	}
	if h.Count(policy.Direct) != 1 {
		t.Fatalf("direct writes counted %d", h.Count(policy.Direct))
	}

	for _, tc := range []struct {
		name, creds, body, want string
	}{
		{"a wrong token", `{"token": "wrong"}`, `{"operation": "todos_list"}`,
			"invalid_request: the to-do service refused the project's token: the owner must correct the project's credentials"},
		{"no credentials", ``, `{"operation": "todos_list"}`,
			`invalid_request: the project has no credentials: the owner must set them ({"token": …})`},
		{"an unknown to-do", `{"token": "` + todoToken + `"}`, `{"operation": "todo_done", "id": 99}`,
			"invalid_request: there is no to-do 99"},
		{"an empty title", `{"token": "` + todoToken + `"}`, `{"operation": "todo_add", "title": " "}`,
			"invalid_request: `title` is text of 1 to 200 characters"},
		{"a title the schema refuses", `{"token": "` + todoToken + `"}`, `{"operation": "todo_add", "title": 5}`,
			"invalid_request: "},
	} {
		h.Credentials = []byte(tc.creds)
		_, err := h.Call(ctx, tc.body)
		if got := connectortest.Text(err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	h.Credentials = []byte(`{"token": "` + todoToken + `"}`)

	// Refused by the policy.
	h.Policy = []byte(`{"confirm": ["todo_remove"]}`)
	if _, err := h.Call(ctx, `{"operation": "todo_add", "title": "x"}`); countersign.ErrorCode(err) != countersign.PolicyUnreadable {
		t.Fatalf("an unreadable policy: %v", err)
	}

	// Every request carried the token, attached by the host.
	for _, r := range fake.Requests() {
		if r.Authorization != "Bearer "+todoToken && r.Authorization != "Bearer wrong" {
			t.Fatalf("a request without the token: %+v", r)
		}
	}
	// Three writes ran; the refusals of their own arguments cost nothing.
	if h.Spent() != 3*1_000 {
		t.Fatalf("spent %d µUSD, want 3000", h.Spent())
	}
}
