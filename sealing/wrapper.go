package sealing

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"countersign/expiring"
)

// A Wrapper wraps keys to devices (device copies and history entries'
// keys) in SealTo's format, with one ephemeral key per device for a while
// instead of one per blob. The ECDH with a device and HKDF's extract step
// are then made once per ephemeral key, and each wrap after costs an HKDF
// expand and an AES-GCM seal: no P-256 scalar multiplication.
//
// A blob is opened as any of SealTo's: its ephemeral key is in its header,
// its AES key is bound to its purpose and task by HKDF's info, and its
// nonce is random. What the reuse gives away is that blobs with the same
// ephemeral key went to the same device, which the rows holding them say
// already. An ephemeral key lives in memory at most its lifetime, and only
// in a process that holds the master key, which opens everything anyway.
//
// A Wrapper is safe for concurrent use. The zero value is not usable; use
// NewWrapper.
type Wrapper struct {
	now  func() time.Time
	life time.Duration
	keys *expiring.Map[string, *wrapKey] // by the device's uncompressed public key
}

// wrapKey is one device's current ephemeral key: its public half, and
// HKDF's pseudorandom key extracted from the ECDH x-coordinate with salt =
// ephemeral ‖ device. The ephemeral private key itself is not kept.
type wrapKey struct {
	ephPub []byte
	prk    []byte
}

// Defaults of a Wrapper.
const (
	// WrapKeyLife is how long one ephemeral key serves a device.
	WrapKeyLife = 10 * time.Minute
	// WrapKeysMax bounds the devices remembered at once (about 200 bytes
	// each); past it, expired keys are dropped, then any one.
	WrapKeysMax = 10000
)

// NewWrapper returns a Wrapper with the default lifetime and bound, on the
// clock now (time.Now when nil).
func NewWrapper(now func() time.Time) *Wrapper {
	return newWrapper(now, WrapKeyLife, WrapKeysMax)
}

func newWrapper(now func() time.Time, life time.Duration, bound int) *Wrapper {
	if now == nil {
		now = time.Now
	}
	return &Wrapper{now: now, life: life, keys: expiring.New[string, *wrapKey](bound)}
}

// WrapContentKey is WrapContentKey with this Wrapper's ephemeral key for
// device.
func (w *Wrapper) WrapContentKey(device *ecdh.PublicKey, taskID string, k *ContentKey) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	return w.seal(device, DeviceCopy, taskID, k.key[:])
}

// WrapEntryKey is WrapEntryKey with this Wrapper's ephemeral key for
// device.
func (w *Wrapper) WrapEntryKey(device *ecdh.PublicKey, e *EntryKey) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return w.seal(device, Activity, e.id, e.key[:])
}

// seal is sealTo with the device's current ephemeral key and a random
// nonce.
func (w *Wrapper) seal(device *ecdh.PublicKey, p Purpose, taskID string, plaintext []byte) ([]byte, error) {
	if err := checkSealTo(device, p, taskID); err != nil {
		return nil, err
	}
	k, err := w.key(device)
	if err != nil {
		return nil, err
	}
	return k.seal(randomGCMNonce(), p.Info(taskID), plaintext)
}

// key returns device's ephemeral key, making a new one when it has none or
// its own has lived its life.
func (w *Wrapper) key(device *ecdh.PublicKey) (*wrapKey, error) {
	id := string(device.Bytes())
	now := w.now()
	if k, ok := w.keys.Get(id, now); ok {
		return k, nil
	}
	// Two wraps racing for a new key each make one, and the later stays;
	// both blobs open.
	eph, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sealing: ephemeral key: %w", err)
	}
	k, err := newWrapKey(eph, device)
	if err != nil {
		return nil, err
	}
	w.keys.Put(id, k, now.Add(w.life), now)
	return k, nil
}

// devices is how many devices have a key, for tests.
func (w *Wrapper) devices() int { return w.keys.Len() }

func newWrapKey(eph *ecdh.PrivateKey, device *ecdh.PublicKey) (*wrapKey, error) {
	x, err := eph.ECDH(device)
	if err != nil {
		return nil, errors.New("sealing: P-256 key agreement failed")
	}
	ephPub := eph.PublicKey().Bytes()
	prk, err := hkdf.Extract(sha256.New, x, eciesSalt(ephPub, device.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("sealing: HKDF: %w", err)
	}
	return &wrapKey{ephPub: ephPub, prk: prk}, nil
}

// seal returns 0x01 ‖ ephemeral ‖ nonce ‖ AES-256-GCM(HKDF-Expand(prk,
// info), nonce, plaintext, info): SPEC §9's blob, HKDF taken in its two
// steps (extract once per key, expand per blob).
func (k *wrapKey) seal(nonce, info, plaintext []byte) ([]byte, error) {
	b, err := hkdf.Expand(sha256.New, k.prk, string(info), KeySize)
	if err != nil {
		return nil, fmt.Errorf("sealing: HKDF: %w", err)
	}
	out := make([]byte, 0, 1+p256PointSize+gcmNonceSize+len(plaintext)+tagSize)
	out = append(out, Version)
	out = append(out, k.ephPub...)
	out = append(out, nonce...)
	return newGCM((*[KeySize]byte)(b)).Seal(out, nonce, plaintext, info), nil
}
