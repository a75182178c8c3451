package webhook

import (
	"errors"
	"net/url"

	"countersign/egress"
)

// MaxURLLength is the longest webhook URL accepted, in bytes.
const MaxURLLength = egress.MaxURLLength

// Refusals of ValidateURL. Each is a short sentence that may be shown to the
// owner as it is; none repeats any part of the URL.
var (
	ErrURLEmpty       = errors.New("a webhook URL is required")
	ErrURLTooLong     = errors.New("the webhook URL is longer than 2,048 characters")
	ErrURLCharacter   = errors.New("the webhook URL contains a character that is not allowed in a URL")
	ErrURLFragment    = errors.New("the webhook URL must not have a fragment (#…)")
	ErrURLSyntax      = errors.New("the webhook URL is not a valid URL")
	ErrURLScheme      = errors.New("the webhook URL must use https")
	ErrURLNoHost      = errors.New("the webhook URL must name a host")
	ErrURLUserinfo    = errors.New("the webhook URL must not contain a user name or password")
	ErrURLPort        = errors.New("the webhook URL's port must be a number from 1 to 65535")
	ErrURLPublicPort  = errors.New("the webhook URL's port must be 443 or from 1024 to 65535")
	ErrURLHost        = errors.New("the webhook URL's host is not a valid host name or IP address")
	ErrURLNumericHost = errors.New("the webhook URL's IP address must be written as four decimal numbers (a.b.c.d)")
	ErrURLNotPublic   = errors.New("the webhook URL must name a public host")
)

// refusals are the webhook's sentences for egress's URL refusals.
var refusals = map[*egress.URLError]error{
	egress.ErrURLEmpty: ErrURLEmpty, egress.ErrURLTooLong: ErrURLTooLong, egress.ErrURLCharacter: ErrURLCharacter,
	egress.ErrURLFragment: ErrURLFragment, egress.ErrURLSyntax: ErrURLSyntax, egress.ErrURLScheme: ErrURLScheme,
	egress.ErrURLNoHost: ErrURLNoHost, egress.ErrURLUserinfo: ErrURLUserinfo, egress.ErrURLPort: ErrURLPort,
	egress.ErrURLPublicPort: ErrURLPublicPort, egress.ErrURLHost: ErrURLHost, egress.ErrURLNumericHost: ErrURLNumericHost,
	egress.ErrURLNotPublic: ErrURLNotPublic,
}

// ValidateURL checks a webhook URL the owner names and returns it parsed,
// by egress.CheckURL's rules (see the egress package): https only (http
// too with allowPrivate), no userinfo or fragment, a host that is a valid
// name or a public literal address, and so on. A name that passes may
// still resolve to a private address: the sender checks every address it
// connects to. The URL is not rewritten: callers store and hash the
// owner's string as given.
func ValidateURL(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := egress.CheckURL(raw, allowPrivate)
	if err != nil {
		var ue *egress.URLError
		if errors.As(err, &ue) && refusals[ue] != nil {
			return nil, refusals[ue]
		}
		return nil, ErrURLSyntax
	}
	return u, nil
}
