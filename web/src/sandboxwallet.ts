// The sandbox wallet `serve --dev` offers: a NEAR wallet for trying the
// service on one machine, offline. near-connect runs this code in a
// sandboxed iframe (an opaque origin: it cannot reach the inbox page's
// storage or DOM) and talks to it through window.selector. Its key is an
// ed25519 key it makes the first time, kept in near-connect's storage for
// it; its account is that key's NEAR-implicit account (64 hex characters),
// which the service admits with NEAR RPC off. It asks before it signs, and
// it signs NEP-413 messages only: no transactions.

import { concat, toBase64, toHex, type Bytes } from "./crypto";
import { payload } from "./nep413";

interface Selector {
  ready(wallet: object): Promise<void>;
  storage: {
    get(key: string): Promise<string | null | undefined>;
    set(key: string, value: string): Promise<void>;
    remove(key: string): Promise<void>;
  };
  ui: { whenApprove(o: { title: string; button: string }): Promise<void> };
}

const selector = (window as unknown as { selector: Selector }).selector;

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58(b: Uint8Array): string {
  let n = 0n;
  for (const x of b) {
    n = n * 256n + BigInt(x);
  }
  let s = "";
  while (n > 0n) {
    s = ALPHABET[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const x of b) {
    if (x !== 0) {
      break;
    }
    s = "1" + s;
  }
  return s;
}

function fromBase64URL(s: string): Bytes {
  const t = atob(s.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((s.length + 3) % 4));
  return Uint8Array.from(t, (c) => c.charCodeAt(0));
}

/** Text for the iframe's prompt, which near-connect writes as markup. */
function text(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface Key {
  priv: CryptoKey;
  pub: Bytes;
}

let kept: Promise<Key> | null = null;

/** The wallet's key: the one kept, or a new one kept from now on. */
function key(): Promise<Key> {
  kept ??= (async () => {
    const stored = await selector.storage.get("key");
    if (stored) {
      const jwk = JSON.parse(stored) as JsonWebKey;
      const priv = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
      return { priv, pub: fromBase64URL(jwk.x ?? "") };
    }
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
    await selector.storage.set("key", JSON.stringify(jwk));
    return { priv: pair.privateKey, pub: new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)) };
  })();
  return kept;
}

async function account(): Promise<{ accountId: string; publicKey: string }> {
  const k = await key();
  return { accountId: toHex(k.pub), publicKey: "ed25519:" + base58(k.pub) };
}

const noTransactions = async (): Promise<never> => {
  throw new Error("The sandbox wallet signs messages only.");
};

void selector.ready({
  async signIn() {
    const a = await account();
    await selector.ui.whenApprove({ title: text(`Connect the sandbox wallet as ${a.accountId}?`), button: "Connect" });
    await selector.storage.set("signed-in", "1");
    return [a];
  },
  async signOut() {
    await selector.storage.remove("signed-in");
  },
  async getAccounts() {
    return (await selector.storage.get("signed-in")) ? [await account()] : [];
  },
  async signMessage(p: { message: string; recipient: string; nonce: Uint8Array }) {
    const a = await account();
    await selector.ui.whenApprove({ title: text(`Sign as ${a.accountId}, for ${p.recipient}: ${p.message}`), button: "Sign" });
    const k = await key();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", payload(p.message, new Uint8Array(p.nonce), p.recipient, null)));
    const sig = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, k.priv, digest));
    return { ...a, signature: toBase64(concat(sig)) };
  },
  signAndSendTransaction: noTransactions,
  signAndSendTransactions: noTransactions,
  signDelegateActions: noTransactions,
});
