package egress

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength is the longest URL accepted, in bytes. The URLs an owner
// names are short; the bound keeps stored settings and logs small.
const MaxURLLength = 2048

// A URLError is why a URL was refused. Its sentence names no part of the
// URL, which may carry a token in its path.
type URLError struct{ rule string }

// Error is the refusal about "the URL".
func (e *URLError) Error() string { return e.Of("the URL") }

// Of is the refusal about subject, such as "the project's base_url".
func (e *URLError) Of(subject string) string { return subject + e.rule }

// Refusals of CheckURL and CheckBaseURL.
var (
	ErrURLEmpty       = &URLError{" is empty"}
	ErrURLTooLong     = &URLError{" is longer than 2,048 characters"}
	ErrURLCharacter   = &URLError{" contains a character that is not allowed in a URL"}
	ErrURLFragment    = &URLError{" must not have a fragment (#…)"}
	ErrURLSyntax      = &URLError{" is not a valid URL"}
	ErrURLScheme      = &URLError{" must use https"}
	ErrURLNoHost      = &URLError{" must name a host"}
	ErrURLUserinfo    = &URLError{" must not contain a user name or password"}
	ErrURLPort        = &URLError{"'s port must be a number from 1 to 65535"}
	ErrURLPublicPort  = &URLError{"'s port must be 443 or from 1024 to 65535"}
	ErrURLHost        = &URLError{"'s host is not a valid host name or IP address"}
	ErrURLNumericHost = &URLError{"'s IP address must be written as four decimal numbers (a.b.c.d)"}
	ErrURLNotPublic   = &URLError{" must name a public host"}
	ErrURLQuery       = &URLError{" must not have a query (?…)"}
	ErrURLPath        = &URLError{"'s path must not have empty, . or .. segments"}
)

// URLErrors are every refusal of CheckURL and CheckBaseURL.
var URLErrors = []*URLError{ErrURLEmpty, ErrURLTooLong, ErrURLCharacter, ErrURLFragment, ErrURLSyntax, ErrURLScheme,
	ErrURLNoHost, ErrURLUserinfo, ErrURLPort, ErrURLPublicPort, ErrURLHost, ErrURLNumericHost, ErrURLNotPublic,
	ErrURLQuery, ErrURLPath}

// reservedTLDs are top-level names that never lead to a public host: the
// special-use names of RFC 6761, 6762, 7686, 8375 and 9476, the ICANN
// reserved "internal", and names widely used on private networks.
var reservedTLDs = map[string]bool{
	"localhost": true, "local": true, "internal": true, "localdomain": true,
	"test": true, "invalid": true, "onion": true, "arpa": true, "alt": true,
	"lan": true, "home": true, "corp": true, "intranet": true, "private": true,
}

// CheckURL checks a URL an owner names and returns it parsed. It refuses,
// with a *URLError:
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
// A name that passes may still resolve to an address that is not public:
// the dialer checks every address it connects to. The URL is not
// rewritten: callers may store and hash the owner's string as given.
func CheckURL(raw string, allowPrivate bool) (*url.URL, error) {
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

// CheckBaseURL checks the base URL of an API, which request paths are
// appended to: CheckURL's rules, and no query, and a path without empty,
// "." or ".." segments (one trailing slash aside, which it drops). An
// escaped slash (%2F) in a segment is refused with the dot segments: it
// would move the boundaries of the paths built on it.
func CheckBaseURL(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := CheckURL(raw, allowPrivate)
	if err != nil {
		return nil, err
	}
	if u.ForceQuery || u.RawQuery != "" {
		return nil, ErrURLQuery
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p != "" {
		for _, seg := range strings.Split(p, "/")[1:] {
			plain, err := url.PathUnescape(seg)
			if err != nil || plain == "" || plain == "." || plain == ".." || strings.Contains(plain, "/") {
				return nil, ErrURLPath
			}
		}
	}
	out := *u
	out.Path, _ = url.PathUnescape(p) // each segment unescaped above
	out.RawPath = p
	return &out, nil
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
	if !Allowed(a, allowPrivate) {
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
