// The device's crypto (SPEC §8, §9, §11) with WebCrypto alone, byte for byte
// as the Go device does it (sealing/ecies.go, sealing/blob.go,
// sealing/receipt.go, device/task.go):
//
//   - a device key: a P-256 ECDH key pair whose private half is made
//     non-extractable, before any sign-in;
//   - a blob sealed to a P-256 public key (device copy, answer, note,
//     rejection reason): 0x01 ‖ ephemeral(65) ‖ nonce(12) ‖ ct ‖ tag, key =
//     HKDF-SHA256(ikm = ECDH x-coordinate, salt = ephemeral ‖ recipient,
//     info, 32 bytes), AES-256-GCM with AAD = info, info =
//     "countersign-task:v1:{purpose}:{id}";
//   - content and file blobs: 0x01 ‖ nonce(12) ‖ ct ‖ tag, AES-256-GCM under
//     the task's content key, AAD the task id or "{id}:file:{n}";
//   - the task hash: SHA-256 of the envelope's exact decrypted bytes, never
//     re-serialized; the supply hash of an approval;
//   - the receipt key, HMAC-SHA256(content key, "receipt:v1"), and the keyed
//     input hash it checks a receipt's input_sha256 with.
//
// Every failure to open is a CryptoError; its message never holds key,
// plaintext or ciphertext bytes.

import type { ActivityPage } from "./wire.gen";

/** Bytes backed by a plain ArrayBuffer, as WebCrypto takes them. */
export type Bytes = Uint8Array<ArrayBuffer>;

/**
 * What a blob sealed to a P-256 public key carries (part of its info and
 * AAD): "activity" is a history entry's key, wrapped to a device (the id
 * is then the entry's).
 */
export type Purpose = "device-copy" | "answer" | "note" | "rejection" | "activity";

/** A failure of this module: a blob that does not open, a malformed input. */
export class CryptoError extends Error {
  override name = "CryptoError";
}

/** The first byte of every blob. */
export const VERSION = 0x01;
/** Bytes of an uncompressed P-256 point. */
export const P256_POINT_SIZE = 65;
const GCM_NONCE_SIZE = 12;
const TAG_SIZE = 16;
const KEY_SIZE = 32;
/** What a blob sealed to a P-256 key adds to its plaintext. */
export const SEALED_OVERHEAD = 1 + P256_POINT_SIZE + GCM_NONCE_SIZE + TAG_SIZE;
/** What a content or file blob adds to its plaintext. */
export const GCM_OVERHEAD = 1 + GCM_NONCE_SIZE + TAG_SIZE;
/** The most sealed bytes the service takes for an answer, a note or a reason. */
export const MAX_SEALED_REPLY_BYTES = 8 << 10;
/** Task ids: 1–80 of [a-z0-9-] (SPEC §12). */
const TASK_ID = /^[a-z0-9-]{1,80}$/;

const subtle = (): SubtleCrypto => {
  const s = globalThis.crypto?.subtle;
  if (!s) {
    throw new CryptoError("this page needs WebCrypto, which browsers give only to https:// or loopback pages");
  }
  return s;
};

const utf8 = new TextEncoder();

function checkTaskID(id: string): void {
  if (!TASK_ID.test(id)) {
    throw new CryptoError("not a task id");
  }
}

function checkPurpose(p: string): asserts p is Purpose {
  if (p !== "device-copy" && p !== "answer" && p !== "note" && p !== "rejection" && p !== "activity") {
    throw new CryptoError("unknown purpose for a blob sealed to a public key");
  }
}

/** The HKDF info, also the AAD, of a blob for purpose p of task id. */
export function info(p: Purpose, taskID: string): Bytes {
  checkPurpose(p);
  checkTaskID(taskID);
  return utf8.encode(`countersign-task:v1:${p}:${taskID}`);
}

/** The AAD of a task's content blob: its id. */
export function contentAAD(taskID: string): Bytes {
  checkTaskID(taskID);
  return utf8.encode(taskID);
}

/** The AAD of file n (from 0) of a task: "{id}:file:{n}". */
export function fileAAD(taskID: string, n: number): Bytes {
  checkTaskID(taskID);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new CryptoError("file number is not a whole number from 0");
  }
  return utf8.encode(`${taskID}:file:${n}`);
}

// ---- bytes, hex and base64 ----

export function concat(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function toHex(b: Uint8Array): string {
  let s = "";
  for (const x of b) {
    s += x.toString(16).padStart(2, "0");
  }
  return s;
}

/** Decodes lowercase or uppercase hex of whole bytes. */
export function fromHex(s: string): Bytes {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) {
    throw new CryptoError("not hex");
  }
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  }
  return out;
}

const STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function encode64(b: Uint8Array, alphabet: string, pad: boolean): string {
  let s = "";
  for (let i = 0; i < b.length; i += 3) {
    const n = ((b[i] ?? 0) << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    const chars = i + 1 >= b.length ? 2 : i + 2 >= b.length ? 3 : 4;
    for (let j = 0; j < 4; j++) {
      s += j < chars ? alphabet.charAt((n >> (18 - 6 * j)) & 63) : pad ? "=" : "";
    }
  }
  return s;
}

// decode64 decodes canonical base64: characters of the alphabet only (no
// line breaks or spaces), padding exactly when pad, zero trailing bits.
function decode64(s: string, alphabet: string, pad: boolean): Bytes {
  const bad = () => new CryptoError("not canonical base64");
  let body = s;
  if (pad) {
    if (s.length % 4 !== 0) {
      throw bad();
    }
    body = s.replace(/={1,2}$/, "");
  }
  const rem = body.length % 4;
  if (rem === 1 || (pad && body.length !== s.length && rem === 0)) {
    throw bad();
  }
  const out = new Uint8Array(Math.floor((body.length * 6) / 8));
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (const c of body) {
    const v = alphabet.indexOf(c);
    if (v < 0) {
      throw bad();
    }
    acc = ((acc << 6) | v) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) {
    throw bad();
  }
  return out;
}

/** Standard base64 with padding, as the API's JSON carries bytes. */
export const toBase64 = (b: Uint8Array): string => encode64(b, STD, true);
/** Decodes canonical standard base64 with padding. */
export const fromBase64 = (s: string): Bytes => decode64(s, STD, true);
/** Unpadded base64url, as a "p256:" key is written. */
export const toBase64URL = (b: Uint8Array): string => encode64(b, URLSAFE, false);
/** Decodes canonical unpadded base64url. */
export const fromBase64URL = (s: string): Bytes => decode64(s, URLSAFE, false);

// ---- hashes ----

/** Lowercase hex SHA-256. */
export async function sha256Hex(b: Bytes): Promise<string> {
  return toHex(new Uint8Array(await subtle().digest("SHA-256", b)));
}

/** The task hash (SPEC §8): lowercase hex SHA-256 of the envelope's exact bytes. */
export const taskHash = (envelope: Bytes): Promise<string> => sha256Hex(envelope);

/**
 * The supply hash of an approval (SPEC §8): SHA-256 hex of
 * {"note":N,"supplied":S}, each the standard base64 of the sealed bytes sent,
 * or null for nothing sent (an empty array is a string, as in Go).
 */
export function supplyHash(note: Bytes | null, supplied: Bytes | null): Promise<string> {
  const part = (b: Bytes | null) => (b === null ? "null" : `"${toBase64(b)}"`);
  return sha256Hex(utf8.encode(`{"note":${part(note)},"supplied":${part(supplied)}}`));
}

// ---- P-256 keys ----

/** A P-256 key pair of this page: a private key and its public point. */
export interface KeyPair {
  privateKey: CryptoKey;
  /** The 65-byte uncompressed public point. */
  publicKey: Bytes;
}

const ECDH: EcKeyImportParams = { name: "ECDH", namedCurve: "P-256" };

/** Makes a device key: a P-256 ECDH pair whose private half never leaves WebCrypto. */
export async function generateDeviceKey(): Promise<KeyPair> {
  const pair = await subtle().generateKey(ECDH, false, ["deriveBits"]);
  const pub = new Uint8Array(await subtle().exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicKey: pub };
}

/**
 * Imports a P-256 private scalar d (32 bytes) with its public point, as a
 * non-extractable ECDH key. For keys that exist elsewhere (the contract's
 * vectors); a device makes its own with generateDeviceKey.
 */
export async function importP256PrivateKey(d: Bytes, publicPoint: Bytes): Promise<KeyPair> {
  if (d.length !== 32 || publicPoint.length !== P256_POINT_SIZE || publicPoint[0] !== 0x04) {
    throw new CryptoError("not a P-256 private scalar and uncompressed public point");
  }
  const jwk: JsonWebKey = {
    kty: "EC",
    crv: "P-256",
    d: toBase64URL(d),
    x: toBase64URL(publicPoint.subarray(1, 33)),
    y: toBase64URL(publicPoint.subarray(33)),
  };
  const privateKey = await subtle().importKey("jwk", jwk, ECDH, false, ["deriveBits"]);
  return { privateKey, publicKey: publicPoint.slice() };
}

/** The text form of a P-256 public key: "p256:" and unpadded base64url of its point. */
export function formatP256PublicKey(point: Uint8Array): string {
  if (point.length !== P256_POINT_SIZE || point[0] !== 0x04) {
    throw new CryptoError("not an uncompressed P-256 point");
  }
  return "p256:" + toBase64URL(point);
}

/**
 * Reads "p256:" and the canonical unpadded base64url of a 65-byte
 * uncompressed point on P-256, refusing anything else (as Go's
 * sealing.ParseP256PublicKey does). Returns the point's bytes.
 */
export async function parseP256PublicKey(s: string): Promise<Bytes> {
  if (!s.startsWith("p256:")) {
    throw new CryptoError('public key does not start with "p256:"');
  }
  const rest = s.slice(5);
  if (rest.length !== 87) {
    throw new CryptoError("public key is not 87 characters after the prefix");
  }
  let point: Bytes;
  try {
    point = fromBase64URL(rest);
  } catch {
    throw new CryptoError("public key is not canonical unpadded base64url of 65 bytes");
  }
  if (point.length !== P256_POINT_SIZE || point[0] !== 0x04) {
    throw new CryptoError("public key is not an uncompressed point on P-256");
  }
  await importPublicPoint(point, "public key is not an uncompressed point on P-256");
  return point;
}

async function importPublicPoint(point: Bytes, what: string): Promise<CryptoKey> {
  if (point.length !== P256_POINT_SIZE || point[0] !== 0x04) {
    throw new CryptoError(what);
  }
  try {
    return await subtle().importKey("raw", point, ECDH, true, []);
  } catch {
    throw new CryptoError(what);
  }
}

// ---- ECIES: blobs sealed to a P-256 public key ----

async function eciesKey(own: CryptoKey, peer: CryptoKey, salt: Bytes, inf: Bytes): Promise<CryptoKey> {
  const x = new Uint8Array(await subtle().deriveBits({ name: "ECDH", public: peer }, own, 256));
  const ikm = await subtle().importKey("raw", x, "HKDF", false, ["deriveBits"]);
  x.fill(0);
  const k = new Uint8Array(
    await subtle().deriveBits({ name: "HKDF", hash: "SHA-256", salt, info: inf }, ikm, KEY_SIZE * 8),
  );
  try {
    return await subtle().importKey("raw", k, "AES-GCM", false, ["encrypt", "decrypt"]);
  } finally {
    k.fill(0);
  }
}

function randomNonce(): Bytes {
  return crypto.getRandomValues(new Uint8Array(GCM_NONCE_SIZE));
}

/**
 * Seals plaintext for purpose p of task taskID to the P-256 public key
 * recipient ("p256:…" or its 65-byte point), with a fresh ephemeral key and
 * nonce: 0x01 ‖ ephemeral(65) ‖ nonce(12) ‖ ct ‖ tag.
 */
export async function sealTo(recipient: string | Bytes, p: Purpose, taskID: string, plaintext: Bytes): Promise<Bytes> {
  const eph = await subtle().generateKey(ECDH, false, ["deriveBits"]);
  const ephPub = new Uint8Array(await subtle().exportKey("raw", eph.publicKey));
  return sealToWith({ privateKey: eph.privateKey, publicKey: ephPub }, randomNonce(), recipient, p, taskID, plaintext);
}

/**
 * sealTo with a given ephemeral key pair and nonce, which must never be used
 * twice: for fixed-input vectors only.
 */
export async function sealToWith(
  eph: KeyPair,
  nonce: Bytes,
  recipient: string | Bytes,
  p: Purpose,
  taskID: string,
  plaintext: Bytes,
): Promise<Bytes> {
  const inf = info(p, taskID);
  if (nonce.length !== GCM_NONCE_SIZE) {
    throw new CryptoError("nonce is not 12 bytes");
  }
  const point = typeof recipient === "string" ? await parseP256PublicKey(recipient) : recipient;
  const peer = await importPublicPoint(point, "recipient is not a P-256 public key");
  const key = await eciesKey(eph.privateKey, peer, concat(eph.publicKey, point), inf);
  const ct = new Uint8Array(
    await subtle().encrypt({ name: "AES-GCM", iv: nonce, additionalData: inf, tagLength: 128 }, key, plaintext),
  );
  return concat(Uint8Array.of(VERSION), eph.publicKey, nonce, ct);
}

function checkFrame(blob: Uint8Array, header: number): void {
  if (blob.length < 1 + header + TAG_SIZE) {
    throw new CryptoError(`decryption failed: blob of ${blob.length} bytes is shorter than ${1 + header + TAG_SIZE}`);
  }
  if (blob[0] !== VERSION) {
    throw new CryptoError("decryption failed: unknown blob version");
  }
}

/**
 * Opens a blob sealed for purpose p of task taskID to own's public key. A
 * blob for another key, purpose or task, or a damaged one, throws.
 */
export async function openWith(own: KeyPair, p: Purpose, taskID: string, blob: Bytes): Promise<Bytes> {
  const inf = info(p, taskID);
  checkFrame(blob, P256_POINT_SIZE + GCM_NONCE_SIZE);
  const ephPub = blob.slice(1, 1 + P256_POINT_SIZE);
  const nonce = blob.slice(1 + P256_POINT_SIZE, 1 + P256_POINT_SIZE + GCM_NONCE_SIZE);
  const ct = blob.slice(1 + P256_POINT_SIZE + GCM_NONCE_SIZE);
  const eph = await importPublicPoint(ephPub, "decryption failed: ephemeral key is not an uncompressed P-256 point");
  let key: CryptoKey;
  try {
    key = await eciesKey(own.privateKey, eph, concat(ephPub, own.publicKey), inf);
  } catch {
    throw new CryptoError("decryption failed: key agreement");
  }
  return gcmOpen(key, nonce, ct, inf);
}

async function gcmOpen(key: CryptoKey, nonce: Bytes, ct: Bytes, aad: Bytes): Promise<Bytes> {
  try {
    return new Uint8Array(
      await subtle().decrypt({ name: "AES-GCM", iv: nonce, additionalData: aad, tagLength: 128 }, key, ct),
    );
  } catch {
    throw new CryptoError("decryption failed");
  }
}

// ---- content keys: content and file blobs, receipts ----

/**
 * A task's content key, held as non-extractable WebCrypto keys: AES-256-GCM
 * for the content and files, and the receipt key derived from it.
 */
export class ContentKey {
  private constructor(
    private readonly aes: CryptoKey,
    private readonly receipt: CryptoKey,
    private readonly receiptRaw: Bytes,
  ) {}

  /** The content key of its 32 raw bytes (a device copy's plaintext); zeroes raw. */
  static async fromBytes(raw: Bytes): Promise<ContentKey> {
    if (raw.length !== KEY_SIZE) {
      throw new CryptoError(`content key is ${raw.length} bytes, want ${KEY_SIZE}`);
    }
    try {
      const aes = await subtle().importKey("raw", raw, "AES-GCM", false, ["decrypt"]);
      const mac = await subtle().importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      // receipt key = HMAC-SHA256(content key, "receipt:v1") (SPEC §11)
      const rk = new Uint8Array(await subtle().sign("HMAC", mac, utf8.encode("receipt:v1")));
      const receipt = await subtle().importKey("raw", rk, { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify",
      ]);
      return new ContentKey(aes, receipt, rk);
    } finally {
      raw.fill(0);
    }
  }

  /** Opens the task's content blob: AES-256-GCM, AAD the task id. */
  openContent(taskID: string, blob: Bytes): Promise<Bytes> {
    const aad = contentAAD(taskID);
    checkFrame(blob, GCM_NONCE_SIZE);
    return gcmOpen(this.aes, blob.slice(1, 1 + GCM_NONCE_SIZE), blob.slice(1 + GCM_NONCE_SIZE), aad);
  }

  /** Opens file n (from 0) of the task: AAD "{id}:file:{n}". */
  openFile(taskID: string, n: number, blob: Bytes): Promise<Bytes> {
    const aad = fileAAD(taskID, n);
    checkFrame(blob, GCM_NONCE_SIZE);
    return gcmOpen(this.aes, blob.slice(1, 1 + GCM_NONCE_SIZE), blob.slice(1 + GCM_NONCE_SIZE), aad);
  }

  /** The receipt key's 32 bytes, HMAC-SHA256(content key, "receipt:v1"). */
  receiptKeyBytes(): Bytes {
    return this.receiptRaw.slice();
  }

  /** Lowercase hex HMAC-SHA256 of b under the receipt key: a receipt's keyed hash. */
  async receiptSum(b: Bytes): Promise<string> {
    return toHex(new Uint8Array(await subtle().sign("HMAC", this.receipt, b)));
  }

  /**
   * Whether sum (a receipt's input_sha256 or output_sha256) is the keyed
   * hash of b, checked in constant time by WebCrypto. A bare SHA-256 of b
   * does not match.
   */
  async receiptVerify(b: Bytes, sum: string): Promise<boolean> {
    if (!/^[0-9a-f]{64}$/.test(sum)) {
      return false;
    }
    return subtle().verify("HMAC", this.receipt, fromHex(sum), b);
  }
}

/** Opens a device copy of task taskID with the device key: the task's content key. */
export async function unwrapContentKey(device: KeyPair, taskID: string, blob: Bytes): Promise<ContentKey> {
  const raw = await openWith(device, "device-copy", taskID, blob);
  if (raw.length !== KEY_SIZE) {
    raw.fill(0);
    throw new CryptoError(`decryption failed: device copy holds ${raw.length} bytes, want ${KEY_SIZE}`);
  }
  return ContentKey.fromBytes(raw);
}

// ---- the content's plaintext ----

/** The two parts of a content blob's plaintext, as exact bytes. */
export interface Content {
  /** The envelope's exact bytes: its SHA-256 is the task hash. */
  envelope: Bytes;
  /** The agent's call body, exactly as sealed (the RAW request). */
  request: Bytes;
}

/**
 * Reads a content blob's plaintext as device.readContent does: exactly one
 * JSON object holding the strings "envelope" and "request", each once,
 * nothing else, in valid UTF-8. Returns the two strings' UTF-8 bytes.
 */
export function readContent(plain: Bytes): Content {
  const shape = () => new CryptoError('the content is not a JSON object of the strings "envelope" and "request"');
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(plain);
  } catch {
    throw new CryptoError("the content is not valid UTF-8");
  }
  let at = 0;
  const ws = () => {
    while (at < text.length && " \t\n\r".includes(text.charAt(at))) {
      at++;
    }
  };
  const expect = (c: string) => {
    ws();
    if (text.charAt(at) !== c) {
      throw shape();
    }
    at++;
  };
  const str = (): string => {
    ws();
    if (text.charAt(at) !== '"') {
      throw shape();
    }
    const start = at++;
    for (;;) {
      if (at >= text.length) {
        throw shape();
      }
      const c = text.charAt(at++);
      if (c === '"') {
        break;
      }
      if (c === "\\") {
        at++;
      }
    }
    try {
      const v: unknown = JSON.parse(text.slice(start, at));
      if (typeof v !== "string") {
        throw shape();
      }
      return v;
    } catch {
      throw shape();
    }
  };
  const got = new Map<string, string>();
  expect("{");
  ws();
  if (text.charAt(at) !== "}") {
    for (;;) {
      const k = str();
      expect(":");
      const v = str();
      if ((k !== "envelope" && k !== "request") || got.has(k)) {
        throw shape();
      }
      got.set(k, v);
      ws();
      if (text.charAt(at) === ",") {
        at++;
        continue;
      }
      break;
    }
  }
  expect("}");
  ws();
  const envelope = got.get("envelope");
  const request = got.get("request");
  if (at !== text.length || envelope === undefined || request === undefined) {
    throw shape();
  }
  // A lone surrogate escaped in JSON becomes U+FFFD here, as in Go.
  return { envelope: utf8.encode(envelope), request: utf8.encode(request) };
}

// ---- a listed task, opened and checked ----

/** The members of an inbox task (SPEC §6) that opening it reads. */
export interface TaskView {
  id: string;
  kind: string;
  preparer: string;
  project: string;
  project_uuid: string;
  thread: string;
  created_at: string;
  expires_at: string;
  reply_pubkey: string | null;
  task_hash: string;
  content?: string | null;
  device_copy?: string | null;
  locked?: boolean;
  /** The task's owner, and this account's part in it: "owner", or "approver" of another owner's task (SPEC §13 `approvers`). */
  owner?: string;
  role?: string;
  /** For a task several accounts approve: who may approve it (the owner first), who did, how many it needs. */
  approvals?: { approvers?: unknown } | null;
}

/** A task this device opened and checked against what the service listed. */
export interface OpenedTask {
  /** The parsed envelope, to show. */
  envelope: Record<string, unknown>;
  /** The envelope's exact bytes as decrypted. */
  envelopeBytes: Bytes;
  /** Lowercase hex SHA-256 of envelopeBytes. */
  taskHash: string;
  /** The agent's call body exactly as sealed. */
  request: Bytes;
  /** The task's content key (files, receipt). */
  key: ContentKey;
  /** The reply key's text form, null for a notice. */
  replyPubkey: string | null;
}

/** Why a task cannot be opened, in the words the page shows. */
export type OpenRefusal = "locked" | "not_waiting" | "unreadable" | "hash_mismatch" | "mismatch";

/** A task that cannot be opened, or must not be shown; reason says why. */
export class OpenError extends CryptoError {
  override name = "OpenError";
  constructor(
    readonly reason: OpenRefusal,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Opens a task the inbox listed, as device.Open does: unwraps the device
 * copy, opens the content, hashes the envelope's exact bytes against the
 * listed task_hash, and checks that the envelope is addressed to account
 * (or that the service lists account as an approver of the envelope's
 * owner's task: approverOf) and agrees with the listing on id, kind,
 * preparer, project, project_uuid, thread, reply_pubkey, created_at and
 * expires_at.
 */
export async function openTask(device: KeyPair, account: string, view: TaskView): Promise<OpenedTask> {
  if (!TASK_ID.test(view.id)) {
    throw new OpenError("unreadable", "the service listed a task whose id is not a task id");
  }
  const id = view.id;
  if (view.locked) {
    throw new OpenError("locked", `task ${id} is locked on this device`);
  }
  if (view.content == null) {
    throw new OpenError("not_waiting", `task ${id} is not waiting and shows nothing`);
  }
  if (view.device_copy == null) {
    throw new OpenError("locked", `task ${id} is locked on this device`);
  }
  let key: ContentKey;
  let content: Content;
  try {
    key = await unwrapContentKey(device, id, fromBase64(view.device_copy));
    content = readContent(await key.openContent(id, fromBase64(view.content)));
  } catch (e) {
    throw new OpenError("unreadable", `task ${id} cannot be read: ${e instanceof Error ? e.message : "?"}`);
  }
  const hash = await taskHash(content.envelope);
  if (hash !== view.task_hash) {
    throw new OpenError("hash_mismatch", `task ${id}: its content does not hash to the task hash shown; never approve it`);
  }
  let env: Record<string, unknown>;
  try {
    const v: unknown = JSON.parse(new TextDecoder().decode(content.envelope));
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      throw new Error("not an object");
    }
    env = v as Record<string, unknown>;
  } catch {
    throw new OpenError("unreadable", `task ${id}: the envelope is not a JSON object`);
  }
  if (env["owner"] !== account && !approverOf(view, env["owner"], account)) {
    throw new OpenError("mismatch", `task ${id} is addressed to another owner than this device's account`);
  }
  const listed: [string, unknown][] = [
    ["id", view.id],
    ["kind", view.kind],
    ["preparer", view.preparer],
    ["project", view.project],
    ["project_uuid", view.project_uuid],
    ["thread", view.thread],
    ["reply_pubkey", view.reply_pubkey],
    ["created_at", view.created_at],
    ["expires_at", view.expires_at],
  ];
  for (const [member, value] of listed) {
    const sealed = env[member] ?? null;
    if (sealed !== (value ?? null)) {
      throw new OpenError("mismatch", `task ${id}: the listed ${member} is not the envelope's`);
    }
  }
  let replyPubkey: string | null = null;
  if (typeof env["reply_pubkey"] === "string") {
    try {
      await parseP256PublicKey(env["reply_pubkey"]);
    } catch {
      throw new OpenError("unreadable", `task ${id}: the reply key is not a P-256 public key`);
    }
    replyPubkey = env["reply_pubkey"];
  }
  return { envelope: env, envelopeBytes: content.envelope, taskHash: hash, request: content.request, key, replyPubkey };
}

/**
 * Whether the service lists account as an approver of a task of another
 * owner (SPEC §13 `approvers`), as device.Open's approverOf reads it: the
 * listing names the envelope's owner, this account's part as "approver",
 * and this account among the task's approvers. Whom an owner's policy
 * names is the service's word (a device cannot read another owner's
 * project); what this device signs is its own account's approval, which
 * counts for nothing unless the owner's policy names it.
 */
export function approverOf(view: Pick<TaskView, "owner" | "role" | "approvals">, envelopeOwner: unknown, account: string): boolean {
  const listed = view.approvals?.approvers;
  return (
    typeof envelopeOwner === "string" &&
    view.owner === envelopeOwner &&
    view.role === "approver" &&
    Array.isArray(listed) &&
    listed.some((a) => a === account)
  );
}

/** A file of an opened task that is not the one its envelope names. */
export class FileMismatchError extends CryptoError {
  override name = "FileMismatchError";
}

/**
 * Opens file n of an opened task and checks it is the file the envelope
 * names (its number, size and SHA-256), as device.OpenFile does.
 */
export async function openTaskFile(task: OpenedTask, n: number, blob: Bytes): Promise<Bytes> {
  const id = String(task.envelope["id"]);
  const files = task.envelope["files"];
  const f: unknown = Array.isArray(files) ? files[n] : undefined;
  if (!Number.isSafeInteger(n) || n < 0 || typeof f !== "object" || f === null) {
    throw new FileMismatchError(`task ${id} has no file ${n}`);
  }
  const { size, sha256 } = f as { size?: unknown; sha256?: unknown };
  if (typeof size !== "number" || blob.length !== size + GCM_OVERHEAD) {
    throw new FileMismatchError(`file ${n} of task ${id} is not the size its envelope names`);
  }
  const plain = await task.key.openFile(id, n, blob);
  if (plain.length !== size || (await sha256Hex(plain)) !== sha256) {
    throw new FileMismatchError(`file ${n} of task ${id} does not have the SHA-256 its envelope names`);
  }
  return plain;
}

// ---- replies sealed to the task's reply key ----

/** A reply that would be larger, sealed, than the service takes. */
export class TooLargeError extends CryptoError {
  override name = "TooLargeError";
}

/**
 * Seals a reply (an answer's text or file bytes, a note, a rejection reason)
 * for purpose p to the task's reply key and holds the sealed bytes to the
 * service's limit of 8 KiB, as the Go device does.
 */
export async function sealReply(replyPubkey: string, p: Exclude<Purpose, "device-copy" | "activity">, taskID: string, plain: Bytes): Promise<Bytes> {
  if (plain.length + SEALED_OVERHEAD > MAX_SEALED_REPLY_BYTES) {
    throw new TooLargeError(
      `the ${p} is ${plain.length} bytes; the service takes at most ${MAX_SEALED_REPLY_BYTES - SEALED_OVERHEAD} bytes`,
    );
  }
  return sealTo(replyPubkey, p, taskID, plain);
}

/** Seals text (an answer, a note or a reason) as UTF-8 for purpose p. */
export function sealText(replyPubkey: string, p: Exclude<Purpose, "device-copy" | "activity">, taskID: string, text: string): Promise<Bytes> {
  return sealReply(replyPubkey, p, taskID, utf8.encode(text));
}

// ---- the owner's history ----

/**
 * An entry of the owner's history as GET /inbox/activity lists it (SPEC §6):
 * via "task" (a task the owner was asked or told) or "direct" (a write
 * carried out at once, not asked); sealed, base64 of the sealed {title,
 * summary, result: {text, url?}}; device_copy, base64 of the entry's key
 * wrapped to this device, null when this device has none.
 */
export type EntryView = NonNullable<ActivityPage["entries"]>[number];

/** What an entry's sealed body tells, opened and checked on this device. */
export interface EntryBody {
  /** The task's title (or what the connector told of a write carried out at once); may be "". */
  title: string;
  /** The connector's one line of what the write does; may be "". */
  summary: string;
  /** What the write did, in the connector's words (or a failure's sentence); "" when it told nothing. */
  result: string;
  /** Where to see it: an https address, or "". */
  url: string;
}

/** Why a history entry cannot be shown on this device. */
export class EntryError extends CryptoError {
  override name = "EntryError";
  constructor(
    readonly reason: "locked" | "unreadable",
    message: string,
  ) {
    super(message);
  }
}

/** Bounds of an entry's words, as the Go device holds them (device/activity.go). */
const ENTRY_TITLE_CHARS = 80;
const ENTRY_SUMMARY_CHARS = 200;
const ENTRY_RESULT_CHARS = 500;
const ENTRY_LINK_BYTES = 2048;

/**
 * Whether s is one line of text a page may show: no control, line or
 * paragraph separator, bidirectional control or zero-width character, at
 * most max characters, not blank.
 */
function shownLine(s: string, max: number): boolean {
  if ([...s].length > max || s.trim() === "") {
    return false;
  }
  return !/[\p{Cc}\u2028\u2029\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u061c]/u.test(s);
}

/** Whether s is an absolute https address with a host and no credentials. */
function httpsLink(s: string): boolean {
  if (utf8.encode(s).length > ENTRY_LINK_BYTES) {
    return false;
  }
  try {
    const u = new URL(s);
    return u.protocol === "https:" && u.hostname !== "" && u.username === "" && u.password === "";
  } catch {
    return false;
  }
}

/**
 * Opens a history entry as device.OpenEntry does: the entry's key from this
 * device's copy (info and AAD "countersign-task:v1:activity:{id}"), its
 * body opened under it (AES-256-GCM, 0x01 ‖ nonce(12) ‖ ct ‖ tag, the same
 * AAD), read as exactly {title, summary, result: {text, url?}} of strings,
 * each held to what a task may show (the result one line of at most 500
 * characters, the link https). EntryError says why not: "locked" when this
 * device holds no copy, else "unreadable".
 */
export async function openEntry(device: KeyPair, e: Pick<EntryView, "id" | "sealed" | "device_copy">): Promise<EntryBody> {
  if (!TASK_ID.test(e.id)) {
    throw new EntryError("unreadable", "the entry's id is malformed");
  }
  if (e.device_copy == null) {
    throw new EntryError("locked", `history entry ${e.id} is locked on this device`);
  }
  const inf = info("activity", e.id);
  let plain: Bytes;
  try {
    const raw = await openWith(device, "activity", e.id, fromBase64(e.device_copy));
    if (raw.length !== KEY_SIZE) {
      raw.fill(0);
      throw new CryptoError("the entry's copy is not a key");
    }
    let key: CryptoKey;
    try {
      key = await subtle().importKey("raw", raw, "AES-GCM", false, ["decrypt"]);
    } finally {
      raw.fill(0);
    }
    const blob = fromBase64(e.sealed ?? "");
    checkFrame(blob, GCM_NONCE_SIZE);
    plain = await gcmOpen(key, blob.slice(1, 1 + GCM_NONCE_SIZE), blob.slice(1 + GCM_NONCE_SIZE), inf);
  } catch (err) {
    throw new EntryError("unreadable", `history entry ${e.id} cannot be read: ${err instanceof Error ? err.message : "?"}`);
  }
  const bad = (what: string) => new EntryError("unreadable", `history entry ${e.id}: ${what}`);
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(plain));
  } catch {
    throw bad("the entry is not JSON");
  }
  const only = (o: unknown, keys: string[]): o is Record<string, unknown> =>
    typeof o === "object" && o !== null && !Array.isArray(o) && Object.keys(o).every((k) => keys.includes(k));
  if (!only(v, ["title", "summary", "result"]) || !only(v["result"] ?? {}, ["text", "url"])) {
    throw bad("the entry is not {title, summary, result}");
  }
  const r = (v["result"] ?? {}) as Record<string, unknown>;
  const str = (x: unknown): string | null => (x === undefined ? "" : typeof x === "string" ? x : null);
  const title = str(v["title"]);
  const summary = str(v["summary"]);
  const text = str(r["text"]);
  const url = str(r["url"]);
  if (title === null || summary === null || text === null || url === null) {
    throw bad("the entry is not {title, summary, result} of text");
  }
  if (title !== "" && !shownLine(title, ENTRY_TITLE_CHARS)) {
    throw bad("the entry's title is not a task's title");
  }
  if (summary !== "" && !shownLine(summary, ENTRY_SUMMARY_CHARS)) {
    throw bad("the entry's summary is not one line of shown text");
  }
  if (text !== "" && !shownLine(text, ENTRY_RESULT_CHARS)) {
    throw bad("the entry's result is not one line of shown text");
  }
  if (url !== "" && !httpsLink(url)) {
    throw bad("the entry's link is not an https URL");
  }
  return { title, summary, result: text, url };
}
