package enclave

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"strings"
	"time"

	"countersign/approval"
	"countersign/sealing"
	"countersign/store"
)

// deviceKeys returns the P-256 keys of the owner's current devices whose
// sign-in statement the enclave checks itself: the wallet's signature over
// the sign-in sentence for this recipient (with a callback URL, if any,
// under the public origin), this account and this device key, and a
// deadline still ahead. A device that fails is skipped: it gets no
// content key and sees its tasks locked.
func (e *Enclave) deviceKeys(ctx context.Context, tx store.Devices, owner string, now time.Time) (map[string]*ecdh.PublicKey, error) {
	devices, err := tx.ActiveDevices(ctx, owner, now)
	if err != nil {
		return nil, err
	}
	return e.checkedKeys(devices, now), nil
}

// checkedKeys are the keys of the devices whose sign-in statements check
// out, by device id.
func (e *Enclave) checkedKeys(devices []store.Device, now time.Time) map[string]*ecdh.PublicKey {
	keys := make(map[string]*ecdh.PublicKey, len(devices))
	for _, d := range devices {
		if k, ok := e.checkDevice(d, now); ok {
			keys[d.ID] = k
		}
	}
	return keys
}

func (e *Enclave) checkDevice(d store.Device, now time.Time) (*ecdh.PublicKey, bool) {
	if err := approval.VerifyWalletJSON(strings.NewReader(d.Statement)); err != nil {
		return nil, false
	}
	var m approval.SignedMessage
	if err := json.Unmarshal([]byte(d.Statement), &m); err != nil {
		return nil, false
	}
	in, err := approval.ParseSignIn(m.Message)
	if err != nil || e.recipient == "" || m.Recipient != e.recipient || m.AccountID != d.Account || in.Account != d.Account ||
		m.CallbackURL != nil && !approval.CallbackUnder(e.origin, *m.CallbackURL) ||
		in.DeviceKey != d.DevicePubkey || m.PublicKey != d.SignerPubkey || !now.Before(in.ValidUntil) {
		return nil, false
	}
	pub, err := sealing.ParseP256PublicKey(d.DevicePubkey)
	if err != nil {
		return nil, false
	}
	return pub, true
}
