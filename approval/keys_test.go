package approval_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"

	"countersign/approval"
)

const (
	vectorKey = "ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe"
)

func secpKey(t testing.TB, b byte) approval.PrivateKey {
	t.Helper()
	secret := make([]byte, 32)
	for i := range secret {
		secret[i] = b + byte(i)
	}
	k, err := approval.NewSecp256k1Key(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParsePublicKeyRoundTrip(t *testing.T) {
	t.Parallel()
	k, err := approval.ParsePublicKey(vectorKey)
	if err != nil {
		t.Fatal(err)
	}
	if k.Type() != approval.ED25519 || len(k.Bytes()) != 32 || k.String() != vectorKey {
		t.Fatalf("bad parse: %v %d %s", k.Type(), len(k.Bytes()), k)
	}
	s := secpKey(t, 7).PublicKey()
	again, err := approval.ParsePublicKey(s.String())
	if err != nil {
		t.Fatal(err)
	}
	if again != s || again.Type() != approval.SECP256K1 || len(again.Bytes()) != 64 {
		t.Fatal("secp256k1 key does not round trip")
	}
	var u approval.PublicKey
	if err := u.UnmarshalText([]byte(vectorKey)); err != nil || u != k {
		t.Fatalf("UnmarshalText: %v", err)
	}
	if b, err := k.MarshalText(); err != nil || string(b) != vectorKey {
		t.Fatalf("MarshalText: %s %v", b, err)
	}
	if _, err := (approval.PublicKey{}).MarshalText(); err == nil {
		t.Fatal("the zero key marshals")
	}
}

func TestParsePublicKeyRefusals(t *testing.T) {
	t.Parallel()
	good := strings.TrimPrefix(vectorKey, "ed25519:")
	raw := decodeBase58(t, good)
	secp := secpKey(t, 1).PublicKey().String()
	secpBody := strings.TrimPrefix(secp, "secp256k1:")
	// A 64-byte value that is not a point on the curve (x = 0, y = 0).
	offCurve := "secp256k1:" + encodeBase58(make([]byte, 64))
	// 33-byte compressed and 65-byte prefixed points are not NEAR's form.
	point := secpKey(t, 1).PublicKey().Bytes()
	cases := map[string]string{
		"empty":                 "",
		"no prefix":             good,
		"upper-case prefix":     "ED25519:" + good,
		"other type":            "p256:" + good,
		"unknown type":          "ed448:" + good,
		"empty body":            "ed25519:",
		"bad base58 char":       "ed25519:" + good[:10] + "0" + good[11:],
		"base58 with space":     "ed25519: " + good,
		"trailing space":        vectorKey + " ",
		"31 bytes":              "ed25519:" + encodeBase58(raw[:31]),
		"33 bytes":              "ed25519:" + encodeBase58(append(append([]byte{}, raw...), 1)),
		"leading zero byte":     "ed25519:1" + good,
		"ed25519 prefix, 64 b":  "ed25519:" + secpBody,
		"secp prefix, 32 b":     "secp256k1:" + good,
		"secp off curve":        offCurve,
		"secp 65 with 0x04":     "secp256k1:" + encodeBase58(append([]byte{4}, point...)),
		"secp compressed 33":    "secp256k1:" + encodeBase58(append([]byte{2}, point[:32]...)),
		"very long":             "ed25519:" + strings.Repeat("1", 500),
		"two prefixes":          "ed25519:ed25519:" + good,
		"secp256k1 upper":       "SECP256K1:" + secpBody,
		"newline inside":        "ed25519:" + good[:5] + "\n" + good[5:],
		"non-canonical leading": "secp256k1:1" + secpBody,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := approval.ParsePublicKey(in)
			if approval.KindOf(err) != approval.Malformed {
				t.Fatalf("want a malformed refusal, got %v", err)
			}
			if err != nil && in != "" && strings.Contains(err.Error(), in) {
				t.Fatal("the error repeats the input")
			}
		})
	}
}

func TestParseSignatureForms(t *testing.T) {
	t.Parallel()
	sig := make([]byte, 64)
	for i := range sig {
		sig[i] = byte(i * 3)
	}
	for name, form := range map[string]string{
		"std padded":   base64.StdEncoding.EncodeToString(sig),
		"std raw":      base64.RawStdEncoding.EncodeToString(sig),
		"url padded":   base64.URLEncoding.EncodeToString(sig),
		"url raw":      base64.RawURLEncoding.EncodeToString(sig),
		"base58 typed": "ed25519:" + encodeBase58(sig),
	} {
		got, err := approval.ParseSignature(form, approval.ED25519)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(got) != string(sig) {
			t.Errorf("%s: wrong bytes", name)
		}
	}
}

func TestParseSignatureRefusals(t *testing.T) {
	t.Parallel()
	sig64 := make([]byte, 64)
	sig64[0] = 1
	std := base64.StdEncoding.EncodeToString(sig64)
	// A valid secp256k1 signature to mutate.
	k := secpKey(t, 3)
	good, err := k.Sign(approval.Payload{Message: "m", Recipient: "r"})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	high := append([]byte{}, good...)
	s := new(big.Int).SetBytes(good[32:64])
	new(big.Int).Sub(n, s).FillBytes(high[32:64]) // the malleated twin: n − s
	high[64] ^= 1
	v2 := append([]byte{}, good...)
	v2[64] = 2
	v27 := append([]byte{}, good...)
	v27[64] = 27
	rZero := append([]byte{}, good...)
	clear(rZero[:32])
	sZero := append([]byte{}, good...)
	clear(sZero[32:64])
	rBig := append([]byte{}, good...)
	n.FillBytes(rBig[:32])

	type tc struct {
		in  string
		typ approval.KeyType
	}
	cases := map[string]tc{
		"empty":                   {"", approval.ED25519},
		"63 bytes":                {base64.StdEncoding.EncodeToString(sig64[:63]), approval.ED25519},
		"65 bytes for ed25519":    {base64.StdEncoding.EncodeToString(append(sig64, 0)), approval.ED25519},
		"64 bytes for secp256k1":  {std, approval.SECP256K1},
		"not base64":              {"!!!!" + std[4:], approval.ED25519},
		"mixed alphabets":         {"+-" + std[2:], approval.ED25519},
		"bad padding":             {std + "=", approval.ED25519},
		"non-zero trailing bits":  {std[:85] + "B==", approval.ED25519},
		"newline inside":          {std[:10] + "\n" + std[10:], approval.ED25519},
		"CR inside":               {std[:10] + "\r" + std[10:], approval.ED25519},
		"typed other type":        {"secp256k1:" + encodeBase58(sig64), approval.ED25519},
		"typed upper-case":        {"ED25519:" + encodeBase58(sig64), approval.ED25519},
		"typed bad base58":        {"ed25519:0OIl", approval.ED25519},
		"typed 63 bytes":          {"ed25519:" + encodeBase58(sig64[:63]), approval.ED25519},
		"typed empty":             {"ed25519:", approval.ED25519},
		"no key type":             {std, 0},
		"too long":                {strings.Repeat("A", 4000), approval.ED25519},
		"secp high s":             {base64.StdEncoding.EncodeToString(high), approval.SECP256K1},
		"secp v = 2":              {base64.StdEncoding.EncodeToString(v2), approval.SECP256K1},
		"secp v = 27":             {base64.StdEncoding.EncodeToString(v27), approval.SECP256K1},
		"secp r = 0":              {base64.StdEncoding.EncodeToString(rZero), approval.SECP256K1},
		"secp s = 0":              {base64.StdEncoding.EncodeToString(sZero), approval.SECP256K1},
		"secp r = n":              {base64.StdEncoding.EncodeToString(rBig), approval.SECP256K1},
		"secp typed as ed25519":   {"ed25519:" + encodeBase58(good), approval.SECP256K1},
		"secp typed 64 bytes":     {"secp256k1:" + encodeBase58(good[:64]), approval.SECP256K1},
		"secp base64 of 66 bytes": {base64.StdEncoding.EncodeToString(append(good, 0)), approval.SECP256K1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := approval.ParseSignature(c.in, c.typ)
			if approval.KindOf(err) != approval.Malformed {
				t.Fatalf("want a malformed refusal, got %v", err)
			}
		})
	}
	// The good one and its typed form parse.
	if _, err := approval.ParseSignature(base64.StdEncoding.EncodeToString(good), approval.SECP256K1); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.ParseSignature("secp256k1:"+encodeBase58(good), approval.SECP256K1); err != nil {
		t.Fatal(err)
	}
}

func TestSecp256k1SignVerify(t *testing.T) {
	t.Parallel()
	k := secpKey(t, 9)
	other := secpKey(t, 10)
	n, _ := approval.NewNonce()
	p := approval.Payload{Message: "Confirm in Countersign as 0xabc: remove the webhook. At 2026-01-01T00:00:00Z.", Nonce: n, Recipient: "countersign"}
	sig, err := k.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != 65 || sig[64] > 1 {
		t.Fatalf("signature is not r‖s‖v with v in {0,1}: %d bytes, v=%d", len(sig), sig[len(sig)-1])
	}
	parsed, err := approval.ParseSignature(base64.StdEncoding.EncodeToString(sig), approval.SECP256K1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.VerifySignature(k.PublicKey(), parsed); err != nil {
		t.Fatalf("own signature does not verify: %v", err)
	}
	if err := p.VerifySignature(other.PublicKey(), parsed); approval.KindOf(err) != approval.InvalidSignature {
		t.Fatalf("another key's signature verified: %v", err)
	}
	// Flipping v recovers another key.
	flipped := append([]byte{}, parsed...)
	flipped[64] ^= 1
	if err := p.VerifySignature(k.PublicKey(), flipped); approval.KindOf(err) != approval.InvalidSignature {
		t.Fatalf("flipped v verified: %v", err)
	}
	// An ed25519 signature length never verifies with a secp256k1 key, and
	// the other way round.
	if k.PublicKey().VerifyDigest([32]byte{}, make([]byte, 64)) {
		t.Fatal("64-byte signature verified with a secp256k1 key")
	}
	ed, _ := approval.GenerateKey()
	if ed.PublicKey().VerifyDigest([32]byte{}, parsed) {
		t.Fatal("65-byte signature verified with an ed25519 key")
	}
	if (approval.PublicKey{}).VerifyDigest([32]byte{}, parsed) {
		t.Fatal("the zero key verified a signature")
	}
	// Its implicit account is ETH-style.
	if id := approval.ImplicitAccountID(k.PublicKey()); !approval.IsEthImplicit(id) {
		t.Fatalf("implicit account %s", id)
	}
}

func TestPublicKeyConstructors(t *testing.T) {
	t.Parallel()
	pub, _, _ := ed25519.GenerateKey(nil)
	k, err := approval.PublicKeyFromEd25519(pub)
	if err != nil || string(k.Bytes()) != string(pub) {
		t.Fatalf("PublicKeyFromEd25519: %v", err)
	}
	if _, err := approval.PublicKeyFromEd25519(pub[:31]); approval.KindOf(err) != approval.Malformed {
		t.Fatal("31-byte ed25519 key accepted")
	}
	s := secpKey(t, 5).PublicKey()
	withPrefix := append([]byte{4}, s.Bytes()...)
	k2, err := approval.PublicKeyFromSecp256k1(withPrefix)
	if err != nil || k2 != s {
		t.Fatalf("PublicKeyFromSecp256k1 with 0x04: %v", err)
	}
	if _, err := approval.PublicKeyFromSecp256k1(make([]byte, 64)); approval.KindOf(err) != approval.Malformed {
		t.Fatal("off-curve point accepted")
	}
	if _, err := approval.PublicKeyFromSecp256k1(s.Bytes()[:63]); approval.KindOf(err) != approval.Malformed {
		t.Fatal("63-byte point accepted")
	}
	if (approval.PublicKey{}).String() != "" || (approval.PublicKey{}).Bytes() != nil || !(approval.PublicKey{}).IsZero() {
		t.Fatal("zero key is not empty")
	}
	if approval.ED25519.String() != "ed25519" || approval.SECP256K1.String() != "secp256k1" || approval.KeyType(0).String() != "unknown" {
		t.Fatal("key type names")
	}
}

func TestParseNonce(t *testing.T) {
	t.Parallel()
	n, err := approval.NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	again, err := approval.ParseNonce(n.String())
	if err != nil || again != n {
		t.Fatalf("nonce does not round trip: %v", err)
	}
	raw := make([]byte, 32)
	std := base64.StdEncoding.EncodeToString(raw)
	for name, in := range map[string]string{
		"empty":          "",
		"31 bytes":       base64.StdEncoding.EncodeToString(raw[:31]),
		"33 bytes":       base64.StdEncoding.EncodeToString(append(raw, 0)),
		"unpadded":       base64.RawStdEncoding.EncodeToString(raw),
		"url alphabet":   base64.URLEncoding.EncodeToString(append([]byte{0xfb, 0xff}, raw[2:]...)),
		"hex":            strings.Repeat("00", 32),
		"newline":        std[:43] + "\n",
		"trailing bits":  std[:42] + "B=",
		"space":          " " + std[1:],
		"array notation": "[0,0,0]",
	} {
		if _, err := approval.ParseNonce(in); approval.KindOf(err) != approval.Malformed {
			t.Errorf("%s: want a malformed refusal, got %v", name, err)
		}
	}
}

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	k, err := approval.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	again, err := approval.ParsePrivateKey(k.SecretText())
	if err != nil || again.PublicKey() != k.PublicKey() {
		t.Fatalf("ed25519 secret does not round trip: %v", err)
	}
	if strings.Contains(k.String(), strings.TrimPrefix(k.SecretText(), "ed25519:")) {
		t.Fatal("String shows the secret")
	}
	s := secpKey(t, 11)
	again, err = approval.ParsePrivateKey(s.SecretText())
	if err != nil || again.PublicKey() != s.PublicKey() {
		t.Fatalf("secp256k1 secret does not round trip: %v", err)
	}
	raw := decodeBase58(t, strings.TrimPrefix(k.SecretText(), "ed25519:"))
	mismatched := append(append([]byte{}, raw[:32]...), make([]byte, 32)...)
	n, _ := new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	for name, in := range map[string]string{
		"empty":                "",
		"no prefix":            encodeBase58(raw),
		"seed only":            "ed25519:" + encodeBase58(raw[:32]),
		"public half mismatch": "ed25519:" + encodeBase58(mismatched),
		"secp zero":            "secp256k1:" + encodeBase58(make([]byte, 32)),
		"secp = n":             "secp256k1:" + encodeBase58(n.Bytes()),
		"secp 31 bytes":        "secp256k1:" + encodeBase58(raw[1:32]),
		"other type":           "p256:" + encodeBase58(raw),
		"too long":             "ed25519:" + strings.Repeat("2", 400),
	} {
		if _, err := approval.ParsePrivateKey(in); approval.KindOf(err) != approval.Malformed {
			t.Errorf("%s: want a malformed refusal, got %v", name, err)
		}
	}
	if _, err := approval.NewEd25519Key(make([]byte, 31)); approval.KindOf(err) != approval.Malformed {
		t.Error("31-byte seed accepted")
	}
	if (approval.PrivateKey{}).SecretText() != "" || (approval.PrivateKey{}).String() != "no private key" {
		t.Error("zero private key")
	}
	if _, err := (approval.PrivateKey{}).Sign(approval.Payload{}); err == nil {
		t.Error("zero private key signed")
	}
}

func TestPayloadBytes(t *testing.T) {
	t.Parallel()
	// Hand-made expectation: tag, then borsh of each field.
	n := approval.Nonce{}
	for i := range n {
		n[i] = byte(i)
	}
	cb := "https://x"
	p := approval.Payload{Message: "hi", Nonce: n, Recipient: "r", CallbackURL: &cb}
	got, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x9d, 0x01, 0x00, 0x80, 2, 0, 0, 0, 'h', 'i'}
	want = append(want, n[:]...)
	want = append(want, 1, 0, 0, 0, 'r', 1, 9, 0, 0, 0)
	want = append(want, "https://x"...)
	if string(got) != string(want) {
		t.Fatalf("bytes:\n got %x\nwant %x", got, want)
	}
	// Absent and empty callback URLs are different payloads.
	empty := ""
	a, _ := approval.Payload{Message: "hi", Nonce: n, Recipient: "r"}.Bytes()
	b, _ := approval.Payload{Message: "hi", Nonce: n, Recipient: "r", CallbackURL: &empty}.Bytes()
	if string(a[len(a)-1:]) != "\x00" || string(b[len(b)-5:]) != "\x01\x00\x00\x00\x00" {
		t.Fatalf("option encoding: %x / %x", a[len(a)-5:], b[len(b)-5:])
	}
	big := strings.Repeat("a", approval.MaxFieldBytes+1)
	for name, q := range map[string]approval.Payload{
		"message":   {Message: big},
		"recipient": {Recipient: big},
		"callback":  {CallbackURL: &big},
	} {
		if _, err := q.Bytes(); approval.KindOf(err) != approval.Malformed {
			t.Errorf("%s too long: want a malformed refusal, got %v", name, err)
		}
		if _, err := q.Digest(); err == nil {
			t.Errorf("%s too long: digest made", name)
		}
	}
}
