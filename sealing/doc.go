// Package sealing builds SPEC §9: the master keyring, the keys derived per
// task, and every sealed blob of a task, in formats a browser's WebCrypto
// opens with a non-extractable device key.
//
// It is used by the side of the service that holds the master keyring (the
// enclave), by the terminal inbox (a device opening its copy and sealing
// answers to a task's reply key) and by tests. The HTTP inbox never imports
// it.
//
// # What it builds
//
//   - [Keyring]: numbered 32-byte master keys, read from the
//     COUNTERSIGN_MASTER_KEY syntax by [ParseKeyring]. The highest id seals;
//     every id opens.
//   - [Keyring.TaskKeys]: per task, the seal key (XChaCha20-Poly1305, for the
//     sealed copy and the outcome, see [Record]) and the reply key (P-256).
//   - [ContentKey]: 32 random bytes per task; content and files are
//     AES-256-GCM blobs under it.
//   - [SealTo] / [OpenWith]: ECIES to a P-256 public key, for device copies
//     ([WrapContentKey]), the owner's answer, note and rejection reason
//     ([Purpose]).
//   - [Keyring.EntryKey]: the key of an entry of the owner's history (SPEC
//     §6), derived from the project key so the enclave can seal an entry
//     again when its task ends; the body is AES-256-GCM under it and the key
//     is wrapped to each device ([WrapEntryKey], purpose [Activity]).
//   - [ParseP256PublicKey] / [FormatP256PublicKey]: the "p256:" text form.
//   - [Keyring.Seal] / [Keyring.Open] / [Keyring.Rewrap]: secrets that belong
//     to a row rather than a task (project credentials, webhook secrets).
//   - [ReceiptKey]: the key of a run receipt's input and output hashes
//     (SPEC §11, amended), a task's from its content key
//     ([ContentKey.ReceiptKey]: HMAC-SHA256(content key, "receipt:v1")),
//     another run's random ([NewReceiptKey]); and [Keyring.MAC], the keyed
//     hash of a value kept in clear that must still be recognised (an
//     idempotent call's body).
//
// Every blob starts with the version byte 0x01. Every failure to open one
// wraps [ErrDecrypt] (or [ErrUnknownKey]); none returns partial plaintext.
// No error message holds key, plaintext, ciphertext or signature bytes.
//
// # Key ids and rotation
//
// Callers store the master key id beside every blob they keep. Rotation
// ("keys rotate") adds a key with [Keyring.AddKey], which seals from then
// on, and moves master-sealed secrets to it with [Keyring.Rewrap].
//
// A task's sealed copy, outcome, content, files and device copies are NOT
// rewrapped by rotation: the task's reply key, whose public half is in the
// envelope the owner signs, is derived from the key id that created the
// task, so re-deriving under a new id would change the task. That key id
// must stay in the keyring until the outcomes of all tasks it created are
// purged: after a rotation, at most 24 hours of task life, 30 minutes of an
// answer run and 30 days of kept outcome.
//
// # Choices where the contract is silent
//
//   - Keyring syntax: whitespace around the whole value and around each entry
//     is ignored (a key file may end with a newline); ids are decimal, 1 to
//     4294967295, without sign or leading zeros; a bare key (id 1) is allowed
//     only on its own; hex may be either case and is written lowercase. An
//     all-zero key, a repeated id and the same key under two ids are refused.
//   - [Keyring.String], %v, %#v and slog show only the ids and the current
//     id, e.g. "keyring{ids:[1 2], current:2}". The env syntax with the keys
//     comes only from the explicitly named [Keyring.Export], so that no
//     generic printer (fmt, slog, a flag's default, a third-party logger that
//     calls String) can ever print key bytes.
//   - Inputs to derivations are checked so that every derivation string,
//     AAD and info is unambiguous and a caller's mistake fails loudly instead
//     of deriving a key nobody can find again: task ids are 1 to 80 of
//     [a-z0-9-] (SPEC §12); project UUIDs are canonical lowercase; owners are
//     2 to 64 of [a-z0-9._-] (the NEAR account alphabet; full account-id
//     rules are the approval package's).
//   - The reply-key search tries every n from 0 to 2³²-1; n = 0 fails with
//     probability about 2⁻³².
//   - Master-sealed secrets: subkey = HMAC-SHA256(master, "secret:v1:{purpose}"),
//     blob = 0x01 ‖ nonce(24) ‖ ct ‖ tag (XChaCha20-Poly1305), AAD =
//     "countersign-secret:v1:{purpose}:{rowID}". A purpose is 1 to 64 of
//     [a-z0-9-]; a row id is any non-empty string (it comes last, so it may
//     hold ':'). The key id is not inside the blob: the caller stores it, as
//     for task blobs, and a wrong id fails to open. [Keyring.Rewrap] always
//     seals afresh, even when the id is already current.
//   - Keyed hashes of kept values ([Keyring.MAC]): subkey =
//     HMAC-SHA256(master, "mac:v1:{purpose}"), hash = hex
//     HMAC-SHA256(subkey, u32_be(len(rowID)) ‖ rowID ‖ msg). The row is bound
//     so that one value kept in two rows gives two hashes; the caller stores
//     the key id beside the hash and compares under that id.
//   - A task's outcome for its preparer (the result, the decrypted rejection
//     reason) is sealed with [TaskKeys.Seal] as [OutcomeRecord], bound to the
//     task; [SecretPurpose] is for secrets that outlive tasks. The summaries
//     of a batch approval, which the answer run of each task of the batch
//     needs to rebuild the signed sentence, are sealed to each task as
//     [BatchRecord] and dropped with its approval.
//   - The size limits of SPEC §12 are the callers' to enforce; this package
//     seals what it is given.
//   - Randomness: nonces, content keys, master keys and ephemeral keys come
//     from crypto/rand, and the exported API takes no reader (since Go 1.26,
//     crypto/ecdh ignores the reader it is given anyway). Fixed nonces and a
//     fixed ephemeral scalar are reachable only through unexported functions,
//     which the tests use to reproduce the contract's vectors byte for byte.
//
// testdata/vectors-local.json holds fixed-input vectors made by this package
// for what the contract's vectors do not cover (note and rejection blobs, a
// second file, an outcome record, a master-sealed secret, a history entry
// with its device copy); another
// implementation can be checked against them.
package sealing
