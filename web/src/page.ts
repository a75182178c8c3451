// The web inbox's page: signing in (signin.ts: a wallet through the page's
// own picker, or another wallet by pasting its answer), then the waiting
// list (its items in waiting.ts), each task opened on this device, its
// card, the history (what was carried out and how each task ended, opened
// on this device too), and Settings; its keys are in keys.ts. Every view
// has an address (#/, #/tasks/{id}, #/settings/{section}) and is a history
// entry: the browser's Back and Forward move between them. Everything the
// service or a task supplies is put in the page as text (textContent),
// never as markup. The session token lives only in the HttpOnly cookie the
// sign-in sets: the page never keeps it.

import type { KeyPair, OpenedTask } from "./crypto";
import { deviceKey } from "./devicekey";
import { Card } from "./card";
import { Keys } from "./keys";
import { SignIn } from "./signin";
import * as api from "./api";
import { el, button, Refused, refreshTimes, shortened, account as accountEl, type Child } from "./dom";
import { NotConnected, pastePanel, Wallets, type PanelIDs, type Signature, type WalletOptions, type SignRequest } from "./wallet";
import { stateWords } from "./words";
import { History, Outcomes } from "./history";
import { Settings, SECTIONS } from "./settings";
import { Batch, type Pickable } from "./batch";
import { displayTitle, turnsOf, waitingItem, type Item, type ItemHost, type Listed } from "./waiting";
import { SharedWatch, approvalsOf, isApprover } from "./approvers";

/** Where the page remembers which account it signed in as (never the token). */
const ACCOUNT_ITEM = "countersign.account";
/** Which wallet the owner signed in with through near-connect (absent: a wallet elsewhere). */
const WALLET_ITEM = "countersign.wallet";
/** The page's name, in the tab's title after the number waiting. */
const NAME = "Countersign";

/** Where the page is: the list, a task's card, or Settings (a section, or its overview). */
type Route = { at: "list" } | { at: "task"; id: string } | { at: "settings"; section: string | null };

/** The route an address names; anything else is the list. */
function routeOf(hash: string): Route {
  const task = /^#\/tasks\/([^/?#]+)$/.exec(hash);
  if (task?.[1]) {
    try {
      return { at: "task", id: decodeURIComponent(task[1]) };
    } catch {
      return { at: "list" };
    }
  }
  const s = /^#\/settings(?:\/([a-z]+))?$/.exec(hash);
  if (s) {
    return { at: "settings", section: s[1] && SECTIONS.some((x) => x.id === s[1]) ? s[1] : null };
  }
  return { at: "list" };
}

/** The page, mounted on root. */
class Inbox {
  private device: KeyPair | null = null;
  private account: string | null = null;
  /** The connected wallet's name, when the owner signed in through near-connect. */
  private walletName: string | null = null;
  private readonly wallets: Wallets;
  private events: EventSource | null = null;
  /** Bumped by every listing (and at sign-out): a listing draws only while it is the last. */
  private listing = 0;
  /** The task an address asks to open, and the listing after which a listing may open it. */
  private wanted: { id: string; after: number } | null = null;
  /** The waiting tasks the last listing showed (null: none yet). */
  private seen: Set<string> | null = null;
  private relistTimer: number | undefined;
  private items = new Map<string, Item>();
  /** The confirm tasks selected in the list, to approve with one signature. */
  private picked = new Set<string>();
  private readonly batch: Batch;
  /** What the waiting list's items need of the page. */
  private readonly itemHost: ItemHost = {
    drawn: (id) => this.items.get(id),
    picked: this.picked,
    pickedChanged: () => this.batch.update(),
    open: (id) => this.go(`#/tasks/${encodeURIComponent(id)}`, "list"),
    unlock: () => void this.unlock(),
  };
  private readonly header = el("header");
  private readonly status = el("p", { class: "status", role: "status", "aria-live": "polite", id: "status" });
  private readonly body = el("div");
  private readonly listBox = el("div", { id: "list" });
  private readonly waitingTitle = el("h2", { id: "waiting-title", tabindex: "-1" }, "Waiting for you");
  private readonly waitingList = el("ul", { class: "tasks", id: "tasks", "aria-labelledby": "waiting-title" });
  private readonly emptyInbox = el(
    "div",
    { id: "tasks-empty", class: "empty-inbox" },
    el("p", { class: "empty" }, "Nothing is waiting for you."),
    el(
      "p",
      {},
      "When an agent you gave a project wants to do something you asked to see first, it waits here as a task (this tab's title counts them). You read it on this device and approve or reject it with your wallet; nothing happens until you do.",
    ),
    el("p", {}, el("a", { href: "#/settings/projects", id: "give-a-project" }, "Give an agent a project"), ": name the agent, and choose which of its writes happen at once and which ask you first."),
  );
  private readonly history: History;
  private readonly outcomes: Outcomes;
  /** What became of the shared tasks (several approvers) this page saw waiting. */
  private readonly watch: SharedWatch;
  private readonly card: Card;
  private readonly settings: Settings;
  private readonly keys: Keys;
  private readonly signIn: SignIn;

  constructor(
    private readonly root: HTMLElement,
    recipient: string,
    walletOptions: WalletOptions,
  ) {
    this.wallets = new Wallets(walletOptions);
    const historyHost = {
      device: () => this.device,
      say: (text: string, error?: boolean) => this.say(text, error),
      unlock: () => this.unlock(),
      // The history's fetches run in the background: one answered 401 after
      // the session ended for a reason already told (this device withdrawn,
      // signed out) must not tell another.
      ended: (why: string) => {
        if (this.account) {
          this.ended(why);
        }
      },
    };
    this.history = new History(historyHost);
    this.outcomes = new Outcomes(this.history, historyHost);
    this.watch = new SharedWatch({
      account: () => this.account,
      toldByHistory: (id) => this.outcomes.has(id),
      historyWords: (id) => {
        const o = this.history.entry(id);
        return o?.body?.result ? this.history.toldOf(o) : null;
      },
      task: async (id) => {
        try {
          return await api.task(id);
        } catch (e) {
          if (e instanceof Refused && e.status === 404) {
            return null;
          }
          throw e;
        }
      },
      tell: (id, state, word, title, text, failed) => this.outcomes.show(id, state, word, title, text, failed),
    });
    this.card = new Card({
      recipient,
      account: () => this.account,
      walletName: () => this.walletName,
      say: (text, error) => this.say(text, error),
      askSignature: (req, host, ids, submit) => this.askSignature(req, host, ids, submit),
      answered: (said) => this.answered(said),
      approved: (id, title) => this.outcomes.approved(id, title),
      leave: () => this.leaveCard(),
    });
    this.settings = new Settings({
      account: () => this.account,
      recipient,
      say: (text, error) => this.say(text, error),
      unsay: (text) => {
        if (this.status.textContent === text) {
          this.say("");
        }
      },
      askSignature: (req, host, ids, submit) => this.askSignature(req, host, ids, submit),
      ended: (why) => this.ended(why),
    });
    this.batch = new Batch({
      account: () => this.account,
      recipient,
      say: (text, error) => this.say(text, error),
      askSignature: (req, host, ids, submit) => this.askSignature(req, host, ids, submit),
      approved: (id, title) => this.outcomes.approved(id, title),
      selected: () => this.selected(),
      done: () => {
        this.picked.clear();
        for (const box of this.waitingList.querySelectorAll<HTMLInputElement>("input.task-pick")) {
          box.checked = false;
        }
        this.relist();
      },
    });
    this.listBox.append(
      this.outcomes.root,
      this.waitingTitle,
      el("p", { class: "keys-hint", id: "keys-hint" }, "Keys: ", el("kbd", {}, "j"), " and ", el("kbd", {}, "k"), " move, ", el("kbd", {}, "Enter"), " opens, ", el("kbd", {}, "?"), " lists them all."),
      this.waitingList,
      this.batch.root,
      this.emptyInbox,
      this.history.root,
    );
    this.signIn = new SignIn({
      recipient,
      wallets: this.wallets,
      device: () => this.device,
      say: (text, error) => this.say(text, error),
      walletName: () => this.walletName,
      setWalletName: (name) => {
        this.walletName = name;
      },
      signedInAs: (account) => this.signedInAs(account),
    });
    this.keys = new Keys({
      account: () => this.account,
      card: this.card,
      listBox: this.listBox,
      waitingList: this.waitingList,
      opened: (id) => !!this.items.get(id)?.opened,
      leaveCard: () => this.leaveCard(),
      go: (hash, from) => this.go(hash, from),
    });
    root.replaceChildren(this.header, this.status, this.body, this.keys.root);
    document.addEventListener("keydown", (ev) => this.keys.onKey(ev));
    // Links, the address bar, Back and Forward: the page shows what the address names.
    window.addEventListener("popstate", () => this.route());
    window.addEventListener("hashchange", () => this.route());
    window.setInterval(() => refreshTimes(document), 20_000);
    // Writes carried out at once raise no task event: the history is asked
    // again now and then while it is in sight, and when the tab comes back.
    window.setInterval(() => this.refreshHistory(), 30_000);
    document.addEventListener("visibilitychange", () => this.refreshHistory());
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

  /** Asks for the history again while the list is in sight. */
  private refreshHistory(): void {
    if (this.account && this.listBox.isConnected && !this.listBox.hidden && document.visibilityState === "visible") {
      void this.history.refresh().then(() => this.outcomes.check());
    }
  }

  private renderHeader(): void {
    const parts: Child[] = [el("h1", {}, el("a", { href: "#/", class: "home" }, NAME))];
    if (this.account) {
      parts.push(
        el(
          "div",
          { class: "actions" },
          el("span", { class: "who" }, "Signed in as ", accountEl(this.account, (t, e) => this.say(t, e), { id: "who" })),
          el("a", { href: "#/settings", class: "button secondary", id: "settings-link" }, "Settings"),
          button("Sign out", () => void this.signOut(), true),
        ),
      );
    }
    this.header.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
  }

  // ---- where the page is ----

  /** Goes to the address of route r as a new history entry (from: where it was left). */
  private go(hash: string, from: string): void {
    history.pushState({ from }, "", hash);
    this.route(true);
  }

  /**
   * Shows what the address names. A task the owner chose in the list
   * (direct) opens at once; one an address names (a link, Back, Forward)
   * opens once a listing begun after it was asked lists it as waiting.
   */
  private route(direct = false): void {
    if (!this.account || !this.device) {
      return; // a link waits in the address until the owner signs in
    }
    const r = routeOf(location.hash);
    if (r.at === "settings") {
      if (this.card.id) {
        this.card.close();
      }
      this.listBox.hidden = true;
      this.settings.show(r.section);
      this.setTitle();
      return;
    }
    if (this.settings.shown) {
      this.settings.hide();
    }
    if (r.at === "task") {
      if (this.card.id === r.id) {
        return;
      }
      const it = this.items.get(r.id);
      if (direct && it?.opened && !this.card.busy) {
        void this.showCard(it.view, it.opened);
        return;
      }
      this.wanted = { id: r.id, after: this.listing };
      this.relist();
      return;
    }
    const was = this.card.id;
    if (was) {
      this.card.close();
    }
    const hidden = this.listBox.hidden;
    this.listBox.hidden = false;
    this.setTitle();
    if (was || hidden) {
      // Back at the list: on the task that was open, or at the list's heading.
      const b = was ? this.waitingList.querySelector<HTMLElement>(`button.task-open[data-task="${CSS.escape(was)}"]`) : null;
      (b ?? this.waitingTitle).focus();
    }
  }

  /** Leaves the open card for the list: Back when the list opened it, else the list in its place. */
  private leaveCard(): void {
    if ((history.state as { from?: string } | null)?.from === "list" && routeOf(location.hash).at === "task") {
      history.back();
      return;
    }
    history.replaceState(null, "", location.pathname + location.search);
    this.route();
  }

  private async showCard(view: Listed, o: OpenedTask): Promise<void> {
    this.listBox.hidden = true;
    this.say("");
    await this.card.open(view, o);
    if (this.card.id === view.id) {
      this.setTitle();
      this.card.root.querySelector<HTMLElement>("#card-title")?.focus();
    }
  }

  /** The card was answered: back to the list, which is listed again. */
  private answered(said: string): void {
    this.leaveCard();
    this.say(said);
    this.relist();
  }

  /** The tab's title: the number waiting, and where the page is. */
  private setTitle(): void {
    const n = this.account ? this.items.size : 0;
    const where = this.settings.shown ? "Settings · " : this.card.id ? (this.card.root.querySelector("#card-title")?.textContent ?? "") + " · " : "";
    document.title = (n ? `(${n}) ` : "") + where + NAME;
  }

  // ---- signing in ----

  private showSignIn(): void {
    this.renderHeader();
    document.title = NAME;
    this.signIn.show(this.body);
  }

  /** The service signed this device in as account: its lists are drawn. */
  private async signedInAs(account: string): Promise<void> {
    this.account = account;
    localStorage.setItem(ACCOUNT_ITEM, account);
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
    if (this.listBox.parentNode !== this.body) {
      this.body.replaceChildren(this.listBox, this.card.root, this.settings.root);
    }
    this.listen();
    this.route();
    if (routeOf(location.hash).at === "list") {
      this.waitingTitle.focus();
    }
  }

  private async signOut(): Promise<void> {
    try {
      await api.signOut();
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
    this.settings.hide();
    // A listing under way, or due, would draw the list over the sign-in.
    this.listing++;
    window.clearTimeout(this.relistTimer);
    this.card.close();
    this.events?.close();
    this.events = null;
    localStorage.removeItem(ACCOUNT_ITEM);
    localStorage.removeItem(WALLET_ITEM);
    this.account = null;
    this.seen = null;
    this.wanted = null;
    this.items = new Map();
    this.picked.clear();
    this.waitingList.replaceChildren();
    this.history.clear();
    this.outcomes.clear();
    this.watch.clear();
    this.listBox.hidden = false;
    if (location.hash) {
      history.replaceState(null, "", location.pathname + location.search);
    }
    if (this.walletName) {
      this.walletName = null;
      void this.wallets.disconnect();
    }
    this.showSignIn();
    this.say(why);
  }

  // ---- the lists ----

  /** Lists the waiting and the closed tasks; false when there is no session. */
  private async list(): Promise<boolean> {
    const device = this.device;
    const account = this.account;
    if (!device || !account) {
      return false;
    }
    const mine = ++this.listing;
    let tasks: Listed[];
    const closedList = api.tasks("closed").then(
      (r) => r.tasks ?? [],
      () => null,
    );
    try {
      tasks = (await api.tasks("waiting")).tasks ?? [];
    } catch (e) {
      if (e instanceof Refused && e.status === 401) {
        if (this.listBox.isConnected) {
          this.ended("Your session ended: " + e.message);
        }
        return false;
      }
      this.say("The inbox cannot be listed now: " + (e instanceof Error ? e.message : String(e)), true);
      return true;
    }
    const historyDrawn = this.history.refresh();
    const closed = await closedList;
    const turns = turnsOf(tasks, closed ?? []);
    const items = await Promise.all(tasks.map((t) => waitingItem(this.itemHost, device, account, t, turns.get(t.id) ?? 0)));
    if (mine !== this.listing || this.account !== account) {
      return true; // a newer listing draws, or the session ended meanwhile
    }
    const arrived = this.seen === null ? [] : tasks.filter((t) => !this.seen?.has(t.id));
    if (this.listBox.parentNode !== this.body) {
      this.body.replaceChildren(this.listBox, this.card.root, this.settings.root);
      this.listBox.hidden = true;
    }
    this.drawWaiting(items);
    this.setTitle();
    if (closed) {
      this.history.rejected(closed, account);
    }
    // The open card of a shared task shows its approvals as they are now.
    const open = this.card.id ? this.items.get(this.card.id) : undefined;
    if (open) {
      this.card.refresh(open.view);
    }
    void historyDrawn.then(async () => {
      if (mine !== this.listing) {
        return;
      }
      await this.outcomes.check();
      const shared = items.filter((it) => approvalsOf(it.view)).map((it) => ({ view: it.view, title: it.opened ? displayTitle(it.opened) : null }));
      await this.watch.update(shared, closed);
    });

    // The live region tells of tasks that arrived since the last listing
    // (not of those there when the page opened, nor of redraws).
    this.seen = new Set(tasks.map((t) => t.id));
    if (arrived.length === 1 && arrived[0]) {
      const t = arrived[0];
      const title = this.items.get(t.id)?.li.querySelector(".task-title")?.textContent ?? "";
      this.announce(isApprover(t) ? `New task from ${t.preparer} in ${t.project} of ${shortened(t.owner ?? "")}, for your approval: ${title}.` : `New task from ${t.preparer}: ${title}.`);
    } else if (arrived.length > 1) {
      this.announce(`${arrived.length} new tasks are waiting for you.`);
    }
    // A task an address names opens once a listing begun after it was asked lists it.
    if (this.wanted && mine > this.wanted.after) {
      const id = this.wanted.id;
      this.wanted = null;
      const it = this.items.get(id);
      const here = routeOf(location.hash);
      if (it?.opened) {
        if (here.at === "task" && here.id === id) {
          await this.showCard(it.view, it.opened);
        }
      } else {
        // The address names a task that cannot be opened here: the list, saying why.
        if (here.at === "task" && here.id === id) {
          history.replaceState(null, "", location.pathname + location.search);
          this.route();
        }
        const c = closed?.find((x) => x.id === id);
        if (it) {
          this.say(`Task ${id} cannot be opened on this device: see why in the list.`, true);
        } else if (c) {
          this.say(`Task ${id} is closed: ${stateWords(String(c.state))}.`);
        } else {
          this.say(`Task ${id} is not in your inbox (it may have been purged, or belong to another account).`, true);
        }
      }
    }
    if (this.card.id && !this.items.has(this.card.id) && !this.card.busy) {
      this.leaveCard();
      this.say("The task you had open is no longer waiting.");
    }
    return true;
  }

  /** The confirm tasks selected, in the list's order. */
  private selected(): Pickable[] {
    const out: Pickable[] = [];
    for (const it of this.items.values()) {
      if (this.picked.has(it.view.id) && it.opened && it.view.kind === "confirm" && !approvalsOf(it.view)) {
        out.push({ id: it.view.id, project: it.view.project, opened: it.opened });
      }
    }
    return out;
  }

  /** Puts the items in the waiting list in order, keeping those already there (and the focus and pointer on them). */
  private drawWaiting(items: Item[]): void {
    const ul = this.waitingList;
    const focusedAt = [...ul.children].findIndex((li) => li.contains(document.activeElement));
    items.forEach((it, i) => {
      if (ul.children[i] !== it.li) {
        ul.insertBefore(it.li, ul.children[i] ?? null);
      }
    });
    while (ul.children.length > items.length) {
      ul.lastElementChild?.remove();
    }
    this.items = new Map(items.map((it) => [it.view.id, it]));
    for (const id of [...this.picked]) {
      if (!this.items.get(id)?.opened) {
        this.picked.delete(id);
      }
    }
    this.batch.root.hidden = items.filter((it) => it.opened && it.view.kind === "confirm" && !approvalsOf(it.view)).length < 2 && this.picked.size === 0;
    this.batch.update();
    // Items that would read the same show when each was asked, to the second.
    const count = new Map<string, number>();
    for (const it of items) {
      count.set(it.same, (count.get(it.same) ?? 0) + 1);
    }
    for (const it of items) {
      if (it.at) {
        it.at.hidden = (count.get(it.same) ?? 0) < 2;
      }
    }
    ul.hidden = !items.length;
    this.emptyInbox.hidden = items.length > 0;
    if (focusedAt >= 0 && !ul.contains(document.activeElement) && !this.listBox.hidden) {
      // The focused task left the list: the focus goes to the one now in its place.
      const b = ul.children[Math.min(focusedAt, ul.children.length - 1)]?.querySelector<HTMLElement>("button");
      (b ?? this.waitingTitle).focus();
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

  private async unlock(): Promise<void> {
    try {
      await api.unlock();
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
