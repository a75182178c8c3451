package sealing

import (
	"crypto/hmac"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// ReceiptKey keys the hashes a run receipt names (SPEC §11, amended): its
// input_sha256 and output_sha256 are hex HMAC-SHA256 under it, never bare
// hashes, so that nobody who reads them can test guesses of a small request
// or result.
//
//   - A task's receipt is keyed under the task's: ContentKey.ReceiptKey,
//     HMAC-SHA256(content key, "receipt:v1"), which every device that opens
//     the task derives too and checks the input MAC with.
//   - Any other run's receipt is keyed under NewReceiptKey, 32 random bytes
//     sealed under the master key with what the run keeps.
//
// A ReceiptKey is safe for concurrent use.
type ReceiptKey struct {
	// key is behind a pointer so reflection-based printing shows an address.
	key *[KeySize]byte
}

// ReceiptKey returns the receipt key of the task whose content key k is:
// HMAC-SHA256(content key, "receipt:v1").
func (k *ContentKey) ReceiptKey() *ReceiptKey {
	if k.check() != nil {
		return &ReceiptKey{}
	}
	rk := hmacSHA256(k.key[:], []byte("receipt:v1"))
	return &ReceiptKey{key: &rk}
}

// NewReceiptKey returns a fresh random receipt key, for a run's own receipt.
func NewReceiptKey() *ReceiptKey {
	return &ReceiptKey{key: randomKey()}
}

// ReceiptKeyFromBytes returns the receipt key b (32 bytes), as opened again.
func ReceiptKeyFromBytes(b []byte) (*ReceiptKey, error) {
	if len(b) != KeySize {
		return nil, fmt.Errorf("sealing: receipt key is %d bytes, want %d", len(b), KeySize)
	}
	var key [KeySize]byte
	copy(key[:], b)
	return &ReceiptKey{key: &key}, nil
}

// Bytes returns a copy of the key's 32 bytes, to be sealed, or nil for a
// ReceiptKey not made by this package.
func (r *ReceiptKey) Bytes() []byte {
	if r == nil || r.key == nil {
		return nil
	}
	return append([]byte(nil), r.key[:]...)
}

// Sum returns the lowercase hex HMAC-SHA256 of b under the key: what a
// receipt's input_sha256 or output_sha256 holds. It panics on a ReceiptKey
// not made by this package, which would otherwise key nothing.
func (r *ReceiptKey) Sum(b []byte) string {
	if r == nil || r.key == nil {
		panic("sealing: receipt key is empty")
	}
	m := hmacSHA256(r.key[:], b)
	return hex.EncodeToString(m[:])
}

// Verify reports, in constant time, whether sum is Sum(b).
func (r *ReceiptKey) Verify(b []byte, sum string) bool {
	if r == nil || r.key == nil {
		return false
	}
	want := r.Sum(b)
	return hmac.Equal([]byte(want), []byte(sum))
}

// MAC returns the lowercase hex keyed hash of msg for purpose p and row
// rowID under master key keyID, for a value kept in clear that is derived
// from secret bytes but must still be recognised (an idempotent call's
// body): HMAC-SHA256(subkey, u32_be(len(rowID)) ‖ rowID ‖ msg), subkey =
// HMAC-SHA256(master, "mac:v1:{purpose}"). Binding the row keeps equal
// messages of two rows apart. Store keyID beside it: the same message is
// recognised under the same key id only.
func (k *Keyring) MAC(keyID uint32, p SecretPurpose, rowID string, msg []byte) (string, error) {
	if err := checkSecretArgs(p, rowID); err != nil {
		return "", err
	}
	master, err := k.key(keyID)
	if err != nil {
		return "", err
	}
	if uint64(len(rowID)) > 1<<32-1 {
		return "", errors.New("sealing: row id is too long")
	}
	sub := hmacSHA256(master[:], []byte("mac:v1:"+string(p)))
	in := binary.BigEndian.AppendUint32(nil, uint32(len(rowID)))
	in = append(append(in, rowID...), msg...)
	m := hmacSHA256(sub[:], in)
	return hex.EncodeToString(m[:]), nil
}
