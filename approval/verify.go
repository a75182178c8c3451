package approval

import (
	"context"
	"errors"
)

// Signed holds the signed pieces as they travel in the contract's JSON
// bodies (sign-in, confirmation, approval). A `callback_url` that is absent
// or null decodes to nil (not part of the payload); `""` decodes to a
// pointer to "" (part of the payload, empty).
type Signed struct {
	PublicKey   string  `json:"public_key"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url,omitempty"`
}

// Claim is one owner signature to check: who claims to act, what they must
// have signed, for which recipient, and the signed pieces.
type Claim struct {
	// Account is the account id the caller claims to act as.
	Account string
	// Sentence is the exact sentence the service expects to have been signed
	// (built with SignIn, Confirmation or Approval).
	Sentence string
	// Recipient is the deployment's configured recipient.
	Recipient string
	// Origin is the service's public origin in canonical form
	// (PublicOrigin): a signed callback URL must be under it. Empty: no
	// callback URL is accepted.
	Origin string
	// Signed are the pieces the client sent.
	Signed Signed
}

// Verified is a signature that checked out.
type Verified struct {
	// Key is the signer's key (store it, e.g. as a session's signer key).
	Key PublicKey
	// Nonce is the payload's nonce, for the caller to spend atomically.
	Nonce Nonce
	// Status is KeyFullAccess or KeyImplicit.
	Status KeyStatus
}

// Verify checks c in this order: the account id, key, nonce and signature
// are well formed (Malformed); a callback URL, when signed, is under the
// public origin (ForeignCallback); the signature verifies over the NEP-413
// payload {Sentence, nonce, Recipient, callback URL} (InvalidSignature); the
// key may act for the account according to keys (NotFullAccess, UnknownKey,
// or UpstreamUnavailable when the chain cannot be asked). The chain is asked
// only about signatures that verify. Every error is an *Error.
func Verify(ctx context.Context, keys KeyChecker, c Claim) (Verified, error) {
	if keys == nil {
		return Verified{}, errors.New("approval: Verify needs a KeyChecker")
	}
	if err := ValidateAccountID(c.Account); err != nil {
		return Verified{}, err
	}
	if c.Recipient == "" {
		return Verified{}, refuse(Malformed, "no recipient is configured")
	}
	key, err := ParsePublicKey(c.Signed.PublicKey)
	if err != nil {
		return Verified{}, err
	}
	nonce, err := ParseNonce(c.Signed.Nonce)
	if err != nil {
		return Verified{}, err
	}
	sig, err := ParseSignature(c.Signed.Signature, key.Type())
	if err != nil {
		return Verified{}, err
	}
	if cb := c.Signed.CallbackURL; cb != nil && !CallbackUnder(c.Origin, *cb) {
		return Verified{}, refuse(ForeignCallback, "the callback URL is not under this service's public origin: the statement was made for another site")
	}
	p := Payload{Message: c.Sentence, Nonce: nonce, Recipient: c.Recipient, CallbackURL: c.Signed.CallbackURL}
	if err := p.VerifySignature(key, sig); err != nil {
		return Verified{}, err
	}
	status, err := keys.CheckKey(ctx, c.Account, key)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return Verified{}, e
		}
		return Verified{}, errUnavailable(err)
	}
	switch status {
	case KeyFullAccess, KeyImplicit:
		return Verified{Key: key, Nonce: nonce, Status: status}, nil
	case KeyLimited:
		return Verified{}, refuse(NotFullAccess, "the key is a function-call key; owner actions need a full-access key")
	case KeyUnknown:
		return Verified{}, refuse(UnknownKey, "the key is not a full-access key of this account")
	}
	return Verified{}, errUnavailable(errors.New("approval: the key checker gave no status"))
}
