// Package egress is how the service reaches hosts that an owner names: the
// webhook receiver (SPEC §10) and a connector's API at a base URL or token
// URL from a project's credentials (SPEC §14, connector egress). It holds
// the URL rules, the public-address guard every connection goes through,
// and the building of request paths and queries from escaped parts. It
// imports nothing of the service, so the connector SDK's packages may use
// it.
//
// # URLs
//
// CheckURL accepts https URLs (http too with allowPrivate) of at most
// 2,048 bytes, made only of RFC 3986 characters, with no userinfo and no
// fragment. CheckBaseURL, for an API's base, also refuses a query and an
// empty, "." or ".." segment in the path. The host is a DNS name or an IP
// literal. Choices beyond the contract:
//
//   - A numeric host must be a canonical dotted quad (1.2.3.4) or a
//     bracketed IPv6 literal without a zone. Other spellings that browsers
//     and curl read as IPv4 (2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1,
//     017700000001, 127.1, a trailing dot) are refused even when the
//     address is public: no legitimate host is written that way. The
//     owner is told "must name a public host" when the spelling stands for
//     an address that is not public.
//   - Not public means anything in IANA's special-purpose registries, as
//     code.dny.dev/ssrf lists them, among them 0/8, 10/8, 100.64/10, 127/8, 169.254/16
//     (cloud metadata), 172.16/12, 192.0.0/24, 192.0.2/24, 192.88.99/24,
//     192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4
//     (with 255.255.255.255), and every IPv6 address outside 2000::/3 (::,
//     ::1, fc00::/7, fe80::/10, ff00::/8, ::ffff:0:0/96, ::/96, and all of
//     NAT64 64:ff9b::/96), plus 2001::/23 (Teredo and other IETF
//     assignments), 2001:db8::/32, 2002::/16 (all of 6to4) and 3fff::/20.
//     NAT64 and 6to4 are refused whole, not only when they embed a private
//     IPv4 address: a host at a public IPv4 address can be named by
//     it. Literal addresses and dialed addresses are checked by the same
//     rules, so CheckURL never accepts what the dialer would refuse.
//   - Names must be ASCII (internationalized names in their xn-- form),
//     labels of letters, digits and inner hyphens, no trailing dot, and,
//     without allowPrivate, at least two labels (a single label resolves
//     through local search domains) and not under localhost, local,
//     internal, localdomain, test, invalid, onion, arpa, alt, lan, home,
//     corp, intranet or private.
//   - Without allowPrivate the port is 443 or from 1024 to 65535: ports
//     below 1024 belong to other protocols (SMTP, SSH, …) that an HTTP
//     request must not be aimed at.
//   - With allowPrivate (development and tests only) http is allowed, the
//     port rule and the single-label and reserved-name rules are lifted
//     (localhost, a compose service name), and loopback (127/8, ::1) and
//     private (10/8, 172.16/12, 192.168/16, fc00::/7) addresses are
//     admitted. Link-local (metadata), CGNAT and every other special range
//     stay refused.
//
// Refusals are *URLError values whose sentences never repeat the URL (its
// path may carry a token); Of words one about the caller's subject.
//
// # Connections
//
// NewTransport and NewClient dial through the guard: the net.Dialer's
// Control checks every resolved address at connect time, so DNS answers
// that change between a check and the connection gain nothing (no
// rebinding window). A refused dial fails with ErrNotPublic. No proxy is
// used; a client follows a redirect only to the same scheme, host and
// port, and only as many as Options.Redirects (none by default).
// Options.AllowPrivate is the only relaxation, set by wiring for `serve
// --dev` and tests.
//
// # Paths and queries
//
// Path builds a request path from segments, each escaped whole, and
// refuses one that would be empty, "." or "..": no value can move a
// request to another resource, whatever normalises the path on the way.
// Query percent-encodes names and values as RFC 3986 and OpenAPI's default
// query style (form, not allowReserved) require.
package egress
