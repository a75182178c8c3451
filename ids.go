package countersign

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// The ids of the contract, each with its one rule. Every other package asks
// these functions; none keeps a copy.

// Id length bounds.
const (
	MaxTaskIDLen      = 80 // task ids: 1–80 of [a-z0-9-] (SPEC §12)
	MinAccountIDLen   = 2  // NEAR account ids: 2–64 characters
	MaxAccountIDLen   = 64
	MaxProjectNameLen = 64
)

// MaxIdempotencyKeyLen is the longest Idempotency-Key (SPEC §5).
const MaxIdempotencyKeyLen = 128

// CheckIdempotencyKey checks an agent's Idempotency-Key, wherever it comes
// from: at most 128 visible ASCII characters ("!" to "~": no spaces, no
// control characters, nothing outside ASCII); empty is none. The error is a
// sentence for the agent.
func CheckIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKeyLen {
		return errors.New("the Idempotency-Key is longer than " + strconv.Itoa(MaxIdempotencyKeyLen) + " characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '!' || k[i] > '~' {
			return errors.New("the Idempotency-Key may hold only visible ASCII characters (! to ~)")
		}
	}
	return nil
}

// CheckAccountID checks NEAR's account id rules: 2–64 characters of
// lowercase `a-z`, digits, and the separators `-`, `_` and `.`, where a
// separator never starts or ends the id and never follows another separator.
func CheckAccountID(id string) error {
	if len(id) < MinAccountIDLen {
		return errors.New("the account id is shorter than 2 characters")
	}
	if len(id) > MaxAccountIDLen {
		return errors.New("the account id is longer than 64 characters")
	}
	lastSep := true // a separator may not come first
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			lastSep = false
		case c == '-' || c == '_' || c == '.':
			if lastSep {
				return errors.New("the account id has a misplaced separator")
			}
			lastSep = true
		default:
			return errors.New("the account id has a character other than a-z, 0-9, -, _ and .")
		}
	}
	if lastSep {
		return errors.New("the account id ends with a separator")
	}
	return nil
}

// ValidAccountID reports whether id passes CheckAccountID.
func ValidAccountID(id string) bool { return CheckAccountID(id) == nil }

// RunIDLen is the length of a run id: 16 random bytes in lowercase Crockford
// base32, without padding.
const RunIDLen = 26

const runIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

var runIDEncoding = base32.NewEncoding(runIDAlphabet).WithPadding(base32.NoPadding)

// NewRunID returns a fresh run id: 128 random bits as 26 characters of
// lowercase Crockford base32 (digits and a–z without i, l, o, u).
func NewRunID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return runIDEncoding.EncodeToString(b[:])
}

// ValidRunID reports whether s has the form of a run id: 26 characters of the
// run id alphabet. It does not require the final character's unused bits to
// be zero.
func ValidRunID(s string) bool {
	if len(s) != RunIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(runIDAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// TaskID returns the id of the n-th task (from 1) a run opens: <run id>-<n>.
func TaskID(runID string, n int) (string, error) {
	if !ValidRunID(runID) {
		return "", Errorf(Internal, "malformed run id")
	}
	if n < 1 {
		return "", Errorf(Internal, "tasks of a run are numbered from 1")
	}
	return runID + "-" + strconv.Itoa(n), nil
}

// ValidTaskID reports whether s is a task id as the contract allows it: 1–80
// of [a-z0-9-] (SPEC §12). Ids the service makes have the form <run id>-<n>.
func ValidTaskID(s string) bool {
	if len(s) == 0 || len(s) > MaxTaskIDLen {
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

// NewDeviceID returns a fresh device id. A device is named like a run: 26
// characters of lowercase Crockford base32.
func NewDeviceID() string { return NewRunID() }

// ValidDeviceID reports whether s has the form of a device id.
func ValidDeviceID(s string) bool { return ValidRunID(s) }

// ValidProjectName reports whether s may name a project: 1–64 of [a-z0-9._-],
// beginning with a letter or digit.
func ValidProjectName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// ValidUUID reports whether s is a UUID in the lowercase form envelopes use:
// 8-4-4-4-12 lowercase hex digits.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// NewProjectUUID returns a random (version 4) UUID in the lowercase form
// envelopes use.
func NewProjectUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
