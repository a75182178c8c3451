package webhook

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"code.dny.dev/ssrf"
)

// MaxURLLength is the longest webhook URL accepted, in bytes. Receivers'
// URLs are short; the bound keeps stored settings and logs small.
const MaxURLLength = 2048

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

// Guards deciding which addresses may be connected to. ValidateURL checks
// literal addresses with the same guard the dialer applies to every resolved
// address, so the two can never disagree.
var (
	// publicGuard refuses every special-purpose address in the IANA
	// registries: loopback, private, link-local, shared (CGNAT),
	// documentation, benchmarking, reserved, multicast, broadcast, and every
	// IPv6 address outside 2000::/3 (ULA, link-local, IPv4-mapped and
	// IPv4-compatible forms, NAT64), plus 6to4 and Teredo.
	publicGuard = ssrf.New(ssrf.WithAnyPort())
	// devGuard is publicGuard that also lets loopback and private networks
	// through. Link-local (cloud metadata at 169.254.169.254), CGNAT and
	// the other special ranges stay refused.
	devGuard = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(
			netip.MustParsePrefix("127.0.0.0/8"),
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("172.16.0.0/12"),
			netip.MustParsePrefix("192.168.0.0/16"),
		),
		ssrf.WithAllowedV6Prefixes(
			netip.MustParsePrefix("::1/128"),
			netip.MustParsePrefix("fc00::/7"),
		),
	)
)

func guardFor(allowPrivate bool) *ssrf.Guardian {
	if allowPrivate {
		return devGuard
	}
	return publicGuard
}

// reservedTLDs are top-level names that never lead to a public host: the
// special-use names of RFC 6761, 6762, 7686, 8375 and 9476, the ICANN
// reserved "internal", and names widely used on private networks.
var reservedTLDs = map[string]bool{
	"localhost": true, "local": true, "internal": true, "localdomain": true,
	"test": true, "invalid": true, "onion": true, "arpa": true, "alt": true,
	"lan": true, "home": true, "corp": true, "intranet": true, "private": true,
}

// ValidateURL checks a webhook URL the owner names and returns it parsed.
// It refuses, with a sentence for the owner:
//   - an empty URL, one longer than MaxURLLength, or one with a character
//     outside RFC 3986's set (spaces, control characters, backslashes,
//     non-ASCII: internationalized names go in their xn-- form);
//   - a scheme other than https (http too when allowPrivate);
//   - userinfo ("user:pass@"), even an empty one, and any fragment;
//   - a port outside 1–65535 or written with leading zeros; without
//     allowPrivate, a port other than 443 below 1024;
//   - a host that is neither a DNS name (letters, digits and hyphens in
//     labels of at most 63, at most 253 in all, no trailing dot) nor an IP
//     literal, or an IPv6 literal with a zone;
//   - any numeric host not written as a canonical dotted quad, such as
//     2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1 or 127.1, even when the
//     address it stands for is public;
//   - a literal address that is not public (see the package comment);
//   - without allowPrivate, a single-label name and names under a reserved
//     top-level name such as localhost, local or internal.
//
// A name that passes may still resolve to a private address: the sender
// checks every address it connects to. The URL is not rewritten: callers
// store and hash the owner's string as given.
func ValidateURL(raw string, allowPrivate bool) (*url.URL, error) {
	switch {
	case raw == "":
		return nil, ErrURLEmpty
	case len(raw) > MaxURLLength:
		return nil, ErrURLTooLong
	}
	for i := 0; i < len(raw); i++ {
		if !urlByte(raw[i]) {
			return nil, ErrURLCharacter
		}
	}
	if strings.IndexByte(raw, '#') >= 0 {
		return nil, ErrURLFragment
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, ErrURLSyntax
	}
	if u.Scheme != "https" && (u.Scheme != "http" || !allowPrivate) {
		return nil, ErrURLScheme
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, ErrURLNoHost
	}
	if u.User != nil {
		return nil, ErrURLUserinfo
	}
	if err := checkPort(u, allowPrivate); err != nil {
		return nil, err
	}
	if err := checkHost(u, allowPrivate); err != nil {
		return nil, err
	}
	return u, nil
}

// urlByte reports whether b may appear in a URL (RFC 3986: unreserved,
// reserved and '%').
func urlByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", b) >= 0
}

func checkPort(u *url.URL, allowPrivate bool) error {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(u.Host, ":") {
			return ErrURLPort
		}
		return nil
	}
	if p[0] == '0' {
		return ErrURLPort
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return ErrURLPort
	}
	if !allowPrivate && n != 443 && n < 1024 {
		return ErrURLPublicPort
	}
	return nil
}

func checkHost(u *url.URL, allowPrivate bool) error {
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return ErrURLHost
		}
		return checkAddr(a, allowPrivate)
	}
	if endsInNumber(host) {
		if a, err := netip.ParseAddr(host); err == nil && a.Is4() && a.String() == host {
			return checkAddr(a, allowPrivate)
		}
		a, ok := parseLooseIPv4(host)
		switch {
		case !ok:
			return ErrURLHost
		case checkAddr(a, allowPrivate) != nil:
			return ErrURLNotPublic
		default:
			return ErrURLNumericHost
		}
	}
	name := strings.ToLower(host)
	if !validDNSName(name) {
		return ErrURLHost
	}
	if allowPrivate {
		return nil
	}
	last := strings.LastIndexByte(name, '.')
	if last < 0 || reservedTLDs[name[last+1:]] {
		return ErrURLNotPublic
	}
	return nil
}

func checkAddr(a netip.Addr, allowPrivate bool) error {
	if guardFor(allowPrivate).SafeAddr(a) != nil {
		return ErrURLNotPublic
	}
	return nil
}

// validDNSName reports whether name (lower case) is a syntactically valid
// host name: labels of 1–63 letters, digits and inner hyphens, at most 253
// bytes in all, no empty label (so no trailing dot).
func validDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// endsInNumber reports whether a host would be read as an IPv4 address by
// a WHATWG URL parser (browsers, and curl's inet_aton-style parsing): its
// last label, ignoring one trailing dot, is all decimal digits or a 0x hex
// number.
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" {
		return false
	}
	if allIn(last, "0123456789") {
		return true
	}
	return len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
		allIn(last[2:], "0123456789abcdefABCDEF")
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// parseLooseIPv4 reads host the way the WHATWG URL standard's IPv4 parser
// does: one to four dot-separated parts (one trailing dot allowed), each
// decimal, octal (leading 0) or hex (0x), the last part filling the
// remaining bytes. It is used only to tell the owner what such a spelling
// stands for; such hosts are always refused.
func parseLooseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}
