// Package inbox is the owner's side of the service: sign-ins and sessions,
// devices, task lists, files and origins, approvals checked at the door,
// rejections, acknowledgements and cancellations, unlock, mutes, the owner's
// webhook and the owner-signed projects.
//
// It works on the domain's task model (package countersign) and the store's
// transactions, and verifies wallet signatures with package approval. It never
// holds a key: whatever needs the master key (wrapping content keys to
// devices, sealing webhook secrets and project credentials) it asks of a
// Keeper or WebhookKeeper, which the enclave side implements. A test keeps
// sealing and the enclave out of its imports.
package inbox
