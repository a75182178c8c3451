package approval

import (
	"errors"
	"testing"
)

// FuzzRPCAnswer feeds arbitrary bytes to the parsers of NEAR RPC answers:
// whatever comes back is either one of the known answers or an
// UpstreamUnavailable error, never a panic.
func FuzzRPCAnswer(f *testing.F) {
	const id = "countersign-1"
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","result":{"nonce":5,"permission":"FullAccess","block_height":1,"block_hash":"h"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","result":{"nonce":5,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"a","method_names":[]}},"block_height":1,"block_hash":"h"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","result":{"error":"access key ed25519:x does not exist while viewing","logs":[],"block_height":1,"block_hash":"h"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCESS_KEY","info":{}},"code":-32000,"message":"Server error","data":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{}}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"countersign-1","result":{"amount":"1","block_height":1}}`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, cause, err := parseResponse(200, raw, id)
		if err != nil {
			if KindOf(err) != UpstreamUnavailable {
				t.Fatalf("parseResponse error of kind %v", KindOf(err))
			}
			return
		}
		a, err := accessKeyAnswer(res, cause)
		if err != nil {
			if !errors.Is(err, ErrUpstreamUnavailable) {
				t.Fatalf("accessKeyAnswer error of kind %v", KindOf(err))
			}
		} else if a < answerFullAccess || a > answerNoAccount {
			t.Fatalf("answer %d", a)
		}
		if _, err := accountAnswer(res, cause); err != nil && !errors.Is(err, ErrUpstreamUnavailable) {
			t.Fatalf("accountAnswer error of kind %v", KindOf(err))
		}
	})
}

// FuzzParseKeyFile feeds arbitrary bytes to the key-file parser.
func FuzzParseKeyFile(f *testing.F) {
	k, _ := NewEd25519Key(make([]byte, 32))
	f.Add([]byte(`{"account_id":"alice.near","public_key":"` + k.PublicKey().String() + `","private_key":"` + k.SecretText() + `"}`))
	f.Add([]byte(`{"account_id":"alice.near","secret_key":"` + k.SecretText() + `"}`))
	f.Add([]byte(`{"account_id":"alice.near","private_key":"secp256k1:` + "2" + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := parseKeyFile(b)
		if err != nil {
			return
		}
		if ValidateAccountID(w.AccountID) != nil || w.Key.IsZero() {
			t.Fatal("accepted a key file without a valid account or key")
		}
		again, err := ParsePrivateKey(w.Key.SecretText())
		if err != nil || again.PublicKey() != w.Key.PublicKey() {
			t.Fatalf("the loaded key does not round trip: %v", err)
		}
	})
}
