package inbox

import (
	"context"
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/store"
)

// Session ends, as a device's end reason.
const (
	EndSignedOut = "signed_out"
	EndReplaced  = "replaced"
	EndWithdrawn = "withdrawn"
	EndKeyGone   = "key_gone"
)

// KeyRecheck is how often a session's signer key is asked about on chain;
// KeyGoneChecks consecutive "gone" answers end the session.
const (
	KeyRecheck    = 10 * time.Minute
	KeyGoneChecks = 2
)

// TokenPrefix starts every session token.
const TokenPrefix = "os_"

// A session token is TokenPrefix and the unpadded base64url of
// u32_be(master key id) ‖ 32 random bytes ‖ a 16-byte tag: the first 16
// bytes of the TokenKeeper's MAC of the id and random bytes. A token whose
// tag does not check out was not made here: it is refused without asking
// the store, and so without costing anyone anything.
const (
	tokenRandom = 32
	tokenTag    = 16
	tokenBody   = 4 + tokenRandom
	tokenBytes  = tokenBody + tokenTag
)

// TokenKeeper keys session tokens: on the side that holds the master key,
// a MAC key derived from it per master key id. The door asks it for the
// MAC of each token it makes or is shown, and never holds the key.
type TokenKeeper interface {
	// SessionTokenKeyID is the master key id new tokens are made under.
	SessionTokenKeyID() uint32
	// SessionTokenMAC is the MAC (at least 16 bytes) of a token's body
	// under the token key of master key keyID; an id the keyring lacks is
	// an error.
	SessionTokenMAC(keyID uint32, body []byte) ([]byte, error)
}

// localTokens keys the tokens of a service given no TokenKeeper (tests):
// a random key of its own, so its tokens open no other service.
type localTokens struct{ key []byte }

func newLocalTokens() localTokens {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return localTokens{key: k}
}

func (l localTokens) SessionTokenKeyID() uint32 { return 1 }

func (l localTokens) SessionTokenMAC(keyID uint32, body []byte) ([]byte, error) {
	if keyID != 1 {
		return nil, errors.New("inbox: no such token key")
	}
	m := hmac.New(sha256.New, l.key)
	m.Write(body)
	return m.Sum(nil), nil
}

// SignInRequest is the body of POST /inbox/session.
type SignInRequest struct {
	AccountID    string  `json:"account_id"`
	DevicePubkey string  `json:"device_pubkey"`
	ValidUntil   string  `json:"valid_until"`
	PublicKey    string  `json:"public_key"`
	Signature    string  `json:"signature"`
	Nonce        string  `json:"nonce"`
	CallbackURL  *string `json:"callback_url,omitempty"`
}

// Session is a signed-in device. Token is set only in the answer to a
// sign-in: it is stored as its SHA-256 and never shown again.
type Session struct {
	Token      string    `json:"token,omitempty"`
	DeviceID   string    `json:"device_id"`
	AccountID  string    `json:"account_id"`
	ValidUntil time.Time `json:"-"`
	// DevicePubkey is the device's P-256 key.
	DevicePubkey string `json:"-"`
}

// SignIn verifies a sign-in statement and opens a session for the device.
// Nothing is written, and no nonce is spent, by a refused sign-in.
func (s *Service) SignIn(ctx context.Context, req SignInRequest) (Session, error) {
	now := s.clock()
	if err := approval.ValidateAccountID(req.AccountID); err != nil {
		return Session{}, countersign.Errorf(countersign.InvalidRequest, "account_id is not a NEAR account id")
	}
	if err := checkDeviceKey(req.DevicePubkey); err != nil {
		return Session{}, err
	}
	validUntil, err := approval.ParseTime(req.ValidUntil)
	if err != nil {
		return Session{}, countersign.Errorf(countersign.InvalidRequest, "valid_until must be YYYY-MM-DDTHH:MM:SSZ")
	}
	if err := approval.CheckSignIn(now, validUntil); err != nil {
		return Session{}, countersign.Errorf(countersign.InvalidStatement, "valid_until must be in the future and at most 30 days ahead")
	}
	sentence, err := approval.SignIn{Account: req.AccountID, DeviceKey: req.DevicePubkey, ValidUntil: validUntil}.Sentence()
	if err != nil {
		return Session{}, countersign.Errorf(countersign.InvalidRequest, "the sign-in statement cannot be built from these fields")
	}
	signed := approval.Signed{PublicKey: req.PublicKey, Signature: req.Signature, Nonce: req.Nonce, CallbackURL: req.CallbackURL}
	v, err := approval.Verify(ctx, s.keys, s.claim(req.AccountID, sentence, signed))
	if err != nil {
		return Session{}, signatureRefusal(err, countersign.InvalidStatement)
	}
	// The statement is kept in the wallet's own JSON shape, so the enclave
	// side can check it again before it wraps a content key to the device.
	stmt, err := json.Marshal(approval.SignedMessage{AccountID: req.AccountID, PublicKey: v.Key.String(),
		Signature: req.Signature, Nonce: req.Nonce, Message: sentence, Recipient: s.recipient, CallbackURL: req.CallbackURL})
	if err != nil {
		return Session{}, err
	}
	token, hash, err := s.newToken()
	if err != nil {
		return Session{}, err
	}
	dev := store.Device{
		ID: countersign.NewDeviceID(), Account: req.AccountID, DevicePubkey: req.DevicePubkey, SignerPubkey: v.Key.String(),
		TokenHash: hash, Statement: string(stmt), CreatedAt: now, ValidUntil: validUntil, KeyCheckedAt: now,
	}
	err = s.store.Tx(ctx, func(tx doorTx) error {
		if err := tx.LockOwner(ctx, req.AccountID); err != nil {
			return err
		}
		if err := tx.SpendNonce(ctx, req.AccountID, v.Nonce[:], validUntil.Add(approval.SignInSlack)); err != nil {
			return err
		}
		if err := tx.InsertDevice(ctx, dev); err != nil {
			return err
		}
		active, err := tx.ActiveDevices(ctx, req.AccountID, now)
		if err != nil {
			return err
		}
		for i := 0; i < len(active)-countersign.MaxDevicesPerAccount; i++ {
			if _, err := tx.EndDevice(ctx, active[i].ID, EndReplaced, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Session{}, storeErr(usedAlready(err, countersign.InvalidStatement, "this statement was used already; sign a new one"))
	}
	s.log.Info("device signed in", "account", req.AccountID, "device", dev.ID)
	// Tasks made before this device signed in open on it now.
	if s.keeper != nil {
		if _, err := s.keeper.Unlock(ctx, req.AccountID); err != nil {
			s.log.Warn("unlock after sign-in failed; the device can unlock later", "account", req.AccountID, "err", err)
		}
	}
	return Session{Token: token, DeviceID: dev.ID, AccountID: req.AccountID, ValidUntil: validUntil, DevicePubkey: dev.DevicePubkey}, nil
}

// checkDeviceKey refuses anything but a P-256 point in the contract's form.
func checkDeviceKey(s string) error {
	bad := countersign.Errorf(countersign.InvalidRequest, "device_pubkey must be p256: and the base64url of an uncompressed P-256 point")
	if approval.ValidateDeviceKey(s) != nil {
		return bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, approval.DeviceKeyPrefix))
	if err != nil {
		return bad
	}
	if _, err := ecdh.P256().NewPublicKey(raw); err != nil {
		return bad
	}
	return nil
}

// newToken makes a session token (and the hash the store keeps of it).
func (s *Service) newToken() (string, []byte, error) {
	b := make([]byte, tokenBody, tokenBytes)
	binary.BigEndian.PutUint32(b, s.tokens.SessionTokenKeyID())
	if _, err := rand.Read(b[4:]); err != nil {
		return "", nil, err
	}
	tag, err := s.tokens.SessionTokenMAC(binary.BigEndian.Uint32(b), b)
	if err != nil || len(tag) < tokenTag {
		return "", nil, fmt.Errorf("inbox: keying a session token: %v", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(append(b, tag[:tokenTag]...))
	return token, hashToken(token), nil
}

// madeHere reports whether token is a session token this service made: its
// form, and its tag under the master key id it names. It asks nothing of
// the store.
func (s *Service) madeHere(token string) bool {
	raw, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok || len(raw) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(raw)
	if err != nil || len(b) != tokenBytes {
		return false
	}
	tag, err := s.tokens.SessionTokenMAC(binary.BigEndian.Uint32(b), b[:tokenBody])
	return err == nil && len(tag) >= tokenTag && hmac.Equal(tag[:tokenTag], b[tokenBody:])
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

var errSessionRequired = countersign.Errorf(countersign.SessionRequired, "sign in to continue")

// Authenticate returns the session a token opens. A token this service did
// not make (its tag does not check out) is refused before the store is
// asked. A session whose signer key has not been asked about for
// KeyRecheck is rechecked on chain first; after KeyGoneChecks consecutive
// answers that the key is gone it ends. When the chain cannot be asked
// during a due recheck, the request is refused upstream_unavailable and
// the recheck is tried again on the next one.
func (s *Service) Authenticate(ctx context.Context, token string) (Session, error) {
	if !s.madeHere(token) {
		return Session{}, errSessionRequired
	}
	var dev store.Device
	err := s.store.Read(ctx, func(tx doorTx) (err error) {
		dev, err = tx.DeviceByToken(ctx, hashToken(token))
		return err
	})
	return s.session(ctx, dev, err)
}

// AuthenticateTask is Authenticate for a request on the task id: the task
// is read with the session, in the same round trip, and kept in the
// context returned for the request's own read of it (readTaskSeen), which
// then asks the store nothing more. Whether the task exists, or whose it
// is, is not told here: the request's own read checks that the session may
// see it, as it would have.
func (s *Service) AuthenticateTask(ctx context.Context, token, id string) (context.Context, Session, error) {
	if !countersign.ValidTaskID(id) {
		sess, err := s.Authenticate(ctx, token)
		return ctx, sess, err
	}
	if !s.madeHere(token) {
		return ctx, Session{}, errSessionRequired
	}
	var dev store.Device
	var r readWith
	err := s.store.Read(ctx, func(tx doorTx) (err error) {
		dev, r.task, r.seen, err = tx.DeviceWithTask(ctx, hashToken(token), id)
		return err
	})
	sess, err := s.session(ctx, dev, err)
	if err != nil {
		return ctx, Session{}, err
	}
	r.device, r.id = sess.DeviceID, id
	return context.WithValue(ctx, readWithKey{}, r), sess, nil
}

// readWith is a task read with the session of device, by AuthenticateTask.
type readWith struct {
	device, id string
	task       store.Task
	seen       store.Seen
}

type readWithKey struct{}

// session is the session dev, read with err, opens at the door.
func (s *Service) session(ctx context.Context, dev store.Device, err error) (Session, error) {
	now := s.clock()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Session{}, errSessionRequired
	case err != nil:
		return Session{}, storeErr(err)
	case dev.EndReason == EndReplaced:
		return Session{}, countersign.Errorf(countersign.SessionReplaced, "a sixth device signed in and retired this one; sign in again")
	case !dev.EndedAt.IsZero() || !now.Before(dev.ValidUntil):
		return Session{}, errSessionRequired
	}
	if now.Sub(dev.KeyCheckedAt) >= KeyRecheck {
		if err := s.recheckKey(ctx, dev, now); err != nil {
			return Session{}, err
		}
	}
	return Session{DeviceID: dev.ID, AccountID: dev.Account, ValidUntil: dev.ValidUntil, DevicePubkey: dev.DevicePubkey}, nil
}

func (s *Service) recheckKey(ctx context.Context, dev store.Device, now time.Time) error {
	key, err := approval.ParsePublicKey(dev.SignerPubkey)
	if err != nil {
		return err
	}
	status, err := s.keys.CheckKey(ctx, dev.Account, key)
	if err != nil {
		return signatureRefusal(err, countersign.SessionRequired)
	}
	gone := 0
	if !status.MayAct() {
		gone = dev.KeyGone + 1
	}
	return storeErr(s.store.Tx(ctx, func(tx doorTx) error {
		if gone >= KeyGoneChecks {
			if _, err := tx.EndDevice(ctx, dev.ID, EndKeyGone, now); err != nil {
				return err
			}
			s.log.Info("session ended: its wallet key left the account", "account", dev.Account, "device", dev.ID)
			return errSessionRequired
		}
		return tx.RecordKeyCheck(ctx, dev.ID, now, gone)
	}))
}

// SignOut ends this device's session.
func (s *Service) SignOut(ctx context.Context, sess Session) error {
	return storeErr(s.store.Tx(ctx, func(tx doorTx) error {
		_, err := tx.EndDevice(ctx, sess.DeviceID, EndSignedOut, s.clock())
		return err
	}))
}

// DeviceView is a device as its owner sees it.
type DeviceView struct {
	ID           string `json:"id"`
	DevicePubkey string `json:"device_pubkey"`
	SignerPubkey string `json:"signer_pubkey"`
	CreatedAt    string `json:"created_at"`
	ValidUntil   string `json:"valid_until"`
	This         bool   `json:"this"`
	// Push says whether the device has a push subscription.
	Push bool `json:"push"`
}

// Devices lists the owner's signed-in devices.
func (s *Service) Devices(ctx context.Context, sess Session) ([]DeviceView, error) {
	var active []store.Device
	err := s.store.Tx(ctx, func(tx doorTx) (err error) {
		active, err = tx.ActiveDevices(ctx, sess.AccountID, s.clock())
		return err
	})
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]DeviceView, 0, len(active))
	for _, d := range active {
		out = append(out, DeviceView{ID: d.ID, DevicePubkey: d.DevicePubkey, SignerPubkey: d.SignerPubkey,
			CreatedAt: d.CreatedAt.Format(countersign.TimeFormat), ValidUntil: d.ValidUntil.Format(countersign.TimeFormat), This: d.ID == sess.DeviceID,
			Push: d.Push != nil})
	}
	return out, nil
}

// WithdrawDevice ends another (or this) device's session with the owner's
// confirmation "withdraw the device {id}".
func (s *Service) WithdrawDevice(ctx context.Context, sess Session, id string, c Confirmation) error {
	var dev store.Device
	err := s.store.Tx(ctx, func(tx doorTx) (err error) {
		dev, err = tx.Device(ctx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || err == nil && (dev.Account != sess.AccountID || !dev.EndedAt.IsZero()) {
		return countersign.Errorf(countersign.InvalidRequest, "no such device is signed in")
	} else if err != nil {
		return storeErr(err)
	}
	return s.confirmed(ctx, sess.AccountID, approval.ActionWithdrawDevice(id), c, func(tx doorTx, _ approval.PublicKey) error {
		_, err := tx.EndDevice(ctx, id, EndWithdrawn, s.clock())
		return err
	})
}
