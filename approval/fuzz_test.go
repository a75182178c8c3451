package approval_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"countersign/approval"
)

func FuzzParsePublicKey(f *testing.F) {
	f.Add(vectorKey)
	f.Add("ed25519:2RM3EotCzEiVobm6aMjaup43k8cFffR4KHFtrqbZ79Qy")
	f.Add("secp256k1:" + encodeBase58(make([]byte, 64)))
	f.Add(secpKey(f, 1).PublicKey().String())
	f.Add("ed25519:")
	f.Add("ed25519:1111111111111111111111111111111111")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := approval.ParsePublicKey(s)
		if err != nil {
			if approval.KindOf(err) != approval.Malformed {
				t.Fatalf("refusal of kind %v", approval.KindOf(err))
			}
			return
		}
		if k.String() != s {
			t.Fatalf("accepted a non-canonical form %q (canonical %q)", s, k.String())
		}
		again, err := approval.ParsePublicKey(k.String())
		if err != nil || again != k {
			t.Fatalf("canonical form does not parse back: %v", err)
		}
		if id := approval.ImplicitAccountID(k); approval.ValidateAccountID(id) != nil || !approval.IsImplicit(id) {
			t.Fatalf("implicit account %q is not valid", id)
		}
	})
}

func FuzzParseSignature(f *testing.F) {
	sig := make([]byte, 64)
	f.Add(base64.StdEncoding.EncodeToString(sig), uint8(1))
	f.Add("ed25519:"+encodeBase58(sig), uint8(1))
	good, _ := secpKey(f, 2).Sign(approval.Payload{Message: "m"})
	f.Add(base64.StdEncoding.EncodeToString(good), uint8(2))
	f.Add("secp256k1:"+encodeBase58(good), uint8(2))
	f.Add(base64.RawURLEncoding.EncodeToString(good), uint8(2))
	f.Add("", uint8(0))
	f.Fuzz(func(t *testing.T, s string, typ uint8) {
		kt := approval.KeyType(typ % 4)
		b, err := approval.ParseSignature(s, kt)
		if err != nil {
			if approval.KindOf(err) != approval.Malformed {
				t.Fatalf("refusal of kind %v", approval.KindOf(err))
			}
			return
		}
		switch kt {
		case approval.ED25519:
			if len(b) != 64 {
				t.Fatalf("ed25519 signature of %d bytes", len(b))
			}
		case approval.SECP256K1:
			if len(b) != 65 || b[64] > 1 {
				t.Fatalf("secp256k1 signature of %d bytes, v=%d", len(b), b[len(b)-1])
			}
		default:
			t.Fatalf("a signature parsed for key type %d", kt)
		}
	})
}

func FuzzParseSentence(f *testing.F) {
	f.Add(signInText)
	f.Add("Confirm in Countersign as alice.near: remove the webhook. At 2026-11-29T12:00:00Z.")
	f.Add("Confirm in Countersign as alice.near: set the project p.x to " + hashA + ". At 2026-11-29T12:00:00Z.")
	f.Add("Confirm in Countersign as alice.near: withdraw the device d. At 2026-11-29T12:00:00Z.")
	f.Add("Approve in Countersign as alice.near: task t-1 with hash " + hashA + " and supply " + hashB + ". At 2026-11-29T12:00:00Z.")
	f.Fuzz(func(t *testing.T, s string) {
		if x, err := approval.ParseSignIn(s); err == nil {
			if again, err := x.Sentence(); err != nil || again != s {
				t.Fatalf("sign-in %q rebuilt as %q (%v)", s, again, err)
			}
		} else if approval.KindOf(err) != approval.Malformed {
			t.Fatalf("refusal of kind %v", approval.KindOf(err))
		}
		if x, err := approval.ParseConfirmation(s); err == nil {
			if again, err := x.Sentence(); err != nil || again != s {
				t.Fatalf("confirmation %q rebuilt as %q (%v)", s, again, err)
			}
		} else if approval.KindOf(err) != approval.Malformed {
			t.Fatalf("refusal of kind %v", approval.KindOf(err))
		}
		if x, err := approval.ParseApproval(s); err == nil {
			if again, err := x.Sentence(); err != nil || again != s {
				t.Fatalf("approval %q rebuilt as %q (%v)", s, again, err)
			}
		} else if approval.KindOf(err) != approval.Malformed {
			t.Fatalf("refusal of kind %v", approval.KindOf(err))
		}
	})
}

func FuzzParseNonce(f *testing.F) {
	f.Add("KNV0cOpvJ50D5vfF9pqWom8wo2sliQ4W+Wa7uZ3Uk6Y=")
	f.Add("4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := approval.ParseNonce(s)
		if err != nil {
			return
		}
		if n.String() != s {
			t.Fatalf("nonce %q has canonical form %q", s, n.String())
		}
	})
}

func FuzzVerifyWalletJSON(f *testing.F) {
	w, _ := approval.NewWallet()
	m, _ := w.Sign(approval.SignRequest{Message: "hello", Recipient: "countersign"})
	f.Add(mustJSON(f, m))
	cb := "https://x"
	m2, _ := w.Sign(approval.SignRequest{Message: "hello", Recipient: "countersign", CallbackURL: &cb})
	f.Add(mustJSON(f, m2))
	f.Add([]byte(`{"publicKey":"ed25519:2RM3EotCzEiVobm6aMjaup43k8cFffR4KHFtrqbZ79Qy","signature":"NnJgPU1Ql7ccRTITIoOVsIfElmvH1RV7QAT4a9Vh6ShCOnjIzRwxqX54JzoQ/nK02p7VBMI2vJn48rpImIJwAw==","message":"Hello NEAR!","recipient":"example.near","nonce":"KNV0cOpvJ50D5vfF9pqWom8wo2sliQ4W+Wa7uZ3Uk6Y="}`))
	f.Add([]byte(`{"nonce":[1,2,3]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := approval.VerifyWalletJSON(bytes.NewReader(b))
		if err == nil {
			return
		}
		var e *approval.Error
		if !errors.As(err, &e) || err.Error() == "" {
			t.Fatalf("error %v is not an *Error with a sentence", err)
		}
	})
}
