// Package device is an owner's device as the terminal inbox (and the tests)
// run it: a P-256 key pair whose private half never leaves it, a wallet that
// signs the owner's sentences, and the client that carries them. It does on a
// terminal what the web inbox does in a browser, with the same protocol.
package device

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/sealing"
)

// Signer signs an owner's sentence as NEP-413: a wallet key file, or an
// external wallet asked through the terminal.
type Signer interface {
	Sign(message, recipient string) (client.Signed, error)
}

// WalletSigner signs with a wallet key held here.
type WalletSigner struct{ Wallet *approval.Wallet }

// Sign signs message for recipient with a fresh nonce.
func (w WalletSigner) Sign(message, recipient string) (client.Signed, error) {
	m, err := w.Wallet.Sign(approval.SignRequest{Message: message, Recipient: recipient})
	if err != nil {
		return client.Signed{}, err
	}
	return client.Signed{PublicKey: m.PublicKey, Signature: m.Signature, Nonce: m.Nonce, CallbackURL: m.CallbackURL}, nil
}

// Device is one signed-in (or signing-in) device of an owner.
type Device struct {
	Account string
	Key     *ecdh.PrivateKey
	Signer  Signer
	Client  *client.Client
	// Recipient is the deployment's NEP-413 recipient ("": the host of
	// Client.BaseURL).
	Recipient string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

func (d *Device) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

// recipient is the NEP-413 recipient the device signs for: Recipient, or
// by default the host of the service's URL (SPEC §7: a deployment's
// default recipient is its public origin's host, port included unless it
// is the scheme's default).
func (d *Device) recipient() (string, error) {
	if d.Recipient != "" {
		return d.Recipient, nil
	}
	if d.Client != nil {
		if u, err := url.Parse(d.Client.BaseURL); err == nil {
			if r, err := approval.RecipientOf(u.Scheme + "://" + u.Host); err == nil {
				return r, nil
			}
		}
	}
	return "", errors.New("device: no recipient to sign for: set Recipient, or the client's BaseURL")
}

// NewKey makes a device key pair.
func NewKey() (*ecdh.PrivateKey, error) { return ecdh.P256().GenerateKey(rand.Reader) }

// Pubkey is the device's public key in the contract's form (p256:…).
func (d *Device) Pubkey() string { return sealing.FormatP256PublicKey(d.Key.PublicKey()) }

// SignIn signs the sign-in sentence for a session of the given length and
// opens it; the client keeps the session token.
func (d *Device) SignIn(ctx context.Context, life time.Duration) (client.Session, error) {
	validUntil := d.now().Add(life)
	sentence, err := approval.SignIn{Account: d.Account, DeviceKey: d.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		return client.Session{}, err
	}
	recipient, err := d.recipient()
	if err != nil {
		return client.Session{}, err
	}
	signed, err := d.Signer.Sign(sentence, recipient)
	if err != nil {
		return client.Session{}, err
	}
	return d.Client.SignIn(ctx, client.SignInRequest{
		AccountID: d.Account, DevicePubkey: d.Pubkey(), ValidUntil: validUntil.Format(approval.TimeLayout), Signed: signed,
	})
}

// Confirm signs a confirmation of action, at now.
func (d *Device) Confirm(action approval.Action) (client.Confirmation, error) {
	at := d.now()
	sentence, err := approval.Confirmation{Account: d.Account, Action: action, At: at}.Sentence()
	if err != nil {
		return client.Confirmation{}, err
	}
	recipient, err := d.recipient()
	if err != nil {
		return client.Confirmation{}, err
	}
	signed, err := d.Signer.Sign(sentence, recipient)
	if err != nil {
		return client.Confirmation{}, err
	}
	return client.Confirmation{At: at.Unix(), Signed: signed}, nil
}

// SaveKey writes a device key file (mode 0600); it refuses to overwrite one.
func SaveKey(path string, key *ecdh.PrivateKey) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "p256-private:%s\n", hex.EncodeToString(key.Bytes())); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// LoadKey reads a device key file, refusing one that others may read.
func LoadKey(path string) (*ecdh.PrivateKey, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others (mode %04o): chmod 600 %s", path, info.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "p256-private:")
	if !ok {
		return nil, errors.New("not a device key file")
	}
	k, err := hex.DecodeString(raw)
	if err != nil {
		return nil, errors.New("not a device key file")
	}
	return ecdh.P256().NewPrivateKey(k)
}
