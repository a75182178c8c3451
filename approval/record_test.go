package approval_test

import (
	"testing"

	"countersign/approval"
)

// A kept approval reads back as it was written, and the JSON the door
// kept before the record was one type (no account) still reads, as the
// owner's.
func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	cb := "https://countersign.example/back"
	r := approval.Record{Account: "bob.near", At: 1_790_000_000, PublicKey: "ed25519:k", Signature: "sig", Nonce: "n", CallbackURL: &cb,
		Recipient: "countersign.example", TaskHash: "ab", SupplyHash: "cd", Supplied: []byte{1}, Note: []byte{2},
		Batch: &approval.BatchRecord{Tasks: []approval.BatchLine{{ID: "t-1", TaskHash: "ab", SupplyHash: "cd"}}, Summaries: []byte("sealed")}}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := approval.ParseRecord(b)
	if err != nil || got.Account != "bob.near" || *got.CallbackURL != cb || got.Batch.Tasks[0].ID != "t-1" || string(got.Batch.Summaries) != "sealed" ||
		got.Time().Unix() != r.At || got.SignedBy("alice.near") != "bob.near" {
		t.Fatalf("read back %+v %v", got, err)
	}
	old := []byte(`{"at":1790000000,"public_key":"ed25519:k","signature":"sig","nonce":"n","recipient":"countersign.example","task_hash":"ab","supply_hash":"cd"}`)
	if got, err := approval.ParseRecord(old); err != nil || got.SignedBy("alice.near") != "alice.near" {
		t.Fatalf("an approval kept before approvers: %+v %v", got, err)
	}
}

func TestRecordRefused(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]string{
		"not JSON":         `{`,
		"not an object":    `[]`,
		"unknown member":   `{"at":1,"public_key":"k","signature":"s","nonce":"n","task_hash":"a","supply_hash":"b","summary":"pay"}`,
		"no signature":     `{"at":1,"public_key":"k","nonce":"n","task_hash":"a","supply_hash":"b"}`,
		"no task hash":     `{"at":1,"public_key":"k","signature":"s","nonce":"n","supply_hash":"b"}`,
		"two values":       `{"at":1,"public_key":"k","signature":"s","nonce":"n","task_hash":"a","supply_hash":"b"} {}`,
		"account a number": `{"account":1,"at":1,"public_key":"k","signature":"s","nonce":"n","task_hash":"a","supply_hash":"b"}`,
	} {
		if _, err := approval.ParseRecord([]byte(b)); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}
