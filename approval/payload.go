package approval

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/near/borsh-go"
)

// NEP413Tag is the u32 written little-endian before the borsh payload:
// 2^31 + 413. A transaction can never start with it, so a signed message can
// never be replayed as a transaction.
const NEP413Tag uint32 = 1<<31 + 413

// MaxFieldBytes bounds each text field of a payload (message, recipient,
// callback URL). Sentences are far shorter; the bound keeps hostile input
// from making large allocations.
const MaxFieldBytes = 64 << 10

// Nonce is the 32-byte NEP-413 nonce. Spending it (once per account) is the
// caller's job; this package only parses it.
type Nonce [32]byte

// NewNonce returns 32 random bytes.
func NewNonce() (Nonce, error) {
	var n Nonce
	if _, err := rand.Read(n[:]); err != nil {
		return Nonce{}, fmt.Errorf("approval: reading random nonce: %w", err)
	}
	return n, nil
}

// ParseNonce decodes the nonce as it travels in JSON: standard, padded
// base64 of exactly 32 bytes (44 characters). Other encodings are refused so
// that one nonce has exactly one text form.
func ParseNonce(s string) (Nonce, error) {
	var n Nonce
	if len(s) != base64.StdEncoding.EncodedLen(len(n)) || strings.ContainsAny(s, "\r\n") {
		return Nonce{}, refuse(Malformed, "the nonce is not base64 of 32 bytes")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) != len(n) {
		return Nonce{}, refuse(Malformed, "the nonce is not base64 of 32 bytes")
	}
	copy(n[:], raw)
	return n, nil
}

// String returns the nonce as standard, padded base64.
func (n Nonce) String() string { return base64.StdEncoding.EncodeToString(n[:]) }

// Payload is what a NEP-413 wallet signs. CallbackURL nil means absent
// (borsh None); a pointer to "" is present and empty (Some("")): the two are
// different payloads.
type Payload struct {
	Message     string
	Nonce       Nonce
	Recipient   string
	CallbackURL *string
}

// borshPayload is the field order NEP-413 fixes. borsh-go writes a [32]byte
// array as its 32 raw bytes (no length) and a nil pointer as the Option tag
// 0, a non-nil one as 1 followed by the value.
type borshPayload struct {
	Message     string
	Nonce       [32]byte
	Recipient   string
	CallbackURL *string
}

// Bytes returns the exact bytes whose SHA-256 the wallet signs:
// u32_le(NEP413Tag) ‖ borsh(payload).
func (p Payload) Bytes() ([]byte, error) {
	if len(p.Message) > MaxFieldBytes || len(p.Recipient) > MaxFieldBytes ||
		(p.CallbackURL != nil && len(*p.CallbackURL) > MaxFieldBytes) {
		return nil, refuse(Malformed, "a field of the signed payload is too long")
	}
	body, err := borsh.Serialize(borshPayload{
		Message:     p.Message,
		Nonce:       p.Nonce,
		Recipient:   p.Recipient,
		CallbackURL: p.CallbackURL,
	})
	if err != nil {
		return nil, fmt.Errorf("approval: borsh-encoding the payload: %w", err)
	}
	out := make([]byte, 4, 4+len(body))
	binary.LittleEndian.PutUint32(out, NEP413Tag)
	return append(out, body...), nil
}

// Digest returns SHA-256(Bytes()), the 32 bytes the wallet signs.
func (p Payload) Digest() ([32]byte, error) {
	b, err := p.Bytes()
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// VerifySignature checks a parsed signature by key over the payload.
// It returns an *Error of kind InvalidSignature when it does not verify.
func (p Payload) VerifySignature(key PublicKey, sig []byte) error {
	d, err := p.Digest()
	if err != nil {
		return err
	}
	if !key.VerifyDigest(d, sig) {
		return refuse(InvalidSignature, "the signature does not verify")
	}
	return nil
}
