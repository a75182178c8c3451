// What the owner's wallet signs (SPEC §7): the sentences, and the wallet's
// answers read back and checked against exactly what was asked.

import { toBase64 } from "./crypto";

/** The sign-in sentence (SPEC §7), exactly. */
export function signInSentence(account: string, devicePubkey: string, validUntil: string): string {
  return `Sign in to Countersign as ${account}. Device key: ${devicePubkey}. Valid until ${validUntil}.`;
}

/** The confirmation sentence (SPEC §7), exactly. */
export function confirmationSentence(account: string, action: string, at: string): string {
  return `Confirm in Countersign as ${account}: ${action}. At ${at}.`;
}

/** A fresh NEP-413 nonce: 32 random bytes. */
export function newNonce(): Uint8Array {
  const n = new Uint8Array(32);
  crypto.getRandomValues(n);
  return n;
}

/** The approval sentence (SPEC §7), exactly. */
export function approvalSentence(account: string, taskID: string, taskHash: string, supply: string, at: string): string {
  return `Approve in Countersign as ${account}: task ${taskID} with hash ${taskHash} and supply ${supply}. At ${at}.`;
}

/** A NEAR account id as the contract reads it (the service checks it again). */
export const ACCOUNT = /^(?=.{2,64}$)(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+$/;

/** What one sign-in asks the wallet to sign. */
export interface Statement {
  account: string;
  devicePubkey: string;
  validUntil: string;
  sentence: string;
  recipient: string;
  nonce: string;
}

/** The shell command that signs a statement with `countersign wallet sign`. */
export function command(s: { sentence: string; recipient: string; nonce: string }): string {
  // Account ids, device keys, times, nonces and recipients carry no quote.
  const q = (v: string) => "'" + v.replaceAll("'", "'\\''") + "'";
  return `countersign wallet sign --wallet YOUR-WALLET.json --recipient ${q(s.recipient)} --nonce ${q(s.nonce)} --message ${q(s.sentence)}`;
}

/** A wallet's signature as the service reads it (SPEC §6, §7). */
export interface Signature {
  public_key: string;
  signature: string;
  /** Standard base64. */
  nonce: string;
  callback_url?: string;
}

/** The body of POST /inbox/session: the statement and its signature. */
export function sessionBody(s: Pick<Statement, "account" | "devicePubkey" | "validUntil">, sig: Signature): Record<string, string> {
  return { account_id: s.account, device_pubkey: s.devicePubkey, valid_until: s.validUntil, ...sig };
}

/**
 * Reads a wallet's answer (the JSON `countersign wallet sign` or near-cli
 * prints: accountId?, publicKey, signature, nonce, message, recipient,
 * callbackUrl?) and checks it answers this statement; returns the body of
 * POST /inbox/session.
 */
export function signInBody(s: Statement, text: string): Record<string, string> {
  return sessionBody(s, walletAnswer(s, text));
}

/** What a wallet must have signed: this sentence, for this recipient, as this account. */
export interface ToSign {
  account: string;
  sentence: string;
  recipient: string;
}

/**
 * Reads a wallet's pasted answer and checks it signs exactly s.sentence for
 * s.recipient as s.account; returns its public_key, signature, nonce (std
 * base64) and callback_url, as the service reads them.
 */
export function walletAnswer(s: ToSign, text: string): Signature {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error("The wallet's answer is not JSON.");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new Error("The wallet's answer is not a JSON object.");
  }
  const o = v as Record<string, unknown>;
  const str = (k: string): string => {
    const x = o[k];
    if (typeof x !== "string" || x === "") {
      throw new Error(`The wallet's answer has no ${k}.`);
    }
    return x;
  };
  if (str("message") !== s.sentence) {
    throw new Error("The wallet signed another sentence than the one shown here.");
  }
  if (str("recipient") !== s.recipient) {
    throw new Error(`The wallet signed for the recipient ${String(o["recipient"])}, not ${s.recipient}.`);
  }
  if (o["accountId"] !== undefined && o["accountId"] !== null && o["accountId"] !== s.account) {
    throw new Error(`The wallet signed as ${String(o["accountId"])}, not ${s.account}.`);
  }
  let nonce: string;
  const n = o["nonce"];
  if (Array.isArray(n)) {
    if (n.length !== 32 || !n.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      throw new Error("The wallet's nonce is not 32 bytes.");
    }
    nonce = toBase64(Uint8Array.from(n as number[]));
  } else {
    nonce = str("nonce");
  }
  const body: Signature = {
    public_key: str("publicKey"),
    signature: str("signature"),
    nonce,
  };
  const cb = o["callbackUrl"];
  if (typeof cb === "string") {
    body.callback_url = cb;
  } else if (cb !== undefined && cb !== null) {
    throw new Error("The wallet's callbackUrl is not text.");
  }
  return body;
}
