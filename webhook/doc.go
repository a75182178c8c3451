// Package webhook tells an owner's own URL that something happened to one of
// their tasks (SPEC §10): the URL rules, the secret, the event bodies, their
// signatures, an SSRF-safe sender and the retry schedule. The outbox, job
// queue and HTTP routes call it; it imports nothing else of the service.
//
// # URLs
//
// ValidateURL accepts https URLs (http too with allowPrivate) of at most
// 2,048 bytes, made only of RFC 3986 characters, with no userinfo and no
// fragment. The host is a DNS name or an IP literal. Choices beyond the
// contract:
//
//   - A numeric host must be a canonical dotted quad (1.2.3.4) or a
//     bracketed IPv6 literal without a zone. Other spellings that browsers
//     and curl read as IPv4 (2130706433, 0x7f000001, 0x7f.1, 0177.0.0.1,
//     017700000001, 127.1, a trailing dot) are refused even when the
//     address is public: no legitimate receiver is written that way. The
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
//     IPv4 address: a receiver at a public IPv4 address can be named by
//     it. Literal addresses and dialed addresses are checked by the same
//     rules, so ValidateURL never accepts what the sender would refuse.
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
//     admitted.
//     Link-local (metadata), CGNAT and every other special range stay
//     refused.
//   - ValidateURL does not rewrite the URL. Callers store, show and hash
//     (for the "name the webhook" confirmation) the owner's string as given.
//
// # Secrets
//
// NewSecret makes "whsec_" + standard base64 (padded) of 32 random bytes,
// the form Standard Webhooks libraries take as is. DecodeSecret accepts
// that exact form only and returns the 32-byte key.
//
// # Events
//
// An Event's body is compact JSON with the contract's fields in the
// contract's order, no HTML escaping:
//
//	{"id","type","at","owner","preparer","project","task_id","kind","state","run"?,"failure_reason"?,"link"}
//
// "at" is the time of the state change in the contract's time format
// (2006-01-02T15:04:05Z, UTC). "state" is derived from the type: open,
// approved, done, failed, expired for task_created, task_approved,
// task_answered, task_failed and task_expired. "run" is required on
// task_approved and allowed on task_answered and task_failed;
// "failure_reason" is required on task_failed and only there. A notice has
// only task_created and task_expired events. A ping, which concerns no
// task, carries {"id","type","at","owner","link"}. Event ids are 1–64 of
// [A-Za-z0-9_-] (no '.', which separates the parts of the signed string);
// NewEventID makes "evt_" + 26 base32 characters.
//
// # Signatures
//
// Sign returns the body and its headers. X-Webhook-Signature is the
// lowercase hex HMAC-SHA256 of the body; webhook-signature is "v1," and
// the standard base64 HMAC-SHA256 of id "." timestamp "." body, where
// timestamp (webhook-timestamp) is the unix second the attempt starts. Both
// use the 32 decoded secret bytes as key. Each attempt is signed afresh,
// so a receiver's timestamp tolerance holds on retries; the event id stays
// the same, for deduplication.
//
// # Sending
//
// A Sender's dialer checks every resolved address at connect time (the
// net.Dialer's Control), so DNS answers that change between a check and the
// connection gain nothing. It uses no proxy, follows no redirect (a 3xx is
// a failed attempt), bounds an attempt at 15 s, reads at most 20 KiB
// (20,480 bytes) of the answer and 16 KiB of its headers, and asks for no
// compression. A 2xx is a delivery even if the rest of the answer never
// arrives. Errors are short sentences that never hold the URL (its path
// may carry a token), the secret or a signature. Deliver re-checks the URL,
// and refuses, as Final, an attempt number outside 1–8, an unusable URL or
// key, or an invalid event.
//
// # Retries
//
// Eight attempts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
// 10 h, each delay multiplied by a factor uniform in [0.8, 1.2) and
// rounded to the millisecond (NextAttempt takes the randomness). A
// Retry-After (seconds or HTTP date) on any failed answer can lengthen the
// next delay, never shorten it, up to 10 h (the schedule's longest gap). A
// 410 Gone ends the attempts: the receiver says the endpoint is gone for
// good. Every other failure, 4xx included, is retried.
package webhook
