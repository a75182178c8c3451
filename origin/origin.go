// Package origin is the proof that a run of the service made a task (SPEC
// §11): every run's receipt, signed with the service's run key, and the
// verifier an owner's device uses before it offers to approve. It is a
// software receipt, not hardware attestation: Verifier is an interface so
// that a TEE quote can take its place.
package origin

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mr-tron/base58"
)

// Receipt is what a run's signature covers. Its InputSHA256 and
// OutputSHA256 are, despite their names, keyed hashes (SPEC §11, amended):
// hex HMAC-SHA256 of the run's request and answer under the receipt's key —
// for a task's receipt the task's receipt key, HMAC-SHA256(content key,
// "receipt:v1"), which a device derives from the task it opened; for any
// other, a key only the enclave side holds. A bare SHA-256 of a small
// request or result would let anyone who reads them test guesses.
type Receipt struct {
	Agent        string `json:"agent"`
	At           string `json:"at"` // YYYY-MM-DDTHH:MM:SSZ
	Build        string `json:"build"`
	Connector    string `json:"connector"`
	InputSHA256  string `json:"input_sha256"`
	Operation    string `json:"operation"`
	OutputSHA256 string `json:"output_sha256"`
	Owner        string `json:"owner"`
	Run          string `json:"run"`
	TaskHash     string `json:"task_hash,omitempty"`
	TaskID       string `json:"task_id,omitempty"`
}

// Bytes are the exact bytes signed: the receipt's JSON with members in
// sorted order (the struct's order), no white space, no HTML escaping.
func (r Receipt) Bytes() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Signed is a receipt with its signature, as GET /inbox/tasks/{id}/origin
// shows it.
type Signed struct {
	Receipt Receipt `json:"receipt"`
	// KeyID is the run key's id (the master key id it derives from).
	KeyID uint32 `json:"key_id"`
	// Signature is the std base64 ed25519 signature of Receipt.Bytes().
	Signature string `json:"signature"`
}

// Sign signs a receipt with a run key.
func Sign(key ed25519.PrivateKey, keyID uint32, r Receipt) Signed {
	return Signed{Receipt: r, KeyID: keyID, Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, r.Bytes()))}
}

// FormatKey writes a run public key as "ed25519:<base58>".
func FormatKey(pub ed25519.PublicKey) string { return "ed25519:" + base58.Encode(pub) }

// ParseKey reads "ed25519:<base58>".
func ParseKey(s string) (ed25519.PublicKey, error) {
	raw, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return nil, errors.New("origin: a run key is ed25519:<base58>")
	}
	b, err := base58.Decode(raw)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("origin: a run key is ed25519:<base58> of 32 bytes")
	}
	return ed25519.PublicKey(b), nil
}

// Task is what a verifier checks a receipt against: the task the device
// opened and hashed itself.
type Task struct {
	ID, Hash, Owner, Preparer, Build, Run string
	// Input, when set, tells whether a receipt's input_sha256 is the keyed
	// hash of the request the device decrypted (device.Opened's
	// ReceiptInputMatches). A device sets it; nil leaves the input unchecked.
	Input func(inputSHA256 string) bool
}

// Verifier checks that a task comes from a run of the service.
type Verifier interface {
	Verify(receipt json.RawMessage, t Task) error
}

// Keys verifies software receipts against the service's published run keys,
// by key id.
type Keys map[uint32]ed25519.PublicKey

// Verify checks the receipt's signature and that it names this task: its
// id and hash, its owner, preparer, build and preparing run, and, when
// t.Input is set, the request the task shows.
func (k Keys) Verify(raw json.RawMessage, t Task) error {
	if len(raw) == 0 || string(raw) == "null" {
		return errors.New("origin: the task has no receipt yet")
	}
	var s Signed
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return errors.New("origin: the receipt is not a signed receipt")
	}
	pub, ok := k[s.KeyID]
	if !ok {
		return fmt.Errorf("origin: the receipt is signed with run key %d, which the service does not publish", s.KeyID)
	}
	sig, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil || !ed25519.Verify(pub, s.Receipt.Bytes(), sig) {
		return errors.New("origin: the receipt's signature does not verify")
	}
	r := s.Receipt
	switch {
	case r.TaskID != t.ID || r.TaskHash != t.Hash:
		return errors.New("origin: the receipt names another task or another hash")
	case r.Owner != t.Owner || r.Agent != t.Preparer:
		return errors.New("origin: the receipt names another owner or agent")
	case r.Build != t.Build || r.Run != t.Run:
		return errors.New("origin: the receipt names another build or run")
	case t.Input != nil && !t.Input(r.InputSHA256):
		return errors.New("origin: the receipt's input is not the request the task shows")
	}
	return nil
}
