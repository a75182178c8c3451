package approval_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"countersign/approval"
)

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// contractVectors is the nep413 part of the contract's vector file.
type contractVectors struct {
	NEP413 struct {
		ImplicitAccount string `json:"implicit_account"`
		PublicKey       string `json:"public_key"`
		WalletSeed      string `json:"wallet_seed"`
		Signed          []struct {
			BorshHex  string `json:"borsh_hex"`
			Message   string `json:"message"`
			Nonce     string `json:"nonce"`
			PublicKey string `json:"public_key"`
			Recipient string `json:"recipient"`
			Sentence  string `json:"sentence"`
			SHA256    string `json:"sha256"`
			Signature string `json:"signature"`
			Summary   string `json:"summary"`
		} `json:"signed"`
	} `json:"nep413"`
}

func TestContractVectorsFileIsTheSharedOne(t *testing.T) {
	t.Parallel()
	shared := filepath.Join("..", "..", "shared", "vectors", "sealing-and-signing.json")
	want, err := os.ReadFile(shared)
	if err != nil {
		t.Skipf("the shared vectors are not beside this checkout: %v", err)
	}
	got, err := os.ReadFile(filepath.Join("testdata", "sealing-and-signing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("testdata/sealing-and-signing.json differs from the shared contract vectors")
	}
}

func TestContractVectors(t *testing.T) {
	t.Parallel()
	var v contractVectors
	readJSON(t, "sealing-and-signing.json", &v)
	nv := v.NEP413
	if len(nv.Signed) != 4 {
		t.Fatalf("want 4 signed sentences, got %d", len(nv.Signed))
	}
	seed, err := hex.DecodeString(nv.WalletSeed)
	if err != nil {
		t.Fatal(err)
	}
	key, err := approval.NewEd25519Key(seed)
	if err != nil {
		t.Fatal(err)
	}
	if got := key.PublicKey().String(); got != nv.PublicKey {
		t.Fatalf("public key of the wallet seed: got %s, want %s", got, nv.PublicKey)
	}
	if got := approval.ImplicitAccountID(key.PublicKey()); got != nv.ImplicitAccount {
		t.Fatalf("implicit account: got %s, want %s", got, nv.ImplicitAccount)
	}
	wallet := &approval.Wallet{AccountID: "alice.near", Key: key}

	for _, s := range nv.Signed {
		t.Run(s.Sentence, func(t *testing.T) {
			nonce, err := approval.ParseNonce(s.Nonce)
			if err != nil {
				t.Fatal(err)
			}
			p := approval.Payload{Message: s.Message, Nonce: nonce, Recipient: s.Recipient}
			b, err := p.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(b); got != s.BorshHex {
				t.Fatalf("payload bytes:\n got %s\nwant %s", got, s.BorshHex)
			}
			d, err := p.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(d[:]); got != s.SHA256 {
				t.Fatalf("digest: got %s, want %s", got, s.SHA256)
			}
			// Our signer reproduces the published signature byte for byte
			// (ed25519 is deterministic).
			m, err := wallet.Sign(approval.SignRequest{Message: s.Message, Recipient: s.Recipient, Nonce: &nonce})
			if err != nil {
				t.Fatal(err)
			}
			if m.Signature != s.Signature {
				t.Fatalf("signature: got %s, want %s", m.Signature, s.Signature)
			}
			pub, err := approval.ParsePublicKey(s.PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := approval.ParseSignature(s.Signature, pub.Type())
			if err != nil {
				t.Fatal(err)
			}
			if err := p.VerifySignature(pub, sig); err != nil {
				t.Fatalf("the contract's signature does not verify: %v", err)
			}
			checkTwins(t, key, pub, p, s.Signature)
		})
	}

	// The three sentences parse, and rebuild from their parts byte for byte.
	for _, s := range nv.Signed {
		var rebuilt string
		var err error
		switch s.Sentence {
		case "sign_in":
			var x approval.SignIn
			if x, err = approval.ParseSignIn(s.Message); err == nil {
				rebuilt, err = x.Sentence()
			}
		case "confirmation":
			var x approval.Confirmation
			if x, err = approval.ParseConfirmation(s.Message); err == nil {
				rebuilt, err = x.Sentence()
			}
		case "approval", "approve_with_summary":
			var x approval.Approval
			if x, err = approval.ParseApproval(s.Message); err == nil {
				rebuilt, err = x.Sentence()
			}
			if x.Summary != s.Summary {
				t.Fatalf("%s: the summary read back is %q, want %q", s.Sentence, x.Summary, s.Summary)
			}
		default:
			t.Fatalf("unknown sentence %q", s.Sentence)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.Sentence, err)
		}
		if rebuilt != s.Message {
			t.Fatalf("%s: rebuilt %q", s.Sentence, rebuilt)
		}
	}
}

// checkTwins refuses the negative twins of a good signature sig over p:
// another recipient, the callback URL flipped between absent and present, the
// message changed by one byte, a signature over the unhashed bytes (a wallet
// that forgot to hash), and a signature over the bytes without the NEP-413
// tag. key (when not zero) is the private key that made sig, used to make
// the twins that need a fresh signature.
func checkTwins(t *testing.T, key approval.PrivateKey, pub approval.PublicKey, p approval.Payload, sig string) {
	t.Helper()
	raw, err := approval.ParseSignature(sig, pub.Type())
	if err != nil {
		t.Fatal(err)
	}
	mustFail := func(name string, q approval.Payload, s []byte) {
		t.Helper()
		err := q.VerifySignature(pub, s)
		if approval.KindOf(err) != approval.InvalidSignature {
			t.Errorf("%s: want an invalid-signature refusal, got %v", name, err)
		}
	}
	q := p
	q.Recipient = p.Recipient + "x"
	mustFail("other recipient", q, raw)

	q = p
	if p.CallbackURL == nil {
		empty := ""
		q.CallbackURL = &empty
	} else {
		q.CallbackURL = nil
	}
	mustFail("callback flipped", q, raw)

	q = p
	m := []byte(p.Message)
	m[len(m)/2] ^= 0x01
	q.Message = string(m)
	mustFail("message changed by one byte", q, raw)

	if key.IsZero() {
		return
	}
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	unhashed := signRaw(t, key, b)
	mustFail("signature over the unhashed bytes", p, unhashed)

	d := sha256.Sum256(b[4:])
	untagged := signRaw(t, key, d[:])
	mustFail("signature without the NEP-413 tag", p, untagged)
}

// signRaw signs data as it is (no hashing) with an ed25519 key, as a broken
// wallet would.
func signRaw(t *testing.T, key approval.PrivateKey, data []byte) []byte {
	t.Helper()
	if key.PublicKey().Type() != approval.ED25519 {
		t.Fatal("signRaw signs with ed25519 keys only")
	}
	return ed25519.Sign(ed25519PrivateFromSecretText(t, key.SecretText()), data)
}

func ed25519PrivateFromSecretText(t *testing.T, s string) ed25519.PrivateKey {
	t.Helper()
	raw := decodeBase58(t, s[len("ed25519:"):])
	if len(raw) != ed25519.PrivateKeySize {
		t.Fatalf("secret key is %d bytes", len(raw))
	}
	return ed25519.NewKeyFromSeed(raw[:32])
}

type interopCase struct {
	Name        string  `json:"name"`
	Message     string  `json:"message"`
	Recipient   string  `json:"recipient"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url"`
	Signature   string  `json:"signature"`
}

func TestNearAPIJSVectors(t *testing.T) {
	t.Parallel()
	var v struct {
		PrivateKey string        `json:"private_key"`
		AccountID  string        `json:"account_id"`
		Cases      []interopCase `json:"cases"`
	}
	readJSON(t, "near-api-js-nep413.json", &v)
	key, err := approval.ParsePrivateKey(v.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	// The same wallet's public key is published by near-api-rs.
	var rs struct {
		PublicKey string `json:"public_key"`
	}
	readJSON(t, "near-api-rs-nep413.json", &rs)
	if got := key.PublicKey().String(); got != rs.PublicKey {
		t.Fatalf("near-api-js's key has public key %s; near-api-rs publishes %s", got, rs.PublicKey)
	}
	w := &approval.Wallet{AccountID: v.AccountID, Key: key}
	if len(v.Cases) != 2 {
		t.Fatalf("want 2 cases, got %d", len(v.Cases))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			nonce, err := approval.ParseNonce(c.Nonce)
			if err != nil {
				t.Fatal(err)
			}
			m, err := w.Sign(approval.SignRequest{Message: c.Message, Recipient: c.Recipient, Nonce: &nonce, CallbackURL: c.CallbackURL})
			if err != nil {
				t.Fatal(err)
			}
			if m.Signature != c.Signature {
				t.Fatalf("signature: got %s, want %s", m.Signature, c.Signature)
			}
			p := approval.Payload{Message: c.Message, Nonce: nonce, Recipient: c.Recipient, CallbackURL: c.CallbackURL}
			checkTwins(t, key, key.PublicKey(), p, c.Signature)
		})
	}
}

func TestNearAPIRSVectors(t *testing.T) {
	t.Parallel()
	var v struct {
		PublicKey string        `json:"public_key"`
		AccountID string        `json:"account_id"`
		Cases     []interopCase `json:"cases"`
	}
	readJSON(t, "near-api-rs-nep413.json", &v)
	pub, err := approval.ParsePublicKey(v.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	// near-api-js publishes the private key of this same wallet (its public
	// key is checked to be this one in TestNearAPIJSVectors); it makes the
	// twins that need a fresh signature.
	var js struct {
		PrivateKey string `json:"private_key"`
	}
	readJSON(t, "near-api-js-nep413.json", &js)
	key, err := approval.ParsePrivateKey(js.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if key.PublicKey() != pub {
		t.Fatal("near-api-js's private key is not this wallet's")
	}
	if len(v.Cases) != 2 {
		t.Fatalf("want 2 cases, got %d", len(v.Cases))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			nonce, err := approval.ParseNonce(c.Nonce)
			if err != nil {
				t.Fatal(err)
			}
			p := approval.Payload{Message: c.Message, Nonce: nonce, Recipient: c.Recipient, CallbackURL: c.CallbackURL}
			sig, err := approval.ParseSignature(c.Signature, pub.Type())
			if err != nil {
				t.Fatal(err)
			}
			if err := p.VerifySignature(pub, sig); err != nil {
				t.Fatalf("published signature does not verify: %v", err)
			}
			// The same signature as a CLI prints it (ed25519:<base58>) and in
			// URL-safe unpadded base64 verifies too.
			for _, form := range []string{
				"ed25519:" + encodeBase58(sig),
				base64.RawURLEncoding.EncodeToString(sig),
			} {
				s, err := approval.ParseSignature(form, pub.Type())
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				if err := p.VerifySignature(pub, s); err != nil {
					t.Fatalf("%s: %v", form, err)
				}
			}
			checkTwins(t, key, pub, p, c.Signature)

			// The whole wallet document verifies as `nep413 verify` input.
			doc := map[string]any{
				"accountId": v.AccountID, "publicKey": v.PublicKey, "signature": c.Signature,
				"message": c.Message, "recipient": c.Recipient, "nonce": c.Nonce,
			}
			if c.CallbackURL != nil {
				doc["callbackUrl"] = *c.CallbackURL
			}
			if err := approval.VerifyWalletJSON(jsonReader(t, doc)); err != nil {
				t.Fatalf("VerifyWalletJSON: %v", err)
			}
		})
	}
}
