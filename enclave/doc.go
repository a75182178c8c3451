// Package enclave is the side of the service that holds the master keyring
// (what the seed calls "the enclave"): it opens tasks — validating what they
// show, building the envelope, deriving the task's keys, sealing its copy and
// encrypting its content and files — and, later in a task's life, opens the
// sealed copy to carry out an approved answer. It also seals the owner's
// history (activity.go): an entry per write carried out and per task that
// ended, which only the owner's devices open.
//
// The owner-facing inbox never imports this package or sealing; it serves the
// ciphertext this package writes and reaches the keys only through the narrow
// interface it is given.
package enclave
