package approval

import "errors"

// Kind tells a caller which refusal an error is, so that it can answer with
// the right status: the HTTP layer maps Malformed to 400 (or 403 for an
// approval), InvalidSignature, NotFullAccess, UnknownKey and OutOfWindow to
// the refusal of the endpoint (invalid_statement / confirmation_required),
// ForeignCallback to invalid_statement whatever the endpoint, and
// UpstreamUnavailable to 503 upstream_unavailable.
type Kind uint8

// The kinds of refusal.
const (
	// Malformed: a piece of the request is not of the form it must have
	// (key, signature, nonce, account id, sentence, time).
	Malformed Kind = iota + 1
	// InvalidSignature: the signature does not verify over the expected
	// sentence, nonce, recipient and callback URL with the given key.
	InvalidSignature
	// NotFullAccess: the key is a key of the account, but a function-call
	// key; owner actions need a full-access key.
	NotFullAccess
	// UnknownKey: the key is not a key of the account (or the account does
	// not exist and is not the key's own implicit account).
	UnknownKey
	// OutOfWindow: a time in the sentence is outside the window its use
	// allows (too old, too far ahead, expired).
	OutOfWindow
	// UpstreamUnavailable: the chain could not be asked, or did not answer
	// in a form that can be trusted. Never a verdict on the key: retry later.
	UpstreamUnavailable
	// ForeignCallback: the signed callback URL is not under the service's
	// public origin (SPEC §7): the statement was made for another site.
	ForeignCallback
)

var kindNames = [...]string{
	Malformed:           "malformed",
	InvalidSignature:    "invalid signature",
	NotFullAccess:       "not full access",
	UnknownKey:          "unknown key",
	OutOfWindow:         "out of window",
	UpstreamUnavailable: "upstream unavailable",
	ForeignCallback:     "foreign callback",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown kind"
}

// Error is a refusal of this package. Its message is a plain sentence that is
// safe to show the caller: it never holds a key, a signature, a nonce or a
// signed message.
type Error struct {
	Kind Kind
	msg  string
	err  error // the cause, for the operator's log; may be nil
}

func (e *Error) Error() string {
	if e.msg == "" {
		return e.Kind.String()
	}
	return e.msg
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is an *Error of the same kind, so that
// errors.Is(err, approval.ErrUpstreamUnavailable) works for every error of
// that kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.msg == "" && t.err == nil && t.Kind == e.Kind
}

// Sentinels for errors.Is, one per kind.
var (
	ErrMalformed           = &Error{Kind: Malformed}
	ErrInvalidSignature    = &Error{Kind: InvalidSignature}
	ErrNotFullAccess       = &Error{Kind: NotFullAccess}
	ErrUnknownKey          = &Error{Kind: UnknownKey}
	ErrOutOfWindow         = &Error{Kind: OutOfWindow}
	ErrUpstreamUnavailable = &Error{Kind: UpstreamUnavailable}
	ErrForeignCallback     = &Error{Kind: ForeignCallback}
)

// KindOf returns the kind of the first *Error in err's chain, or 0 when there
// is none (and for a nil error).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func refuse(kind Kind, msg string) *Error { return &Error{Kind: kind, msg: msg} }

func refuseCause(kind Kind, msg string, cause error) *Error {
	return &Error{Kind: kind, msg: msg, err: cause}
}
