// NEP-413 in the page: the borsh payload a wallet signs (SPEC §7) and its
// ed25519 check, so the page knows which form a wallet signed before it
// sends the signature on. The same bytes as the Go side and the contract's
// vectors.

import { concat, fromBase64, type Bytes } from "./crypto";
import { fromBase58 } from "./origin";

/** NEP-413's tag, 2^31 + 413, which no transaction can begin with. */
const TAG = 2147484061;

function u32(n: number): Bytes {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
}

function str(s: string): Bytes {
  const b = new TextEncoder().encode(s);
  return concat(u32(b.length), b);
}

/**
 * The bytes a wallet hashes and signs: tag, message, 32-byte nonce,
 * recipient and the optional callback URL, borsh-encoded.
 */
export function payload(message: string, nonce: Uint8Array, recipient: string, callbackUrl: string | null): Bytes {
  if (nonce.length !== 32) {
    throw new Error("a NEP-413 nonce is 32 bytes");
  }
  const cb = callbackUrl === null ? new Uint8Array([0]) : concat(new Uint8Array([1]), str(callbackUrl));
  return concat(u32(TAG), str(message), nonce, str(recipient), cb);
}

/** The 32 bytes of an "ed25519:<base58>" public key. */
export function ed25519Key(s: string): Bytes {
  if (!s.startsWith("ed25519:")) {
    throw new Error(`the wallet's key ${s} is not an ed25519 key`);
  }
  const b = fromBase58(s.slice("ed25519:".length));
  if (b.length !== 32) {
    throw new Error("the wallet's ed25519 key is not 32 bytes");
  }
  return b;
}

/** A signature as wallets write it: base64, or "ed25519:<base58>". */
export function signatureBytes(s: string): Bytes {
  const b = s.startsWith("ed25519:") ? fromBase58(s.slice("ed25519:".length)) : fromBase64(s);
  if (b.length !== 64) {
    throw new Error("the wallet's signature is not 64 bytes");
  }
  return b;
}

/** Whether signature signs the payload with publicKey. */
export async function verifies(publicKey: string, signature: string, message: string, nonce: Uint8Array, recipient: string, callbackUrl: string | null): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", ed25519Key(publicKey), { name: "Ed25519" }, false, ["verify"]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", payload(message, nonce, recipient, callbackUrl)));
  return crypto.subtle.verify({ name: "Ed25519" }, key, signatureBytes(signature), digest);
}
