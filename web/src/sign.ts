// What the owner's wallet signs (SPEC §7): the sentences, and the wallet's
// answers read back and checked against exactly what was asked.

import { fromBase64 } from "./crypto";
import type { SignInRequest } from "./wire.gen";

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

/**
 * The approval sentence (SPEC §7), exactly: with the task's summary (the
 * envelope's display.summary) when it has one, so the wallet shows what
 * approving does; without, for a task that has none.
 */
export function approvalSentence(account: string, taskID: string, taskHash: string, supply: string, at: string, summary = ""): string {
  if (summary !== "") {
    return `Approve in Countersign as ${account}: ${summary}. Task ${taskID} with hash ${taskHash} and supply ${supply}. At ${at}.`;
  }
  return `Approve in Countersign as ${account}: task ${taskID} with hash ${taskHash} and supply ${supply}. At ${at}.`;
}

/** The batch approval sentence (SPEC §7): n tasks of one project, each summary named, in order. */
export function batchSentence(account: string, project: string, summaries: string[], linesHash: string, at: string): string {
  return `Approve in Countersign as ${account}: ${summaries.length} tasks of ${project}: ${summaries.join("; ")}. Tasks ${linesHash}. At ${at}.`;
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
export function sessionBody(s: Pick<Statement, "account" | "devicePubkey" | "validUntil">, sig: Signature): SignInRequest {
  return { account_id: s.account, device_pubkey: s.devicePubkey, valid_until: s.validUntil, ...sig };
}

/** What a wallet must have signed: this sentence, for this recipient, with this nonce, as this account. */
export interface ToSign {
  account: string;
  sentence: string;
  recipient: string;
  /** 32 random bytes. */
  nonce: Uint8Array;
}

/**
 * A pasted answer as read: the key and signature it names, and the callback
 * URL it says was signed (null: none; undefined: it does not say).
 */
export interface Answer {
  publicKey: string;
  signature: string;
  callbackUrl: string | null | undefined;
}

/** The most of a pasted answer the page reads. */
export const MAX_ANSWER = 64 * 1024;

/** The members a wallet's answer may have; state is NEP-413's, unsigned and ignored. */
const MEMBERS = new Set(["accountId", "publicKey", "signature", "nonce", "message", "recipient", "callbackUrl", "state"]);

/**
 * Reads a wallet's pasted answer, as `countersign wallet sign` or near-cli
 * prints it: one JSON object of publicKey, signature and nonce (base64 of
 * 32 bytes, or an array of 32 byte values as JavaScript writes a
 * Uint8Array), with accountId, message, recipient, callbackUrl and state
 * when the wallet gives them; any other member is refused. The nonce must
 * be s.nonce; accountId, message and recipient, when given, must be s's.
 * The signature is not checked here (wallet.ts does).
 */
export function readAnswer(s: ToSign, text: string): Answer {
  if (text.length > MAX_ANSWER) {
    throw new Error("The wallet's answer is longer than 64 KiB.");
  }
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
  if (Object.keys(o).some((k) => !MEMBERS.has(k))) {
    throw new Error("The wallet's answer has a member other than accountId, publicKey, signature, nonce, message, recipient, callbackUrl and state.");
  }
  const str = (k: string): string => {
    const x = o[k];
    if (typeof x !== "string" || x === "") {
      throw new Error(`The wallet's answer has no ${k}.`);
    }
    return x;
  };
  // Members a wallet may leave out, or give as null.
  const given = (k: string): string | null => {
    const x = o[k];
    if (x === undefined || x === null) {
      return null;
    }
    if (typeof x !== "string") {
      throw new Error(`The wallet's ${k} is not text.`);
    }
    return x;
  };
  const account = given("accountId");
  if (account !== null && account !== s.account) {
    throw new Error(`The wallet signed as ${account}, not ${s.account}.`);
  }
  const message = given("message");
  if (message !== null && message !== s.sentence) {
    throw new Error("The wallet signed another sentence than the one shown here.");
  }
  const recipient = given("recipient");
  if (recipient !== null && recipient !== s.recipient) {
    throw new Error(`The wallet signed for the recipient ${recipient}, not ${s.recipient}.`);
  }
  if (!sameBytes(answerNonce(o["nonce"]), s.nonce)) {
    throw new Error("The wallet signed another nonce than the one shown here: sign the sentence again with the nonce shown.");
  }
  const cb = o["callbackUrl"];
  if (cb !== undefined && cb !== null && typeof cb !== "string") {
    throw new Error("The wallet's callbackUrl is not text.");
  }
  return { publicKey: str("publicKey"), signature: str("signature"), callbackUrl: cb };
}

/** A pasted nonce's 32 bytes. */
function answerNonce(n: unknown): Uint8Array {
  const bad = () => new Error("The wallet's nonce is not base64 of 32 bytes nor an array of 32 byte values.");
  if (n === undefined || n === null || n === "") {
    throw new Error("The wallet's answer has no nonce.");
  }
  if (Array.isArray(n)) {
    if (n.length !== 32 || !n.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      throw bad();
    }
    return Uint8Array.from(n as number[]);
  }
  if (typeof n !== "string") {
    throw bad();
  }
  let b: Uint8Array;
  try {
    b = fromBase64(n);
  } catch {
    throw bad();
  }
  if (b.length !== 32) {
    throw bad();
  }
  return b;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
