// The sandbox wallet `serve --dev` offers: a NEAR wallet for trying the
// service on one machine, offline. near-connect runs this code in a
// sandboxed iframe (an opaque origin: it cannot reach the inbox page's
// storage or DOM) and talks to it through window.selector. Its key is an
// ed25519 key it makes the first time, kept in near-connect's storage for
// it; its account is that key's NEAR-implicit account (64 hex characters),
// which the service admits with NEAR RPC off. It asks before it connects
// and before it signs, showing the whole of what it signs, and each ask can
// be cancelled (Cancel, or Esc): a cancelled ask signs nothing. It signs
// NEP-413 messages only: no transactions.

import { concat, toBase64, toHex, type Bytes } from "./crypto";
import { payload } from "./nep413";

interface Selector {
  ready(wallet: object): Promise<void>;
  storage: {
    get(key: string): Promise<string | null | undefined>;
    set(key: string, value: string): Promise<void>;
    remove(key: string): Promise<void>;
  };
  ui: { showIframe(): Promise<void>; hideIframe(): Promise<void> };
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

/** The wallet's look: its own, in the frame near-connect gives it. */
const STYLE = `
html body #root.ask { display: block !important; box-sizing: border-box; width: 100%; height: 100vh; overflow: auto; padding: 20px; background: #1a1a1a; text-align: left; }
html body #root.ask h1 { font-size: 20px; margin: 0 0 12px; }
html body #root.ask dl { margin: 0; }
html body #root.ask dt { font-weight: 600; color: #d1d1d1; margin-top: 10px; }
html body #root.ask dd { margin: 2px 0 0; font-family: ui-monospace, monospace; font-size: 14px; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-all; }
html body #root.ask .buttons { display: flex; gap: 12px; margin-top: 20px; flex-wrap: wrap; }
html body #root.ask button { font: inherit; font-size: 16px; padding: 10px 20px; border-radius: 10px; border: 2px solid #7fb0ff; cursor: pointer; }
html body #root.ask button.sign { background: #7fb0ff; color: #0d0d0d; }
html body #root.ask button.cancel { background: transparent; }
html body #root.ask button:focus-visible { outline: 3px solid #fff; outline-offset: 2px; }
html body #root.ask .hint { color: #b8b8b8; font-size: 14px; margin-top: 12px; }
`;

/** The owner cancelled in the wallet: nothing was signed. */
class Cancelled extends Error {}

/**
 * Shows one ask in the wallet's frame: a heading, what is asked (each value
 * whole, wrapped, as text), and the action's button beside Cancel. Resolves
 * when the owner chooses the action; rejects with Cancelled on Cancel or
 * Esc. Built with text nodes only.
 */
async function ask(heading: string, rows: [string, string][], action: string): Promise<void> {
  const root = document.getElementById("root") as HTMLElement;
  if (!document.getElementById("sandbox-style")) {
    const st = document.createElement("style");
    st.id = "sandbox-style";
    st.textContent = STYLE;
    document.body.append(st);
  }
  root.className = "ask";
  const make = <K extends keyof HTMLElementTagNameMap>(tag: K, text = ""): HTMLElementTagNameMap[K] => {
    const e = document.createElement(tag);
    e.textContent = text;
    return e;
  };
  const h = make("h1", heading);
  const dl = make("dl");
  for (const [k, v] of rows) {
    dl.append(make("dt", k), make("dd", v));
  }
  const ok = make("button", action);
  ok.className = "sign";
  const no = make("button", "Cancel");
  no.className = "cancel";
  const buttons = make("div");
  buttons.className = "buttons";
  buttons.append(ok, no);
  root.replaceChildren(h, dl, buttons, make("p", "Esc cancels: nothing is signed."));
  (root.lastChild as HTMLElement).className = "hint";
  // Listening before the frame shows: an Esc pressed as it appears cancels.
  let onKey: (ev: KeyboardEvent) => void = () => undefined;
  const answered = new Promise<void>((resolve, reject) => {
    ok.addEventListener("click", () => resolve());
    no.addEventListener("click", () => reject(new Cancelled("You cancelled in the sandbox wallet.")));
    onKey = (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        reject(new Cancelled("You cancelled in the sandbox wallet."));
      }
    };
    document.addEventListener("keydown", onKey);
  });
  answered.catch(() => undefined); // awaited below; a cancel before then is not unhandled
  const refocus = () => ok.focus();
  window.addEventListener("focus", refocus);
  try {
    await selector.ui.showIframe();
    ok.focus();
    await answered;
  } finally {
    document.removeEventListener("keydown", onKey);
    window.removeEventListener("focus", refocus);
    root.replaceChildren();
    await selector.ui.hideIframe();
  }
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

/** An approval sentence naming a summary (SPEC §7): its summary is group 1. */
const APPROVAL_WITH_SUMMARY = /^Approve in Countersign as [^ :]+: (.+)\. Task [a-z0-9-]{1,80} with hash [0-9a-f]{64} and supply [0-9a-f]{64}\. At \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.$/s;

const noTransactions = async (): Promise<never> => {
  throw new Error("The sandbox wallet signs messages only.");
};

void selector.ready({
  async signIn() {
    const a = await account();
    await ask("Connect the sandbox wallet?", [["Account", a.accountId]], "Connect");
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
    // An approval naming what approving does (SPEC §7) says it first, as
    // the sentence has it.
    const does = APPROVAL_WITH_SUMMARY.exec(p.message)?.[1];
    const rows: [string, string][] = does ? [["Approving does", does]] : [];
    await ask("Sign this sentence?", [...rows, ["Sentence", p.message], ["For", p.recipient], ["As", a.accountId]], "Sign");
    const k = await key();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", payload(p.message, new Uint8Array(p.nonce), p.recipient, null)));
    const sig = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, k.priv, digest));
    return { ...a, signature: toBase64(concat(sig)) };
  },
  signAndSendTransaction: noTransactions,
  signAndSendTransactions: noTransactions,
  signDelegateActions: noTransactions,
});
