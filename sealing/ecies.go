package sealing

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Purpose names what a blob sealed to a P-256 public key carries. It is part
// of the HKDF info and of the AAD, so a blob made for one purpose or task
// never opens as another.
type Purpose string

// Purposes of blobs sealed to a P-256 public key.
const (
	// DeviceCopy is a task's content key wrapped to one of the owner's devices.
	DeviceCopy Purpose = "device-copy"
	// Answer is the owner's answer to an input task (text or file bytes),
	// sealed to the task's reply key.
	Answer Purpose = "answer"
	// Note is the owner's note for the agent beside an approval, sealed to
	// the task's reply key.
	Note Purpose = "note"
	// Rejection is the owner's reason for a rejection, sealed to the task's
	// reply key.
	Rejection Purpose = "rejection"
	// Activity is the key of an entry of the owner's history wrapped to one
	// of the owner's devices (see EntryKey); its id is the entry's.
	Activity Purpose = "activity"
)

func (p Purpose) check() error {
	switch p {
	case DeviceCopy, Answer, Note, Rejection, Activity:
		return nil
	}
	return errors.New("sealing: unknown purpose for a blob sealed to a public key")
}

// Info returns the HKDF info, also the AAD, of a blob for purpose p of task
// taskID: "countersign-task:v1:{purpose}:{taskID}".
func (p Purpose) Info(taskID string) []byte {
	return []byte("countersign-task:v1:" + string(p) + ":" + taskID)
}

const (
	// p256PointSize is the size of an uncompressed P-256 point.
	p256PointSize = 65
	// pubKeyPrefix starts the text form of a P-256 public key.
	pubKeyPrefix = "p256:"
)

// SealTo seals plaintext for purpose p of task taskID to the P-256 public key
// recipient (SPEC §9), as a browser's WebCrypto opens it:
//
//	0x01 ‖ ephemeral(65) ‖ nonce(12) ‖ ciphertext ‖ tag
//
// with key = HKDF-SHA256(ikm = x-coordinate of ECDH(ephemeral, recipient),
// salt = ephemeral ‖ recipient (65 + 65 bytes, uncompressed), info =
// p.Info(taskID), 32 bytes), sealed with AES-256-GCM and AAD = info.
func SealTo(recipient *ecdh.PublicKey, p Purpose, taskID string, plaintext []byte) ([]byte, error) {
	eph, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sealing: ephemeral key: %w", err)
	}
	return sealTo(eph, randomGCMNonce(), recipient, p, taskID, plaintext)
}

func sealTo(eph *ecdh.PrivateKey, nonce []byte, recipient *ecdh.PublicKey, p Purpose, taskID string, plaintext []byte) ([]byte, error) {
	if err := checkSealTo(recipient, p, taskID); err != nil {
		return nil, err
	}
	// A Wrapper's key made for this blob alone.
	k, err := newWrapKey(eph, recipient)
	if err != nil {
		return nil, err
	}
	return k.seal(nonce, p.Info(taskID), plaintext)
}

// checkSealTo refuses what no blob is sealed for: an unknown purpose, a
// task id that cannot be one, a recipient that is not a P-256 key.
func checkSealTo(recipient *ecdh.PublicKey, p Purpose, taskID string) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := checkTaskID(taskID); err != nil {
		return err
	}
	if recipient == nil || recipient.Curve() != ecdh.P256() {
		return errors.New("sealing: recipient is not a P-256 public key")
	}
	return nil
}

// OpenWith opens a blob that SealTo sealed for purpose p of task taskID to
// the public half of priv. A blob for another key, purpose or task, or a
// damaged one, gives an error wrapping ErrDecrypt.
func OpenWith(priv *ecdh.PrivateKey, p Purpose, taskID string, blob []byte) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := checkTaskID(taskID); err != nil {
		return nil, err
	}
	if priv == nil || priv.Curve() != ecdh.P256() {
		return nil, errors.New("sealing: private key is not a P-256 key")
	}
	if err := checkFrame(blob, p256PointSize+gcmNonceSize); err != nil {
		return nil, err
	}
	ephPub := blob[1 : 1+p256PointSize]
	nonce := blob[1+p256PointSize : 1+p256PointSize+gcmNonceSize]
	ct := blob[1+p256PointSize+gcmNonceSize:]
	eph, err := ecdh.P256().NewPublicKey(ephPub)
	if err != nil {
		return nil, fmt.Errorf("%w: ephemeral key is not an uncompressed P-256 point", ErrDecrypt)
	}
	info := p.Info(taskID)
	key, err := eciesKey(priv, eph, eciesSalt(ephPub, priv.PublicKey().Bytes()), info)
	if err != nil {
		return nil, fmt.Errorf("%w: key agreement", ErrDecrypt)
	}
	pt, err := newGCM(key).Open(nil, nonce, ct, info)
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// eciesKey derives the AES key of a blob from one side's private key and
// the other side's public key: HKDF-SHA256 of the ECDH x-coordinate.
func eciesKey(own *ecdh.PrivateKey, peer *ecdh.PublicKey, salt, info []byte) (*[KeySize]byte, error) {
	x, err := own.ECDH(peer)
	if err != nil {
		return nil, errors.New("sealing: P-256 key agreement failed")
	}
	return hkdfKey(x, salt, info)
}

// eciesSalt returns ephemeral ‖ recipient, both uncompressed.
func eciesSalt(ephPub, recipient []byte) []byte {
	salt := make([]byte, 0, len(ephPub)+len(recipient))
	return append(append(salt, ephPub...), recipient...)
}

func hkdfKey(x, salt, info []byte) (*[KeySize]byte, error) {
	k, err := hkdf.Key(sha256.New, x, salt, string(info), KeySize)
	if err != nil {
		return nil, fmt.Errorf("sealing: HKDF: %w", err)
	}
	return (*[KeySize]byte)(k), nil
}

// WrapContentKey seals the content key k of task taskID to a device's
// public key: a device copy, whose plaintext is the key's 32 raw bytes.
func WrapContentKey(device *ecdh.PublicKey, taskID string, k *ContentKey) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	return SealTo(device, DeviceCopy, taskID, k.key[:])
}

// UnwrapContentKey opens a device copy of task taskID with the device's
// private key.
func UnwrapContentKey(device *ecdh.PrivateKey, taskID string, blob []byte) (*ContentKey, error) {
	b, err := OpenWith(device, DeviceCopy, taskID, blob)
	if err != nil {
		return nil, err
	}
	if len(b) != KeySize {
		return nil, fmt.Errorf("%w: device copy holds %d bytes, want %d", ErrDecrypt, len(b), KeySize)
	}
	return ContentKeyFromBytes(b)
}

// ParseP256PublicKey reads the text form of a P-256 public key: "p256:" and
// the unpadded base64url of its 65-byte uncompressed point. Anything else is
// refused: another prefix, padding, line breaks or other characters outside
// the alphabet, non-canonical trailing bits, another length, a compressed
// point, a point not on the curve.
func ParseP256PublicKey(s string) (*ecdh.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, pubKeyPrefix)
	if !ok {
		return nil, errors.New(`sealing: public key does not start with "p256:"`)
	}
	if len(rest) != base64.RawURLEncoding.EncodedLen(p256PointSize) {
		return nil, fmt.Errorf("sealing: public key is %d characters after the prefix, want %d",
			len(rest), base64.RawURLEncoding.EncodedLen(p256PointSize))
	}
	// The decoder skips '\r' and '\n', but then the exact length above cannot
	// decode to 65 bytes; Strict refuses non-zero trailing bits.
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	if err != nil || len(b) != p256PointSize {
		return nil, errors.New("sealing: public key is not canonical unpadded base64url of 65 bytes")
	}
	pub, err := ecdh.P256().NewPublicKey(b)
	if err != nil {
		return nil, errors.New("sealing: public key is not an uncompressed point on P-256")
	}
	return pub, nil
}

// FormatP256PublicKey returns the text form of a P-256 public key, "p256:"
// and the unpadded base64url of its uncompressed point. It returns "" for a
// nil key or a key of another curve.
func FormatP256PublicKey(pub *ecdh.PublicKey) string {
	if pub == nil || pub.Curve() != ecdh.P256() {
		return ""
	}
	return pubKeyPrefix + base64.RawURLEncoding.EncodeToString(pub.Bytes())
}
