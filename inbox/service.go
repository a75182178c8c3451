package inbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/store"
)

// Service is the owner's side of the service ("the door"): sessions and
// devices, the task list and approvals. It stores and serves ciphertext only
// and never holds the master key; what needs the key it asks of the Keeper.
type Service struct {
	store    store.Port[doorTx]
	keeper   Keeper
	tokens   TokenKeeper
	webhooks WebhookKeeper
	// webhookPrivate admits loopback and private webhook URLs (development
	// and tests only).
	webhookPrivate bool
	// push seals devices' push subscriptions and knows the VAPID key (nil:
	// no push); pushAny admits endpoints on any host (development and
	// tests only).
	push      PushKeeper
	pushAny   bool
	catalogue Catalogue
	keys      approval.KeyChecker
	// origin is the public origin, canonical; recipient the NEP-413
	// recipient (SPEC §7).
	origin    string
	recipient string
	now       func() time.Time
	log       *slog.Logger
}

// Config is what a Service is built from.
type Config struct {
	Store store.Store
	// Keeper does what needs the master key.
	Keeper Keeper
	// Tokens keys session tokens (nil: a key of this Service alone, whose
	// tokens no other process and no restart accepts; for tests).
	Tokens TokenKeeper
	// Webhooks seals, shows and pings owners' webhooks.
	Webhooks WebhookKeeper
	// WebhookAllowPrivate admits loopback and private webhook URLs
	// (development and tests only).
	WebhookAllowPrivate bool
	// Push seals push subscriptions and gives the VAPID key (nil: the
	// service sends no pushes).
	Push PushKeeper
	// PushAllowAnyEndpoint admits push endpoints on any host, over http and
	// on loopback and private addresses too (development and tests only).
	PushAllowAnyEndpoint bool
	// Catalogue tells which connectors there are and reads their policies.
	Catalogue Catalogue
	// Keys answers whether a wallet key may act for an account (NEAR RPC, or
	// approval.OffChecker for implicit accounts only).
	Keys approval.KeyChecker
	// PublicURL is the service's public origin: a callback URL an owner
	// signs must be under it, and its host is the default recipient.
	PublicURL string
	// Recipient is the NEP-413 recipient every owner signature names
	// (empty: the public origin's host, SPEC §7).
	Recipient string
	Now       func() time.Time
	Logger    *slog.Logger
}

// NewService builds the owner's service. It panics when the public URL is
// not an origin, or when neither it nor a recipient is given: a service
// with no recipient could check no signature.
func NewService(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	var origin string
	if c.PublicURL != "" {
		var err error
		if origin, err = approval.PublicOrigin(c.PublicURL); err != nil {
			panic(fmt.Sprintf("inbox: the public URL %q: %v", c.PublicURL, err))
		}
	}
	if c.Tokens == nil {
		c.Tokens = newLocalTokens()
	}
	if c.Recipient == "" {
		if origin == "" {
			panic("inbox: a service needs its public URL (or a recipient)")
		}
		c.Recipient, _ = approval.RecipientOf(origin)
	}
	return &Service{store: doorPort(c.Store), keeper: c.Keeper, tokens: c.Tokens, webhooks: c.Webhooks, webhookPrivate: c.WebhookAllowPrivate,
		push: c.Push, pushAny: c.PushAllowAnyEndpoint, catalogue: c.Catalogue,
		keys: c.Keys, origin: origin, recipient: c.Recipient, now: c.Now, log: c.Logger}
}

// Recipient is the NEP-413 recipient owners sign for.
func (s *Service) Recipient() string { return s.recipient }

// claim is an owner signature of sentence by account, to check against this
// deployment's recipient and public origin.
func (s *Service) claim(account, sentence string, signed approval.Signed) approval.Claim {
	return approval.Claim{Account: account, Sentence: sentence, Recipient: s.recipient, Origin: s.origin, Signed: signed}
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Second) }

// rpcRetry is the wait a refusal names when the NEAR RPC could not be
// reached to check a signature's key.
const rpcRetry = 10 * time.Second

// storeErr turns an unreachable store into the owner's transient refusal,
// which still carries the store's error for the operator's log.
// approvalUsed is the refusal of an approval whose nonce was spent already.
const approvalUsed = "this approval was used already; sign a new one"

// usedAlready tells a transaction that spent a nonce used already as the
// refusal given (code and sentence); any other error stays as it is.
func usedAlready(err error, code countersign.Code, sentence string) error {
	if errors.Is(err, store.ErrSpent) {
		return fmt.Errorf("%w: %w", &countersign.Error{Code: code, Message: sentence}, err)
	}
	return err
}

func storeErr(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("%w: %w", &countersign.Error{Code: countersign.UpstreamUnavailable, Message: "the store is unavailable; try again shortly", RetryAfter: countersign.RetryShortly}, err)
	}
	return err
}

// mustExist refuses with the sentence missing, before any confirmation is
// checked or spent, when find reports that what it looks for is not there.
func (s *Service) mustExist(ctx context.Context, missing string, find func(tx doorTx) error) error {
	err := s.store.Tx(ctx, find)
	if errors.Is(err, store.ErrNotFound) {
		return &countersign.Error{Code: countersign.InvalidRequest, Message: missing}
	}
	return storeErr(err)
}

// signatureRefusal maps a refused owner signature onto the contract's codes:
// malformed pieces are invalid_request; a callback URL outside the public
// origin is invalid_statement (SPEC §7, whatever was signed); a signature
// that does not verify, or whose key may not act, is the given code
// (invalid_statement for a sign-in, confirmation_required for a
// confirmation or approval); an unreachable chain is upstream_unavailable.
func signatureRefusal(err error, refused countersign.Code) error {
	var msg string
	var ae *approval.Error
	if errors.As(err, &ae) {
		msg = ae.Error()
	}
	switch approval.KindOf(err) {
	case approval.Malformed:
		return countersign.Errorf(countersign.InvalidRequest, "%s", msg)
	case approval.ForeignCallback:
		return countersign.Errorf(countersign.InvalidStatement, "%s", msg)
	case approval.UpstreamUnavailable:
		return &countersign.Error{Code: countersign.UpstreamUnavailable, Message: "the NEAR RPC cannot be reached; try again shortly", RetryAfter: rpcRetry}
	case approval.InvalidSignature, approval.NotFullAccess, approval.UnknownKey, approval.OutOfWindow:
		return countersign.Errorf(refused, "%s", msg)
	}
	return err
}
