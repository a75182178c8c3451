// Package webhook tells an owner's own URL that something happened to one of
// their tasks (SPEC §10): the URL rules, the secret, the event bodies, their
// signatures, a sender that dials through the egress guard and the retry
// schedule. The outbox, job queue and HTTP routes call it; besides the domain
// it imports only egress.
//
// # URLs
//
// ValidateURL applies the egress package's URL rules (egress.CheckURL):
// https (http too with allowPrivate), at most 2,048 bytes of RFC 3986
// characters, no userinfo, no fragment, a host that is a valid name or a
// canonical literal address that is public, a port of 443 or from 1024
// (any with allowPrivate). Its refusals are the package's own sentences
// about "the webhook URL", which never repeat the URL. It does not rewrite
// the URL: callers store, show and hash (for the "name the webhook"
// confirmation) the owner's string as given.
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
// A Sender connects through egress's guarded transport: every resolved
// address is checked at connect time (the net.Dialer's Control), so DNS
// answers that change between a check and the connection gain nothing. It
// uses no proxy, follows no redirect (a 3xx is
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
