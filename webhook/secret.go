package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every webhook secret, as Standard Webhooks libraries
// expect.
const SecretPrefix = "whsec_"

// KeySize is the length in bytes of a webhook signing key.
const KeySize = 32

// ErrSecret is returned by DecodeSecret for anything that is not a secret
// NewSecret could have made. It never repeats the input.
var ErrSecret = errors.New("the webhook secret is malformed")

// NewSecret returns a new webhook secret: SecretPrefix followed by the
// standard base64 (with padding) of 32 random bytes. It is shown to the
// owner once and stored only sealed.
func NewSecret() (string, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// DecodeSecret returns the 32-byte signing key of a secret made by
// NewSecret. It refuses any other form: a missing prefix, other base64
// alphabets, missing padding, embedded line breaks, non-canonical trailing
// bits, or a key of any other length. It never returns an empty key.
func DecodeSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok || len(enc) != base64.StdEncoding.EncodedLen(KeySize) {
		return nil, ErrSecret
	}
	key, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(key) != KeySize || base64.StdEncoding.EncodeToString(key) != enc {
		return nil, ErrSecret
	}
	return key, nil
}
