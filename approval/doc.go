// Package approval checks owners' signatures: NEP-413 signed sentences
// (sign-in, confirmation, approval), the keys that make them, and whether
// the chain lets those keys act for the account.
//
// Every owner action of the service goes through Verify: the claimed
// account, the exact sentence the service expects, the deployment's
// recipient and public origin, and the signed pieces (public key,
// signature, nonce, optional callback URL) in; the signer's key and the
// parsed nonce (for the caller to spend atomically) out, or an *Error whose
// Kind says which refusal it is.
//
// # One deployment's statements
//
// PublicOrigin gives a public URL's canonical origin (scheme and host
// lowercased, the scheme's default port dropped); RecipientOf its host, the
// default recipient (SPEC §7), so a signature made for one deployment names
// it and no other. CallbackUnder is the rule for a signed callback URL: the
// origin itself, or the origin followed by `/`, once the callback's scheme
// and host are lowercased and a default port in it dropped; Verify refuses
// any other (ForeignCallback) before it checks the signature.
//
// # Wire forms
//
// The signed bytes are u32_le(2^31 + 413) ‖ borsh({message, nonce [32]u8,
// recipient, callback_url Option<string>}); the wallet signs their SHA-256.
// A nil callback URL is borsh None; a pointer to "" is Some("") — a different
// payload.
//
// Public keys are `ed25519:<base58 of 32 bytes>` or `secp256k1:<base58 of
// the 64-byte uncompressed point, without 0x04>`; the prefix is required and
// lowercase, the base58 canonical, and a secp256k1 point must be on the
// curve. Signatures are accepted as base64 (standard or URL alphabet, with or
// without padding — wallets differ, and the bytes are what is checked) or as
// `<type>:<base58>` where the type must be the key's. An ed25519 signature
// is 64 bytes; a secp256k1 signature is 65 bytes r‖s‖v with v ∈ {0,1} and s
// in the lower half of the order, and it must recover to the given key.
// The nonce, by contrast, is accepted only as standard padded base64 of 32
// bytes, so one nonce has one text form.
//
// # Sentences
//
// SignIn, Confirmation and Approval build the contract's three sentences
// byte for byte, and ParseSignIn, ParseConfirmation and ParseApproval parse
// them strictly: a parsed sentence must rebuild to exactly the same text.
// Times are UTC `YYYY-MM-DDTHH:MM:SSZ`, whole seconds, years 1970–9999.
// Device keys are checked for form only (`p256:` + unpadded base64url of 65
// bytes starting 0x04). Choices where the contract is silent: device ids and
// project names in confirmation actions are 1–128 characters of
// [A-Za-z0-9._-]; task ids are 1–80 of [a-z0-9-] as the contract says.
//
// BatchApproval builds the batch sentence (2–10 tasks, each
// summary in the order of the tasks, LinesHash of their lines, at most
// 1,000 bytes: ErrBatchTooLong otherwise) and BatchPlan splits a client's
// tasks into batches that fit. ParseBatchApproval cannot split the
// summaries (a summary may hold "; "): it returns them as one text, and
// ParsedBatch.Matches compares a parsed sentence with the batch a caller
// expects.
//
// # Time windows
//
// CheckSignIn: valid_until strictly after now and at most now + 30 days + 10
// minutes. CheckConfirmation (confirmations and approvals at the door): `at`
// within [now − 10 min, now + 1 min], both ends included. "Good for 10
// minutes" is read as the signature's life counted from the time it names;
// accepting a time far ahead would let a skewed or dishonest clock stretch
// that life, so only one minute of skew is allowed ahead. CheckRun (the
// answer run re-verifying from the sealed task): `at` within [now − 30 min,
// now + 10 min] and `at` strictly before expires_at (an approval given in
// time is carried out even when its run starts after the expiry; the
// 30-minute rule bounds it).
//
// # Accounts and keys on chain
//
// ValidateAccountID applies NEAR's rules. A NEAR-implicit account is the 64
// lowercase hex of an ed25519 key; an ETH-implicit account is `0x` + the hex
// of the last 20 bytes of keccak256 of a secp256k1 key's 64-byte point.
//
// RPCChecker asks NEAR JSON-RPC `query` / `view_access_key` at finality
// `final`. "FullAccess" may act; a FunctionCall permission (or any other
// permission object) is KeyLimited and refused. A missing key is recognised
// in both of nearcore's shapes: a `result` carrying an `error` string
// ("access key … does not exist while viewing") and a structured HANDLER_ERROR
// whose cause is UNKNOWN_ACCESS_KEY or UNKNOWN_ACCOUNT. When the chain does
// not know the key and the account is the key's own implicit account, the
// checker asks `view_account`: only an implicit account that does not exist
// on chain yet is signed for by its own key (KeyImplicit); one that exists is
// governed by its keys on chain like any other account. Anything else — no
// connection, a timeout, a status other than 200, a body that is not a
// JSON-RPC 2.0 answer to the request, an unexpected error — is an error of
// kind UpstreamUnavailable, never a verdict on the key. Definite answers
// (including "unknown" and "limited") are cached for 5 minutes (clock
// injectable, at most 10,000 entries); failures are never cached. OffChecker
// (NEAR_RPC=off) accepts only an implicit account signed with its own key and
// refuses named accounts with a sentence saying so.
//
// # Wallets
//
// Wallet, LoadWallet and Wallet.Save read and write near-cli's key-file
// format {"account_id", "public_key", "private_key": "ed25519:<base58 of 64
// bytes>"} (a `secret_key` member is read too), written with mode 0600 and
// never over an existing file; a file its group or others may access is
// refused on load. Wallet.Sign returns the JSON wallets return from
// signMessage, with the request's message, recipient, nonce and callback URL
// alongside; VerifyWalletJSON checks such a document without asking the
// chain (the `nep413 verify` command).
//
// Error messages never contain keys, signatures, nonces or signed text.
package approval
