package enclave_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"countersign/approval"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// signedDevice makes a device row whose sign-in statement the wallet signed.
func signedDevice(t *testing.T, w *approval.Wallet, id, recipient string, validUntil time.Time) (store.Device, *ecdh.PrivateKey) {
	t.Helper()
	return signedDeviceWith(t, w, id, recipient, nil, validUntil)
}

// signedDeviceWith is signedDevice with a callback URL in the statement.
func signedDeviceWith(t *testing.T, w *approval.Wallet, id, recipient string, callback *string, validUntil time.Time) (store.Device, *ecdh.PrivateKey) {
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
