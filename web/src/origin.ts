// The proof of origin in the browser (SPEC §11), as origin.Keys.Verify and
// the terminal's receipt check do it: a run's signed receipt, verified with
// the service's run keys (ed25519, WebCrypto), must name the task this
// device opened and hashed, its owner, agent, build and preparing run, and
// carry as input_sha256 the keyed MAC of the raw request decrypted.

import { fromBase64, type Bytes, type OpenedTask } from "./crypto";
import type { RunKeysAnswer } from "./wire.gen";

/** The receipt's members, in the order (sorted) its signed bytes hold them. */
const RECEIPT_MEMBERS = [
  "agent",
  "at",
  "build",
  "connector",
  "input_sha256",
  "operation",
  "output_sha256",
  "owner",
  "run",
  "task_hash",
  "task_id",
] as const;

/** Members left out of the signed bytes when empty (Go's omitempty). */
const OMITTED_WHEN_EMPTY = new Set(["task_hash", "task_id"]);

export type Receipt = Record<(typeof RECEIPT_MEMBERS)[number], string>;

/** A receipt that does not prove the task; message says why, in plain words. */
export class ReceiptError extends Error {
  override name = "ReceiptError";
}

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Decodes base58 (the Bitcoin alphabet), as github.com/mr-tron/base58 does. */
export function fromBase58(s: string): Bytes {
  let n = 0n;
  for (const c of s) {
    const d = B58.indexOf(c);
    if (d < 0) {
      throw new ReceiptError("not base58");
    }
    n = n * 58n + BigInt(d);
  }
  const out: number[] = [];
  while (n > 0n) {
    out.push(Number(n & 255n));
    n >>= 8n;
  }
  for (const c of s) {
    if (c !== "1") {
      break;
    }
    out.push(0);
  }
  return Uint8Array.from(out.reverse());
}

/** A run key's 32 bytes from "ed25519:<base58>". */
export function parseRunKey(s: string): Bytes {
  if (!s.startsWith("ed25519:")) {
    throw new ReceiptError("a run key is ed25519:<base58>");
  }
  const b = fromBase58(s.slice("ed25519:".length));
  if (b.length !== 32) {
    throw new ReceiptError("a run key is ed25519:<base58> of 32 bytes");
  }
  return b;
}

/** The run keys of GET /.well-known/countersign-run-key (as api.ts read it), by key id. */
export function runKeys(doc: RunKeysAnswer): Map<number, Bytes> {
  const keys = new Map<number, Bytes>();
  for (const [id, k] of Object.entries(doc.keys)) {
    if (/^(0|[1-9]\d{0,9})$/.test(id)) {
      keys.set(Number(id), parseRunKey(k));
    }
  }
  if (!keys.has(doc.key_id)) {
    keys.set(doc.key_id, parseRunKey(doc.public_key));
  }
  return keys;
}

/** A JSON string as Go's encoder writes it without HTML escaping. */
function goString(s: string): string {
  // Go reads a lone surrogate as U+FFFD and escapes U+2028 and U+2029.
  const well = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  return JSON.stringify(well).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** The exact bytes a receipt's signature covers (origin.Receipt.Bytes). */
export function receiptBytes(r: Receipt): Bytes {
  const parts: string[] = [];
  for (const k of RECEIPT_MEMBERS) {
    const v = r[k];
    if (v === "" && OMITTED_WHEN_EMPTY.has(k)) {
      continue;
    }
    parts.push(`"${k}":${goString(v)}`);
  }
  return new TextEncoder().encode(`{${parts.join(",")}}`) as Bytes;
}

/** Reads a signed receipt strictly: {receipt, key_id, signature}, nothing else. */
export function readSigned(raw: unknown): { receipt: Receipt; keyID: number; signature: Bytes } {
  const bad = new ReceiptError("the receipt is not a signed receipt");
  if (raw === null || raw === undefined) {
    throw new ReceiptError("the task has no receipt yet");
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw bad;
  }
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!["receipt", "key_id", "signature"].includes(k)) {
      throw bad;
    }
  }
  const rv = o["receipt"];
  const keyID = o["key_id"] ?? 0;
  const sig = o["signature"] ?? "";
  if (typeof rv !== "object" || rv === null || Array.isArray(rv) || typeof keyID !== "number" || !Number.isInteger(keyID) || keyID < 0 || keyID > 0xffffffff || typeof sig !== "string") {
    throw bad;
  }
  const r = {} as Receipt;
  for (const k of RECEIPT_MEMBERS) {
    r[k] = "";
  }
  for (const [k, v] of Object.entries(rv as Record<string, unknown>)) {
    if (!(RECEIPT_MEMBERS as readonly string[]).includes(k) || (typeof v !== "string" && v !== null)) {
      throw bad;
    }
    r[k as keyof Receipt] = v ?? "";
  }
  let signature: Bytes;
  try {
    signature = fromBase64(sig);
  } catch {
    throw new ReceiptError("the receipt's signature does not verify");
  }
  return { receipt: r, keyID, signature };
}

/** The run a task id names: <run id>-<n>. */
export function preparingRun(id: string): string | null {
  const i = id.lastIndexOf("-");
  if (i <= 0) {
    return null;
  }
  const n = id.slice(i + 1);
  if (!/^[1-9]\d*$/.test(n)) {
    return null;
  }
  return id.slice(0, i);
}

/**
 * Verifies the receipt of GET /inbox/tasks/{id}/origin for an opened task
 * against the run keys; resolves with the receipt when it proves the task,
 * rejects with a ReceiptError saying why not.
 */
export async function verifyReceipt(keys: Map<number, Bytes>, raw: unknown, task: OpenedTask): Promise<Receipt> {
  const e = task.envelope;
  const id = String(e["id"]);
  const run = preparingRun(id);
  if (run === null) {
    throw new ReceiptError("the task id does not name the run that prepared it");
  }
  const s = readSigned(raw);
  const pub = keys.get(s.keyID);
  if (!pub) {
    throw new ReceiptError(`the receipt is signed with run key ${s.keyID}, which the service does not publish`);
  }
  let ok = false;
  try {
    const key = await crypto.subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
    ok = await crypto.subtle.verify({ name: "Ed25519" }, key, s.signature, receiptBytes(s.receipt));
  } catch (err) {
    throw new ReceiptError("this browser cannot check an ed25519 signature: " + (err instanceof Error ? err.message : String(err)));
  }
  if (!ok) {
    throw new ReceiptError("the receipt's signature does not verify");
  }
  const r = s.receipt;
  if (r.task_id !== id || r.task_hash !== task.taskHash) {
    throw new ReceiptError("the receipt names another task or another hash");
  }
  if (r.owner !== e["owner"] || r.agent !== e["preparer"]) {
    throw new ReceiptError("the receipt names another owner or agent");
  }
  if (r.build !== e["build"] || r.run !== run) {
    throw new ReceiptError("the receipt names another build or run");
  }
  if (!(await task.key.receiptVerify(task.request, r.input_sha256))) {
    throw new ReceiptError("the receipt's input is not the request the task shows");
  }
  return r;
}
