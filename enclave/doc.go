// Package enclave is the key-holder: the master keyring and the operations
// that need it (Keys). "The enclave" is the contract's name for the side
// of the service that holds the master key.
//
// The enclave side's services are packages beneath this one, each given a
// Keys and the store's transactions as the aggregates it touches: calls
// (agents' calls, grants, task opening), answers (answer runs), history
// (the owner's history, sealed), delivery (webhooks and pushes), sweeps,
// rotation and unlock. None of them holds the keyring. The tests in this
// directory drive the whole enclave side, wired as serve wires it, through
// servicetest's world.
//
// The owner-facing inbox never imports this package, its services or
// sealing; it serves the ciphertext they write and reaches the keys only
// through the narrow interfaces it is given.
package enclave
