package approval

import (
	"encoding/hex"

	"github.com/ethereum/go-ethereum/crypto"

	"countersign"
)

// ValidateAccountID checks NEAR's account id rules (countersign.CheckAccountID)
// and refuses a malformed id as Malformed.
func ValidateAccountID(id string) error {
	if err := countersign.CheckAccountID(id); err != nil {
		return refuse(Malformed, err.Error())
	}
	return nil
}

// IsNearImplicit reports whether id is a NEAR-implicit account id: 64
// lowercase hex characters (an ed25519 public key).
func IsNearImplicit(id string) bool { return len(id) == 64 && isLowerHex(id) }

// IsEthImplicit reports whether id is an ETH-implicit account id: `0x`
// followed by 40 lowercase hex characters.
func IsEthImplicit(id string) bool {
	return len(id) == 42 && id[0] == '0' && id[1] == 'x' && isLowerHex(id[2:])
}

// IsImplicit reports whether id is a NEAR- or ETH-implicit account id.
func IsImplicit(id string) bool { return IsNearImplicit(id) || IsEthImplicit(id) }

// ImplicitAccountID returns the implicit account that key controls by
// construction: the lowercase hex of an ed25519 key, or `0x` + the hex of
// the last 20 bytes of keccak256 of a secp256k1 key's 64-byte point. It
// returns "" for the zero key.
func ImplicitAccountID(key PublicKey) string {
	switch key.typ {
	case ED25519:
		return hex.EncodeToString(key.b[:ed25519KeySize])
	case SECP256K1:
		h := crypto.Keccak256(key.b[:])
		return "0x" + hex.EncodeToString(h[12:])
	}
	return ""
}

// IsOwnImplicitAccount reports whether account is key's implicit account.
func IsOwnImplicitAccount(account string, key PublicKey) bool {
	return !key.IsZero() && account == ImplicitAccountID(key)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
