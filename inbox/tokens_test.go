package inbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/device"
	"countersign/inbox"
	"countersign/sealing"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// countingStore counts the transactions and reads a service asks for.
type countingStore struct {
	store.Store
	asked atomic.Int64
}

func (c *countingStore) Tx(ctx context.Context, fn func(store.Tx) error) error {
	c.asked.Add(1)
	return c.Store.Tx(ctx, fn)
}

func (c *countingStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	c.asked.Add(1)
	return c.Store.Read(ctx, fn)
}

// keyIDOf is the master key id a session token names.
func keyIDOf(t *testing.T, token string) uint32 {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, inbox.TokenPrefix))
	if err != nil || len(b) < 4 {
		t.Fatalf("the token is not base64url: %v", err)
	}
	return binary.BigEndian.Uint32(b)
}

// TestSessionTokensAreTagged: a session token carries a tag keyed under the
// master key (through the enclave side; the door never holds the key). A
// token the service did not make — random, shaped like a token made before
// tokens were tagged, tagged by another deployment's keyring, its tag
// altered — is refused session_required without the store being asked. A
// token made before a key rotation is accepted while its key id stays in
// the keyring, and refused once it is gone.
func TestSessionTokensAreTagged(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	ctx := context.Background()
	token := w.Owner.Client.Session
	if id := keyIDOf(t, token); id != w.Keys.Current() {
		t.Fatalf("the token names key id %d, the keyring's current is %d", id, w.Keys.Current())
	}
	counted := &countingStore{Store: w.DB}
	service := func(keys *sealing.Keyring) *inbox.Service {
		e := servicetest.NewEnclave(servicetest.EnclaveConfig{Keys: keys, Store: counted, PublicURL: w.URL})
		return inbox.NewService(inbox.Config{Store: counted, Keeper: e.Unlock, Tokens: e.Keys, Keys: approval.OffChecker{}, PublicURL: w.URL, Now: w.Clock.Now})
	}
	same := service(w.Keys)

	// A token made before tokens were tagged: its session is in the store.
	legacy := inbox.TokenPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	hash := sha256.Sum256([]byte(legacy))
	now := w.Clock.Now()
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		return tx.InsertDevice(ctx, store.Device{ID: countersign.NewDeviceID(), Account: w.Owner.Account, DevicePubkey: w.Owner.Pubkey(),
			SignerPubkey: "ed25519:x", TokenHash: hash[:], Statement: "{}", CreatedAt: now, ValidUntil: now.Add(time.Hour), KeyCheckedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, inbox.TokenPrefix))
	altered := append([]byte(nil), raw...)
	altered[len(altered)-1] ^= 1
	otherRandom := append([]byte(nil), raw...)
	otherRandom[10] ^= 1
	forged := map[string]string{
		"empty":                 "",
		"no prefix":             strings.TrimPrefix(token, inbox.TokenPrefix),
		"random":                inbox.TokenPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, 52)),
		"made before tagging":   legacy,
		"tag altered":           inbox.TokenPrefix + base64.RawURLEncoding.EncodeToString(altered),
		"random part altered":   inbox.TokenPrefix + base64.RawURLEncoding.EncodeToString(otherRandom),
		"padded":                token + "=",
		"standard base64":       inbox.TokenPrefix + base64.StdEncoding.EncodeToString(raw),
		"a line break appended": token + "\n",
	}
	for name, tok := range forged {
		before := counted.asked.Load()
		if _, err := same.Authenticate(ctx, tok); countersign.ErrorCode(err) != countersign.SessionRequired {
			t.Errorf("%s: %v, want session_required", name, err)
		}
		if counted.asked.Load() != before {
			t.Errorf("%s: the store was asked", name)
		}
	}
	before := counted.asked.Load()
	if sess, err := same.Authenticate(ctx, token); err != nil || sess.AccountID != w.Owner.Account {
		t.Fatalf("the owner's token through another process of the same deployment: %+v %v", sess, err)
	}
	if counted.asked.Load() != before+1 {
		t.Errorf("a good token asked the store %d times, want once", counted.asked.Load()-before)
	}

	// Another deployment's keyring made none of this one's tokens.
	elsewhere := service(sealing.GenerateKeyring())
	before = counted.asked.Load()
	if _, err := elsewhere.Authenticate(ctx, token); countersign.ErrorCode(err) != countersign.SessionRequired {
		t.Errorf("another keyring accepted the token: %v", err)
	}
	if counted.asked.Load() != before {
		t.Error("a token of another keyring reached the store")
	}

	// After a rotation the token of the older key id still opens its
	// session; new tokens name the new id.
	rotated, err := w.Keys.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	after := service(rotated)
	if _, err := after.Authenticate(ctx, token); err != nil {
		t.Fatalf("a token of key %d after the rotation: %v", w.Keys.Current(), err)
	}
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	dev := w.Device(wallet)
	validUntil := w.Clock.Now().Add(time.Hour)
	sentence, err := approval.SignIn{Account: wallet.AccountID, DeviceKey: dev.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	m, err := wallet.Sign(approval.SignRequest{Message: sentence, Recipient: after.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := after.SignIn(ctx, inbox.SignInRequest{AccountID: wallet.AccountID, DevicePubkey: dev.Pubkey(),
		ValidUntil: validUntil.Format(approval.TimeLayout), PublicKey: m.PublicKey, Signature: m.Signature, Nonce: m.Nonce})
	if err != nil {
		t.Fatal(err)
	}
	if id := keyIDOf(t, fresh.Token); id != rotated.Current() {
		t.Errorf("a token made after the rotation names key id %d, want %d", id, rotated.Current())
	}
	// Once the older key leaves the keyring, its tokens are refused.
	newest, err := sealing.ParseKeyring(strings.Split(rotated.Export(), ",")[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := service(newest).Authenticate(ctx, token); countersign.ErrorCode(err) != countersign.SessionRequired {
		t.Errorf("a token of a retired key: %v", err)
	}
}

// unreachable is a store no test of tokens may reach.
type unreachable struct{ store.Store }

func (unreachable) Read(context.Context, func(store.Tx) error) error { panic("the store was asked") }
func (unreachable) Tx(context.Context, func(store.Tx) error) error   { panic("the store was asked") }

// FuzzSessionToken: whatever a client sends as its session token, a
// service refuses it session_required without asking the store, unless it
// made it.
func FuzzSessionToken(f *testing.F) {
	svc := inbox.NewService(inbox.Config{Store: unreachable{}, Keys: approval.OffChecker{}, PublicURL: "https://inbox.example"})
	for _, s := range []string{"", "os_", "os_" + strings.Repeat("A", 70), "os_" + strings.Repeat("_", 70), "os_\x00", "Bearer os_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		if _, err := svc.Authenticate(context.Background(), token); countersign.ErrorCode(err) != countersign.SessionRequired {
			t.Fatalf("%q: %v", token, err)
		}
	})
}
