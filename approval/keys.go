package approval

import (
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/base64"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
)

// KeyType is the curve of a NEAR key.
type KeyType uint8

// The key types owners may sign with. The zero KeyType is no key type.
const (
	ED25519 KeyType = iota + 1
	SECP256K1
)

func (t KeyType) String() string {
	switch t {
	case ED25519:
		return "ed25519"
	case SECP256K1:
		return "secp256k1"
	}
	return "unknown"
}

// Sizes of keys and signatures, in bytes.
const (
	ed25519KeySize       = ed25519.PublicKeySize // 32
	secp256k1KeySize     = 64                    // uncompressed X‖Y, without the 0x04 prefix
	ed25519SigSize       = ed25519.SignatureSize // 64
	secp256k1SigSize     = 65                    // r‖s‖v
	maxEncodedKeyLen     = 128                   // longer text is refused before decoding
	maxEncodedSigLen     = 160
	ed25519Prefix        = "ed25519:"
	secp256k1Prefix      = "secp256k1:"
	maxEncodedPrivateLen = 160
)

// PublicKey is a parsed NEAR public key. The zero value is no key. It is
// comparable, so it can be a map key.
type PublicKey struct {
	typ KeyType
	b   [secp256k1KeySize]byte // ed25519 uses the first 32 bytes
}

// ParsePublicKey parses `ed25519:<base58 of 32 bytes>` or
// `secp256k1:<base58 of the 64-byte uncompressed point without 0x04>`. The
// type prefix is required and lowercase; the base58 must be canonical; a
// secp256k1 point must be on the curve. Any other form is refused.
func ParsePublicKey(s string) (PublicKey, error) {
	if len(s) > maxEncodedKeyLen {
		return PublicKey{}, refuse(Malformed, "the public key is too long")
	}
	var k PublicKey
	var body string
	var size int
	switch {
	case strings.HasPrefix(s, ed25519Prefix):
		k.typ, body, size = ED25519, s[len(ed25519Prefix):], ed25519KeySize
	case strings.HasPrefix(s, secp256k1Prefix):
		k.typ, body, size = SECP256K1, s[len(secp256k1Prefix):], secp256k1KeySize
	default:
		return PublicKey{}, refuse(Malformed, "the public key is not an ed25519 or secp256k1 key")
	}
	raw, ok := decodeBase58(body, size)
	if !ok {
		return PublicKey{}, refuse(Malformed, "the public key is not base58 of "+itoa(size)+" bytes")
	}
	copy(k.b[:], raw)
	if k.typ == SECP256K1 {
		if _, err := crypto.UnmarshalPubkey(append([]byte{0x04}, raw...)); err != nil {
			return PublicKey{}, refuse(Malformed, "the secp256k1 public key is not a point on the curve")
		}
	}
	return k, nil
}

// PublicKeyFromEd25519 wraps a raw ed25519 public key.
func PublicKeyFromEd25519(pub ed25519.PublicKey) (PublicKey, error) {
	if len(pub) != ed25519KeySize {
		return PublicKey{}, refuse(Malformed, "an ed25519 public key is 32 bytes")
	}
	k := PublicKey{typ: ED25519}
	copy(k.b[:], pub)
	return k, nil
}

// PublicKeyFromSecp256k1 wraps a secp256k1 public key given as the 64-byte
// uncompressed point X‖Y (without the 0x04 prefix) or the 65-byte form with
// it.
func PublicKeyFromSecp256k1(point []byte) (PublicKey, error) {
	if len(point) == secp256k1KeySize+1 && point[0] == 0x04 {
		point = point[1:]
	}
	if len(point) != secp256k1KeySize {
		return PublicKey{}, refuse(Malformed, "a secp256k1 public key is 64 bytes")
	}
	if _, err := crypto.UnmarshalPubkey(append([]byte{0x04}, point...)); err != nil {
		return PublicKey{}, refuse(Malformed, "the secp256k1 public key is not a point on the curve")
	}
	k := PublicKey{typ: SECP256K1}
	copy(k.b[:], point)
	return k, nil
}

// Type returns the key's curve (0 for the zero key).
func (k PublicKey) Type() KeyType { return k.typ }

// IsZero reports whether k is the zero value (no key).
func (k PublicKey) IsZero() bool { return k.typ == 0 }

// Bytes returns a copy of the raw key: 32 bytes for ed25519, the 64-byte
// point X‖Y for secp256k1.
func (k PublicKey) Bytes() []byte {
	switch k.typ {
	case ED25519:
		return append([]byte(nil), k.b[:ed25519KeySize]...)
	case SECP256K1:
		return append([]byte(nil), k.b[:]...)
	}
	return nil
}

// String returns the canonical text form, `ed25519:<base58>` or
// `secp256k1:<base58>`, or "" for the zero key.
func (k PublicKey) String() string {
	switch k.typ {
	case ED25519:
		return ed25519Prefix + base58.Encode(k.b[:ed25519KeySize])
	case SECP256K1:
		return secp256k1Prefix + base58.Encode(k.b[:])
	}
	return ""
}

// MarshalText encodes the key in its canonical text form.
func (k PublicKey) MarshalText() ([]byte, error) {
	if k.IsZero() {
		return nil, refuse(Malformed, "no public key")
	}
	return []byte(k.String()), nil
}

// UnmarshalText parses the key with ParsePublicKey.
func (k *PublicKey) UnmarshalText(b []byte) error {
	p, err := ParsePublicKey(string(b))
	if err != nil {
		return err
	}
	*k = p
	return nil
}

// ParseSignature decodes a signature made with a key of type t. Accepted
// forms: base64 (standard or URL alphabet, padded or not), as wallets return
// it; or `<type>:<base58>` as NEAR CLIs print it, where the type must be t's.
// An ed25519 signature is 64 bytes; a secp256k1 signature is 65 bytes r‖s‖v
// with v ∈ {0,1}, r and s in range and s in the lower half of the order.
func ParseSignature(s string, t KeyType) ([]byte, error) {
	if len(s) > maxEncodedSigLen {
		return nil, refuse(Malformed, "the signature is too long")
	}
	size := 0
	switch t {
	case ED25519:
		size = ed25519SigSize
	case SECP256K1:
		size = secp256k1SigSize
	default:
		return nil, refuse(Malformed, "the key type has no signatures")
	}
	var sig []byte
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if s[:i] != t.String() {
			return nil, refuse(Malformed, "the signature's type is not the key's type")
		}
		raw, ok := decodeBase58(s[i+1:], size)
		if !ok {
			return nil, refuse(Malformed, "the signature is not base58 of "+itoa(size)+" bytes")
		}
		sig = raw
	} else {
		raw, ok := decodeBase64Any(s)
		if !ok || len(raw) != size {
			return nil, refuse(Malformed, "the signature is not base64 of "+itoa(size)+" bytes")
		}
		sig = raw
	}
	if t == SECP256K1 {
		r := new(big.Int).SetBytes(sig[:32])
		sv := new(big.Int).SetBytes(sig[32:64])
		if !crypto.ValidateSignatureValues(sig[64], r, sv, true) {
			return nil, refuse(Malformed, "the secp256k1 signature is not r‖s‖v with low s and v of 0 or 1")
		}
	}
	return sig, nil
}

// VerifyDigest reports whether sig (as ParseSignature returns it) is k's
// signature of the 32-byte digest. For secp256k1 the signer's key is
// recovered and must equal k.
func (k PublicKey) VerifyDigest(digest [32]byte, sig []byte) bool {
	switch k.typ {
	case ED25519:
		if len(sig) != ed25519SigSize {
			return false
		}
		return ed25519.Verify(ed25519.PublicKey(k.b[:ed25519KeySize]), digest[:], sig)
	case SECP256K1:
		if len(sig) != secp256k1SigSize || sig[64] > 1 {
			return false
		}
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:64])
		if !crypto.ValidateSignatureValues(sig[64], r, s, true) {
			return false
		}
		rec, err := crypto.Ecrecover(digest[:], sig)
		if err != nil || len(rec) != 1+secp256k1KeySize || rec[0] != 0x04 {
			return false
		}
		return subtle.ConstantTimeCompare(rec[1:], k.b[:]) == 1
	}
	return false
}

// decodeBase58 decodes canonical base58 of exactly size bytes.
func decodeBase58(s string, size int) ([]byte, bool) {
	// base58 of n bytes is at most ceil(n*log(256)/log(58)) ≈ 1.37n characters.
	if s == "" || len(s) > size*14/10+2 {
		return nil, false
	}
	raw, err := base58.Decode(s)
	if err != nil || len(raw) != size || base58.Encode(raw) != s {
		return nil, false
	}
	return raw, true
}

// decodeBase64Any decodes standard or URL-safe base64, padded or not, with
// canonical (zero) trailing bits.
func decodeBase64Any(s string) ([]byte, bool) {
	// The decoder skips CR and LF even in strict mode; refuse them here.
	if s == "" || strings.ContainsAny(s, "\r\n") {
		return nil, false
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") && len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	raw, err := enc.Strict().DecodeString(s)
	if err != nil {
		return nil, false
	}
	return raw, true
}

// itoa formats a small non-negative int without fmt.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
