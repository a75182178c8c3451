package enclave

import (
	"encoding/hex"

	"countersign/sealing"
)

// sessionToken is the purpose of the keyed hash that tags owners' session
// tokens.
const sessionToken = sealing.SecretPurpose("session-token")

// SessionTokenKeyID is the master key id new session tokens are made under:
// the current one.
func (e *Enclave) SessionTokenKeyID() uint32 { return e.keys.Current() }

// SessionTokenMAC keys a session token's body for the door (inbox.TokenKeeper):
// HMAC-SHA256 under a key derived from master key keyID for this purpose
// alone (sealing's Keyring.MAC), so the door checks the tokens it made
// without holding the master key or anything that opens what it seals. An
// id the keyring lacks (a token of a retired key) is an error.
func (e *Enclave) SessionTokenMAC(keyID uint32, body []byte) ([]byte, error) {
	sum, err := e.keys.MAC(keyID, sessionToken, "inbox", body)
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(sum)
}
