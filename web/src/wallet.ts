// The owner's wallet in the page. Two doors:
//
//   - near-connect, with its manifest kept here (never fetched at run time)
//     and listing only wallets that sign NEP-413 messages. Each wallet's code
//     runs in a sandboxed iframe of an opaque origin, so it cannot reach this
//     page's IndexedDB (where the device key is) or its DOM. A wallet a
//     browser extension injects (near-connect's near-wallet-injected event)
//     is offered too.
//   - "Sign with another wallet": the exact sentence, recipient and nonce
//     shown as text, the wallet's JSON answer pasted back.
//
// Either way the page checks the signature itself before sending it:
// MyNearWallet signs the callback URL when it redirects and not when it
// opens a popup, and near-connect does not say which happened, so the page
// checks both forms and sends callback_url exactly as the wallet signed it.

import { NearConnector } from "@hot-labs/near-connect";
import type { NearWalletBase, WalletManifest } from "@hot-labs/near-connect/build/types";

import { toBase64 } from "./crypto";
import { button, el } from "./dom";
import { verifies } from "./nep413";
import { command, walletAnswer, type Signature } from "./sign";

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

function wallet(id: string, name: string, website: string, executor: string, letter: string, colour: string, opens: string[], location = false): WalletManifest {
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
    permissions: { storage: true, location, open: { allows: opens } },
  } as unknown as WalletManifest;
}

/**
 * The wallets offered, each at the executor its wallet publishes. Only
 * wallets whose executors sign NEP-413 messages. httpapi's page CSP names
 * exactly the hosts these need (a test holds the two together).
 */
export const WALLETS: readonly WalletManifest[] = [
  wallet("mynearwallet", "MyNearWallet", "https://mynearwallet.com", SELECTOR + "mnw.js", "M", "#2b6be6", ["https://app.mynearwallet.com"]),
  wallet("meteor-wallet", "Meteor Wallet", "https://wallet.meteorwallet.app", SELECTOR + "meteor.js", "M", "#6b3fd4", ["https://wallet.meteorwallet.app"]),
  wallet("hot-wallet", "HOT Wallet", "https://hot-labs.org/wallet", SELECTOR + "hotwallet.js", "H", "#d4532b", ["https://download.hot-labs.org", "https://hot-labs.org/wallet", "https://t.me/hot_wallet/app", "hotwallet://"]),
  wallet("intear-wallet", "Intear Wallet", "https://wallet.intear.tech", "https://wallet.intear.tech/near-selector.js", "I", "#1f8a5b", ["https://wallet.intear.tech", "intear://", "https://logout-bridge-service.intear.tech"], true),
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
        const w = wallet("countersign-sandbox", "Sandbox wallet (this service, --dev)", location.origin, this.opts.sandbox, "S", "#5b616b", []);
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
    }
    return this.connector;
  }

  /** Opens the wallet picker; resolves with the account the chosen wallet signed in as. */
  async connect(): Promise<Connected> {
    let w: NearWalletBase;
    try {
      w = await this.c.connect();
    } catch (e) {
      throw new Declined("No wallet was connected" + (e instanceof Error && e.message ? `: ${e.message}` : "."));
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

/**
 * The signature as the service reads it, with callback_url when (and only
 * when) the wallet signed this page's URL. A secp256k1 key is sent as signed
 * with no callback URL: the page checks ed25519 signatures only.
 */
export async function checked(req: SignRequest, publicKey: string, signature: string, seen: Iterable<string> = []): Promise<Signature> {
  const s: Signature = { public_key: publicKey, signature, nonce: toBase64(req.nonce) };
  if (!publicKey.startsWith("ed25519:")) {
    return s;
  }
  if (await verifies(publicKey, signature, req.sentence, req.nonce, req.recipient, null)) {
    return s;
  }
  for (const cb of new Set([location.href, location.origin + location.pathname, location.origin + location.pathname + location.search, ...seen])) {
    if (await verifies(publicKey, signature, req.sentence, req.nonce, req.recipient, cb)) {
      return { ...s, callback_url: cb };
    }
  }
  throw new Error("The wallet's signature does not verify for the sentence shown, with or without this page's address.");
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
 * once it reads as a signature of exactly req. say shows a refusal.
 */
export function pastePanel(host: HTMLElement, req: SignRequest, ids: PanelIDs, submit: string, say: (text: string, error: boolean) => void): Promise<Signature> {
  const nonce = toBase64(req.nonce);
  const answer = el("textarea", { id: ids.answer, name: ids.answer, spellcheck: "false", "aria-describedby": ids.answer + "-help" });
  const shown = { account: req.account, sentence: req.sentence, recipient: req.recipient, nonce };
  return new Promise((resolve) => {
    const send = () => {
      try {
        resolve(walletAnswer(shown, answer.value));
      } catch (e) {
        say(e instanceof Error ? e.message : String(e), true);
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
      el("p", { id: ids.answer + "-help", class: "task-meta" }, "What countersign wallet sign or near-cli printed: publicKey, signature, nonce, message, recipient."),
      answer,
      el("div", { class: "actions" }, button(submit, send)),
    );
    host.hidden = false;
  });
}
