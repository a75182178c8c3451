package approval

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
)

// PrivateKey is an owner's signing key: ed25519 or secp256k1. Its String
// method never shows the secret; SecretText does, for writing key files.
type PrivateKey struct {
	pub PublicKey
	ed  ed25519.PrivateKey
	k1  *ecdsa.PrivateKey
}

// GenerateKey makes a new ed25519 key from crypto/rand.
func GenerateKey() (PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	defer clear(seed)
	if _, err := rand.Read(seed); err != nil {
		return PrivateKey{}, fmt.Errorf("approval: reading random key seed: %w", err)
	}
	return NewEd25519Key(seed)
}

// NewEd25519Key derives the ed25519 key of a 32-byte seed.
func NewEd25519Key(seed []byte) (PrivateKey, error) {
	if len(seed) != ed25519.SeedSize {
		return PrivateKey{}, refuse(Malformed, "an ed25519 seed is 32 bytes")
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub, err := PublicKeyFromEd25519(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return PrivateKey{}, err
	}
	return PrivateKey{pub: pub, ed: priv}, nil
}

// NewSecp256k1Key wraps a 32-byte secp256k1 secret scalar.
func NewSecp256k1Key(secret []byte) (PrivateKey, error) {
	if len(secret) != 32 {
		return PrivateKey{}, refuse(Malformed, "a secp256k1 secret key is 32 bytes")
	}
	k1, err := crypto.ToECDSA(secret)
	if err != nil {
		return PrivateKey{}, refuse(Malformed, "the secp256k1 secret key is out of range")
	}
	pub, err := PublicKeyFromSecp256k1(crypto.FromECDSAPub(&k1.PublicKey))
	if err != nil {
		return PrivateKey{}, err
	}
	return PrivateKey{pub: pub, k1: k1}, nil
}

// ParsePrivateKey parses a secret key as NEAR tools write it:
// `ed25519:<base58 of 64 bytes: seed ‖ public key>` (the public half must
// match the seed) or `secp256k1:<base58 of the 32-byte secret>`.
func ParsePrivateKey(s string) (PrivateKey, error) {
	if len(s) > maxEncodedPrivateLen {
		return PrivateKey{}, refuse(Malformed, "the private key is too long")
	}
	switch {
	case strings.HasPrefix(s, ed25519Prefix):
		raw, ok := decodeBase58(s[len(ed25519Prefix):], ed25519.PrivateKeySize)
		if !ok {
			return PrivateKey{}, refuse(Malformed, "the ed25519 private key is not base58 of 64 bytes")
		}
		defer clear(raw)
		k, err := NewEd25519Key(raw[:ed25519.SeedSize])
		if err != nil {
			return PrivateKey{}, err
		}
		if subtle.ConstantTimeCompare(raw[ed25519.SeedSize:], k.pub.b[:ed25519KeySize]) != 1 {
			return PrivateKey{}, refuse(Malformed, "the ed25519 private key's public half does not match its seed")
		}
		return k, nil
	case strings.HasPrefix(s, secp256k1Prefix):
		raw, ok := decodeBase58(s[len(secp256k1Prefix):], 32)
		if !ok {
			return PrivateKey{}, refuse(Malformed, "the secp256k1 private key is not base58 of 32 bytes")
		}
		defer clear(raw)
		return NewSecp256k1Key(raw)
	}
	return PrivateKey{}, refuse(Malformed, "the private key is not an ed25519 or secp256k1 key")
}

// PublicKey returns the key's public half.
func (k PrivateKey) PublicKey() PublicKey { return k.pub }

// IsZero reports whether k holds no key.
func (k PrivateKey) IsZero() bool { return k.pub.IsZero() }

// String names the key type and public key only.
func (k PrivateKey) String() string {
	if k.IsZero() {
		return "no private key"
	}
	return "private key of " + k.pub.String()
}

// SecretText returns the secret in NEAR's text form (see ParsePrivateKey).
// It is for key files only: never log it.
func (k PrivateKey) SecretText() string {
	switch {
	case k.ed != nil:
		return ed25519Prefix + base58.Encode(k.ed)
	case k.k1 != nil:
		return secp256k1Prefix + base58.Encode(crypto.FromECDSA(k.k1))
	}
	return ""
}

// Sign signs the SHA-256 of the payload's bytes: a 64-byte ed25519
// signature, or a 65-byte secp256k1 r‖s‖v with low s and v ∈ {0,1}.
func (k PrivateKey) Sign(p Payload) ([]byte, error) {
	d, err := p.Digest()
	if err != nil {
		return nil, err
	}
	switch {
	case k.ed != nil:
		return ed25519.Sign(k.ed, d[:]), nil
	case k.k1 != nil:
		sig, err := crypto.Sign(d[:], k.k1)
		if err != nil {
			return nil, fmt.Errorf("approval: secp256k1 signing failed: %w", err)
		}
		return sig, nil
	}
	return nil, errors.New("approval: no private key")
}

// Wallet is an account id and the key that signs for it, as `countersign
// wallet new|sign` and tests use it.
type Wallet struct {
	AccountID string
	Key       PrivateKey
}

// NewWallet makes a new ed25519 key; the wallet's account is the key's
// NEAR-implicit account.
func NewWallet() (*Wallet, error) {
	k, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	return &Wallet{AccountID: ImplicitAccountID(k.PublicKey()), Key: k}, nil
}

// SignRequest is what a wallet is asked to sign (NEP-413 signMessage).
type SignRequest struct {
	Message   string
	Recipient string
	// Nonce nil means a fresh random nonce.
	Nonce *Nonce
	// CallbackURL nil means no callback URL in the payload.
	CallbackURL *string
}

// SignedMessage is a wallet's answer in the shape near-api-js and
// wallet-selector's signMessage return it, with the signed request's
// message, recipient, nonce and callback URL alongside, so that it can be
// checked on its own (VerifyWalletJSON).
type SignedMessage struct {
	AccountID   string  `json:"accountId"`
	PublicKey   string  `json:"publicKey"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	Message     string  `json:"message"`
	Recipient   string  `json:"recipient"`
	CallbackURL *string `json:"callbackUrl,omitempty"`
}

// Signed returns the pieces as the service's JSON bodies carry them.
func (m SignedMessage) Signed() Signed {
	return Signed{PublicKey: m.PublicKey, Signature: m.Signature, Nonce: m.Nonce, CallbackURL: m.CallbackURL}
}

// Sign signs req as NEP-413; the signature is standard base64.
func (w *Wallet) Sign(req SignRequest) (SignedMessage, error) {
	if w == nil || w.Key.IsZero() {
		return SignedMessage{}, errors.New("approval: the wallet has no key")
	}
	if err := ValidateAccountID(w.AccountID); err != nil {
		return SignedMessage{}, err
	}
	var nonce Nonce
	if req.Nonce != nil {
		nonce = *req.Nonce
	} else {
		n, err := NewNonce()
		if err != nil {
			return SignedMessage{}, err
		}
		nonce = n
	}
	p := Payload{Message: req.Message, Nonce: nonce, Recipient: req.Recipient, CallbackURL: req.CallbackURL}
	sig, err := w.Key.Sign(p)
	if err != nil {
		return SignedMessage{}, err
	}
	return SignedMessage{
		AccountID:   w.AccountID,
		PublicKey:   w.Key.PublicKey().String(),
		Signature:   encodeStdBase64(sig),
		Nonce:       nonce.String(),
		Message:     req.Message,
		Recipient:   req.Recipient,
		CallbackURL: req.CallbackURL,
	}, nil
}

// keyFile is near-cli's credentials format
// (`~/.near-credentials/<network>/<account>.json`). Readers of that format
// also accept `secret_key` for the private key.
type keyFile struct {
	AccountID  string `json:"account_id"`
	PublicKey  string `json:"public_key"`
	PrivateKey string `json:"private_key,omitempty"`
	SecretKey  string `json:"secret_key,omitempty"`
}

const maxKeyFileBytes = 64 << 10

// Save writes the wallet as a near-cli key file, mode 0600. It refuses to
// overwrite an existing file.
func (w *Wallet) Save(path string) (err error) {
	if w == nil || w.Key.IsZero() {
		return errors.New("approval: the wallet has no key")
	}
	if err := ValidateAccountID(w.AccountID); err != nil {
		return err
	}
	body, err := json.Marshal(keyFile{
		AccountID:  w.AccountID,
		PublicKey:  w.Key.PublicKey().String(),
		PrivateKey: w.Key.SecretText(),
	})
	if err != nil {
		return fmt.Errorf("approval: encoding the key file: %w", err)
	}
	defer clear(body)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fmt.Errorf("approval: creating the key file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("approval: closing the key file: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.Write(append(body, '\n')); err != nil {
		return fmt.Errorf("approval: writing the key file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("approval: syncing the key file: %w", err)
	}
	return nil
}

// LoadWallet reads a near-cli key file. It refuses a file that its group or
// others may read or write (on systems with Unix permissions), a public key
// that does not match the private key, and an invalid account id.
func LoadWallet(path string) (*Wallet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("approval: opening the key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("approval: reading the key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("approval: the key file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("approval: the key file %s is open to others (mode %04o); make it readable by its owner only (chmod 600)",
			path, uint32(st.Mode().Perm()))
	}
	body, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("approval: reading the key file: %w", err)
	}
	defer clear(body)
	if len(body) > maxKeyFileBytes {
		return nil, fmt.Errorf("approval: the key file %s is too large", path)
	}
	return parseKeyFile(body)
}

func parseKeyFile(body []byte) (*Wallet, error) {
	var kf keyFile
	if err := json.Unmarshal(body, &kf); err != nil {
		return nil, refuse(Malformed, "the key file is not a JSON object with account_id, public_key and private_key")
	}
	secret := kf.PrivateKey
	if secret == "" {
		secret = kf.SecretKey
	}
	if secret == "" {
		return nil, refuse(Malformed, "the key file has no private_key")
	}
	k, err := ParsePrivateKey(secret)
	if err != nil {
		return nil, err
	}
	if kf.PublicKey != "" {
		pub, err := ParsePublicKey(kf.PublicKey)
		if err != nil {
			return nil, err
		}
		if pub != k.PublicKey() {
			return nil, refuse(Malformed, "the key file's public_key does not match its private_key")
		}
	}
	if err := ValidateAccountID(kf.AccountID); err != nil {
		return nil, err
	}
	return &Wallet{AccountID: kf.AccountID, Key: k}, nil
}

// walletJSON is the input of `countersign nep413 verify`.
type walletJSON struct {
	AccountID   *string         `json:"accountId"`
	PublicKey   *string         `json:"publicKey"`
	Signature   *string         `json:"signature"`
	Message     *string         `json:"message"`
	Recipient   *string         `json:"recipient"`
	Nonce       json.RawMessage `json:"nonce"`
	CallbackURL *string         `json:"callbackUrl"`
	// State is part of NEP-413's SignedMessage; it is not signed and is
	// ignored.
	State json.RawMessage `json:"state"`
}

// MaxWalletJSONBytes bounds VerifyWalletJSON's input.
const MaxWalletJSONBytes = 1 << 20

// VerifyWalletJSON checks a wallet's signed message given as JSON
// `{accountId?, publicKey, signature, message, recipient, nonce, callbackUrl?}`
// (nonce as base64 of 32 bytes, or as an array of 32 byte values as
// JavaScript's Uint8Array serialises; `state` is allowed and ignored; a null
// callbackUrl is the same as none). It checks the signature only, and, when
// accountId is an implicit account, that it is the key's own; it asks no
// chain. It returns nil, or an *Error whose text says why not.
func VerifyWalletJSON(r io.Reader) error {
	body, err := io.ReadAll(io.LimitReader(r, MaxWalletJSONBytes+1))
	if err != nil {
		return refuseCause(Malformed, "the input could not be read", err)
	}
	if len(body) > MaxWalletJSONBytes {
		return refuse(Malformed, "the input is larger than 1 MiB")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var in walletJSON
	if err := dec.Decode(&in); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return refuse(Malformed, "the input is not JSON")
		}
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			return refuse(Malformed, "the JSON has a member other than accountId, publicKey, signature, message, recipient, nonce, callbackUrl and state")
		}
		return refuse(Malformed, "the input is not a JSON object of strings")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return refuse(Malformed, "the input has more after the JSON object")
	}
	switch {
	case in.PublicKey == nil:
		return refuse(Malformed, "publicKey is missing")
	case in.Signature == nil:
		return refuse(Malformed, "signature is missing")
	case in.Message == nil:
		return refuse(Malformed, "message is missing")
	case in.Recipient == nil:
		return refuse(Malformed, "recipient is missing")
	case len(in.Nonce) == 0 || string(in.Nonce) == "null":
		return refuse(Malformed, "nonce is missing")
	}
	nonce, err := parseWalletNonce(in.Nonce)
	if err != nil {
		return err
	}
	key, err := ParsePublicKey(*in.PublicKey)
	if err != nil {
		return err
	}
	sig, err := ParseSignature(*in.Signature, key.Type())
	if err != nil {
		return err
	}
	p := Payload{Message: *in.Message, Nonce: nonce, Recipient: *in.Recipient, CallbackURL: in.CallbackURL}
	if err := p.VerifySignature(key, sig); err != nil {
		return err
	}
	if in.AccountID != nil {
		if err := ValidateAccountID(*in.AccountID); err != nil {
			return err
		}
		if IsImplicit(*in.AccountID) && !IsOwnImplicitAccount(*in.AccountID, key) {
			return refuse(UnknownKey, "accountId is not this key's implicit account")
		}
	}
	return nil
}

func parseWalletNonce(raw json.RawMessage) (Nonce, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return ParseNonce(s)
	}
	var arr []int
	if err := json.Unmarshal(raw, &arr); err != nil || len(arr) != 32 {
		return Nonce{}, refuse(Malformed, "the nonce is not base64 of 32 bytes nor an array of 32 bytes")
	}
	var n Nonce
	for i, v := range arr {
		if v < 0 || v > 255 {
			return Nonce{}, refuse(Malformed, "the nonce is not base64 of 32 bytes nor an array of 32 bytes")
		}
		n[i] = byte(v)
	}
	return n, nil
}

// fileMode is the mode key files are written with.
const fileMode fs.FileMode = 0o600

func encodeStdBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
