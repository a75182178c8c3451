package enclave_test

import (
	"encoding/json"
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
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.RevokeAgentKeys(ctx, w.Agent, w.Clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
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
