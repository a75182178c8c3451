package sealing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/crypto/chacha20poly1305"
)

// Version is the first byte of every blob this package makes.
const Version byte = 0x01

// ErrDecrypt is wrapped by every error of a failure to open a blob: a wrong
// key, AAD or info, a blob cut short or changed, an unknown version. The
// message may say what was structurally wrong (length, version); it never
// holds key, plaintext or ciphertext bytes.
var ErrDecrypt = errors.New("sealing: decryption failed")

const (
	gcmNonceSize = 12
	tagSize      = 16
)

// sealX returns 0x01 ‖ nonce(24) ‖ XChaCha20-Poly1305(key, nonce, plaintext, aad).
func sealX(key *[KeySize]byte, nonce, aad, plaintext []byte) []byte {
	aead := newX(key)
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+aead.Overhead())
	out = append(out, Version)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, aad)
}

func openX(key *[KeySize]byte, aad, blob []byte) ([]byte, error) {
	if err := checkFrame(blob, chacha20poly1305.NonceSizeX); err != nil {
		return nil, err
	}
	nonce, ct := blob[1:1+chacha20poly1305.NonceSizeX], blob[1+chacha20poly1305.NonceSizeX:]
	pt, err := newX(key).Open(nil, nonce, ct, aad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// newX returns XChaCha20-Poly1305. The key's type makes its size right, so
// the constructor cannot fail.
func newX(key *[KeySize]byte) cipher.AEAD {
	aead, err := chacha20poly1305.NewX(key[:])
	if err != nil {
		panic("sealing: XChaCha20-Poly1305 refused a 32-byte key: " + err.Error())
	}
	return aead
}

// newGCM returns AES-256-GCM with a 12-byte nonce. The key's type makes its
// size right, so the constructors cannot fail.
func newGCM(key *[KeySize]byte) cipher.AEAD {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic("sealing: AES refused a 32-byte key: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("sealing: GCM refused AES: " + err.Error())
	}
	return aead
}

// sealGCM returns 0x01 ‖ nonce(12) ‖ AES-256-GCM(key, nonce, plaintext, aad).
func sealGCM(key *[KeySize]byte, nonce, aad, plaintext []byte) []byte {
	aead := newGCM(key)
	out := make([]byte, 0, 1+gcmNonceSize+len(plaintext)+tagSize)
	out = append(out, Version)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, aad)
}

func openGCM(key *[KeySize]byte, aad, blob []byte) ([]byte, error) {
	if err := checkFrame(blob, gcmNonceSize); err != nil {
		return nil, err
	}
	pt, err := newGCM(key).Open(nil, blob[1:1+gcmNonceSize], blob[1+gcmNonceSize:], aad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// checkFrame checks the version byte and that blob can hold a header of
// 1+header bytes and a tag.
func checkFrame(blob []byte, header int) error {
	if len(blob) < 1+header+tagSize {
		return fmt.Errorf("%w: blob of %d bytes is shorter than %d", ErrDecrypt, len(blob), 1+header+tagSize)
	}
	if blob[0] != Version {
		return fmt.Errorf("%w: unknown blob version 0x%02x", ErrDecrypt, blob[0])
	}
	return nil
}

// ContentKey is a task's content key: 32 random bytes under which its
// content and files are sealed with AES-256-GCM and which is wrapped to each
// of the owner's devices (WrapContentKey) and kept in the sealed copy.
// A ContentKey is safe for concurrent use.
type ContentKey struct {
	// key is behind a pointer so reflection-based printing shows an address.
	key *[KeySize]byte
}

// NewContentKey returns a fresh random content key.
func NewContentKey() *ContentKey {
	return &ContentKey{key: randomKey()}
}

// ContentKeyFromBytes returns the content key b (32 bytes), as read back from
// a sealed copy or a device copy.
func ContentKeyFromBytes(b []byte) (*ContentKey, error) {
	if len(b) != KeySize {
		return nil, fmt.Errorf("sealing: content key is %d bytes, want %d", len(b), KeySize)
	}
	var key [KeySize]byte
	copy(key[:], b)
	return &ContentKey{key: &key}, nil
}

// Bytes returns a copy of the key's 32 bytes, for the sealed copy, or nil
// for a ContentKey not made by NewContentKey or ContentKeyFromBytes.
func (k *ContentKey) Bytes() []byte {
	if k.check() != nil {
		return nil
	}
	return append([]byte(nil), k.key[:]...)
}

func (k *ContentKey) check() error {
	if k == nil || k.key == nil {
		return errors.New("sealing: content key is empty")
	}
	return nil
}

// ContentAAD returns the AAD of a task's content blob: the task id.
func ContentAAD(taskID string) []byte { return []byte(taskID) }

// FileAAD returns the AAD of file n (0-based) of a task: "{id}:file:{n}".
func FileAAD(taskID string, n int) []byte {
	return []byte(taskID + ":file:" + strconv.Itoa(n))
}

// SealContent seals a task's content, {"envelope": …, "request": …}:
// 0x01 ‖ nonce(12) ‖ ciphertext ‖ tag (AES-256-GCM), AAD the task id.
func (k *ContentKey) SealContent(taskID string, plaintext []byte) ([]byte, error) {
	return k.sealContent(randomGCMNonce(), taskID, plaintext)
}

func (k *ContentKey) sealContent(nonce []byte, taskID string, plaintext []byte) ([]byte, error) {
	if err := k.checkContentArgs(taskID); err != nil {
		return nil, err
	}
	return sealGCM(k.key, nonce, ContentAAD(taskID), plaintext), nil
}

// OpenContent opens a content blob of task taskID.
func (k *ContentKey) OpenContent(taskID string, blob []byte) ([]byte, error) {
	if err := k.checkContentArgs(taskID); err != nil {
		return nil, err
	}
	return openGCM(k.key, ContentAAD(taskID), blob)
}

// SealFile seals file n (0-based) of task taskID: the same format as the
// content, AAD FileAAD(taskID, n).
func (k *ContentKey) SealFile(taskID string, n int, plaintext []byte) ([]byte, error) {
	return k.sealFile(randomGCMNonce(), taskID, n, plaintext)
}

func (k *ContentKey) sealFile(nonce []byte, taskID string, n int, plaintext []byte) ([]byte, error) {
	if err := k.checkFileArgs(taskID, n); err != nil {
		return nil, err
	}
	return sealGCM(k.key, nonce, FileAAD(taskID, n), plaintext), nil
}

// OpenFile opens file n of task taskID.
func (k *ContentKey) OpenFile(taskID string, n int, blob []byte) ([]byte, error) {
	if err := k.checkFileArgs(taskID, n); err != nil {
		return nil, err
	}
	return openGCM(k.key, FileAAD(taskID, n), blob)
}

func (k *ContentKey) checkContentArgs(taskID string) error {
	if err := k.check(); err != nil {
		return err
	}
	return checkTaskID(taskID)
}

func (k *ContentKey) checkFileArgs(taskID string, n int) error {
	if n < 0 {
		return errors.New("sealing: file number is negative")
	}
	return k.checkContentArgs(taskID)
}

func randomGCMNonce() []byte {
	nonce := make([]byte, gcmNonceSize)
	_, _ = rand.Read(nonce)
	return nonce
}
