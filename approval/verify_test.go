package approval_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"countersign/approval"
	"countersign/approval/neartest"
)

// stubChecker answers a fixed status or error and counts calls.
type stubChecker struct {
	status approval.KeyStatus
	err    error
	calls  int
}

func (s *stubChecker) CheckKey(context.Context, string, approval.PublicKey) (approval.KeyStatus, error) {
	s.calls++
	return s.status, s.err
}

// testOrigin is the public origin the claims of these tests are checked
// against.
const testOrigin = "https://inbox.example"

func signClaim(t *testing.T, w *approval.Wallet, sentence, recipient string, cb *string) approval.Claim {
	t.Helper()
	m, err := w.Sign(approval.SignRequest{Message: sentence, Recipient: recipient, CallbackURL: cb})
	if err != nil {
		t.Fatal(err)
	}
	return approval.Claim{Account: w.AccountID, Sentence: sentence, Recipient: recipient, Origin: testOrigin, Signed: m.Signed()}
}

func TestVerifyWithFakeRPC(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	owner, _ := approval.NewWallet()
	owner.AccountID = "alice.near"
	fc, _ := approval.NewWallet()
	fc.AccountID = "alice.near"
	f.AddKey("alice.near", owner.Key.PublicKey().String(), neartest.FullAccess())
	f.AddKey("alice.near", fc.Key.PublicKey().String(), neartest.FunctionCall("app.near"))
	implicitWallet, _ := approval.NewWallet()
	checker := newChecker(t, f.URL(), nil, nil)
	sentence := "Confirm in Countersign as alice.near: remove the webhook. At 2026-11-29T12:00:00Z."
	ctx := context.Background()

	c := signClaim(t, owner, sentence, "countersign", nil)
	v, err := approval.Verify(ctx, checker, c)
	if err != nil {
		t.Fatal(err)
	}
	if v.Key != owner.Key.PublicKey() || v.Status != approval.KeyFullAccess || v.Nonce.String() != c.Signed.Nonce {
		t.Fatalf("verified %+v", v)
	}

	// A function-call key is refused as not full access.
	_, err = approval.Verify(ctx, checker, signClaim(t, fc, sentence, "countersign", nil))
	if !errors.Is(err, approval.ErrNotFullAccess) {
		t.Fatalf("function-call key: %v", err)
	}

	// An implicit account not on chain, signed by its own key.
	implicitSentence := "Confirm in Countersign as " + implicitWallet.AccountID + ": remove the webhook. At 2026-11-29T12:00:00Z."
	v, err = approval.Verify(ctx, checker, signClaim(t, implicitWallet, implicitSentence, "countersign", nil))
	if err != nil || v.Status != approval.KeyImplicit {
		t.Fatalf("implicit: %+v %v", v, err)
	}

	// A signature with a callback URL under the public origin verifies
	// when the URL is carried; one with a callback elsewhere is refused
	// before the chain is asked.
	cb := testOrigin + "/#/tasks"
	if _, err := approval.Verify(ctx, checker, signClaim(t, owner, sentence, "countersign", &cb)); err != nil {
		t.Fatalf("with callback: %v", err)
	}
	elsewhere := "https://wallet.example/cb"
	if _, err := approval.Verify(ctx, checker, signClaim(t, owner, sentence, "countersign", &elsewhere)); !errors.Is(err, approval.ErrForeignCallback) {
		t.Fatalf("with a callback elsewhere: %v", err)
	}

	// The key was removed: unknown key (after the cache).
	f.RemoveKey("alice.near", owner.Key.PublicKey().String())
	fresh := newChecker(t, f.URL(), nil, nil)
	if _, err := approval.Verify(ctx, fresh, signClaim(t, owner, sentence, "countersign", nil)); !errors.Is(err, approval.ErrUnknownKey) {
		t.Fatalf("removed key: %v", err)
	}

	// The RPC is down: upstream unavailable, never valid.
	f.SetMode(neartest.Down500)
	if _, err := approval.Verify(ctx, newChecker(t, f.URL(), nil, nil), c); !errors.Is(err, approval.ErrUpstreamUnavailable) {
		t.Fatalf("down: %v", err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	w, _ := approval.NewWallet()
	w.AccountID = "alice.near"
	sentence := "Approve in Countersign as alice.near: task t-1 with hash " + hashA + " and supply " + hashB + ". At 2026-11-29T12:00:00Z."
	good := signClaim(t, w, sentence, "countersign", nil)
	other, _ := approval.NewWallet()
	otherSig := signClaim(t, other, sentence, "countersign", nil).Signed.Signature
	cb := testOrigin + "/x"
	withCB := signClaim(t, w, sentence, "countersign", &cb)
	foreign := "https://inbox.example.evil/x"
	withForeignCB := signClaim(t, w, sentence, "countersign", &foreign)
	sigBytes, _ := base64.StdEncoding.DecodeString(good.Signed.Signature)

	type mut func(c *approval.Claim)
	cases := []struct {
		name string
		mut  mut
		kind approval.Kind
	}{
		{"bad account id", func(c *approval.Claim) { c.Account = "Alice.near" }, approval.Malformed},
		{"no recipient", func(c *approval.Claim) { c.Recipient = "" }, approval.Malformed},
		{"no public key", func(c *approval.Claim) { c.Signed.PublicKey = "" }, approval.Malformed},
		{"p256 public key", func(c *approval.Claim) { c.Signed.PublicKey = "p256:" + c.Signed.PublicKey[8:] }, approval.Malformed},
		{"no nonce", func(c *approval.Claim) { c.Signed.Nonce = "" }, approval.Malformed},
		{"short nonce", func(c *approval.Claim) { c.Signed.Nonce = c.Signed.Nonce[4:] }, approval.Malformed},
		{"no signature", func(c *approval.Claim) { c.Signed.Signature = "" }, approval.Malformed},
		{"truncated signature", func(c *approval.Claim) {
			c.Signed.Signature = base64.StdEncoding.EncodeToString(sigBytes[:63])
		}, approval.Malformed},
		{"secp256k1-typed signature", func(c *approval.Claim) { c.Signed.Signature = "secp256k1:" + encodeBase58(sigBytes) }, approval.Malformed},
		{"other sentence", func(c *approval.Claim) { c.Sentence = strings.Replace(c.Sentence, "t-1", "t-2", 1) }, approval.InvalidSignature},
		{"other recipient", func(c *approval.Claim) { c.Recipient = "countersign-staging" }, approval.InvalidSignature},
		{"callback added", func(c *approval.Claim) { c.Signed.CallbackURL = &cb }, approval.InvalidSignature},
		{"callback dropped", func(c *approval.Claim) { *c = withCB; c.Signed.CallbackURL = nil }, approval.InvalidSignature},
		{"callback under another origin", func(c *approval.Claim) { *c = withForeignCB }, approval.ForeignCallback},
		{"callback with no public origin", func(c *approval.Claim) { *c = withCB; c.Origin = "" }, approval.ForeignCallback},
		{"callback under the origin of another deployment", func(c *approval.Claim) { *c = withCB; c.Origin = "https://other.example" }, approval.ForeignCallback},
		{"other nonce", func(c *approval.Claim) {
			n, _ := approval.NewNonce()
			c.Signed.Nonce = n.String()
		}, approval.InvalidSignature},
		{"other key's signature", func(c *approval.Claim) { c.Signed.Signature = otherSig }, approval.InvalidSignature},
		{"other key", func(c *approval.Claim) { c.Signed.PublicKey = other.Key.PublicKey().String() }, approval.InvalidSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mut(&c)
			stub := &stubChecker{status: approval.KeyFullAccess}
			_, err := approval.Verify(context.Background(), stub, c)
			if approval.KindOf(err) != tc.kind {
				t.Fatalf("want %v, got %v", tc.kind, err)
			}
			if stub.calls != 0 {
				t.Fatal("the chain was asked about a claim that does not verify")
			}
			var e *approval.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
			for _, secret := range []string{good.Signed.Signature, good.Signed.Nonce, good.Signed.PublicKey, sentence} {
				if strings.Contains(err.Error(), secret) {
					t.Fatal("the error repeats a signed piece")
				}
			}
		})
	}
	// Checker answers.
	checkerCases := []struct {
		name string
		stub *stubChecker
		kind approval.Kind
	}{
		{"limited", &stubChecker{status: approval.KeyLimited}, approval.NotFullAccess},
		{"unknown", &stubChecker{status: approval.KeyUnknown}, approval.UnknownKey},
		{"no status", &stubChecker{}, approval.UpstreamUnavailable},
		{"plain error", &stubChecker{err: errors.New("boom")}, approval.UpstreamUnavailable},
		{"refusal passes through", &stubChecker{err: approval.ErrUnknownKey}, approval.UnknownKey},
	}
	for _, tc := range checkerCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := approval.Verify(context.Background(), tc.stub, good)
			if approval.KindOf(err) != tc.kind {
				t.Fatalf("want %v, got %v", tc.kind, err)
			}
			if tc.stub.calls != 1 {
				t.Fatalf("%d checker calls", tc.stub.calls)
			}
		})
	}
	if _, err := approval.Verify(context.Background(), nil, good); err == nil {
		t.Fatal("nil checker accepted")
	}
	// A NEP-413 signature with the payload's right recipient but the wrong
	// account still verifies cryptographically; the chain decides.
	c := good
	c.Account = "bob.near"
	stub := &stubChecker{status: approval.KeyUnknown}
	if _, err := approval.Verify(context.Background(), stub, c); approval.KindOf(err) != approval.UnknownKey {
		t.Fatalf("other account: %v", err)
	}
}

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	for k := approval.Malformed; k <= approval.ForeignCallback; k++ {
		if k.String() == "unknown kind" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if approval.Kind(0).String() != "unknown kind" || approval.Kind(200).String() != "unknown kind" {
		t.Error("unnamed kinds")
	}
	if approval.KindOf(nil) != 0 || approval.KindOf(errors.New("x")) != 0 {
		t.Error("KindOf of a foreign error")
	}
	if errors.Is(approval.ErrMalformed, approval.ErrUnknownKey) || !errors.Is(approval.ErrMalformed, approval.ErrMalformed) {
		t.Error("sentinels")
	}
	if approval.ErrOutOfWindow.Error() != "out of window" {
		t.Error(approval.ErrOutOfWindow.Error())
	}
}

func TestSignedJSONCallbackURL(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]*string{
		`{"public_key":"k","signature":"s","nonce":"n"}`:                     nil,
		`{"public_key":"k","signature":"s","nonce":"n","callback_url":null}`: nil,
		`{"public_key":"k","signature":"s","nonce":"n","callback_url":""}`:   ptr(""),
		`{"public_key":"k","signature":"s","nonce":"n","callback_url":"u"}`:  ptr("u"),
	} {
		var s approval.Signed
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatal(err)
		}
		if (s.CallbackURL == nil) != (want == nil) || (want != nil && *s.CallbackURL != *want) {
			t.Errorf("%s: got %v", body, s.CallbackURL)
		}
	}
	// Absent is omitted when encoding; empty is kept.
	b, _ := json.Marshal(approval.Signed{})
	if strings.Contains(string(b), "callback_url") {
		t.Errorf("absent callback encoded: %s", b)
	}
	b, _ = json.Marshal(approval.Signed{CallbackURL: ptr("")})
	if !strings.Contains(string(b), `"callback_url":""`) {
		t.Errorf("empty callback dropped: %s", b)
	}
}
