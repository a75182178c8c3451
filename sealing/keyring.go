package sealing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the size in bytes of a master key, a content key and every
// derived symmetric key.
const KeySize = 32

// ErrUnknownKey is returned (wrapped) when a blob names a key id the keyring
// does not hold.
var ErrUnknownKey = errors.New("sealing: key id is not in the keyring")

// Keyring is a set of numbered 32-byte master keys. The highest id seals new
// data; every id opens. A Keyring never changes once built, so it is safe for
// concurrent use; AddKey returns a new one.
//
// Formatting a Keyring with any fmt verb, with %#v, or logging it with slog
// shows its ids only, never key bytes. Export is the one way to get the keys
// back out, for writing a key file.
type Keyring struct {
	// keys is sorted by id, ascending. Key bytes sit behind pointers so that
	// reflection-based printing of a struct holding a Keyring shows addresses,
	// not bytes.
	keys []masterKey
}

type masterKey struct {
	id  uint32
	key *[KeySize]byte
	// run is the run key derived from key (RunKey), derived once, when the
	// keyring is made: deriving it costs an ed25519 key's expansion.
	run *ed25519.PrivateKey
}

// newMasterKey holds key under id with its run key.
func newMasterKey(id uint32, key *[KeySize]byte) masterKey {
	seed := hmacSHA256(key[:], []byte("run-key:v1"))
	run := ed25519.NewKeyFromSeed(seed[:])
	return masterKey{id: id, key: key, run: &run}
}

// ParseKeyring reads the COUNTERSIGN_MASTER_KEY syntax: one or more
// "<id>:<64 hex characters>" entries separated by commas, or a single bare
// 64-hex-character key, which gets id 1. Whitespace around the value and
// around each entry is ignored. Ids are decimal integers from 1 to
// 4294967295 written without leading zeros; no id may appear twice, no two
// ids may hold the same key, and an all-zero key is refused. Error messages
// name the entry and what is wrong with it, never the key material.
func ParseKeyring(s string) (*Keyring, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("sealing: master key is empty")
	}
	if !strings.ContainsAny(s, ":,") {
		key, err := parseKeyHex(s)
		if err != nil {
			return nil, fmt.Errorf("sealing: master key: %w", err)
		}
		return &Keyring{keys: []masterKey{newMasterKey(1, key)}}, nil
	}

	entries := strings.Split(s, ",")
	kr := &Keyring{keys: make([]masterKey, 0, len(entries))}
	for i, entry := range entries {
		n := i + 1
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("sealing: master key entry %d is empty", n)
		}
		idText, keyText, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("sealing: master key entry %d has no key id (want <id>:<64 hex>; a bare key is allowed only on its own)", n)
		}
		id, err := parseKeyID(idText)
		if err != nil {
			return nil, fmt.Errorf("sealing: master key entry %d: %w", n, err)
		}
		key, err := parseKeyHex(keyText)
		if err != nil {
			return nil, fmt.Errorf("sealing: master key entry %d (id %d): %w", n, id, err)
		}
		for _, prev := range kr.keys {
			if prev.id == id {
				return nil, fmt.Errorf("sealing: master key id %d appears twice", id)
			}
			if subtle.ConstantTimeCompare(prev.key[:], key[:]) == 1 {
				return nil, fmt.Errorf("sealing: master key ids %d and %d hold the same key", prev.id, id)
			}
		}
		kr.insert(newMasterKey(id, key))
	}
	return kr, nil
}

// parseKeyID reads a key id: canonical decimal, 1 to math.MaxUint32. The text
// is never echoed, since a misplaced key could stand where an id belongs.
func parseKeyID(s string) (uint32, error) {
	bad := errors.New("key id is not a whole number from 1 to 4294967295 without leading zeros")
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, bad
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, bad
	}
	return uint32(v), nil
}

// parseKeyHex reads 64 hex characters. Its errors never hold the input.
func parseKeyHex(s string) (*[KeySize]byte, error) {
	if len(s) != 2*KeySize {
		return nil, fmt.Errorf("key is %d characters, want %d hex characters", len(s), 2*KeySize)
	}
	var key [KeySize]byte
	// hex.Decode's errors quote the offending character; this one does not.
	if _, err := hex.Decode(key[:], []byte(s)); err != nil {
		return nil, errors.New("key is not hexadecimal")
	}
	var zero [KeySize]byte
	if subtle.ConstantTimeCompare(key[:], zero[:]) == 1 {
		return nil, errors.New("key is all zeros")
	}
	return &key, nil
}

// insert adds m keeping keys sorted by id. The caller has checked that the
// id is new.
func (k *Keyring) insert(m masterKey) {
	i := len(k.keys)
	for i > 0 && k.keys[i-1].id > m.id {
		i--
	}
	k.keys = append(k.keys, masterKey{})
	copy(k.keys[i+1:], k.keys[i:])
	k.keys[i] = m
}

// GenerateKeyring returns a keyring holding one fresh random key with id 1.
func GenerateKeyring() *Keyring {
	return &Keyring{keys: []masterKey{newMasterKey(1, randomKey())}}
}

// AddKey returns a new keyring holding k's keys and one fresh random key
// whose id is one more than k's highest; that key seals from then on. k
// itself is unchanged.
func (k *Keyring) AddKey() (*Keyring, error) {
	id := k.Current()
	if id == math.MaxUint32 {
		return nil, errors.New("sealing: no key id is left above 4294967295")
	}
	var old []masterKey
	if k != nil {
		old = k.keys
	}
	keys := make([]masterKey, len(old), len(old)+1)
	copy(keys, old)
	return &Keyring{keys: append(keys, newMasterKey(id+1, randomKey()))}, nil
}

func randomKey() *[KeySize]byte {
	var key [KeySize]byte
	_, _ = rand.Read(key[:]) // never fails; see crypto/rand.Read
	return &key
}

// Current returns the id that seals new data (the highest), or 0 for an
// empty keyring.
func (k *Keyring) Current() uint32 {
	if k == nil || len(k.keys) == 0 {
		return 0
	}
	return k.keys[len(k.keys)-1].id
}

// IDs returns the keyring's ids in ascending order.
func (k *Keyring) IDs() []uint32 {
	if k == nil {
		return nil
	}
	ids := make([]uint32, len(k.keys))
	for i, m := range k.keys {
		ids[i] = m.id
	}
	return ids
}

// Has reports whether the keyring holds id.
func (k *Keyring) Has(id uint32) bool { return k.lookup(id) != nil }

// lookup returns the key of id, or nil.
func (k *Keyring) lookup(id uint32) *[KeySize]byte {
	if k != nil {
		for _, m := range k.keys {
			if m.id == id {
				return m.key
			}
		}
	}
	return nil
}

// key returns the key of id, or an error wrapping ErrUnknownKey.
func (k *Keyring) key(id uint32) (*[KeySize]byte, error) {
	if key := k.lookup(id); key != nil {
		return key, nil
	}
	return nil, fmt.Errorf("%w (id %d)", ErrUnknownKey, id)
}

// Export returns the keyring in the COUNTERSIGN_MASTER_KEY syntax, every
// entry as "<id>:<64 lowercase hex>" in ascending id order. It holds every
// key in clear: use it only to write a key file, never for a log or message.
func (k *Keyring) Export() string {
	if k == nil {
		return ""
	}
	var b strings.Builder
	for i, m := range k.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(m.id), 10))
		b.WriteByte(':')
		b.WriteString(hex.EncodeToString(m.key[:]))
	}
	return b.String()
}

// String returns a redacted description such as "keyring{ids:[1 2], current:2}".
// It never holds key bytes; see Export.
func (k Keyring) String() string {
	return fmt.Sprintf("keyring{ids:%v, current:%d}", k.IDs(), k.Current())
}

// GoString is String: %#v shows no key bytes either.
func (k Keyring) GoString() string { return k.String() }

// Format writes String for every verb, so that no verb or flag of the fmt
// package prints key bytes.
func (k Keyring) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// LogValue shows the keyring's ids in structured logs, never key bytes.
func (k Keyring) LogValue() slog.Value {
	ids := k.IDs()
	ints := make([]any, len(ids))
	for i, id := range ids {
		ints[i] = id
	}
	return slog.GroupValue(
		slog.Any("ids", ints),
		slog.Uint64("current", uint64(k.Current())),
	)
}

// SecretPurpose names what a master-sealed secret is for. It is part of both
// the per-purpose subkey and the AAD, so a blob sealed for one purpose never
// opens as another. A purpose is 1 to 64 of [a-z0-9-].
type SecretPurpose string

// Purposes of secrets sealed under the master key.
const (
	// ProjectCredentials are a project's credentials for its connector.
	ProjectCredentials SecretPurpose = "project-credentials"
	// WebhookSecret is an owner's webhook signing secret.
	WebhookSecret SecretPurpose = "webhook-secret"
)

func (p SecretPurpose) valid() bool { return len(p) <= 64 && isTokenChars(string(p)) }

// SecretAAD returns the AAD that binds a master-sealed secret to its purpose
// and row: "countersign-secret:v1:{purpose}:{rowID}".
func SecretAAD(p SecretPurpose, rowID string) []byte {
	return []byte("countersign-secret:v1:" + string(p) + ":" + rowID)
}

// secretKey derives the subkey of master for purpose p:
// HMAC-SHA256(master, "secret:v1:{purpose}").
func secretKey(master *[KeySize]byte, p SecretPurpose) *[KeySize]byte {
	k := hmacSHA256(master[:], []byte("secret:v1:"+string(p)))
	return &k
}

func checkSecretArgs(p SecretPurpose, rowID string) error {
	if !p.valid() {
		return errors.New("sealing: secret purpose must be 1 to 64 of [a-z0-9-]")
	}
	if rowID == "" {
		return errors.New("sealing: secret row id is empty")
	}
	return nil
}

// Seal seals a secret (a project's credentials, a webhook secret) under the
// current master key, bound to its purpose and to the row that stores it.
// The blob is 0x01 ‖ nonce(24) ‖ ciphertext ‖ tag (XChaCha20-Poly1305).
// Store keyID beside the blob: Open needs it.
func (k *Keyring) Seal(p SecretPurpose, rowID string, plaintext []byte) (keyID uint32, blob []byte, err error) {
	var nonce [chacha20poly1305.NonceSizeX]byte
	_, _ = rand.Read(nonce[:])
	return k.sealSecret(nonce[:], p, rowID, plaintext)
}

func (k *Keyring) sealSecret(nonce []byte, p SecretPurpose, rowID string, plaintext []byte) (uint32, []byte, error) {
	if err := checkSecretArgs(p, rowID); err != nil {
		return 0, nil, err
	}
	id := k.Current()
	master := k.lookup(id)
	if master == nil {
		return 0, nil, errors.New("sealing: the keyring is empty")
	}
	return id, sealX(secretKey(master, p), nonce, SecretAAD(p, rowID), plaintext), nil
}

// Open opens a secret sealed by Seal under key id keyID for purpose p and
// row rowID. Any mismatch or damage gives an error wrapping ErrDecrypt (or
// ErrUnknownKey when keyID is not in the keyring), never partial plaintext.
func (k *Keyring) Open(keyID uint32, p SecretPurpose, rowID string, blob []byte) ([]byte, error) {
	if err := checkSecretArgs(p, rowID); err != nil {
		return nil, err
	}
	master, err := k.key(keyID)
	if err != nil {
		return nil, err
	}
	return openX(secretKey(master, p), SecretAAD(p, rowID), blob)
}

// Rewrap opens a secret sealed under keyID and seals it again under the
// current key, for key rotation. It always seals afresh, even when keyID is
// already current. The caller stores the returned key id and blob in place
// of the old ones.
func (k *Keyring) Rewrap(keyID uint32, p SecretPurpose, rowID string, blob []byte) (newKeyID uint32, newBlob []byte, err error) {
	plaintext, err := k.Open(keyID, p, rowID, blob)
	if err != nil {
		return 0, nil, err
	}
	return k.Seal(p, rowID, plaintext)
}

// RunKey is the service's run key under master key keyID: the ed25519 key
// that signs run receipts (SPEC §11), derived as the seed
// HMAC-SHA256(master, "run-key:v1"). Each key id has its own; receipts name
// the id that signed them.
func (k *Keyring) RunKey(keyID uint32) (ed25519.PrivateKey, error) {
	if k != nil {
		for _, m := range k.keys {
			if m.id == keyID {
				return *m.run, nil
			}
		}
	}
	return nil, fmt.Errorf("%w (id %d)", ErrUnknownKey, keyID)
}
