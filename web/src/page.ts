// The web inbox's page (issue 12): sign in with another wallet (the sentence,
// recipient and nonce shown as text to sign elsewhere, the wallet's JSON
// answer pasted back), then the waiting list, each task opened on this
// device. Everything the service or a task supplies is put in the page as
// text (textContent), never as markup. The session token lives only in the
// HttpOnly cookie the sign-in sets: the page never keeps it.

import { FileMismatchError, MAX_SEALED_REPLY_BYTES, OpenError, SEALED_OVERHEAD, sealTo, formatP256PublicKey, fromBase64, openTask, openTaskFile, sealText, sha256Hex, supplyHash, toBase64, type Bytes, type KeyPair, type OpenedTask, type TaskView } from "./crypto";
import { deviceKey } from "./devicekey";
import { ReceiptError, runKeys, verifyReceipt } from "./origin";
import { el, button, withKey, api, refusal, Refused, type Child } from "./dom";
import { ACCOUNT, approvalSentence, newNonce, sessionBody, signInSentence } from "./sign";
import { Declined, NotConnected, pastePanel, Wallets, type Connected, type PanelIDs, type Signature, type WalletOptions, type SignRequest } from "./wallet";
import { byteCount, countdown, failureWords, safeFileName, sentenceTime, stateWords } from "./words";
import { Settings } from "./settings";

/** Where the page remembers which account it signed in as (never the token). */
const ACCOUNT_ITEM = "countersign.account";
/** Which wallet the owner signed in with through near-connect (absent: a wallet elsewhere). */
const WALLET_ITEM = "countersign.wallet";
/** How long a sign-in asks to be good for: 29 days, under the contract's 30. */
const SIGN_IN_DAYS = 29;

/** The task id a link names (PUBLIC_URL/#/tasks/{id}), or null. */
function taskInHash(): string | null {
  const m = /^#\/tasks\/([^/?#]+)$/.exec(location.hash);
  if (!m || !m[1]) {
    return null;
  }
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

/** The bytes an answer supplies (null: nothing), read when Approve is pressed. */
type Answer = () => Promise<Bytes | null>;

/** The largest file an answer can carry: the contract's 8 KiB sealed, less the sealing's overhead. */
const MAX_ANSWER_FILE = MAX_SEALED_REPLY_BYTES - SEALED_OVERHEAD;

/** A listed task as GET /inbox/tasks answers it (the members the page reads). */
interface Listed extends TaskView {
  state: string;
}

/** A closed task as the service lists it: no content any more. */
interface Closed {
  id: string;
  project: string;
  preparer: string;
  kind: string;
  state: string;
  created_at: string;
  failure_reason?: string | null;
}

/** The page, mounted on root. */
class Inbox {
  private device: KeyPair | null = null;
  private account: string | null = null;
  /** The connected wallet's name, when the owner signed in through near-connect. */
  private walletName: string | null = null;
  private readonly wallets: Wallets;
  private events: EventSource | null = null;
  private listing = 0;
  /** The task a link (#/tasks/{id}) asks to open, until a listing opens it. */
  private wanted: string | null = taskInHash();
  /** The waiting tasks the last listing showed (null: none yet). */
  private seen: Set<string> | null = null;
  private relistTimer: number | undefined;
  private readonly header = el("header");
  private readonly status = el("p", { class: "status", role: "status", "aria-live": "polite", id: "status" });
  private readonly body = el("div");
  private readonly listBox = el("div", { id: "list" });
  private readonly cardBox = el("section", { id: "card", "aria-labelledby": "card-title", hidden: "" });
  private cardID: string | null = null;
  private cardBusy = false;
  private cardTimer: number | undefined;
  /** Whether the open card reached its expires_at and is read-only. */
  private cardExpired = false;
  // Settings hook (settings.ts): the view, drawn in body beside the list.
  private readonly settings: Settings;

  constructor(
    private readonly root: HTMLElement,
    private readonly recipient: string,
    walletOptions: WalletOptions,
  ) {
    this.wallets = new Wallets(walletOptions);
    // Settings hook: what the view needs of the page.
    this.settings = new Settings({
      account: () => this.account,
      recipient,
      say: (text, error) => this.say(text, error),
      askSignature: (req, host, ids, submit) => this.askSignature(req, host, ids, submit),
      ended: (why) => this.ended(why),
      back: () => this.closeSettings(),
    });
    root.replaceChildren(this.header, this.status, this.body, this.keysBox);
    document.addEventListener("keydown", (ev) => this.onKey(ev));
    window.addEventListener("hashchange", () => {
      const id = taskInHash();
      if (id && id !== this.cardID) {
        this.wanted = id;
        this.relist();
      }
    });
  }

  /** The keys the page answers to, as the ? list shows them. */
  static readonly KEYS: readonly (readonly [string, string])[] = [
    ["j", "next task in the list"],
    ["k", "previous task in the list"],
    ["Enter", "open the task"],
    ["a", "Approve the open task"],
    ["r", "Reject the open task"],
    ["g", "Got it: close the open notice"],
    ["u", "Unlock the tasks locked on this device"],
    ["?", "show or hide this list"],
    ["Esc", "hide this list"],
  ];

  private readonly keysBox = el(
    "section",
    { id: "keys", class: "keys", role: "dialog", "aria-labelledby": "keys-title", hidden: "", tabindex: "-1" },
    el("h2", { id: "keys-title" }, "Keys"),
    el("dl", {}, ...Inbox.KEYS.flatMap(([k, what]) => [el("dt", {}, el("kbd", {}, k)), el("dd", {}, what)])),
  );

  /** j/k move between tasks, a approves, r rejects, ? lists the keys; not while typing. */
  private onKey(ev: KeyboardEvent): void {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) {
      return;
    }
    const t = ev.target as HTMLElement | null;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) {
      return;
    }
    if (ev.key === "?") {
      ev.preventDefault();
      this.keysBox.hidden = !this.keysBox.hidden;
      if (!this.keysBox.hidden) {
        this.keysBox.focus();
      }
      return;
    }
    if (ev.key === "Escape" && !this.keysBox.hidden) {
      ev.preventDefault();
      this.keysBox.hidden = true;
      return;
    }
    if (!this.account) {
      return;
    }
    if ((ev.key === "j" || ev.key === "k") && !this.listBox.hidden) {
      const items = [...this.listBox.querySelectorAll<HTMLElement>("#tasks button.task-open")];
      if (!items.length) {
        return;
      }
      ev.preventDefault();
      const at = items.indexOf(document.activeElement as HTMLElement);
      const next = at < 0 ? (ev.key === "j" ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, at + (ev.key === "j" ? 1 : -1)));
      items[next]?.focus();
      return;
    }
    if (ev.key === "u" && !this.listBox.hidden) {
      const b = this.listBox.querySelector<HTMLButtonElement>('button[aria-keyshortcuts="u"]');
      if (b && !b.disabled) {
        ev.preventDefault();
        b.click();
      }
      return;
    }
    if ((ev.key === "a" || ev.key === "r" || ev.key === "g") && this.cardID && !this.cardBox.hidden) {
      const b = this.cardBox.querySelector<HTMLButtonElement>(`#card-actions button[aria-keyshortcuts="${ev.key}"]`);
      if (b && !b.disabled) {
        ev.preventDefault();
        b.focus();
        b.click();
      }
    }
  }

  async start(): Promise<void> {
    this.renderHeader();
    this.say("Preparing this device's key…");
    try {
      this.device = await deviceKey();
    } catch (e) {
      this.say("This browser cannot keep a device key: " + (e instanceof Error ? e.message : String(e)), true);
      return;
    }
    this.say("");
    this.account = localStorage.getItem(ACCOUNT_ITEM);
    this.walletName = localStorage.getItem(WALLET_ITEM);
    if (this.account && (await this.list())) {
      this.signedIn();
      return;
    }
    this.account = null;
    this.showSignIn();
  }

  /** When say last spoke (ms). */
  private saidAt = 0;

  /** Says text in the page's one live region (polite). */
  private say(text: string, error = false): void {
    this.status.textContent = text;
    this.status.classList.toggle("error", error);
    this.saidAt = Date.now();
  }

  /** Tells of a new event: after what was said in the last seconds, not over it. */
  private announce(text: string): void {
    if (Date.now() - this.saidAt < 5000 && this.status.textContent) {
      this.status.textContent += " " + text;
      this.saidAt = Date.now();
      return;
    }
    this.say(text);
  }

  private renderHeader(): void {
    const parts: Child[] = [el("h1", {}, "Countersign")];
    if (this.account) {
      parts.push(
        el(
          "div",
          { class: "actions" },
          el("span", { class: "who" }, "Signed in as ", el("span", { class: "mono", id: "who" }, this.account)),
          button("Settings", () => this.openSettings(), true), // Settings hook
          button("Sign out", () => void this.signOut(), true),
        ),
      );
    }
    this.header.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
  }

  // ---- signing in ----

  private showSignIn(): void {
    this.renderHeader();
    const account = el("input", { id: "account", name: "account", autocomplete: "username", spellcheck: "false", autocapitalize: "none", placeholder: "alice.near" });
    const panel = el("section", { id: "another-wallet", "aria-labelledby": "another-title" });
    panel.hidden = true;
    const another = () => {
      const a = account.value.trim();
      if (!ACCOUNT.test(a)) {
        this.say("Type your NEAR account id first (like alice.near, or the 64 hex characters of an implicit account).", true);
        account.focus();
        return;
      }
      this.say("");
      const host = el("div");
      panel.replaceChildren(el("h2", { id: "another-title" }, "Sign with another wallet"), host);
      panel.hidden = false;
      void this.signIn(a, (req) => pastePanel(host, req, { sentence: "sentence", recipient: "recipient", nonce: "nonce", command: "command", answer: "signed" }, "Send signature", (t, e) => this.say(t, e)));
    };
    const viaWallet = async () => {
      panel.hidden = true;
      this.say("Choose your wallet…");
      let c: Connected;
      try {
        c = await this.wallets.connect();
      } catch (e) {
        this.say(e instanceof Declined ? e.message + " Nothing was signed." : "The wallet could not be connected: " + refusal(e), !(e instanceof Declined));
        return;
      }
      this.say(`${c.name} signs you in as ${c.account}: confirm the sentence in it.`);
      this.walletName = c.name;
      void this.signIn(c.account, (req) => this.wallets.sign(req));
    };
    this.body.replaceChildren(
      el(
        "section",
        { id: "signin", "aria-labelledby": "signin-title" },
        el("h2", { id: "signin-title" }, "Sign in"),
        el("p", {}, "Your wallet signs one sentence that names this browser's device key. Tasks are opened with that key, on this device only."),
        el("div", { class: "actions" }, button("Sign in", () => void viaWallet())),
        el("h3", {}, "Or with a wallet elsewhere"),
        el("p", {}, "Type your account, then sign the sentence shown with any NEP-413 wallet (the terminal's countersign wallet sign, near-cli) and paste its answer."),
        el("label", { for: "account" }, "Your NEAR account"),
        account,
        el("div", { class: "actions" }, button("Sign with another wallet", another, true)),
      ),
      panel,
    );
  }

  /** Builds the sign-in sentence for account, has it signed, and opens the session. */
  private async signIn(account: string, sign: (req: SignRequest) => Promise<Signature>): Promise<void> {
    if (!this.device) {
      return;
    }
    const nonce = newNonce();
    const devicePubkey = formatP256PublicKey(this.device.publicKey);
    const validUntil = sentenceTime(Date.now() + SIGN_IN_DAYS * 86400 * 1000);
    const req: SignRequest = { account, sentence: signInSentence(account, devicePubkey, validUntil), recipient: this.recipient, nonce };
    for (;;) {
      let sig: Signature;
      try {
        sig = await sign(req);
      } catch (e) {
        this.walletName = null;
        this.say(e instanceof Declined ? e.message + " Nothing was signed; you are not signed in." : "The sign-in cannot go on: " + refusal(e), !(e instanceof Declined));
        return;
      }
      this.say("Signing in…");
      try {
        // The answer carries the token too; the page reads the account only
        // and lets the token go: the cookie the answer set carries it.
        const r = (await api("POST", "/inbox/session", sessionBody({ account, devicePubkey, validUntil }, sig))) as { account_id?: unknown };
        this.account = typeof r.account_id === "string" ? r.account_id : account;
        break;
      } catch (e) {
        this.say("The sign-in was refused: " + refusal(e), true);
        if (this.walletName) {
          this.walletName = null;
          return;
        }
        // A pasted answer can be pasted again.
      }
    }
    localStorage.setItem(ACCOUNT_ITEM, this.account);
    if (this.walletName) {
      localStorage.setItem(WALLET_ITEM, this.walletName);
    } else {
      localStorage.removeItem(WALLET_ITEM);
    }
    this.say("Signed in.");
    if (await this.list()) {
      this.signedIn();
    }
  }

  private signedIn(): void {
    this.renderHeader();
    this.listen();
  }

  private async signOut(): Promise<void> {
    try {
      await api("DELETE", "/inbox/session");
    } catch (e) {
      if (!(e instanceof Refused && e.status === 401)) {
        this.say("Signing out failed: " + (e instanceof Error ? e.message : String(e)), true);
        return;
      }
    }
    this.ended("Signed out.");
  }

  /** The session is over (signed out, expired, replaced): back to signing in. */
  private ended(why: string): void {
    this.settings.hide(); // Settings hook
    // A listing under way, or due, would draw the list over the sign-in.
    this.listing++;
    window.clearTimeout(this.relistTimer);
    this.closeCard();
    this.events?.close();
    this.events = null;
    localStorage.removeItem(ACCOUNT_ITEM);
    localStorage.removeItem(WALLET_ITEM);
    this.account = null;
    this.seen = null;
    if (this.walletName) {
      this.walletName = null;
      void this.wallets.disconnect();
    }
    this.showSignIn();
    this.say(why);
  }

  // ---- the waiting list ----

  /** Lists the waiting tasks; false when there is no session. */
  private async list(): Promise<boolean> {
    const device = this.device;
    const account = this.account;
    if (!device || !account) {
      return false;
    }
    const mine = ++this.listing;
    let tasks: Listed[];
    const closedList = api("GET", "/inbox/tasks?show=closed").then(
      (r) => ((r as { tasks?: Closed[] }).tasks ?? []),
      () => null,
    );
    try {
      const r = (await api("GET", "/inbox/tasks?show=waiting")) as { tasks?: Listed[] };
      tasks = r.tasks ?? [];
    } catch (e) {
      if (e instanceof Refused && e.status === 401) {
        if (this.body.querySelector("#tasks")) {
          this.ended("Your session ended: " + e.message);
        }
        return false;
      }
      this.say("The inbox cannot be listed now: " + (e instanceof Error ? e.message : String(e)), true);
      return true;
    }
    const items = await Promise.all(tasks.map((t) => this.item(device, account, t)));
    const arrived = this.seen === null ? [] : tasks.filter((t) => !this.seen?.has(t.id));
    const closed = await closedList;
    if (mine !== this.listing || this.account !== account) {
      return true; // a newer listing draws, or the session ended meanwhile
    }
    const ul = el("ul", { class: "tasks", id: "tasks", "aria-labelledby": "waiting-title" }, ...items);
    const parts: Child[] = [
      el("h2", { id: "waiting-title" }, "Waiting for you"),
      el("p", { class: "keys-hint", id: "keys-hint" }, "Keys: ", el("kbd", {}, "j"), " and ", el("kbd", {}, "k"), " move, ", el("kbd", {}, "Enter"), " opens, ", el("kbd", {}, "?"), " lists them all."),
    ];
    parts.push(items.length ? ul : el("p", { class: "empty", id: "tasks-empty" }, "Nothing is waiting for you."));
    if (!items.length) {
      parts.push(ul); // kept (empty) so the page knows it is listing
      ul.hidden = true;
    }
    parts.push(el("h2", { id: "closed-title" }, "Closed"));
    if (closed === null) {
      parts.push(el("p", { class: "empty", id: "closed-empty" }, "The closed tasks cannot be listed now."));
    } else if (!closed.length) {
      parts.push(el("p", { class: "empty", id: "closed-empty" }, "No closed tasks yet."));
    } else {
      parts.push(
        el(
          "ul",
          { class: "tasks closed", id: "closed", "aria-labelledby": "closed-title" },
          ...closed.map((c) =>
            el(
              "li",
              { class: "task", "data-closed": String(c.id), "data-state": String(c.state) },
              el("span", { class: "task-title" }, stateWords(String(c.state))),
              el("span", { class: "task-meta" }, `${c.project} · from ${c.preparer} · ${c.kind} · asked ${c.created_at} · task ${c.id}`),
              c.state === "failed" && c.failure_reason ? el("span", { class: "failure" }, failureWords(String(c.failure_reason))) : null,
            ),
          ),
        ),
      );
    }
    if (this.listBox.parentNode !== this.body) {
      this.body.replaceChildren(this.listBox, this.cardBox, this.settings.root); // Settings hook: its view beside the list
      this.listBox.hidden = this.settings.shown;
    }
    // A listing drawn again keeps the focus on the task it was on.
    const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>("#list button.task-open")?.dataset["task"];
    this.listBox.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
    if (focused) {
      this.listBox.querySelector<HTMLElement>(`button.task-open[data-task="${CSS.escape(focused)}"]`)?.focus();
    }
    // The live region tells of tasks that arrived since the last listing
    // (not of those there when the page opened, nor of redraws).
    this.seen = new Set(tasks.map((t) => t.id));
    if (arrived.length === 1 && arrived[0]) {
      const title = items[tasks.indexOf(arrived[0])]?.querySelector(".task-title")?.textContent ?? "";
      this.announce(`New task from ${arrived[0].preparer}: ${title}.`);
    } else if (arrived.length > 1) {
      this.announce(`${arrived.length} new tasks are waiting for you.`);
    }
    if (this.wanted) {
      const id = this.wanted;
      this.wanted = null;
      const b = this.listBox.querySelector<HTMLButtonElement>(`button.task-open[data-task="${CSS.escape(id)}"]`);
      const c = closed?.find((x) => x.id === id);
      if (b) {
        b.click();
      } else if (tasks.some((t) => t.id === id)) {
        this.say(`Task ${id} cannot be opened on this device: see why in the list.`, true);
      } else if (c) {
        this.say(`Task ${id} is closed: ${stateWords(String(c.state))}.`);
      } else {
        this.say(`Task ${id} is not in your inbox (it may have been purged, or belong to another account).`, true);
      }
    }
    if (this.cardID && !tasks.some((t) => t.id === this.cardID) && !this.cardBusy) {
      this.closeCard();
      this.say("The task you had open is no longer waiting.");
    }
    return true;
  }

  private async item(device: KeyPair, account: string, t: Listed): Promise<HTMLLIElement> {
    const meta = el("span", { class: "task-meta" }, `${t.project} · from ${t.preparer} · ${t.kind} · until ${t.expires_at}`);
    try {
      const o = await openTask(device, account, t);
      const display = o.envelope["display"] as { title?: unknown } | undefined;
      const title = typeof display?.title === "string" ? display.title : "(untitled)";
      // The item holds one button (a list keeps its list semantics); its
      // name is what it shows: the title and the line under it.
      const open = button("", () => void this.openCard(t, o));
      open.className = "task-open";
      open.dataset["task"] = t.id;
      open.append(el("span", { class: "task-title" }, title), meta);
      open.firstChild?.remove(); // the empty text button() began with
      const li = el("li", { class: "task", "data-task": t.id }, open);
      return li;
    } catch (e) {
      if (e instanceof OpenError && e.reason === "locked") {
        return el(
          "li",
          { class: "task task-locked", "data-task": t.id },
          el("span", { class: "task-title" }, "Locked on this device"),
          meta,
          el("p", {}, "This task was opened before this device signed in, so it carries no key for this device. Unlock gives every waiting task a copy for each of your devices."),
          el("div", { class: "actions" }, withKey(button("Unlock", () => void this.unlock(), true), "u")),
        );
      }
      const why = e instanceof Error ? e.message : String(e);
      return el("li", { class: "task task-locked", "data-task": t.id }, el("span", { class: "task-title" }, "This task cannot be shown"), meta, el("p", {}, why));
    }
  }

  // ---- the task card ----

  private closeCard(): void {
    window.clearInterval(this.cardTimer);
    if (this.cardID && taskInHash() === this.cardID) {
      history.replaceState(null, "", location.pathname + location.search);
    }
    this.cardID = null;
    this.cardBusy = false;
    this.cardBox.replaceChildren();
    this.cardBox.hidden = true;
    this.listBox.hidden = this.settings.shown; // Settings hook: the list stays hidden under the view
  }

  // ---- Settings hook (the view is settings.ts) ----

  /** Shows the Settings view in place of the list and the card. */
  private openSettings(): void {
    if (!this.account) {
      return;
    }
    if (this.settings.shown) {
      (this.settings.root.querySelector("#settings-title") as HTMLElement | null)?.focus();
      return;
    }
    this.closeCard();
    if (this.settings.root.parentNode !== this.body) {
      this.body.replaceChildren(this.listBox, this.cardBox, this.settings.root);
    }
    this.listBox.hidden = true;
    this.say("");
    this.settings.show();
  }

  /** Leaves the Settings view (dropping what it showed) for the inbox. */
  private closeSettings(): void {
    this.settings.hide();
    this.listBox.hidden = false;
    this.say("");
    this.relist();
    (this.listBox.querySelector("h2") as HTMLElement | null)?.setAttribute("tabindex", "-1");
    (this.listBox.querySelector("h2") as HTMLElement | null)?.focus();
  }

  /** Opens a task's card: preview, RAW form, countdown, receipt check, answers. */
  private async openCard(view: Listed, o: OpenedTask): Promise<void> {
    const account = this.account;
    if (!account || this.cardID === view.id) {
      return;
    }
    window.clearInterval(this.cardTimer);
    this.cardID = view.id;
    history.replaceState(null, "", `#/tasks/${encodeURIComponent(view.id)}`);
    this.cardBusy = false;
    this.cardExpired = false;
    this.say("");
    const e = o.envelope;
    const id = view.id;
    const display = (e["display"] ?? {}) as { title?: unknown; fields?: unknown };
    const title = typeof display.title === "string" ? display.title : "(untitled)";
    const fields = Array.isArray(display.fields) ? (display.fields as { kind?: unknown; label?: unknown; values?: unknown; written_by?: unknown }[]) : [];
    const files = Array.isArray(e["files"]) ? (e["files"] as { name?: unknown; content_type?: unknown; size?: unknown }[]) : [];
    const answerBy = (e["answer_by"] ?? null) as { operation?: unknown; supplies?: unknown } | null;
    const str = (v: unknown) => (typeof v === "string" ? v : String(v ?? ""));

    // Preview: every field as text, with its label; the agent's words marked.
    const dl = el("dl", { class: "fields", id: "fields" });
    let agentWrote = false;
    for (const f of fields) {
      const values = Array.isArray(f.values) ? f.values.map(str) : [];
      const byAgent = f.written_by === "agent";
      agentWrote ||= byAgent;
      const dt = el("dt", { class: "field-label" });
      if (byAgent) {
        dt.append(el("span", { class: "agent-mark", role: "img", "aria-label": "written by the agent", title: "written by the agent" }, "🤖"), " ");
      }
      dt.append(str(f.label));
      let dd: HTMLElement;
      if (f.kind === "list" || values.length !== 1) {
        dd = el("dd", { class: "field-value" }, el("ul", {}, ...values.map((v) => el("li", {}, v))));
      } else {
        dd = el("dd", { class: f.kind === "long_text" ? "field-value long" : "field-value" }, values[0] ?? "");
      }
      if (byAgent) {
        dt.classList.add("by-agent");
        dd.classList.add("by-agent");
      }
      dl.append(dt, dd);
    }
    const fileList = files.length
      ? el(
          "ul",
          { class: "files", id: "files" },
          ...files.map((f, n) => {
            const b = button("Download", () => void this.download(id, o, n, str(f.name), b), true);
            b.setAttribute("aria-label", "Download " + str(f.name));
            b.dataset["file"] = String(n);
            return el("li", {}, el("span", { class: "mono" }, str(f.name)), ` (${str(f.content_type)}, ${byteCount(Number(f.size))}) `, b);
          }),
        )
      : el("p", { id: "files" }, "No files.");

    // RAW form: the exact envelope bytes decrypted, and their SHA-256.
    const rawText = new TextDecoder("utf-8", { fatal: false }).decode(o.envelopeBytes);
    const rawHash = await sha256Hex(o.envelopeBytes);

    const expiresAt = str(e["expires_at"]);
    const expiresMs = Date.parse(expiresAt);
    const left = el("span", { id: "countdown" }, countdown(Date.now(), expiresMs));
    this.cardTimer = window.setInterval(() => {
      left.textContent = countdown(Date.now(), expiresMs);
      this.checkExpiry(id, expiresAt, expiresMs);
    }, 1000);

    const receipt = el("p", { id: "receipt", class: "receipt" }, "Checking the receipt of the run that made this task…");
    const actions = el("div", { class: "card-actions", id: "card-actions" });

    const cardParts: Child[] = [
      el("div", { class: "actions" }, button("Back to the list", () => this.closeCard(), true)),
      el("h2", { id: "card-title" }, title),
      el("p", { class: "task-meta" }, `${view.project} · from ${view.preparer} · ${str(e["build"])} · ${view.kind} · task ${id}`),
      el("p", { class: "expiry" }, `Expires at ${expiresAt} (`, left, ")"),
      receipt,
      el("h3", {}, "Preview"),
      dl,
      agentWrote ? el("p", { class: "task-meta" }, "🤖 marks the agent's own words, not the connector's.") : null,
      el("h3", {}, "Files"),
      fileList,
      el(
        "details",
        { id: "raw-form" },
        el("summary", {}, "RAW form"),
        el("p", { class: "task-meta" }, "The envelope exactly as decrypted on this device. Its SHA-256 is the task hash you sign."),
        el("pre", { id: "raw", class: "raw" }, rawText),
        el("p", {}, "SHA-256: ", el("code", { id: "raw-sha" }, rawHash)),
      ),
      el(
        "details",
        { id: "raw-request" },
        el("summary", {}, "RAW request"),
        el("p", { class: "task-meta" }, "The agent's call exactly as decrypted on this device, byte for byte. The receipt's input hash covers these bytes."),
        el("pre", { id: "request", class: "raw" }, new TextDecoder("utf-8", { fatal: false }).decode(o.request)),
        el("p", {}, `${byteCount(o.request.length)}, SHA-256: `, el("code", { id: "request-sha" }, await sha256Hex(o.request))),
      ),
      actions,
    ];
    this.cardBox.replaceChildren(...cardParts.filter((p): p is Node => p instanceof Node));
    this.listBox.hidden = true;
    this.cardBox.hidden = false;
    (this.cardBox.querySelector("h2") as HTMLElement | null)?.setAttribute("tabindex", "-1");
    (this.cardBox.querySelector("h2") as HTMLElement | null)?.focus();

    if (!answerBy || view.kind === "notice") {
      actions.append(el("div", { class: "actions" }, withKey(button("Got it", () => void this.acknowledge(id)), "g")));
      receipt.textContent = "A notice asks nothing: read it and close it with Got it.";
      this.checkExpiry(id, expiresAt, expiresMs);
      void this.checkReceipt(id, o, receipt, null);
      return;
    }

    const supplies = str(answerBy.supplies);
    // The answer: the owner's text, or a file's bytes, sealed to the reply key.
    let answer: Answer = async () => null;
    const parts: Child[] = [];
    if (supplies === "text") {
      const box = el("textarea", { id: "answer", name: "answer", spellcheck: "false" });
      answer = async () => new TextEncoder().encode(box.value);
      parts.push(el("label", { for: "answer" }, "Your answer"), box);
    } else if (supplies === "file") {
      const pick = el("input", { id: "answer-file", name: "answer-file", type: "file", "aria-describedby": "answer-file-help" });
      answer = async () => {
        const f = pick.files?.[0];
        if (!f) {
          throw new Error("choose the file to answer with first");
        }
        if (f.size > MAX_ANSWER_FILE) {
          throw new Error(`the file is ${byteCount(f.size)}; an answer holds at most ${byteCount(MAX_ANSWER_FILE)}`);
        }
        return new Uint8Array(await f.arrayBuffer());
      };
      parts.push(
        el("label", { for: "answer-file" }, "Your answer: a file"),
        el("p", { id: "answer-file-help", class: "task-meta" }, `Sealed on this device to the agent's reply key; at most ${byteCount(MAX_ANSWER_FILE)}.`),
        pick,
      );
    }
    const note = el("textarea", { id: "note", name: "note", spellcheck: "false" });
    parts.push(el("label", { for: "note" }, "A note for the agent (optional)"), note);
    const approve = button("Approve", () => void this.prepareApproval(account, o, answer, note, approveStep));
    approve.disabled = true;
    const reason = el("textarea", { id: "reason", name: "reason", spellcheck: "false" });
    const approveStep = el("div", { id: "approve-step" });
    approveStep.hidden = true;
    actions.append(
      ...parts.filter((p): p is Node => p instanceof Node),
      el("div", { class: "actions" }, withKey(approve, "a")),
      approveStep,
      el("label", { for: "reason" }, "Why you reject it (optional, for the agent)"),
      reason,
      el("div", { class: "actions" }, withKey(button("Reject", () => void this.reject(o, reason), true), "r")),
    );
    this.checkExpiry(id, expiresAt, expiresMs);
    void this.checkReceipt(id, o, receipt, approve);
  }

  /**
   * At expires_at (by this device's clock) the card turns read-only: its
   * buttons off, its boxes read-only, and a sentence says the task expired.
   * The service refuses an answer then too (409 task_expired).
   */
  private checkExpiry(id: string, expiresAt: string, expiresMs: number): void {
    if (this.cardID !== id || this.cardExpired || !(Date.now() >= expiresMs)) {
      return;
    }
    this.cardExpired = true;
    const actions = this.cardBox.querySelector("#card-actions");
    for (const b of this.cardBox.querySelectorAll<HTMLButtonElement>("button")) {
      if (actions?.contains(b) || b.dataset["file"] !== undefined) {
        b.disabled = true;
      }
    }
    for (const t of this.cardBox.querySelectorAll<HTMLTextAreaElement>("textarea")) {
      t.readOnly = true;
    }
    const note = el("p", { id: "expired", class: "receipt error" }, `This task expired at ${expiresAt}: it can no longer be answered, and the service refuses an answer now.`);
    actions?.before(note);
  }

  /**
   * Fetches file n, opens it on this device, checks its size and SHA-256
   * against the envelope, and only then hands it over as a download (never
   * drawn: an octet-stream Blob under a sanitised name).
   */
  private async download(id: string, o: OpenedTask, n: number, name: string, b: HTMLButtonElement): Promise<void> {
    b.disabled = true;
    try {
      const r = (await api("GET", `/inbox/tasks/${encodeURIComponent(id)}/files/${n}`)) as { ciphertext?: unknown };
      if (typeof r.ciphertext !== "string") {
        throw new FileMismatchError("the service sent no file");
      }
      const plain = await openTaskFile(o, n, fromBase64(r.ciphertext));
      if (this.cardID !== id) {
        return;
      }
      const url = URL.createObjectURL(new Blob([plain], { type: "application/octet-stream" }));
      const a = el("a", { href: url, download: safeFileName(name), hidden: "" });
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.say(`Downloaded ${name}: its size and SHA-256 match the task.`);
    } catch (e) {
      if (e instanceof Refused) {
        this.say(`The file ${name} could not be fetched: ${e.message}`, true);
      } else {
        this.say(`The file ${name} is refused: it is not the file this task names (its size or SHA-256 does not match, or it does not open on this device).`, true);
      }
    } finally {
      b.disabled = this.cardExpired;
    }
  }

  /** Fetches the proof of origin and the run keys; enables Approve only when the receipt proves the task. */
  private async checkReceipt(id: string, o: OpenedTask, out: HTMLElement, approve: HTMLButtonElement | null): Promise<void> {
    let why: string;
    try {
      const [org, doc] = await Promise.all([api("GET", `/inbox/tasks/${encodeURIComponent(id)}/origin`), api("GET", "/.well-known/countersign-run-key")]);
      const r = await verifyReceipt(runKeys(doc), (org as { receipt?: unknown }).receipt, o);
      if (this.cardID !== id) {
        return;
      }
      out.textContent = `Receipt verified: run ${r.run} of ${r.build} made this task, for this request and this hash.`;
      out.classList.remove("error");
      out.classList.add("ok");
      if (approve && !this.cardExpired) {
        approve.disabled = false;
      }
      return;
    } catch (e) {
      why = e instanceof ReceiptError || e instanceof Refused ? e.message : "the receipt could not be checked: " + (e instanceof Error ? e.message : String(e));
    }
    if (this.cardID !== id) {
      return;
    }
    out.textContent = `Receipt not verified: ${why}. Approve stays off: this task may not come from the service's run.`;
    out.classList.add("error");
    if (approve) {
      approve.disabled = true;
    }
  }

  /**
   * Has the owner's wallet sign req: the wallet connected through
   * near-connect (one prompt; host shows the sentence it is asked), or a
   * wallet elsewhere through the paste panel drawn in host (its parts get
   * ids, its button the name submit). Rejects with Declined when the wallet
   * declines.
   */
  async askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature> {
    if (this.walletName) {
      host.replaceChildren(el("p", {}, `${this.walletName} is asked to sign: `, el("code", { id: ids.sentence }, req.sentence)));
      host.hidden = false;
      this.say(`Confirm in ${this.walletName}.`);
      try {
        return await this.wallets.sign(req);
      } catch (e) {
        if (!(e instanceof NotConnected)) {
          throw e;
        }
        // The wallet is gone from this browser: sign elsewhere from now on.
        this.walletName = null;
        localStorage.removeItem(WALLET_ITEM);
        const sig = pastePanel(host, req, ids, submit, (t, err) => this.say(t, err));
        this.say("The wallet you signed in with is no longer connected in this browser: sign the sentence shown with your wallet elsewhere and paste its answer.", true);
        return sig;
      }
    }
    this.say("Sign the sentence shown, then paste the wallet's answer.");
    return pastePanel(host, req, ids, submit, (t, e) => this.say(t, e));
  }

  /**
   * Seals the answer and note to the task's reply key, then has the wallet
   * sign the approval sentence that covers them: the connected wallet (one
   * prompt), or a wallet elsewhere through the paste panel.
   */
  private async prepareApproval(account: string, o: OpenedTask, answer: Answer, note: HTMLTextAreaElement, step: HTMLElement): Promise<void> {
    const id = String(o.envelope["id"]);
    const reply = o.replyPubkey;
    if (!reply || this.cardBusy) {
      return;
    }
    let sealedSupply: Bytes | null = null;
    let sealedNote: Bytes | null = null;
    try {
      const supplied = await answer();
      if (supplied) {
        sealedSupply = await sealTo(reply, "answer", id, supplied);
      }
      if (note.value !== "") {
        sealedNote = await sealText(reply, "note", id, note.value);
      }
    } catch (e) {
      this.say("This answer cannot be sent: " + (e instanceof Error ? e.message : String(e)), true);
      return;
    }
    const supply = await supplyHash(sealedNote, sealedSupply);
    const atMs = Math.floor(Date.now() / 1000) * 1000;
    const nonce = newNonce();
    const req: SignRequest = { account, sentence: approvalSentence(account, id, o.taskHash, supply, sentenceTime(atMs)), recipient: this.recipient, nonce };
    const host = el("div");
    step.replaceChildren(
      el("h3", {}, "Sign the approval"),
      el("p", {}, "Your answer and note are sealed to the agent's reply key; this sentence covers them and the task's hash."),
      host,
    );
    step.hidden = false;
    let sig: Signature;
    try {
      if (this.walletName) {
        this.cardBusy = true;
      }
      sig = await this.askSignature(req, host, { sentence: "approval-sentence", recipient: "approval-recipient", nonce: "approval-nonce", command: "approval-command", answer: "approval-signed" }, "Send approval");
    } catch (e) {
      this.cardBusy = false;
      step.hidden = true;
      this.say(e instanceof Declined ? e.message + " Nothing was sent: the task still waits for you." : "The approval cannot be signed: " + refusal(e), !(e instanceof Declined));
      return;
    }
    if (this.cardID !== id) {
      this.cardBusy = false;
      return;
    }
    this.cardBusy = true;
    const body: Record<string, unknown> = { task_hash: o.taskHash, approval: { at: atMs / 1000, ...sig } };
    if (sealedSupply) {
      body["supplied"] = toBase64(sealedSupply);
    }
    if (sealedNote) {
      body["note"] = toBase64(sealedNote);
    }
    this.say("Sending the approval…");
    try {
      await api("POST", `/inbox/tasks/${encodeURIComponent(id)}/approve`, body);
    } catch (e) {
      this.cardBusy = false;
      step.hidden = true;
      this.say("The approval was refused: " + refusal(e), true);
      return;
    }
    this.closeCard();
    this.say("Approved: the service carries it out.");
    this.relist();
  }

  private async reject(o: OpenedTask, reason: HTMLTextAreaElement): Promise<void> {
    const id = String(o.envelope["id"]);
    const body: Record<string, string> = {};
    try {
      if (reason.value !== "" && o.replyPubkey) {
        body["reason"] = toBase64(await sealText(o.replyPubkey, "rejection", id, reason.value));
      }
    } catch (e) {
      this.say("This reason cannot be sent: " + (e instanceof Error ? e.message : String(e)), true);
      return;
    }
    this.cardBusy = true;
    this.say("Rejecting…");
    try {
      await api("POST", `/inbox/tasks/${encodeURIComponent(id)}/reject`, body);
    } catch (e) {
      this.cardBusy = false;
      this.say("The rejection was refused: " + refusal(e), true);
      return;
    }
    this.closeCard();
    this.say("Rejected.");
    this.relist();
  }

  private async acknowledge(id: string): Promise<void> {
    this.cardBusy = true;
    try {
      await api("POST", `/inbox/tasks/${encodeURIComponent(id)}/acknowledge`);
    } catch (e) {
      this.cardBusy = false;
      this.say("Closing the notice was refused: " + refusal(e), true);
      return;
    }
    this.closeCard();
    this.say("Closed.");
    this.relist();
  }

  private async unlock(): Promise<void> {
    try {
      await api("POST", "/inbox/unlock");
    } catch (e) {
      this.say("Unlock failed: " + (e instanceof Error ? e.message : String(e)), true);
      return;
    }
    await this.list();
  }

  /** Follows /inbox/events: each task event lists again; so does a reconnect. */
  private listen(): void {
    this.events?.close();
    const es = new EventSource("/inbox/events", { withCredentials: true });
    // Each time the stream opens (the first time, and back after a drop),
    // list again: what moved before it was listening.
    es.addEventListener("open", () => this.relist());
    es.addEventListener("task", () => this.relist());
    es.addEventListener("error", () => {
      if (es.readyState === EventSource.CLOSED && this.events === es) {
        this.events = null;
        this.relist(); // refused: the listing says whether the session ended
      }
    });
    this.events = es;
  }

  private relist(): void {
    window.clearTimeout(this.relistTimer);
    this.relistTimer = window.setTimeout(() => void this.list(), 50);
  }
}

/** Mounts the inbox on the page's root, when the page has one. */
export function mountInbox(): void {
  const root = document.getElementById("inbox-app");
  if (!root) {
    return;
  }
  const meta = document.querySelector('meta[name="countersign-recipient"]');
  const recipient = meta?.getAttribute("content") || "countersign";
  const network = document.querySelector('meta[name="countersign-network"]')?.getAttribute("content") === "testnet" ? "testnet" : "mainnet";
  const sandbox = document.querySelector('meta[name="countersign-sandbox-wallet"]')?.getAttribute("content") || null;
  // The shell's nonce, for the scripts near-connect puts in its wallets' iframes.
  const nonce = document.querySelector<HTMLScriptElement>("script[nonce]")?.nonce ?? "";
  void new Inbox(root, recipient, { network, nonce, sandbox }).start();
}
