package enclave_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"countersign/approval"
	"countersign/enclave"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// signedDevice makes a device row whose sign-in statement the wallet signed.
func signedDevice(t testing.TB, w *approval.Wallet, id, recipient string, validUntil time.Time) (store.Device, *ecdh.PrivateKey) {
	t.Helper()
	return signedDeviceWith(t, w, id, recipient, nil, validUntil)
}

// signedDeviceWith is signedDevice with a callback URL in the statement.
func signedDeviceWith(t testing.TB, w *approval.Wallet, id, recipient string, callback *string, validUntil time.Time) (store.Device, *ecdh.PrivateKey) {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub := sealing.FormatP256PublicKey(key.PublicKey())
	sentence, err := approval.SignIn{Account: w.AccountID, DeviceKey: pub, ValidUntil: validUntil}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Sign(approval.SignRequest{Message: sentence, Recipient: recipient, CallbackURL: callback})
	if err != nil {
		t.Fatal(err)
	}
	stmt, _ := json.Marshal(m)
	return store.Device{ID: id, Account: w.AccountID, DevicePubkey: pub, SignerPubkey: m.PublicKey,
		TokenHash: []byte("token-" + id), Statement: string(stmt), CreatedAt: t0, ValidUntil: validUntil, KeyCheckedAt: t0}, key
}

// TestContentKeyWrappedToCheckedDevices: a task's content key reaches every
// current device whose statement checks out, and no other.
func TestContentKeyWrappedToCheckedDevices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e, _ := newEnclave(t)
		w, _ := approval.NewWallet()
		other, _ := approval.NewWallet()
		good, goodKey := signedDevice(t, w, "good", "inbox.example", t0.Add(time.Hour))
		good2, good2Key := signedDevice(t, w, "good2", "inbox.example", t0.Add(time.Hour))
		wrongRecipient, _ := signedDevice(t, w, "recipient", "elsewhere", t0.Add(time.Hour))
		oldDefault, _ := signedDevice(t, w, "old-default", "countersign", t0.Add(time.Hour))
		under, elsewhere := "https://inbox.example/#/", "https://inbox.example.evil/"
		withCallback, withCallbackKey := signedDeviceWith(t, w, "callback", "inbox.example", &under, t0.Add(time.Hour))
		foreignCallback, _ := signedDeviceWith(t, w, "foreign-callback", "inbox.example", &elsewhere, t0.Add(time.Hour))
		forged, _ := signedDevice(t, w, "forged", "inbox.example", t0.Add(time.Hour))
		forged.ValidUntil = t0.Add(2 * time.Hour)
		var m approval.SignedMessage
		_ = json.Unmarshal([]byte(forged.Statement), &m)
		m.Message = "Sign in to Countersign as " + w.AccountID + ". Device key: " + good.DevicePubkey + ". Valid until 2030-01-01T00:00:00Z."
		b, _ := json.Marshal(m)
		forged.Statement = string(b)
		swapped, _ := signedDevice(t, w, "swapped", "inbox.example", t0.Add(time.Hour))
		swapped.DevicePubkey = good.DevicePubkey // the statement names another key
		stranger, _ := signedDevice(t, other, "stranger", "inbox.example", t0.Add(time.Hour))
		stranger.Account = w.AccountID // another wallet's statement on this account
		if err := db.Tx(ctx, func(tx store.Tx) error {
			for _, d := range []store.Device{good, good2, wrongRecipient, oldDefault, withCallback, foreignCallback, forged, swapped, stranger} {
				if err := tx.InsertDevice(ctx, d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := open(t, e, db, newRun(w.AccountID, "bot.near"), inputSpec("Task"))
		if err != nil {
			t.Fatal(err)
		}
		_ = db.Tx(ctx, func(tx store.Tx) error {
			for _, d := range []struct {
				id  string
				key *ecdh.PrivateKey
			}{{"good", goodKey}, {"good2", good2Key}, {"callback", withCallbackKey}} {
				blob, err := tx.DeviceCopy(ctx, got.ID, d.id)
				if err != nil {
					t.Fatalf("device %s has no copy: %v", d.id, err)
				}
				ck, err := sealing.UnwrapContentKey(d.key, got.ID, blob)
				if err != nil {
					t.Fatalf("device %s cannot unwrap its copy: %v", d.id, err)
				}
				content, _ := tx.Content(ctx, got.ID)
				if _, err := ck.OpenContent(got.ID, content); err != nil {
					t.Fatalf("device %s cannot open the content: %v", d.id, err)
				}
			}
			for _, id := range []string{"recipient", "old-default", "foreign-callback", "forged", "swapped", "stranger"} {
				if _, err := tx.DeviceCopy(ctx, got.ID, id); err == nil {
					t.Errorf("device %s got a content key", id)
				}
			}
			return nil
		})
	})
}

// TestCheckedDevicesRememberedSafely: a statement is verified once and
// remembered, and what is remembered never lets through what the check
// would refuse: a row changed in any part the check reads is checked
// afresh, and a remembered device whose statement's deadline has passed is
// left out.
func TestCheckedDevicesRememberedSafely(t *testing.T) {
	t.Parallel()
	keys := enclave.New(enclave.Config{Keyring: sealing.GenerateKeyring(), PublicURL: "https://inbox.example"})
	w, _ := approval.NewWallet()
	other, _ := approval.NewWallet()
	good, _ := signedDevice(t, w, "good", "inbox.example", t0.Add(time.Hour))
	second, _ := signedDevice(t, w, "second", "inbox.example", t0.Add(time.Hour))
	strangers, _ := signedDevice(t, other, "stranger", "inbox.example", t0.Add(time.Hour))
	for round := range 2 { // the second round answers from what was remembered
		if got := keys.CheckedKeys([]store.Device{good}, t0); got["good"] == nil {
			t.Fatalf("round %d: a good device was left out", round)
		}
	}
	var m approval.SignedMessage
	_ = json.Unmarshal([]byte(good.Statement), &m)
	changed := func(f func(d *store.Device)) store.Device {
		d := good
		f(&d)
		return d
	}
	for name, d := range map[string]store.Device{
		// Each row keeps the good device's id, which is not what is
		// remembered by.
		"another device's key":       changed(func(d *store.Device) { d.DevicePubkey = second.DevicePubkey }),
		"another account":            changed(func(d *store.Device) { d.Account = other.AccountID }),
		"another signer":             changed(func(d *store.Device) { d.SignerPubkey = strangers.SignerPubkey }),
		"another wallet's statement": changed(func(d *store.Device) { d.Statement = strangers.Statement }),
		"a signature not the wallet's": changed(func(d *store.Device) {
			forged := m
			forged.Signature = strings.Repeat("A", len(m.Signature))
			b, _ := json.Marshal(forged)
			d.Statement = string(b)
		}),
	} {
		if got := keys.CheckedKeys([]store.Device{d}, t0); len(got) != 0 {
			t.Errorf("%s: the device was let through on what was remembered of the good one", name)
		}
	}
	if got := keys.CheckedKeys([]store.Device{good}, t0.Add(time.Hour)); len(got) != 0 {
		t.Error("a remembered device was let through at its statement's deadline")
	}
	if got := keys.CheckedKeys([]store.Device{good, second}, t0.Add(time.Hour-time.Second)); len(got) != 2 {
		t.Errorf("before the deadline %d of 2 devices were let through", len(got))
	}
}

// BenchmarkCheckedKeys prices a device's statement checked at each task
// wrapped to it ("first", a statement not seen before: the wallet's
// signature verified and the sentence parsed) against one remembered.
func BenchmarkCheckedKeys(b *testing.B) {
	w, _ := approval.NewWallet()
	d, _ := signedDevice(b, w, "d", "inbox.example", t0.Add(time.Hour))
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			keys := enclave.New(enclave.Config{Keyring: nil, PublicURL: "https://inbox.example"})
			if len(keys.CheckedKeys([]store.Device{d}, t0)) != 1 {
				b.Fatal("left out")
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		keys := enclave.New(enclave.Config{Keyring: nil, PublicURL: "https://inbox.example"})
		for b.Loop() {
			if len(keys.CheckedKeys([]store.Device{d}, t0)) != 1 {
				b.Fatal("left out")
			}
		}
	})
}
