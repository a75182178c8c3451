package wasm_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/examples/todo/todotest"
	"countersign/connectors/wasm/wasmtest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestWholeFlow: the example modules in the whole service on PostgreSQL,
// as compiled-in connectors run there: the agent's call, the task (its
// envelope and its run's receipt naming the module's build), the owner's
// approval, the answer run and what the agent reads; and a module that
// loops forever or allocates without bound is a refusal the agent reads,
// the service unaffected.
func TestWholeFlow(t *testing.T) {
	t.Parallel()
	fake := todotest.New(todoToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	host := wasmtest.Host(t, wasm.Options{Egress: egress.Options{AllowPrivate: true},
		Redirect: map[string]string{"api.todo.example": srv.URL}})
	var mods []*wasm.Module
	for _, dir := range []string{wasmtest.Example("probe"), wasmtest.Example("todo"), hostile} {
		m, err := host.LoadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, m)
	}
	probe, todo := mods[0], mods[1]
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(probe.Connector),
		servicetest.WithConnector(todo.Connector), servicetest.WithConnector(mods[2].Connector))
	w.PutProject("game", "probe-wasm", `{}`, nil)
	w.PutProject("todo", "todo", `{"confirm": ["todo_add"]}`, []byte(`{"token": "`+todoToken+`"}`))
	w.PutProject("bad", "hostile", `{}`, nil)
	w.StartJobs()
	agent := w.AgentClient()
	owner := w.Owner.Account

	// The game: start, one wrong guess, the next turn.
	raw, err := agent.Call(ctx, owner, "game", "guess_start", map[string]any{"max": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "awaiting_owner" {
		t.Fatalf("guess_start answered %s", raw)
	}
	view, err := w.Owner.Client.Task(ctx, a.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	origin, err := w.Owner.Client.Origin(ctx, a.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Envelope.Build != probe.Build || !strings.Contains(string(origin.Receipt), `"build":"`+probe.Build+`"`) {
		t.Fatalf("the task names build %s and its receipt %s; the module's is %s", o.Envelope.Build, origin.Receipt, probe.Build)
	}
	if _, err := w.Owner.Approve(ctx, o, []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	w.WaitState(a.TaskID, countersign.StateDone)
	st := w.Status("game", a.TaskID)
	var res struct {
		Verdict string `json:"verdict"`
		Attempt int    `json:"attempt"`
	}
	if err := json.Unmarshal(st.Result, &res); err != nil || res.Verdict != "not_a_number" || res.Attempt != 1 || st.NextTaskID == "" {
		t.Fatalf("the guess: %+v", st)
	}

	// The to-do: asked first, approved, written once.
	raw, err = agent.Call(ctx, owner, "todo", "todo_add", map[string]any{"title": "Call the plumber"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "awaiting_owner" || len(fake.Todos()) != 0 {
		t.Fatalf("todo_add answered %s", raw)
	}
	w.Approve(a.TaskID, nil)
	w.WaitState(a.TaskID, countersign.StateDone)
	if got := fake.Todos(); len(got) != 1 || got[0].Title != "Call the plumber" {
		t.Fatalf("the fake holds %+v", got)
	}
	if st := w.Status("todo", a.TaskID); string(st.Result) != `{"id":1,"title":"Call the plumber","done":false}` {
		t.Fatalf("the agent reads %+v", st)
	}

	// A module that loops forever, one that allocates without bound: the
	// agent reads why, and the service answers the next call.
	_, err = agent.Call(ctx, owner, "bad", "spin", map[string]any{}, nil)
	if err == nil || !strings.Contains(err.Error(), "internal_error") || !strings.Contains(err.Error(), "compute limit") {
		t.Fatalf("spin: %v", err)
	}
	_, err = agent.Call(ctx, owner, "bad", "hog", map[string]any{}, nil)
	if err == nil || !strings.Contains(err.Error(), "internal_error: the connector's module ran out of memory (at most 64 MiB)") {
		t.Fatalf("hog: %v", err)
	}
	raw, err = agent.Call(ctx, owner, "todo", "todos_list", map[string]any{}, nil)
	if err != nil || !strings.Contains(string(raw), "Call the plumber") {
		t.Fatalf("after spin: %s %v", raw, err)
	}
}
