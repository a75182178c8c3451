package enclave

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"countersign/approval"
	"countersign/origin"
	"countersign/sealing"
	"countersign/store"
)

// Keys is the key-holder: the master keyring, and every operation that
// needs it. The services of the enclave side (calls, answers, history,
// delivery, sweeps, rotation, unlock) are given a Keys and never the
// keyring; the door is given only the narrow interfaces a Keys or a
// service implements.
//
// It also knows the deployment it answers for: the recipient owners sign
// for and the public origin their callback URLs must be under, by which it
// checks a device's sign-in statement before any key is wrapped to it.
type Keys struct {
	ring      *sealing.Keyring
	recipient string
	// origin is the public origin, canonical: callback URLs in owners'
	// statements must be under it (SPEC §7).
	origin string
	// checked are the device statements that checked out.
	checked checkedDevices
	// wrapper wraps keys to devices, one ephemeral key per device for a
	// while.
	wrapper *sealing.Wrapper
}

// Config is what a Keys is built from.
type Config struct {
	Keyring *sealing.Keyring
	// Recipient is the NEP-413 recipient owners sign for (empty: the public
	// origin's host, SPEC §7; with neither, no owner's statement checks out).
	Recipient string
	// PublicURL is the service's origin; a callback URL an owner signed
	// must be under it.
	PublicURL string
}

// New returns the key-holder.
func New(c Config) *Keys {
	origin, _ := approval.PublicOrigin(c.PublicURL)
	if c.Recipient == "" && origin != "" {
		c.Recipient, _ = approval.RecipientOf(origin)
	}
	return &Keys{ring: c.Keyring, recipient: c.Recipient, origin: origin, wrapper: sealing.NewWrapper(nil)}
}

// WrapContentKey wraps task taskID's content key to a device: a device
// copy (sealing.Wrapper).
func (k *Keys) WrapContentKey(device *ecdh.PublicKey, taskID string, ck *sealing.ContentKey) ([]byte, error) {
	return k.wrapper.WrapContentKey(device, taskID, ck)
}

// WrapEntryKey wraps a history entry's key to a device (sealing.Wrapper).
func (k *Keys) WrapEntryKey(device *ecdh.PublicKey, ek *sealing.EntryKey) ([]byte, error) {
	return k.wrapper.WrapEntryKey(device, ek)
}

// Recipient is the NEP-413 recipient owners sign for ("" when none is
// known).
func (k *Keys) Recipient() string { return k.recipient }

// Origin is the public origin, canonical, that callback URLs must be under.
func (k *Keys) Origin() string { return k.origin }

// Purposes of the secrets sealed directly under the master key, besides
// sealing's own (project credentials, webhooks).
const (
	// callAnswer seals an idempotent call's answer.
	callAnswer = sealing.SecretPurpose("call-answer")
	// pushSubscription seals a device's subscription (endpoint and keys),
	// bound to the device id.
	pushSubscription = sealing.SecretPurpose("push-subscription")
	// vapidKey seals the VAPID private key, bound to its row id "vapid".
	vapidKey = sealing.SecretPurpose("vapid-key")
	// runReceiptKey seals a run's own receipt key, bound to the run's id.
	runReceiptKey = sealing.SecretPurpose("run-receipt-key")
	// callBody keys an idempotent call's body hash.
	callBody = sealing.SecretPurpose("call-body")
	// sessionToken is the purpose of the keyed hash that tags owners'
	// session tokens.
	sessionToken = sealing.SecretPurpose("session-token")
)

// vapidRow is the row id the VAPID key is sealed for.
const vapidRow = "vapid"

// Current is the master key id new secrets and tasks are sealed under.
func (k *Keys) Current() uint32 { return k.ring.Current() }

// TaskKeys derives a task's keys under master key keyID.
func (k *Keys) TaskKeys(keyID uint32, projectUUID, owner, taskID string) (*sealing.TaskKeys, error) {
	return k.ring.TaskKeys(keyID, projectUUID, owner, taskID)
}

// EntryKey derives the key of an entry of the owner's history under master
// key keyID.
func (k *Keys) EntryKey(keyID uint32, projectUUID, owner, id string) (*sealing.EntryKey, error) {
	return k.ring.EntryKey(keyID, projectUUID, owner, id)
}

// Voucher is what the answer run is admitted with: the preparing run's
// agent and compute limit, no more.
type Voucher struct {
	Run            string `json:"run,omitempty"`
	Agent          string `json:"agent,omitempty"`
	ComputeLimitMS int64  `json:"compute_limit_ms,omitempty"`
}

// SealedCopy is the plaintext of a task's sealed copy: what its answer run
// opens, and unlock opens to wrap its content key to a new device.
type SealedCopy struct {
	ContentKey string  `json:"content_key"` // hex
	Envelope   string  `json:"envelope"`    // exact envelope text
	State      []byte  `json:"state"`       // base64
	Voucher    Voucher `json:"voucher"`
}

// Seal seals the copy under the task's keys.
func (sc SealedCopy) Seal(tk *sealing.TaskKeys) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sc); err != nil {
		return nil, err
	}
	return tk.Seal(sealing.TaskRecord, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// Key is the task's content key.
func (sc SealedCopy) Key() (*sealing.ContentKey, error) {
	raw, err := hex.DecodeString(sc.ContentKey)
	if err != nil {
		return nil, err
	}
	return sealing.ContentKeyFromBytes(raw)
}

// OpenSealed opens a task's sealed copy as read from its row, with the
// task's keys.
func (k *Keys) OpenSealed(t store.Task, blob []byte, keyID uint32) (SealedCopy, *sealing.TaskKeys, error) {
	tk, err := k.ring.TaskKeys(keyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return SealedCopy{}, nil, err
	}
	plain, err := tk.Open(sealing.TaskRecord, blob)
	if err != nil {
		return SealedCopy{}, nil, err
	}
	var sc SealedCopy
	if err := json.Unmarshal(plain, &sc); err != nil {
		return SealedCopy{}, nil, fmt.Errorf("sealed copy of %s: %w", t.ID, err)
	}
	return sc, tk, nil
}

// SealOutcome seals an answer run's result for the task's preparer.
func (k *Keys) SealOutcome(t store.Task, result []byte) ([]byte, error) {
	tk, err := k.ring.TaskKeys(t.KeyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return nil, err
	}
	return tk.Seal(sealing.OutcomeRecord, result)
}

// SealBatch seals, for the answer run of task t approved in a batch, the
// summaries the batch sentence names (SPEC §7): under the task's own keys
// (sealing.BatchRecord, bound to its id), so the run can rebuild the signed
// sentence while nothing a task shows is kept in clear. The door keeps the
// blob with the task's approval, which leaving approved drops.
func (k *Keys) SealBatch(t store.Task, summaries []string) ([]byte, error) {
	tk, err := k.ring.TaskKeys(t.KeyID, t.ProjectUUID, t.Owner, t.ID)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(summaries)
	if err != nil {
		return nil, err
	}
	return tk.Seal(sealing.BatchRecord, b)
}

// OpenBatch opens what SealBatch sealed for the task of tk.
func OpenBatch(tk *sealing.TaskKeys, blob []byte) ([]string, error) {
	plain, err := tk.Open(sealing.BatchRecord, blob)
	if err != nil {
		return nil, err
	}
	var summaries []string
	if err := json.Unmarshal(plain, &summaries); err != nil {
		return nil, err
	}
	return summaries, nil
}

// SealCredentials seals a project's credentials under the master key.
func (k *Keys) SealCredentials(projectUUID string, creds []byte) (uint32, []byte, error) {
	return k.ring.Seal(sealing.ProjectCredentials, projectUUID, creds)
}

// Credentials opens a project's sealed credentials (nil: it has none).
func (k *Keys) Credentials(p store.Project) ([]byte, error) {
	if p.Creds == nil {
		return nil, nil
	}
	return k.ring.Open(p.CredsKeyID, sealing.ProjectCredentials, p.UUID, p.Creds)
}

// sealedWebhook is what an owner's webhook row seals: a URL's path may
// itself be a secret, so the URL is sealed with the signing secret.
type sealedWebhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// SealWebhook seals an owner's webhook URL and secret under the master key.
func (k *Keys) SealWebhook(owner, url, secret string) (uint32, []byte, error) {
	b, err := json.Marshal(sealedWebhook{URL: url, Secret: secret})
	if err != nil {
		return 0, nil, err
	}
	return k.ring.Seal(sealing.WebhookSecret, owner, b)
}

// OpenWebhook opens an owner's webhook row: its URL and signing secret.
func (k *Keys) OpenWebhook(w store.Webhook) (url, secret string, err error) {
	plain, err := k.ring.Open(w.KeyID, sealing.WebhookSecret, w.Owner, w.Sealed)
	if err != nil {
		return "", "", err
	}
	var s sealedWebhook
	err = json.Unmarshal(plain, &s)
	return s.URL, s.Secret, err
}

// SealPush seals a device's push subscription under the master key, bound
// to the device.
func (k *Keys) SealPush(deviceID string, sub []byte) (uint32, []byte, error) {
	return k.ring.Seal(pushSubscription, deviceID, sub)
}

// OpenPush opens a device's push subscription: what SealPush sealed.
func (k *Keys) OpenPush(d store.Device) ([]byte, error) {
	return k.ring.Open(d.PushKeyID, pushSubscription, d.ID, d.Push)
}

// SealVAPID seals the VAPID private key for its row.
func (k *Keys) SealVAPID(raw []byte) (uint32, []byte, error) {
	return k.ring.Seal(vapidKey, vapidRow, raw)
}

// OpenVAPID opens the VAPID private key's row.
func (k *Keys) OpenVAPID(row store.PushKey) ([]byte, error) {
	return k.ring.Open(row.KeyID, vapidKey, vapidRow, row.Sealed)
}

// SessionTokenKeyID is the master key id new session tokens are made under:
// the current one.
func (k *Keys) SessionTokenKeyID() uint32 { return k.ring.Current() }

// SessionTokenMAC keys a session token's body for the door (inbox.TokenKeeper):
// HMAC-SHA256 under a key derived from master key keyID for this purpose
// alone (sealing's Keyring.MAC), so the door checks the tokens it made
// without holding the master key or anything that opens what it seals. An
// id the keyring lacks (a token of a retired key) is an error.
func (k *Keys) SessionTokenMAC(keyID uint32, body []byte) ([]byte, error) {
	sum, err := k.ring.MAC(keyID, sessionToken, "inbox", body)
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(sum)
}

// Receipt hashes are keyed (SPEC §11, amended): a receipt's input_sha256 and
// output_sha256 are HMAC-SHA256 under the receipt's key, never bare hashes
// of a small request or result that a reader of the database could test
// guesses against.
//
//   - A task's receipt (naming its id and hash) is keyed under the task's
//     receipt key, derived from its content key, so every device that opens
//     the task recomputes the input hash over the request it decrypted.
//   - A run's own receipt (kept in its row) is keyed under a random key
//     sealed under the master key in the same row, purged with it.
//   - An idempotent call's body hash is keyed under a key derived from the
//     master key, bound to the call's row, with the key id beside it.

// NewReceiptKey gives a run its own receipt key, and the key sealed (with
// the master key id) for its row.
func (k *Keys) NewReceiptKey(runID string) (*sealing.ReceiptKey, uint32, []byte, error) {
	rk := sealing.NewReceiptKey()
	keyID, sealed, err := k.ring.Seal(runReceiptKey, runID, rk.Bytes())
	if err != nil {
		return nil, 0, nil, fmt.Errorf("seal a run's receipt key: %w", err)
	}
	return rk, keyID, sealed, nil
}

// BodyHash is the keyed hash of an idempotent call's body under master key
// keyID, bound to the call's row.
func (k *Keys) BodyHash(keyID uint32, row string, body []byte) (string, error) {
	return k.ring.MAC(keyID, callBody, row, body)
}

// SealCallAnswer seals an idempotent call's answer for its row.
func (k *Keys) SealCallAnswer(row string, answer []byte) (uint32, []byte, error) {
	return k.ring.Seal(callAnswer, row, answer)
}

// OpenCallAnswer opens an idempotent call's answer.
func (k *Keys) OpenCallAnswer(keyID uint32, row string, blob []byte) ([]byte, error) {
	return k.ring.Open(keyID, callAnswer, row, blob)
}

// SignReceipt signs a run's receipt with the current run key, as JSON.
func (k *Keys) SignReceipt(rc origin.Receipt) ([]byte, error) {
	keyID := k.ring.Current()
	key, err := k.ring.RunKey(keyID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(origin.Sign(key, keyID, rc))
}

// RunKeys are the service's run public keys by key id, as
// GET /.well-known/countersign-run-key publishes them; Current is the one
// that signs now.
func (k *Keys) RunKeys() (current uint32, keys map[uint32]string, err error) {
	keys = map[uint32]string{}
	for _, id := range k.ring.IDs() {
		rk, err := k.ring.RunKey(id)
		if err != nil {
			return 0, nil, err
		}
		keys[id] = origin.FormatKey(rk.Public().(ed25519.PublicKey))
	}
	return k.ring.Current(), keys, nil
}

// purposes maps what the store calls each master-sealed secret to its
// sealing purpose.
var purposes = map[string]sealing.SecretPurpose{
	"project": sealing.ProjectCredentials,
	"webhook": sealing.WebhookSecret,
	"call":    callAnswer,
	"push":    pushSubscription,
	"vapid":   vapidKey,
}

// Has reports whether the keyring holds master key id.
func (k *Keys) Has(id uint32) bool { return k.ring.Has(id) }

// Rewrap seals a secret of the store's kind again under the current key
// (the same plaintext: a VAPID key stays the same key pair).
func (k *Keys) Rewrap(s store.Sealed) (uint32, []byte, error) {
	p, ok := purposes[s.Kind]
	if !ok {
		return 0, nil, fmt.Errorf("rewrap: unknown kind %q", s.Kind)
	}
	return k.ring.Rewrap(s.KeyID, p, s.Row, s.Blob)
}

// Rewraps reports whether Rewrap knows the store's kind of secret.
func Rewraps(kind string) bool {
	_, ok := purposes[kind]
	return ok
}

// OpenSample opens a sampled sealed row of any kind with the keyring.
func (k *Keys) OpenSample(s store.Sealed) error {
	switch s.Kind {
	case "run":
		_, err := k.ring.Open(s.KeyID, runReceiptKey, s.Row, s.Blob)
		return err
	case "task":
		f := strings.Split(s.Row, "\x00")
		if len(f) != 3 {
			return fmt.Errorf("a task's row id has %d parts", len(f))
		}
		tk, err := k.ring.TaskKeys(s.KeyID, f[0], f[1], f[2])
		if err != nil {
			return err
		}
		_, err = tk.Open(sealing.TaskRecord, s.Blob)
		return err
	}
	p, ok := purposes[s.Kind]
	if !ok {
		return fmt.Errorf("no purpose for %q", s.Kind)
	}
	_, err := k.ring.Open(s.KeyID, p, s.Row, s.Blob)
	return err
}

// CheckedKeys are the P-256 keys of the devices whose sign-in statements
// the key-holder checks itself, by device id: the wallet's signature over
// the sign-in sentence for this recipient (with a callback URL, if any,
// under the public origin), this account and this device key, and a
// deadline still ahead. A device that fails is left out: nothing is
// wrapped to it, and it sees its tasks locked.
func (k *Keys) CheckedKeys(devices []store.Device, now time.Time) map[string]*ecdh.PublicKey {
	keys := make(map[string]*ecdh.PublicKey, len(devices))
	for _, d := range devices {
		if pub, ok := k.checkDevice(d, now); ok {
			keys[d.ID] = pub
		}
	}
	return keys
}

func (k *Keys) checkDevice(d store.Device, now time.Time) (*ecdh.PublicKey, bool) {
	id := checkedID(d)
	if c, ok := k.checked.get(id); ok {
		return c.pub, now.Before(c.validUntil)
	}
	if err := approval.VerifyWalletJSON(strings.NewReader(d.Statement)); err != nil {
		return nil, false
	}
	var m approval.SignedMessage
	if err := json.Unmarshal([]byte(d.Statement), &m); err != nil {
		return nil, false
	}
	in, err := approval.ParseSignIn(m.Message)
	if err != nil || k.recipient == "" || m.Recipient != k.recipient || m.AccountID != d.Account || in.Account != d.Account ||
		m.CallbackURL != nil && !approval.CallbackUnder(k.origin, *m.CallbackURL) ||
		in.DeviceKey != d.DevicePubkey || m.PublicKey != d.SignerPubkey {
		return nil, false
	}
	pub, err := sealing.ParseP256PublicKey(d.DevicePubkey)
	if err != nil {
		return nil, false
	}
	k.checked.put(id, checkedDevice{pub: pub, validUntil: in.ValidUntil})
	return pub, now.Before(in.ValidUntil)
}

// checkedDevices remembers which device statements checked out, so that a
// statement is verified once rather than at every task wrapped to its
// device. What the check reads of a device row (its account, device key,
// signer key and statement) is hashed into the id, so a row that differs
// in any of them is checked afresh; the deadline, the one part that
// depends on the time, is compared again at every use. Only statements
// that checked out are kept (a valid wallet signature each), at most
// maxCheckedDevices of them.
type checkedDevices struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]checkedDevice
}

type checkedDevice struct {
	pub        *ecdh.PublicKey
	validUntil time.Time
}

// maxCheckedDevices bounds the statements remembered: far more than the
// devices signed in at once on one service, about 2 MB at most.
const maxCheckedDevices = 10000

// checkedID is the hash of what checkDevice reads of d, each part prefixed
// by its length.
func checkedID(d store.Device) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{d.Account, d.DevicePubkey, d.SignerPubkey, d.Statement} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var id [sha256.Size]byte
	h.Sum(id[:0])
	return id
}

func (c *checkedDevices) get(id [sha256.Size]byte) (checkedDevice, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[id]
	return d, ok
}

func (c *checkedDevices) put(id [sha256.Size]byte, d checkedDevice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCheckedDevices {
		// Dropping them all keeps the bound simple; each is checked again
		// at its next use.
		c.m = make(map[[sha256.Size]byte]checkedDevice)
	}
	c.m[id] = d
}
