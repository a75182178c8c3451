package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestWireTypesAreCurrent: the committed src/wire.gen.ts is what the
// service's OpenAPI document makes of the page's routes and bodies; run
// go generate ./web when it is not.
func TestWireTypesAreCurrent(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../src/wire.gen.ts")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("web/src/wire.gen.ts is not what the OpenAPI document makes: run go generate ./web and commit it")
	}
	again, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatal("two runs wrote different files")
	}
}

// TestWireTypesLeaveOutTheAgentsRoutes: the page's routes are there with
// their answers, the agents' are not.
func TestWireTypesLeaveOutTheAgentsRoutes(t *testing.T) {
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"GET /inbox/tasks": { body: undefined; answer: TaskPage }`,
		`"POST /inbox/tasks/{id}/approve": { body: ApproveRequest; answer: Approved }`,
		`"POST /inbox/tasks/{id}/reject": { body: RejectRequest | undefined; answer: Moved }`,
		"export const ownerErrorCheck: Check ="} {
		if !strings.Contains(s, want) {
			t.Errorf("no %s", want)
		}
	}
	for _, not := range []string{"/call/", "/mcp", "/agent/projects", "AgentRefusal"} {
		if strings.Contains(s, not) {
			t.Errorf("%s is in it", not)
		}
	}
}
