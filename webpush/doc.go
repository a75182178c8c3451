// Package webpush sends Web Push messages (SPEC §10) with the
// standard library alone: RFC 8030's push protocol, RFC 8291's message
// encryption with RFC 8188's aes128gcm content coding (ECDH P-256, HKDF,
// AES-128-GCM) and RFC 8292's VAPID (an ES256 JWT). Besides the standard
// library it imports only egress, whose guarded transport every push goes
// through.
//
// # Subscriptions
//
// A Subscription is what a browser's PushSubscription.toJSON gives:
// endpoint and keys {p256dh, auth}. Check refuses, with sentences that
// never repeat the endpoint or a key: an endpoint that fails egress's URL
// rules (https, at most 2,048 characters, no userinfo or fragment, a valid
// host), whose host is not a push service's (any subdomain of
// push.apple.com, fcm.googleapis.com, updates.push.services.mozilla.com,
// any subdomain of notify.windows.com) or whose port is not 443; a p256dh
// that is not a P-256 point on the curve, 65 bytes uncompressed; an auth
// that is not 16 bytes. The allow-list is lifted only by allowAny, for
// development and tests (a fake push service on loopback).
//
// # Messages
//
// Encrypt makes one aes128gcm record for the subscription's key and auth
// secret with a fresh ephemeral key and salt: salt(16) ‖ rs(4, 4096) ‖
// idlen(1, 65) ‖ keyid(the ephemeral public key) ‖ AES-128-GCM of the
// payload and the delimiter 0x02, no padding. A payload is at most
// MaxPlaintext (3,993) bytes. A one-byte payload makes a 104-byte body.
//
// # VAPID
//
// A Key is the service's ECDSA P-256 key pair. Each push carries
// Authorization: vapid t=<JWT>, k=<public key>, the JWT signed with
// {"aud": the endpoint's origin, "exp": now + 12 h, "sub": the operator's
// contact, mailto: or https}.
//
// # Sending
//
// Send posts the body with Content-Encoding: aes128gcm, TTL (whole
// seconds, at most 24 h), Urgency and Topic, through egress's guard (each
// resolved address checked when dialed, no proxy, no redirect followed),
// within 15 s, reading at most 1 KB of the answer. Its Outcome: Delivered
// (2xx); Gone for 404, 410 and any other 4xx but 408, 413 and 429 (the
// caller deletes the subscription); Retry for those three, 5xx, a
// redirect or no answer; Unsendable when it was refused before sending.
package webpush
