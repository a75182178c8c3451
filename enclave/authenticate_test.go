package enclave_test

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// TestAuthenticatedCallLooksTheKeyUpOnce: the context Authenticate returns
// carries the agent it found, so the call served with it does not look the
// key up again (the key revoked in between does not reach it), while a call
// without it, or with another key, is looked up as always.
func TestAuthenticatedCallLooksTheKeyUpOnce(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	checked, err := w.Enclave.Calls.Authenticate(ctx, w.AgentKey)
	if err != nil {
		t.Fatal(err)
	}
	w.RevokeAgent()
	body := []byte(`{"operation": "guess_start"}`)
	answer, err := w.Enclave.Calls.Call(checked, w.AgentKey, w.Owner.Account, "probe", "", body)
	if err != nil {
		t.Fatalf("the call checked at the door was refused: %v", err)
	}
	var a struct{ Status string }
	if json.Unmarshal(answer, &a); a.Status != "awaiting_owner" {
		t.Fatalf("the call checked at the door answered %s", answer)
	}
	if _, err := w.Enclave.Calls.Call(ctx, w.AgentKey, w.Owner.Account, "probe", "", body); countersign.ErrorCode(err) != countersign.Unauthorized {
		t.Fatalf("a call with the revoked key and no checked context: %v, want unauthorized", err)
	}
	other := "ak_" + "another-key-that-was-never-issued"
	if _, err := w.Enclave.Calls.Call(checked, other, w.Owner.Account, "probe", "", body); countersign.ErrorCode(err) != countersign.Unauthorized {
		t.Fatalf("another key with the checked context: %v, want unauthorized", err)
	}
}

// TestProjectReadWithTheKeyIsOnlyForItsCall: the project read with an
// agent's key at the door serves only the call to that owner's project by
// that key; a call to another project, another owner's, or by another key
// with the same context reads for itself, and is refused what the project
// it names refuses.
func TestProjectReadWithTheKeyIsOnlyForItsCall(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	w := servicetest.New(t, db)
	// A project of the owner's granted to nobody, and a second agent.
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		return tx.PutProject(ctx, store.Project{Owner: w.Owner.Account, Name: "closed", UUID: countersign.NewProjectUUID(), Connector: "probe",
			Policy: []byte("{}"), CreatedAt: w.Clock.Now(), UpdatedAt: w.Clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	const otherKey = "ak_other-agent-key-0123456789abcdefghijklmnop"
	w.NewAgent("other.near", otherKey)
	w.Grant("probe", w.Agent)
	c := w.Enclave.Calls
	looked, err := c.AuthenticateCall(ctx, w.AgentKey, w.Owner.Account, "probe")
	if err != nil {
		t.Fatal(err)
	}
	start := []byte(`{"operation":"guess_start"}`)
	for _, tc := range []struct {
		what, key, owner, project, want string
	}{
		{"the call it was read for", w.AgentKey, w.Owner.Account, "probe", ""},
		{"another project, granted to nobody", w.AgentKey, w.Owner.Account, "closed", "not_granted"},
		{"a project that is not there", w.AgentKey, w.Owner.Account, "nothing", "not_granted"},
		{"another owner's project of that name", w.AgentKey, "someone-else.near", "probe", "not_granted"},
		{"another key, whose agent the project is not granted to", otherKey, w.Owner.Account, "probe", "not_granted"},
	} {
		raw, err := c.Call(looked, tc.key, tc.owner, tc.project, "", start)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		var answer struct {
			Success *bool  `json:"success"`
			Error   string `json:"error"`
		}
		_ = json.Unmarshal(raw, &answer)
		got := ""
		if answer.Success != nil && !*answer.Success {
			got, _, _ = strings.Cut(answer.Error, ":")
		}
		if got != tc.want {
			t.Errorf("%s: answered %s, want %q", tc.what, raw, tc.want)
		}
	}
	if _, err := c.AuthenticateCall(ctx, "ak_not-a-key-of-anyone-0123456789abcdef", w.Owner.Account, "probe"); countersign.ErrorCode(err) != countersign.Unauthorized {
		t.Errorf("an unknown key with a project: %v, want unauthorized", err)
	}
}

// TestAuthenticatedCallKeepsItsAdmission: a request authenticated without
// its project (an MCP tool's call) reads the project for its first call,
// and its next call to that project, in another request, is let in on what
// the first read, checked in its own transaction: a round trip fewer, and
// refused once the key is revoked.
func TestAuthenticatedCallKeepsItsAdmission(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	c := w.Enclave.Calls
	start := []byte(`{"operation": "guess_start"}`)
	call := func() (int64, error) {
		checked, err := c.Authenticate(ctx, w.AgentKey)
		if err != nil {
			t.Fatal(err)
		}
		before := db.RoundTrips()
		answer, err := c.Call(checked, w.AgentKey, w.Owner.Account, "probe", "", start)
		var a struct{ Status string }
		if err == nil && (json.Unmarshal(answer, &a) != nil || a.Status != "awaiting_owner") {
			t.Fatalf("the call answered %s", answer)
		}
		return db.RoundTrips() - before, err
	}
	first, err := call()
	if err != nil {
		t.Fatal(err)
	}
	next, err := call()
	if err != nil || next != first-1 {
		t.Errorf("the next call: %d round trips, %v; want %d (the first's less its read of the project)", next, err, first-1)
	}
	checked, err := c.Authenticate(ctx, w.AgentKey)
	if err != nil {
		t.Fatal(err)
	}
	w.RevokeAgent()
	if _, err := c.Call(checked, w.AgentKey, w.Owner.Account, "probe", "", start); countersign.ErrorCode(err) != countersign.Unauthorized {
		t.Errorf("a call on the kept admission after the key was revoked: %v, want unauthorized", err)
	}
}
