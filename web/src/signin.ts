// Signing in: the owner's wallet, through the page's own picker and
// near-connect, or any wallet elsewhere by pasting its answer, signs one
// sentence naming this browser's device key; the service answers with the
// session's cookie (the page never keeps the token).

import * as api from "./api";
import { formatP256PublicKey, type KeyPair } from "./crypto";
import { el, button, refusal } from "./dom";
import { pickWallet } from "./picker";
import { ACCOUNT, newNonce, sessionBody, signInSentence } from "./sign";
import { Declined, pastePanel, type Signature, type SignRequest, type Wallets } from "./wallet";
import { sentenceTime } from "./words";

/** How long a sign-in asks to be good for: 29 days, under the contract's 30. */
const SIGN_IN_DAYS = 29;

/** What signing in needs of the page. */
export interface SignInHost {
  /** The deployment's NEP-413 recipient. */
  readonly recipient: string;
  readonly wallets: Wallets;
  /** This device's key; null while it is not ready. */
  device(): KeyPair | null;
  say(text: string, error?: boolean): void;
  /** The wallet signing in through near-connect, null for one elsewhere. */
  walletName(): string | null;
  setWalletName(name: string | null): void;
  /** The service signed this device in as account. */
  signedInAs(account: string): Promise<void>;
}

/** The sign-in view. */
export class SignIn {
  constructor(private readonly host: SignInHost) {}

  /** Draws the sign-in in body. */
  show(body: HTMLElement): void {
    const accountBox = el("input", { id: "account", name: "account", autocomplete: "username", spellcheck: "false", autocapitalize: "none", placeholder: "alice.near" });
    const panel = el("section", { id: "another-wallet", "aria-labelledby": "another-title" });
    panel.hidden = true;
    const another = () => {
      const a = accountBox.value.trim();
      if (!ACCOUNT.test(a)) {
        this.host.say("Type your NEAR account id first (like alice.near, or the 64 hex characters of an implicit account).", true);
        accountBox.focus();
        return;
      }
      this.host.say("");
      const paste = el("div");
      panel.replaceChildren(el("h2", { id: "another-title", tabindex: "-1" }, "Sign with another wallet"), paste);
      panel.hidden = false;
      void this.signIn(a, (req) => pastePanel(paste, req, { sentence: "sentence", recipient: "recipient", nonce: "nonce", command: "command", answer: "signed" }, "Send signature", (t, e) => this.host.say(t, e)));
      panel.querySelector<HTMLElement>("h2")?.focus();
    };
    const viaWallet = async () => {
      panel.hidden = true;
      this.host.say("Choose your wallet…");
      let c: { account: string; name: string };
      try {
        const id = await pickWallet(this.host.wallets);
        this.host.say("Connecting the wallet…");
        c = await this.host.wallets.connect(id);
      } catch (e) {
        this.host.say(e instanceof Declined ? e.message + " Nothing was signed." : "The wallet could not be connected: " + refusal(e), !(e instanceof Declined));
        return;
      }
      this.host.say(`${c.name} signs you in as ${c.account}: confirm the sentence in it.`);
      this.host.setWalletName(c.name);
      void this.signIn(c.account, (req) => this.host.wallets.sign(req));
    };
    body.replaceChildren(
      el(
        "section",
        { id: "signin", "aria-labelledby": "signin-title" },
        el(
          "p",
          { class: "lede", id: "what-this-is" },
          "Countersign holds what your AI agents want to do until you approve it: you read each task here, on this device, and approve or reject it with your NEAR wallet.",
        ),
        el("h2", { id: "signin-title" }, "Sign in"),
        el("p", {}, "Your wallet signs one sentence that names this browser's device key. Tasks are opened with that key, on this device only."),
        el("div", { class: "actions" }, button("Sign in", () => void viaWallet())),
        el("h3", {}, "Or with a wallet elsewhere"),
        el("p", {}, "Type your account, then sign the sentence shown with any NEP-413 wallet (the terminal's countersign wallet sign, near-cli) and paste its answer."),
        el("label", { for: "account" }, "Your NEAR account"),
        accountBox,
        el("div", { class: "actions" }, button("Sign with another wallet", another, true)),
      ),
      panel,
    );
  }

  /** Builds the sign-in sentence for account, has it signed, and opens the session. */
  private async signIn(account: string, sign: (req: SignRequest) => Promise<Signature>): Promise<void> {
    const device = this.host.device();
    if (!device) {
      return;
    }
    const nonce = newNonce();
    const devicePubkey = formatP256PublicKey(device.publicKey);
    const validUntil = sentenceTime(Date.now() + SIGN_IN_DAYS * 86400 * 1000);
    const req: SignRequest = { account, sentence: signInSentence(account, devicePubkey, validUntil), recipient: this.host.recipient, nonce };
    let signedAs: string;
    for (;;) {
      let sig: Signature;
      try {
        sig = await sign(req);
      } catch (e) {
        this.host.setWalletName(null);
        this.host.say(e instanceof Declined ? e.message + " Nothing was signed; you are not signed in." : "The sign-in cannot go on: " + refusal(e), !(e instanceof Declined));
        return;
      }
      this.host.say("Signing in…");
      try {
        // The answer carries the token too; the page reads the account only
        // and lets the token go: the cookie the answer set carries it.
        signedAs = (await api.signIn(sessionBody({ account, devicePubkey, validUntil }, sig))).account_id;
        break;
      } catch (e) {
        this.host.say("The sign-in was refused: " + refusal(e), true);
        if (this.host.walletName()) {
          this.host.setWalletName(null);
          return;
        }
        // A pasted answer can be pasted again.
      }
    }
    await this.host.signedInAs(signedAs);
  }
}
