package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"countersign/approval"
	"countersign/client"
)

const askedSentence = "Confirm in Countersign as alice.near: remove the project probe. At 2026-11-29T12:00:00Z."

// walletJSON signs req with w as a wallet would and returns its answer as a
// JSON object, for editing.
func walletJSON(t testing.TB, w *approval.Wallet, req approval.SignRequest) map[string]any {
	t.Helper()
	m, err := w.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func named(t testing.TB, account string) *approval.Wallet {
	t.Helper()
	w, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	w.AccountID = account
	return w
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.Bytes()
}

// checkSigned verifies what parseWalletAnswer returned as the service
// would: the pieces verify over the sentence asked for.
func checkSigned(t testing.TB, s client.Signed, message, recipient string) {
	t.Helper()
	key, err := approval.ParsePublicKey(s.PublicKey)
	if err != nil {
		t.Fatalf("public key %q: %v", s.PublicKey, err)
	}
	sig, err := approval.ParseSignature(s.Signature, key.Type())
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := approval.ParseNonce(s.Nonce)
	if err != nil {
		t.Fatal(err)
	}
	p := approval.Payload{Message: message, Nonce: nonce, Recipient: recipient, CallbackURL: s.CallbackURL}
	if err := p.VerifySignature(key, sig); err != nil {
		t.Fatalf("the pieces handed on do not verify: %v", err)
	}
}

func TestParseWalletAnswer(t *testing.T) {
	t.Parallel()
	w := named(t, "alice.near")
	good := walletJSON(t, w, approval.SignRequest{Message: askedSentence, Recipient: "inbox.example"})
	edit := func(f func(m map[string]any)) []byte {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		f(m)
		return encode(m)
	}
	nonce, _ := approval.ParseNonce(good["nonce"].(string))
	nonceArray := make([]int, 32)
	for i, b := range nonce {
		nonceArray[i] = int(b)
	}
	callback := "https://wallet.example/done"
	withCallback := walletJSON(t, w, approval.SignRequest{Message: askedSentence, Recipient: "inbox.example", CallbackURL: &callback})

	secp, err := approval.NewSecp256k1Key(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sw := &approval.Wallet{AccountID: "alice.near", Key: secp}

	accepted := map[string][]byte{
		"the whole answer":              encode(good),
		"no echoed members":             edit(func(m map[string]any) { delete(m, "message"); delete(m, "recipient"); delete(m, "accountId") }),
		"a nonce as an array of bytes":  edit(func(m map[string]any) { m["nonce"] = nonceArray }),
		"a state member":                edit(func(m map[string]any) { m["state"] = "xyz" }),
		"a null callbackUrl":            edit(func(m map[string]any) { m["callbackUrl"] = nil }),
		"a signed callback URL":         encode(withCallback),
		"a secp256k1 key":               encode(walletJSON(t, sw, approval.SignRequest{Message: askedSentence, Recipient: "inbox.example"})),
		"an ed25519:<base58> signature": edit(func(m map[string]any) { m["signature"] = base58Signature(t, m["signature"].(string)) }),
	}
	for name, raw := range accepted {
		s, err := parseWalletAnswer(raw, "alice.near", askedSentence, "inbox.example")
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
			continue
		}
		checkSigned(t, s, askedSentence, "inbox.example")
	}
	if s, _ := parseWalletAnswer(encode(withCallback), "alice.near", askedSentence, "inbox.example"); s.CallbackURL == nil || *s.CallbackURL != callback {
		t.Errorf("the callback URL was not handed on: %+v", s)
	}

	refused := []struct {
		name string
		raw  []byte
		want string
	}{
		{"not JSON", []byte("{"), "is not {accountId"},
		{"an array", []byte("[]"), "is not {accountId"},
		{"two values", append(encode(good), encode(good)...), "more than one JSON value"},
		{"an unknown member", edit(func(m map[string]any) { m["public_key"] = m["publicKey"] }), "is not {accountId"},
		{"another account", edit(func(m map[string]any) { m["accountId"] = "bob.near" }), "signed as another account"},
		{"another message", edit(func(m map[string]any) { m["message"] = askedSentence + " " }), "signed another message"},
		{"another recipient", edit(func(m map[string]any) { m["recipient"] = "other" }), "another recipient than inbox.example"},
		{"no public key", edit(func(m map[string]any) { delete(m, "publicKey") }), "publicKey"},
		{"a garbled public key", edit(func(m map[string]any) { m["publicKey"] = "ed25519:0OIl" }), "publicKey"},
		{"a key of another type", edit(func(m map[string]any) { m["publicKey"] = "rsa:abc" }), "publicKey"},
		{"no signature", edit(func(m map[string]any) { delete(m, "signature") }), "signature"},
		{"a short signature", edit(func(m map[string]any) { m["signature"] = "AAAA" }), "signature"},
		{"no nonce", edit(func(m map[string]any) { delete(m, "nonce") }), "no nonce of 32 bytes"},
		{"a short nonce", edit(func(m map[string]any) { m["nonce"] = "AAAA" }), "nonce is not base64 of 32 bytes"},
		{"a nonce of 31 bytes", edit(func(m map[string]any) { m["nonce"] = nonceArray[:31] }), "no nonce of 32 bytes"},
		{"a nonce value over 255", edit(func(m map[string]any) {
			a := append([]int(nil), nonceArray...)
			a[0] = 256
			m["nonce"] = a
		}), "not 32 byte values"},
		{"another nonce", edit(func(m map[string]any) { m["nonce"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }), "does not verify"},
		{"another message, not echoed", func() []byte {
			m := walletJSON(t, w, approval.SignRequest{Message: "Sign in to something else.", Recipient: "inbox.example"})
			delete(m, "message")
			return encode(m)
		}(), "does not verify"},
		{"a callback URL that was not signed", edit(func(m map[string]any) { m["callbackUrl"] = callback }), "does not verify"},
		{"a signed callback URL left out", func() []byte {
			m := map[string]any{}
			for k, v := range withCallback {
				m[k] = v
			}
			delete(m, "callbackUrl")
			return encode(m)
		}(), "does not verify"},
		{"another wallet's key", edit(func(m map[string]any) { m["publicKey"] = named(t, "alice.near").Key.PublicKey().String() }), "does not verify"},
		{"too large", append([]byte(`{"state":"`), append(bytes.Repeat([]byte("x"), approval.MaxWalletJSONBytes), '"', '}')...), "too large"},
	}
	for _, tc := range refused {
		_, err := parseWalletAnswer(tc.raw, "alice.near", askedSentence, "inbox.example")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		for _, secret := range []string{good["signature"].(string), good["nonce"].(string), askedSentence} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the error quotes the answer: %v", tc.name, err)
			}
		}
	}
}

// base58Signature rewrites a base64 signature as NEAR CLIs print it.
func base58Signature(t testing.TB, b64 string) string {
	t.Helper()
	sig, err := approval.ParseSignature(b64, approval.ED25519)
	if err != nil {
		t.Fatal(err)
	}
	return "ed25519:" + base58.Encode(sig)
}

func FuzzParseWalletAnswer(f *testing.F) {
	w := named(f, "alice.near")
	good := walletJSON(f, w, approval.SignRequest{Message: askedSentence, Recipient: "inbox.example"})
	f.Add(encode(good))
	delete(good, "message")
	f.Add(encode(good))
	f.Add([]byte(`{"publicKey":"ed25519:11111111111111111111111111111111","signature":"","nonce":[1,2,3]}`))
	f.Add([]byte(`{"nonce":null,"callbackUrl":""}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := parseWalletAnswer(raw, "alice.near", askedSentence, "inbox.example")
		if err != nil {
			return
		}
		// Whatever is accepted verifies over the sentence asked for.
		checkSigned(t, s, askedSentence, "inbox.example")
	})
}
