package sealing

import (
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"

	"golang.org/x/crypto/chacha20poly1305"

	"countersign"
)

// TaskKeys are the keys derived for one task under one master key id: the
// seal key of its sealed copy and outcome, and its reply key, whose public
// half the envelope names as reply_pubkey. Get them from Keyring.TaskKeys.
// A TaskKeys is safe for concurrent use.
type TaskKeys struct {
	keyID  uint32
	taskID string
	// seal is behind a pointer so reflection-based printing shows an address.
	seal  *[KeySize]byte
	reply *ecdh.PrivateKey
}

// TaskKeys derives the keys of task taskID of the project projectUUID owned
// by owner, under master key keyID (SPEC §9):
//
//	project key = HMAC-SHA256(master, "task-key:v1:{project_uuid}:{owner}")
//	task key    = HMAC-SHA256(project key, "task:" ‖ id)
//	seal key    = HMAC-SHA256(task key, "seal")
//	reply key   = HMAC-SHA256(task key, "reply:" ‖ u32_be(n)), first n from 0
//	              giving a valid P-256 scalar
//
// A new task uses k.Current(); a task opened later uses the key id stored
// with it. projectUUID must be a UUID in canonical lowercase form, owner 2 to
// 64 of [a-z0-9._-] (the alphabet of NEAR account ids), and taskID 1 to 80 of
// [a-z0-9-].
func (k *Keyring) TaskKeys(keyID uint32, projectUUID, owner, taskID string) (*TaskKeys, error) {
	if !countersign.ValidUUID(projectUUID) {
		return nil, errors.New("sealing: project uuid is not a lowercase canonical UUID")
	}
	if !countersign.ValidAccountID(owner) {
		return nil, errors.New("sealing: owner is not 2 to 64 of [a-z0-9._-]")
	}
	if err := checkTaskID(taskID); err != nil {
		return nil, err
	}
	master, err := k.key(keyID)
	if err != nil {
		return nil, err
	}
	pk := projectKey(master, projectUUID, owner)
	tk := taskKey(&pk, taskID)
	sk := sealKey(&tk)
	reply, _, err := replyKey(&tk)
	if err != nil {
		return nil, err
	}
	return &TaskKeys{keyID: keyID, taskID: taskID, seal: &sk, reply: reply}, nil
}

func projectKey(master *[KeySize]byte, projectUUID, owner string) [KeySize]byte {
	return hmacSHA256(master[:], []byte("task-key:v1:"+projectUUID+":"+owner))
}

func taskKey(projectKey *[KeySize]byte, taskID string) [KeySize]byte {
	return hmacSHA256(projectKey[:], []byte("task:"+taskID))
}

func sealKey(taskKey *[KeySize]byte) [KeySize]byte {
	return hmacSHA256(taskKey[:], []byte("seal"))
}

// replyKey returns the task's reply key and the n that gave it.
func replyKey(taskKey *[KeySize]byte) (*ecdh.PrivateKey, uint32, error) {
	return firstScalar(func(n uint32) []byte {
		msg := binary.BigEndian.AppendUint32([]byte("reply:"), n)
		s := hmacSHA256(taskKey[:], msg)
		return s[:]
	})
}

// firstScalar returns the P-256 private key of candidate(n) for the first n
// from 0 whose candidate is a valid scalar (non-zero and below the group
// order). A candidate is invalid with probability about 2⁻³², so the loop
// all but always ends at n = 0; it has no bound below 2³² so as to follow
// the contract for every n.
func firstScalar(candidate func(n uint32) []byte) (*ecdh.PrivateKey, uint32, error) {
	for n := uint32(0); ; n++ {
		if key, err := ecdh.P256().NewPrivateKey(candidate(n)); err == nil {
			return key, n, nil
		}
		if n == math.MaxUint32 {
			return nil, 0, errors.New("sealing: no valid reply scalar")
		}
	}
}

// KeyID returns the master key id the keys were derived under.
func (t *TaskKeys) KeyID() uint32 { return t.keyID }

// TaskID returns the id of the task the keys belong to.
func (t *TaskKeys) TaskID() string { return t.taskID }

// ReplyKey returns the task's reply key. Its public half is the envelope's
// reply_pubkey (see FormatP256PublicKey); the owner's answer, note and
// rejection reason are sealed to it and opened with OpenWith.
func (t *TaskKeys) ReplyKey() *ecdh.PrivateKey { return t.reply }

// Record names a blob sealed under a task's seal key.
type Record string

// Records sealed under a task's seal key.
const (
	// TaskRecord is the task's sealed copy, which only the enclave opens.
	TaskRecord Record = "task"
	// OutcomeRecord is what the task's outcome keeps for its preparer (the
	// result, or the owner's rejection reason).
	OutcomeRecord Record = "outcome"
	// BatchRecord is what the answer run of a task approved in a batch
	// needs to rebuild the batch sentence and is shown by the other tasks
	// of the batch: their summaries, sealed at the approval.
	BatchRecord Record = "batch"
)

// AAD returns "countersign-task:v1:{record}:{taskID}".
func (r Record) AAD(taskID string) []byte {
	return []byte("countersign-task:v1:" + string(r) + ":" + taskID)
}

// check refuses keys not made by Keyring.TaskKeys and unknown records.
func (t *TaskKeys) check(r Record) error {
	if t == nil || t.seal == nil {
		return errors.New("sealing: task keys were not derived")
	}
	if r != TaskRecord && r != OutcomeRecord && r != BatchRecord {
		return errors.New("sealing: unknown sealed record kind")
	}
	return nil
}

// Seal seals plaintext as record r of the task under its seal key:
// 0x01 ‖ nonce(24) ‖ ciphertext ‖ tag (XChaCha20-Poly1305), AAD r.AAD(id).
func (t *TaskKeys) Seal(r Record, plaintext []byte) ([]byte, error) {
	var nonce [chacha20poly1305.NonceSizeX]byte
	_, _ = rand.Read(nonce[:])
	return t.sealWithNonce(r, nonce[:], plaintext)
}

func (t *TaskKeys) sealWithNonce(r Record, nonce, plaintext []byte) ([]byte, error) {
	if err := t.check(r); err != nil {
		return nil, err
	}
	return sealX(t.seal, nonce, r.AAD(t.taskID), plaintext), nil
}

// Open opens record r of the task sealed by Seal. A blob of another task,
// another record, another key id, or a damaged one gives an error wrapping
// ErrDecrypt.
func (t *TaskKeys) Open(r Record, blob []byte) ([]byte, error) {
	if err := t.check(r); err != nil {
		return nil, err
	}
	return openX(t.seal, r.AAD(t.taskID), blob)
}

func hmacSHA256(key, msg []byte) [KeySize]byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	var out [KeySize]byte
	m.Sum(out[:0])
	return out
}

// checkTaskID refuses what is not a task id of the contract
// (countersign.ValidTaskID: 1 to 80 of [a-z0-9-]). Keeping ':' and NUL out of
// ids keeps every AAD and info unambiguous.
func checkTaskID(id string) error {
	if !countersign.ValidTaskID(id) {
		return errors.New("sealing: task id is not 1 to 80 of [a-z0-9-]")
	}
	return nil
}

// isTokenChars reports whether s is non-empty and only of [a-z0-9-].
func isTokenChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
