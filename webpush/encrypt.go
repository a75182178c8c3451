package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Sizes of RFC 8291's pieces.
const (
	// AuthSize is the length of a subscription's auth secret.
	AuthSize = 16
	// saltSize is the length of the aes128gcm salt (RFC 8188 §2.1).
	saltSize = 16
	// pointSize is an uncompressed P-256 point.
	pointSize = 65
	// headerSize is salt ‖ rs ‖ idlen ‖ keyid.
	headerSize = saltSize + 4 + 1 + pointSize
	// tagSize is AES-GCM's.
	tagSize = 16
	// RecordSize is the rs every message names: one record, as RFC 8291 §4
	// requires, of at most the 4,096 bytes every push service takes.
	RecordSize = 4096
	// MaxPlaintext is the most a message carries (RFC 8291 §4: 3,993).
	MaxPlaintext = RecordSize - headerSize - 1 - tagSize
)

// Encrypt seals plaintext for a subscription (RFC 8291 with RFC 8188's
// aes128gcm content coding) with a fresh ephemeral key and salt: the body
// of a push, salt ‖ rs ‖ idlen ‖ keyid ‖ ciphertext, one record, the
// plaintext followed by the last record's delimiter 0x02 and no padding.
func Encrypt(plaintext []byte, ua *ecdh.PublicKey, auth []byte) ([]byte, error) {
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, saltSize)
	_, _ = rand.Read(salt)
	return encrypt(plaintext, ua, auth, salt, as)
}

// encrypt is Encrypt with the salt and the application server's ephemeral
// key given, so RFC 8291 Appendix A's vector can be made byte for byte.
func encrypt(plaintext []byte, ua *ecdh.PublicKey, auth, salt []byte, as *ecdh.PrivateKey) ([]byte, error) {
	switch {
	case ua == nil || ua.Curve() != ecdh.P256():
		return nil, errors.New("webpush: the subscription's key is not a P-256 key")
	case len(auth) != AuthSize:
		return nil, fmt.Errorf("webpush: the auth secret must be %d bytes", AuthSize)
	case len(salt) != saltSize:
		return nil, fmt.Errorf("webpush: the salt must be %d bytes", saltSize)
	case len(plaintext) > MaxPlaintext:
		return nil, fmt.Errorf("webpush: a message carries at most %d bytes", MaxPlaintext)
	}
	secret, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPub := as.PublicKey().Bytes()
	// RFC 8291 §3.3–3.4: the auth secret mixes the shared secret into IKM,
	// with both public keys in the info; RFC 8188 §2.2–2.3 derive the
	// content key and nonce from it and the salt.
	info := make([]byte, 0, 14+2*pointSize)
	info = append(append(append(info, "WebPush: info\x00"...), ua.Bytes()...), asPub...)
	ikm, err := hkdf.Key(sha256.New, secret, auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	out := make([]byte, headerSize, headerSize+len(plaintext)+1+tagSize)
	copy(out, salt)
	binary.BigEndian.PutUint32(out[saltSize:], RecordSize)
	out[saltSize+4] = pointSize
	copy(out[saltSize+5:], asPub)
	record := make([]byte, 0, len(plaintext)+1)
	record = append(append(record, plaintext...), 0x02)
	return gcm.Seal(out, nonce, record, nil), nil
}
