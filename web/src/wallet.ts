// The owner's wallet in the page. Two doors:
//
//   - near-connect, with its manifest kept here (never fetched at run time)
//     and listing only wallets that sign NEP-413 messages. Each wallet's code
//     runs in a sandboxed iframe of an opaque origin, so it cannot reach this
//     page's IndexedDB (where the device key is) or its DOM. A wallet a
//     browser extension injects (near-connect's near-wallet-injected event)
//     is offered too.
//   - "Sign with another wallet": the exact sentence, recipient and nonce
//     shown as text, the wallet's JSON answer pasted back, read strictly:
//     the nonce shown and no other, and the sentence and recipient shown
//     when it names them.
//
// Either way the page checks the signature itself before sending it:
// MyNearWallet signs the callback URL when it redirects and not when it
// opens a popup, and near-connect does not say which happened, so the page
// checks both forms and sends callback_url exactly as the wallet signed it.
// A pasted answer that does not verify is refused in the page; nothing is
// sent.

import { NearConnector } from "@hot-labs/near-connect";
import type { NearWalletBase, WalletManifest } from "@hot-labs/near-connect/build/types";

import { toBase64 } from "./crypto";
import { button, el } from "./dom";
import { ed25519Key, signatureBytes, verifies } from "./nep413";
import { command, readAnswer, type Signature } from "./sign";

export type { Signature } from "./sign";

/** One signature the page asks of the owner's wallet. */
export interface SignRequest {
  account: string;
  sentence: string;
  recipient: string;
  /** 32 random bytes. */
  nonce: Uint8Array;
}

/** The owner declined in the wallet, or closed it: nothing was sent. */
export class Declined extends Error {}

/** No wallet is connected in this browser any more (near-connect forgot it). */
export class NotConnected extends Declined {}

/** Where the wallets' code is published: near-selector's repository at one commit. */
const SELECTOR = "https://raw.githubusercontent.com/hot-dao/near-selector/a5b64fc8e389b93dde9d207e31c08fd598914752/repository/";

/** A small letter icon as a data: URL, so the picker loads no image from elsewhere. */
function icon(letter: string, colour: string): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="${colour}"/><text x="32" y="43" font-family="sans-serif" font-size="30" font-weight="700" text-anchor="middle" fill="#fff">${letter}</text></svg>`;
  return "data:image/svg+xml;base64," + btoa(svg);
}

function wallet(id: string, name: string, website: string, executor: string, letter: string, colour: string, opens: string[]): WalletManifest {
  return {
    id,
    name,
    icon: icon(letter, colour),
    description: `${name}: signs NEP-413 messages.`,
    website,
    version: "1.0.0",
    executor,
    type: "sandbox",
    platform: {},
    features: {
      signMessage: true,
      signTransaction: false,
      signAndSendTransaction: false,
      signAndSendTransactions: false,
      signInWithoutAddKey: true,
      mainnet: true,
      testnet: true,
    },
    permissions: { storage: true, location: false, open: { allows: opens } },
  } as unknown as WalletManifest;
}

/**
 * The wallets offered: only wallets whose executors sign NEP-413 messages,
 * and only executors whose code cannot change under the page, since
 * near-connect runs it under the page's script nonce: each at one commit of
 * near-selector's repository (the sandbox wallet is served from the
 * bundle). Intear is not offered: its executor is published only at a
 * moving address and imports more code from Intear's site when it runs.
 * httpapi's page CSP names exactly the hosts these need (a test holds the
 * two together).
 */
export const WALLETS: readonly WalletManifest[] = [
  wallet("mynearwallet", "MyNearWallet", "https://mynearwallet.com", SELECTOR + "mnw.js", "M", "#2b6be6", ["https://app.mynearwallet.com"]),
  wallet("meteor-wallet", "Meteor Wallet", "https://wallet.meteorwallet.app", SELECTOR + "meteor.js", "M", "#6b3fd4", ["https://wallet.meteorwallet.app"]),
  wallet("hot-wallet", "HOT Wallet", "https://hot-labs.org/wallet", SELECTOR + "hotwallet.js", "H", "#d4532b", ["https://download.hot-labs.org", "https://hot-labs.org/wallet", "https://t.me/hot_wallet/app", "hotwallet://"]),
];

/** The NEAR RPC the wallets' code may ask, by network. */
export const RPC = { mainnet: ["https://rpc.mainnet.near.org"], testnet: ["https://rpc.testnet.near.org"] };

/** What the page is told by its shell: the network, and whether the service offers its sandbox wallet. */
export interface WalletOptions {
  network: "mainnet" | "testnet";
  /** The per-response CSP nonce, for the scripts of the wallets' iframes. */
  nonce: string;
  /** The executor of `serve --dev`'s sandbox wallet, on this origin; null when not offered. */
  sandbox: string | null;
}

/** The connected wallet's account and name. */
export interface Connected {
  account: string;
  name: string;
}

/** near-connect, made when first needed (so a page that never signs in with it loads nothing). */
export class Wallets {
  private connector: NearConnector | null = null;
  /** The page's addresses while near-connect ran: a wallet may sign any of them as its callback. */
  private readonly hrefs = new Set<string>();

  constructor(private readonly opts: WalletOptions) {}

  private get c(): NearConnector {
    this.hrefs.add(location.href);
    if (!this.connector) {
      const wallets = [...WALLETS];
      if (this.opts.sandbox) {
        const w = wallet("countersign-sandbox", "Sandbox wallet", location.origin, this.opts.sandbox, "S", "#5b616b", []);
        wallets.unshift(w);
      }
      this.connector = new NearConnector({
        manifest: { wallets, version: "1.0.0" },
        network: this.opts.network,
        providers: RPC,
        features: { signMessage: true },
        autoConnect: false,
        footerBranding: null,
        cspNonce: this.opts.nonce,
      });
      focusWalletFrames();
    }
    return this.connector;
  }

  /**
   * The wallets offered, each with its name, icon and description (the
   * manifest kept here, the sandbox wallet under --dev, and any wallet a
   * browser extension injects); onChange is told when the list changes.
   */
  async offered(onChange?: () => void): Promise<WalletManifest[]> {
    const c = this.c;
    await c.whenManifestLoaded;
    if (onChange) {
      c.on("selector:walletsChanged", onChange);
    }
    return c.availableWallets.map((w) => w.manifest);
  }

  /** Stops telling onChange of changes to the wallets offered. */
  stopOffering(onChange: () => void): void {
    this.connector?.off("selector:walletsChanged", onChange);
  }

  /** Connects the wallet id; resolves with the account it signed in as. */
  async connect(id: string): Promise<Connected> {
    let w: NearWalletBase;
    try {
      w = await this.c.connect({ walletId: id });
    } catch (e) {
      throw new Declined("The wallet was not connected" + (e instanceof Error && e.message ? `: ${e.message}` : typeof e === "string" && e ? `: ${e}` : "."));
    }
    const accounts = await w.getAccounts({ network: this.opts.network });
    const a = accounts[0]?.accountId;
    if (!a) {
      throw new Declined(`${w.manifest.name} named no account.`);
    }
    return { account: a, name: w.manifest.name };
  }

  async disconnect(): Promise<void> {
    if (!this.connector) {
      return;
    }
    try {
      await this.connector.disconnect();
    } catch {
      // nothing was connected
    }
  }

  /**
   * Has the connected wallet sign req (one prompt), then checks the
   * signature here, both with no callback URL and with this page's: the
   * form that verifies is the one sent.
   */
  async sign(req: SignRequest): Promise<Signature> {
    let w: NearWalletBase;
    try {
      w = await this.c.wallet();
    } catch {
      throw new NotConnected("No wallet is connected in this browser any more.");
    }
    let out: { accountId: string; publicKey: string; signature: string } | void;
    try {
      out = await w.signMessage({ message: req.sentence, recipient: req.recipient, nonce: req.nonce, network: this.opts.network, signerId: req.account });
    } catch (e) {
      throw new Declined(`${w.manifest.name} did not sign` + (e instanceof Error && e.message ? `: ${e.message}` : typeof e === "string" && e ? `: ${e}` : "."));
    }
    if (!out || typeof out.signature !== "string" || typeof out.publicKey !== "string") {
      throw new Declined(`${w.manifest.name} returned no signature.`);
    }
    if (out.accountId && out.accountId !== req.account) {
      throw new Error(`${w.manifest.name} signed as ${out.accountId}, not ${req.account}.`);
    }
    return checked(req, out.publicKey, out.signature, this.hrefs);
  }
}

/** The wallet window near-connect shows (a wallet's frame), if one is shown. */
function shownWalletWindow(): HTMLElement | null {
  return [...document.querySelectorAll<HTMLElement>(".hot-connector-popup")].find((p) => p.style.display !== "none" && p.isConnected) ?? null;
}

/**
 * Moves the focus into a wallet's frame as near-connect shows it, so its
 * buttons, and Esc, work from the keyboard at once; names each frame.
 */
function focusWalletFrames(): void {
  new MutationObserver(() => {
    for (const f of document.querySelectorAll<HTMLIFrameElement>(".hot-connector-popup iframe:not([title])")) {
      f.title = "Your wallet"; // a frame is named for screen readers
    }
    const frame = shownWalletWindow()?.querySelector("iframe");
    if (frame && document.activeElement !== frame) {
      frame.focus();
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["style"] });
}

/**
 * Closes the wallet window shown, as a click beside it does (near-connect
 * then tells the page the wallet was closed: nothing is signed). False when
 * none is shown.
 */
export function closeWalletFrame(): boolean {
  const w = shownWalletWindow();
  const backdrop = w?.querySelector<HTMLElement>(".modal-container");
  if (!backdrop) {
    return false;
  }
  backdrop.click();
  return true;
}

/**
 * The signature as the service reads it, once the page has checked it: an
 * ed25519 signature must verify over the NEP-413 payload of req, with the
 * callback URL the wallet says it signed (signed; null for none) or, when
 * it does not say (undefined), with none or any address this page had
 * (seen, and the current one); callback_url is sent exactly as signed. A
 * secp256k1 key is sent as signed, with the callback URL the wallet names:
 * the page checks ed25519 signatures only, the service checks both.
 */
export async function checked(req: SignRequest, publicKey: string, signature: string, seen: Iterable<string> = [], signed?: string | null): Promise<Signature> {
  const s: Signature = { public_key: publicKey, signature, nonce: toBase64(req.nonce) };
  if (publicKey.startsWith("secp256k1:")) {
    return typeof signed === "string" ? { ...s, callback_url: signed } : s;
  }
  if (!publicKey.startsWith("ed25519:")) {
    throw new Error("The wallet's key is neither an ed25519 nor a secp256k1 key.");
  }
  try {
    ed25519Key(publicKey);
  } catch {
    throw new Error("The wallet's publicKey is not ed25519: and the base58 of 32 bytes.");
  }
  try {
    signatureBytes(signature);
  } catch {
    throw new Error("The wallet's signature is not 64 bytes in base64 (or ed25519: and base58).");
  }
  const forms: (string | null)[] =
    signed !== undefined ? [signed] : [null, ...new Set([location.href, location.origin + location.pathname, location.origin + location.pathname + location.search, ...seen])];
  for (const cb of forms) {
    if (await verifies(publicKey, signature, req.sentence, req.nonce, req.recipient, cb)) {
      return cb === null ? s : { ...s, callback_url: cb };
    }
  }
  throw new Error(
    signed === undefined
      ? "The wallet's signature does not verify for the sentence shown, with or without this page's address."
      : "The wallet's signature does not verify for the sentence, recipient and nonce shown" + (signed === null ? "." : " with the callbackUrl it names."),
  );
}

/**
 * A pasted answer to req, read strictly and checked here (readAnswer, then
 * checked): the signature as the service reads it, or an Error whose
 * message says why not, in which case nothing is sent.
 */
export async function pasted(req: SignRequest, text: string): Promise<Signature> {
  const a = readAnswer(req, text);
  return checked(req, a.publicKey, a.signature, [], a.callbackUrl);
}

/** The ids a paste panel gives its parts: sentence, recipient, nonce, command, answer. */
export interface PanelIDs {
  sentence: string;
  recipient: string;
  nonce: string;
  command: string;
  answer: string;
}

/**
 * Shows req in host for a wallet elsewhere (its sentence, recipient and
 * nonce, and the terminal command), and resolves with the pasted answer
 * once it reads as a signature of exactly req and verifies here (pasted);
 * until then say shows each refusal and nothing is sent.
 */
export function pastePanel(host: HTMLElement, req: SignRequest, ids: PanelIDs, submit: string, say: (text: string, error: boolean) => void): Promise<Signature> {
  const nonce = toBase64(req.nonce);
  const answer = el("textarea", { id: ids.answer, name: ids.answer, spellcheck: "false", "aria-describedby": `${ids.answer}-help ${ids.answer}-refused` });
  // The refusal again beside the button, where the owner is looking (the
  // page's one live region, at its top, is what announces it).
  const refused = el("p", { id: ids.answer + "-refused", class: "failure" });
  refused.hidden = true;
  const shown = { account: req.account, sentence: req.sentence, recipient: req.recipient, nonce };
  return new Promise((resolve) => {
    let checking = false;
    const send = async () => {
      if (checking) {
        return;
      }
      checking = true;
      try {
        resolve(await pasted(req, answer.value));
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        refused.textContent = why + " Nothing was sent.";
        refused.hidden = false;
        say(why + " Nothing was sent.", true);
      } finally {
        checking = false;
      }
    };
    host.replaceChildren(
      el("p", {}, "Have your wallet sign this sentence as a NEP-413 message, for this recipient and with this nonce, then paste its answer below."),
      el(
        "dl",
        {},
        el("dt", {}, "Sentence"),
        el("dd", {}, el("code", { id: ids.sentence }, req.sentence)),
        el("dt", {}, "Recipient"),
        el("dd", {}, el("code", { id: ids.recipient }, req.recipient)),
        el("dt", {}, "Nonce"),
        el("dd", {}, el("code", { id: ids.nonce }, nonce)),
      ),
      el("p", {}, "With the terminal's wallet:"),
      el("pre", { id: ids.command }, command(shown)),
      el("label", { for: ids.answer }, "The wallet's answer (JSON)"),
      el("p", { id: ids.answer + "-help", class: "task-meta" }, "What countersign wallet sign or near-cli printed: publicKey, signature and nonce, with message and recipient if it gives them. The signature is checked here before anything is sent."),
      answer,
      refused,
      el("div", { class: "actions" }, button(submit, () => void send())),
    );
    host.hidden = false;
  });
}
