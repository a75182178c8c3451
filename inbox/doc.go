// Package inbox is the owner's side of the service: sign-ins and sessions,
// devices, task lists, files and origins, approvals checked at the door,
// rejections, acknowledgements and cancellations, unlock, mutes, the owner's
// webhook and the owner-signed projects.
//
// It works on the domain's task model (package countersign) and the store's
// transactions, and verifies wallet signatures with package approval. It never
// holds a key: whatever needs the master key (wrapping content keys to
// devices, sealing webhook secrets and project credentials, the tag of a
// session token) it asks of a Keeper, WebhookKeeper or TokenKeeper, which
// the enclave side implements. A test keeps sealing and the enclave out of
// its imports.
//
// Owners' statements are checked for this deployment: its recipient (by
// default the public origin's host) and, for a signed callback URL, its
// public origin (SPEC §7). Session tokens carry a tag, so one the service
// did not make is refused before the store is asked (SPEC §6).
package inbox
