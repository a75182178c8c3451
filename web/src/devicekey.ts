// The device key kept in this browser (issue 12): made before the owner's
// first click, non-extractable, and kept in IndexedDB, which stores the
// CryptoKey itself (structured clone) and never its bytes: no script, this
// page's included, can read the private half out.

import { CryptoError, generateDeviceKey, type Bytes, type KeyPair } from "./crypto";

/** The IndexedDB database the page keeps its device key in. */
export const DEVICE_DB = "countersign";
const STORE = "device";
const RECORD = "key";

interface Stored {
  privateKey: CryptoKey;
  publicKey: Bytes;
}

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(new CryptoError("this browser's storage refused the device key: " + String(r.error)));
  });
}

function openDB(name: string): Promise<IDBDatabase> {
  const r = indexedDB.open(name, 1);
  r.onupgradeneeded = () => {
    r.result.createObjectStore(STORE);
  };
  return request(r);
}

async function inStore<T>(name: string, mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await openDB(name);
  try {
    const tx = db.transaction(STORE, mode);
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = tx.onerror = () => reject(new CryptoError("this browser's storage refused the device key"));
    });
    const v = await request(f(tx.objectStore(STORE)));
    await done;
    return v;
  } finally {
    db.close();
  }
}

function kept(v: unknown): KeyPair | null {
  const k = v as Partial<Stored> | undefined;
  if (!k || !(k.privateKey instanceof CryptoKey) || !(k.publicKey instanceof Uint8Array)) {
    return null;
  }
  return { privateKey: k.privateKey, publicKey: k.publicKey };
}

/** The device key this browser keeps, or null if it keeps none. */
export async function loadDeviceKey(db: string = DEVICE_DB): Promise<KeyPair | null> {
  return kept(await inStore(db, "readonly", (s) => s.get(RECORD)));
}

/**
 * The device key this browser keeps; when it keeps none, a new one is made
 * (generateDeviceKey: P-256 ECDH, non-extractable) and kept. Two tabs that
 * ask at once get the same key: the check and the write are one
 * transaction.
 */
export async function deviceKey(db: string = DEVICE_DB): Promise<KeyPair> {
  const have = await loadDeviceKey(db);
  if (have) {
    return have;
  }
  const fresh = await generateDeviceKey();
  const d = await openDB(db);
  try {
    return await new Promise<KeyPair>((resolve, reject) => {
      const tx = d.transaction(STORE, "readwrite");
      const store = tx.objectStore(STORE);
      let out = fresh;
      const get = store.get(RECORD);
      get.onsuccess = () => {
        const other = kept(get.result);
        if (other) {
          out = other;
        } else {
          const stored: Stored = { privateKey: fresh.privateKey, publicKey: fresh.publicKey };
          store.put(stored, RECORD);
        }
      };
      tx.oncomplete = () => resolve(out);
      tx.onabort = tx.onerror = () => reject(new CryptoError("this browser's storage refused the device key"));
    });
  } finally {
    d.close();
  }
}

/** Forgets the device key this browser keeps (after its device is withdrawn). */
export async function forgetDeviceKey(db: string = DEVICE_DB): Promise<void> {
  await inStore(db, "readwrite", (s) => s.delete(RECORD));
}
