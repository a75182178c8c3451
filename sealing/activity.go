package sealing

import (
	"crypto/ecdh"
	"errors"
	"fmt"

	"countersign"
)

// EntryKey is the key of one entry of an owner's history (SPEC §6,
// GET /inbox/activity): the entry's title, summary and result are sealed
// under it, and it is wrapped to each of the owner's devices. It is derived,
// not random, so the side that holds the master key can seal an entry again
// (a task's entry gets its result when the task ends) without keeping the
// key anywhere:
//
//	entry key = HMAC-SHA256(project key, "activity:" ‖ entry id)
//
// with the project key of SPEC §9 under the master key id stored beside the
// entry. An entry's id is its task's id, or the run's id for a write carried
// out at once (1 to 80 of [a-z0-9-], as task ids).
//
// An EntryKey is safe for concurrent use.
type EntryKey struct {
	id string
	// key is behind a pointer so reflection-based printing shows an address.
	key *[KeySize]byte
}

// EntryKey derives the key of history entry id of the project projectUUID
// owned by owner, under master key keyID.
func (k *Keyring) EntryKey(keyID uint32, projectUUID, owner, id string) (*EntryKey, error) {
	if err := checkProject(projectUUID, owner); err != nil {
		return nil, err
	}
	if err := checkTaskID(id); err != nil {
		return nil, err
	}
	master, err := k.key(keyID)
	if err != nil {
		return nil, err
	}
	pk := projectKey(master, projectUUID, owner)
	ek := hmacSHA256(pk[:], []byte("activity:"+id))
	return &EntryKey{id: id, key: &ek}, nil
}

// EntryInfo is the AAD of an entry's sealed body and the HKDF info of its
// device copies: "countersign-task:v1:activity:{id}".
func EntryInfo(id string) []byte { return Activity.Info(id) }

func (e *EntryKey) check() error {
	if e == nil || e.key == nil {
		return errors.New("sealing: entry key is empty")
	}
	return nil
}

// Seal seals an entry's body, {"title", "summary", "result": {"text",
// "url"?}}: 0x01 ‖ nonce(12) ‖ ciphertext ‖ tag (AES-256-GCM), AAD
// EntryInfo(id).
func (e *EntryKey) Seal(plaintext []byte) ([]byte, error) {
	return e.seal(randomGCMNonce(), plaintext)
}

func (e *EntryKey) seal(nonce, plaintext []byte) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return sealGCM(e.key, nonce, EntryInfo(e.id), plaintext), nil
}

// Open opens an entry's body sealed by Seal. A blob of another entry or a
// damaged one gives an error wrapping ErrDecrypt.
func (e *EntryKey) Open(blob []byte) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return openGCM(e.key, EntryInfo(e.id), blob)
}

// WrapEntryKey seals an entry's key to a device's public key (ECIES as SPEC
// §9 does device copies, info EntryInfo(id)); its plaintext is the key's 32
// raw bytes.
func WrapEntryKey(device *ecdh.PublicKey, e *EntryKey) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return SealTo(device, Activity, e.id, e.key[:])
}

// UnwrapEntryKey opens the device copy of entry id with the device's
// private key.
func UnwrapEntryKey(device *ecdh.PrivateKey, id string, blob []byte) (*EntryKey, error) {
	b, err := OpenWith(device, Activity, id, blob)
	if err != nil {
		return nil, err
	}
	if len(b) != KeySize {
		return nil, fmt.Errorf("%w: an entry's device copy holds %d bytes, want %d", ErrDecrypt, len(b), KeySize)
	}
	var key [KeySize]byte
	copy(key[:], b)
	return &EntryKey{id: id, key: &key}, nil
}

// checkProject refuses a project uuid or owner that TaskKeys would refuse.
func checkProject(projectUUID, owner string) error {
	if !countersign.ValidUUID(projectUUID) {
		return errors.New("sealing: project uuid is not a lowercase canonical UUID")
	}
	if !countersign.ValidAccountID(owner) {
		return errors.New("sealing: owner is not 2 to 64 of [a-z0-9._-]")
	}
	return nil
}
