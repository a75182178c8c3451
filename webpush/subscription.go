package webpush

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"countersign/egress"
)

// Error is a refusal of a subscription, with a sentence for the owner that
// never repeats the endpoint or a key.
type Error struct{ sentence string }

func (e *Error) Error() string { return e.sentence }

// Refusals of a subscription.
var (
	ErrEndpointHost = &Error{"the push endpoint's host is not a known push service (Apple, Google, Mozilla or Microsoft)"}
	ErrEndpointPort = &Error{"the push endpoint must use the https port 443"}
	ErrP256dh       = &Error{"keys.p256dh must be the unpadded base64url of a 65-byte uncompressed P-256 public key"}
	ErrAuth         = &Error{"keys.auth must be the unpadded base64url of 16 bytes"}
)

// pushHosts are the push services' hosts an endpoint may name: Apple's
// (any subdomain of push.apple.com, its published rule), Google's FCM,
// Mozilla's autopush, and Microsoft's WNS (any subdomain of
// notify.windows.com). Others are refused unless the allow-list is widened
// for development and tests.
var pushHosts = []struct {
	name       string
	subdomains bool // any subdomain of name, and not name itself
	exact      bool // name itself
}{
	{"push.apple.com", true, true},
	{"fcm.googleapis.com", false, true},
	{"updates.push.services.mozilla.com", false, true},
	{"notify.windows.com", true, false},
}

// KnownHost reports whether host (a DNS name, any case) is a push service's
// host on the allow-list.
func KnownHost(host string) bool {
	host = strings.ToLower(host)
	for _, h := range pushHosts {
		if h.exact && host == h.name || h.subdomains && strings.HasSuffix(host, "."+h.name) {
			return true
		}
	}
	return false
}

// CheckEndpoint checks a subscription's endpoint and returns it parsed: the
// egress rules for URLs an outside party names (https, at most 2,048
// characters of RFC 3986's set, no userinfo or fragment, a valid host
// name), a host on the push services' allow-list and the port 443. With
// allowAny (development and tests only) any host the egress rules let
// through with private addresses allowed is taken, over http too.
func CheckEndpoint(raw string, allowAny bool) (*url.URL, error) {
	u, err := egress.CheckURL(raw, allowAny)
	if err != nil {
		var ue *egress.URLError
		if errors.As(err, &ue) {
			return nil, &Error{ue.Of("the push endpoint")}
		}
		return nil, &Error{"the push endpoint is not a valid URL"}
	}
	if allowAny {
		return u, nil
	}
	if p := u.Port(); p != "" && p != "443" {
		return nil, ErrEndpointPort
	}
	if !KnownHost(u.Hostname()) {
		return nil, ErrEndpointHost
	}
	return u, nil
}

// Subscription is a browser's push subscription as PushSubscription.toJSON
// gives it (expirationTime aside): the endpoint and the keys, unpadded
// base64url.
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// Target is a checked subscription, ready to send to.
type Target struct {
	Endpoint *url.URL
	// UA is the browser's (user agent's) key; Auth its auth secret.
	UA   *ecdh.PublicKey
	Auth []byte
}

// Check checks a subscription: its endpoint by CheckEndpoint, p256dh a
// P-256 point on the curve and auth 16 bytes, both unpadded base64url
// (padding is tolerated: some browsers wrote it).
func (s Subscription) Check(allowAny bool) (*Target, error) {
	u, err := CheckEndpoint(s.Endpoint, allowAny)
	if err != nil {
		return nil, err
	}
	p, err := decodeKey(s.Keys.P256dh)
	if err != nil || len(p) != pointSize || p[0] != 4 {
		return nil, ErrP256dh
	}
	ua, err := ecdh.P256().NewPublicKey(p)
	if err != nil {
		return nil, ErrP256dh
	}
	auth, err := decodeKey(s.Keys.Auth)
	if err != nil || len(auth) != AuthSize {
		return nil, ErrAuth
	}
	return &Target{Endpoint: u, UA: ua, Auth: auth}, nil
}

// Marshal is the subscription's JSON, to seal.
func (s Subscription) Marshal() ([]byte, error) { return json.Marshal(s) }

// decodeKey reads base64url, unpadded or padded (only as the encoding
// pads it).
func decodeKey(v string) ([]byte, error) {
	if strings.HasSuffix(v, "=") {
		return base64.URLEncoding.Strict().DecodeString(v)
	}
	return base64.RawURLEncoding.Strict().DecodeString(v)
}
