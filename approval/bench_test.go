package approval_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"countersign/approval"
	"countersign/approval/neartest"
)

const benchSentence = "Approve in Countersign as alice.near: task r7k2m9q4x1z8c3v6b5n0p2w4s6-1 with hash " +
	hashA + " and supply " + hashB + ". At 2026-11-29T12:00:00Z."

func benchClaim(b *testing.B, k approval.PrivateKey) approval.Claim {
	b.Helper()
	w := &approval.Wallet{AccountID: "alice.near", Key: k}
	m, err := w.Sign(approval.SignRequest{Message: benchSentence, Recipient: "countersign"})
	if err != nil {
		b.Fatal(err)
	}
	return approval.Claim{Account: "alice.near", Sentence: benchSentence, Recipient: "countersign", Signed: m.Signed()}
}

// verifyOffline is Verify's work without the chain: parse the pieces, build
// the payload, hash and check the signature.
func verifyOffline(c approval.Claim) error {
	key, err := approval.ParsePublicKey(c.Signed.PublicKey)
	if err != nil {
		return err
	}
	n, err := approval.ParseNonce(c.Signed.Nonce)
	if err != nil {
		return err
	}
	sig, err := approval.ParseSignature(c.Signed.Signature, key.Type())
	if err != nil {
		return err
	}
	return approval.Payload{Message: c.Sentence, Nonce: n, Recipient: c.Recipient, CallbackURL: c.Signed.CallbackURL}.VerifySignature(key, sig)
}

func BenchmarkVerifyNEP413(b *testing.B) {
	k, _ := approval.GenerateKey()
	c := benchClaim(b, k)
	b.ReportAllocs()
	for b.Loop() {
		if err := verifyOffline(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEd25519Verify(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	d := sha256.Sum256([]byte(benchSentence))
	sig := ed25519.Sign(priv, d[:])
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, d[:], sig) {
			b.Fatal("does not verify")
		}
	}
}

func BenchmarkVerifyNEP413Secp256k1(b *testing.B) {
	c := benchClaim(b, secpKey(b, 70))
	b.ReportAllocs()
	for b.Loop() {
		if err := verifyOffline(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSecp256k1Recover(b *testing.B) {
	k, _ := crypto.GenerateKey()
	d := sha256.Sum256([]byte(benchSentence))
	sig, _ := crypto.Sign(d[:], k)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := crypto.Ecrecover(d[:], sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPayloadDigest(b *testing.B) {
	p := approval.Payload{Message: benchSentence, Recipient: "countersign"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Digest(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyCachedRPC is the whole Verify with the chain's answer in the
// RPC checker's cache.
func BenchmarkVerifyCachedRPC(b *testing.B) {
	f := neartest.New()
	defer f.Close()
	k, _ := approval.GenerateKey()
	f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
	checker, err := approval.NewRPCChecker(approval.RPCConfig{URL: f.URL()})
	if err != nil {
		b.Fatal(err)
	}
	c := benchClaim(b, k)
	ctx := context.Background()
	if _, err := approval.Verify(ctx, checker, c); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := approval.Verify(ctx, checker, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckKeyRPC is one uncached access-key check over loopback HTTP.
func BenchmarkCheckKeyRPC(b *testing.B) {
	f := neartest.New()
	defer f.Close()
	k, _ := approval.GenerateKey()
	f.AddKey("alice.near", k.PublicKey().String(), neartest.FullAccess())
	checker, err := approval.NewRPCChecker(approval.RPCConfig{URL: f.URL(), CacheTTL: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checker.CheckKey(ctx, "alice.near", k.PublicKey()); err != nil {
			b.Fatal(err)
		}
	}
}
