// The owner's history (SPEC §6, GET /inbox/activity), below the waiting
// list: one entry per write carried out, asked or not, and per task that
// ended, newest first, each opened on this device (its title, summary and
// result are sealed to the owner's devices). Each entry reads as its title,
// how it ended in the connector's words, and where (project, connector and
// operation, agent, time); a write carried out at once is marked as not
// asked; a failure is said as one. Each opens to its details: what
// approving it did, what happened, its link. Filtered by project and by
// agent; older entries page in with Show more.
//
// The history also tells the outcome of the tasks this page approved: the
// page keeps their ids (never what they show) until their entry arrives,
// and says then, in a banner above the list and in the live region, what
// happened: done with the connector's words and link, or, loudly, a
// failure and its reason.

import { rejectedWords } from "./approvers";
import { EntryError, openEntry, type EntryBody, type EntryView, type KeyPair } from "./crypto";
import * as api from "./api";
import { el, button, refusal, when, account as accountEl, Refused } from "./dom";
import { endedWord, endingWords, utcWords } from "./words";

/** Entries a page of the history asks for. */
const PAGE = 20;
/** The most a page of the history may ask for (SPEC §6's limit). */
const MAX_PAGE = 100;
/** How far back the end of a task approved here is looked for. */
const RECENT = 50;
/** Where the page remembers the ids of tasks it approved and has not told the end of (never what they show). */
const PENDING_ITEM = "countersign.approved";

/** What the history needs of the page around it. */
export interface HistoryHost {
  device(): KeyPair | null;
  say(text: string, error?: boolean): void;
  unlock(): Promise<void>;
  /** The session ended (a 401): the page signs out. */
  ended(why: string): void;
}

/** An entry as this device reads it: what the service listed, and its sealed body opened (or why not). */
export interface Opened {
  view: EntryView;
  body: EntryBody | null;
  /** Why the body cannot be shown: "locked" (no copy for this device), or a sentence. */
  problem: "locked" | string | null;
}

/**
 * How an opened entry ended, as one line: what happened (the connector's
 * words, else the service's), after the word for how it ended when those
 * words do not say it themselves ("" then). A failure always leads with
 * its word. rejectedBy names who rejected a shared task when it was not
 * this account (one of its approvers).
 */
export function told(o: Opened, rejectedBy = ""): { word: string; text: string; failed: boolean } {
  const v = o.view;
  const failed = v.state === "failed";
  const result = o.body?.result ?? "";
  if (result) {
    return { word: endedWord(v.state), text: result, failed };
  }
  if (v.state === "rejected" && rejectedBy) {
    return { word: "", text: rejectedWords(rejectedBy, ""), failed };
  }
  return { word: failed ? endedWord(v.state) : "", text: endingWords(v.state, v.failure_reason ?? ""), failed };
}

/** An ended line: its word in bold, then what happened. */
function toldLine(t: { word: string; text: string }): (Node | string)[] {
  return t.word ? [el("strong", {}, t.word), `: ${t.text}`] : [t.text];
}

/** An entry's title: the one sealed, else its operation and connector. */
export function titleOf(o: Opened): string {
  return o.body?.title || `${o.view.operation} of ${o.view.connector}`;
}

/** The history below the waiting list. */
export class History {
  readonly root = el("section", { id: "history-box", "aria-labelledby": "history-title" });
  private readonly list = el("ul", { class: "tasks history", id: "history", "aria-labelledby": "history-title" });
  private readonly empty = el("p", { class: "empty", id: "history-empty" }, "Nothing in your history yet.");
  private readonly locked = el("div", { class: "history-locked", id: "history-locked" });
  private readonly project = el("select", { id: "history-project", name: "history-project" });
  private readonly agent = el("select", { id: "history-agent", name: "history-agent" });
  private readonly more: HTMLButtonElement;
  /** Each entry drawn, by id: drawn again only when what it was drawn from changes (an open one stays open). */
  private items = new Map<string, { key: string; li: HTMLLIElement; opened: Opened }>();
  /** How many entries the list shows: a refresh asks for as many. */
  private shown = 0;
  /** Bumped by each refresh: only the last one draws. */
  private gen = 0;
  /** Bumped when what the list is of changes (a filter, signing out): a late page of before draws nothing. */
  private epoch = 0;
  /** Whether older entries follow the last one shown. */
  private older = false;
  /** The projects and agents the filters offer. */
  private projects = new Set<string>();
  private agents = new Set<string>();
  private projectsAt = 0;
  /** Who rejected each rejected shared task of the closed list, when it was another account than this one (by task id). */
  private rejecters = new Map<string, string>();

  constructor(private readonly host: HistoryHost) {
    this.more = button("Show more", () => void this.showMore(), true);
    this.more.id = "history-more";
    this.more.hidden = true;
    this.project.append(el("option", { value: "" }, "All projects"));
    this.agent.append(el("option", { value: "" }, "All agents"));
    for (const s of [this.project, this.agent]) {
      s.addEventListener("change", () => {
        this.shown = 0;
        this.epoch++;
        void this.refresh();
      });
    }
    this.locked.hidden = true;
    this.root.append(
      el("h2", { id: "history-title" }, "History"),
      el(
        "p",
        { class: "task-meta", id: "history-about" },
        "Every write your agents carried out, asked or not, and every task that ended, for 30 days. Open one for what it did.",
      ),
      el(
        "div",
        { class: "history-filters", role: "group", "aria-label": "Which entries" },
        el("span", { class: "filter" }, el("label", { for: "history-project" }, "Project"), this.project),
        el("span", { class: "filter" }, el("label", { for: "history-agent" }, "Agent"), this.agent),
      ),
      this.locked,
      this.empty,
      this.list,
      el("div", { class: "actions" }, this.more),
    );
  }

  /** Forgets everything drawn (signing out). */
  clear(): void {
    this.gen++;
    this.epoch++;
    this.items = new Map();
    this.list.replaceChildren();
    this.shown = 0;
    this.projects = new Set();
    this.agents = new Set();
    this.projectsAt = 0;
    this.rejecters = new Map();
    for (const s of [this.project, this.agent]) {
      s.value = "";
      while (s.options.length > 1) {
        s.lastElementChild?.remove();
      }
    }
  }

  /** How an entry ended, as told(), naming who rejected a shared task when it was not this account. */
  toldOf(o: Opened): { word: string; text: string; failed: boolean } {
    return told(o, o.view.task_id ? (this.rejecters.get(o.view.task_id) ?? "") : "");
  }

  /**
   * Learns who rejected the rejected tasks of the closed list (the
   * service's rejected_by; the history's entries do not carry it): an
   * entry of a shared task an approver rejected is told as theirs, never
   * as "You rejected it". Entries drawn already are drawn again.
   */
  rejected(closed: { id: string; state?: string; rejected_by?: string }[], me: string): void {
    const changed: string[] = [];
    for (const c of closed) {
      const by = c.state === "rejected" && c.rejected_by && c.rejected_by !== me ? c.rejected_by : "";
      if (by && this.rejecters.get(c.id) !== by) {
        this.rejecters.set(c.id, by);
        changed.push(c.id);
      }
    }
    for (const [id, x] of this.items) {
      if (x.opened.view.task_id && changed.includes(x.opened.view.task_id)) {
        const li = this.item(x.opened);
        x.li.replaceWith(li);
        this.items.set(id, { key: this.keyOf(x.opened.view), li, opened: x.opened });
      }
    }
  }

  /** The entry opened for id, when the list holds it. */
  entry(id: string): Opened | null {
    return this.items.get(id)?.opened ?? null;
  }

  /** Whether a filter narrows the list. */
  get filtered(): boolean {
    return this.project.value !== "" || this.agent.value !== "";
  }

  /**
   * Fetches the history's first entries (as many as shown, at most 100)
   * under the filters and draws them; older entries shown beyond those
   * stay where they are.
   */
  async refresh(): Promise<void> {
    const mine = ++this.gen;
    const limit = Math.min(MAX_PAGE, Math.max(PAGE, this.shown));
    const got = await this.fetch({ limit });
    if (mine !== this.gen || got === null) {
      return;
    }
    const fresh = new Set(got.entries.map((o) => o.view.id));
    const tail = [...this.items.values()].slice(limit).filter((x) => !fresh.has(x.opened.view.id));
    if (tail.length && got.more) {
      this.draw([...got.entries, ...tail.map((x) => x.opened)], this.older, false);
    } else {
      this.draw(got.entries, got.more, false);
    }
    void this.loadFilters();
  }

  /** The entries of ids among the history's newest, whatever the filters, opened on this device. */
  async recent(ids: Set<string>): Promise<Opened[]> {
    let r: api.ActivityPage;
    try {
      r = await api.activity(new URLSearchParams({ limit: String(RECENT) }));
    } catch {
      return [];
    }
    return Promise.all((r.entries ?? []).filter((v) => ids.has(v.id)).map((v) => this.open(v)));
  }

  private async showMore(): Promise<void> {
    const last = [...this.items.values()].pop();
    if (!last) {
      return;
    }
    const epoch = this.epoch;
    this.more.disabled = true;
    const got = await this.fetch({ limit: PAGE, before: last.opened.view.id });
    this.more.disabled = false;
    if (epoch !== this.epoch || got === null) {
      return;
    }
    this.draw(got.entries, got.more, true);
    // The first entry it brought has the focus: the keyboard reads on from there.
    this.list.querySelector<HTMLElement>(`li[data-entry="${CSS.escape(got.entries[0]?.view.id ?? "")}"] summary`)?.focus();
  }

  private async fetch(q: { limit: number; before?: string }): Promise<{ entries: Opened[]; more: boolean } | null> {
    const p = new URLSearchParams({ limit: String(q.limit) });
    if (q.before) {
      p.set("before", q.before);
    }
    if (this.project.value) {
      p.set("project", this.project.value);
    }
    if (this.agent.value) {
      p.set("preparer", this.agent.value);
    }
    let r: api.ActivityPage;
    try {
      r = await api.activity(p);
    } catch (e) {
      if (e instanceof Refused && e.status === 401) {
        this.host.ended("Your session ended: " + e.message);
        return null;
      }
      this.empty.textContent = "Your history cannot be listed now: " + refusal(e);
      this.empty.hidden = false;
      return null;
    }
    const entries = await Promise.all((r.entries ?? []).map((v) => this.open(v)));
    return { entries, more: r.more === true };
  }

  /** Opens an entry on this device, or reuses the one opened from the same bytes. */
  private async open(v: EntryView): Promise<Opened> {
    const had = this.items.get(v.id);
    if (had && had.key === this.keyOf(v)) {
      return { ...had.opened, view: v };
    }
    const device = this.host.device();
    if (!device) {
      return { view: v, body: null, problem: "this device has no key" };
    }
    try {
      return { view: v, body: await openEntry(device, v), problem: null };
    } catch (e) {
      if (e instanceof EntryError && e.reason === "locked") {
        return { view: v, body: null, problem: "locked" };
      }
      return { view: v, body: null, problem: e instanceof Error ? e.message : String(e) };
    }
  }

  /** Draws the entries (appended after those shown, or in their place), keeping the items that did not change. */
  private draw(entries: Opened[], more: boolean, append: boolean): void {
    const next = new Map(append ? this.items : []);
    const lis: HTMLLIElement[] = append ? [...this.list.children].filter((c): c is HTMLLIElement => c instanceof HTMLLIElement) : [];
    for (const o of entries) {
      const key = this.keyOf(o.view);
      const had = this.items.get(o.view.id);
      const li = had && had.key === key ? had.li : this.item(o);
      if (next.has(o.view.id)) {
        continue;
      }
      next.set(o.view.id, { key, li, opened: o });
      lis.push(li);
      this.projects.add(o.view.project);
      this.agents.add(o.view.preparer);
    }
    const ul = this.list;
    lis.forEach((li, i) => {
      if (ul.children[i] !== li) {
        ul.insertBefore(li, ul.children[i] ?? null);
      }
    });
    while (ul.children.length > lis.length) {
      ul.lastElementChild?.remove();
    }
    this.items = next;
    this.shown = lis.length;
    this.older = more;
    ul.hidden = lis.length === 0;
    this.empty.textContent = this.filtered ? "Nothing in the history of this project and agent." : "Nothing in your history yet: each write your agents carry out, and each task that ends, is listed here.";
    this.empty.hidden = lis.length > 0;
    this.more.hidden = !more;
    const locked = [...next.values()].filter((x) => x.opened.problem === "locked").length;
    if (locked) {
      this.locked.replaceChildren(
        el("p", {}, `${locked === 1 ? "One entry is" : `${locked} entries are`} locked on this device: written before it signed in. Unlock gives this device a copy of each.`),
        button("Unlock the history", () => void this.host.unlock(), true),
      );
    }
    this.locked.hidden = locked === 0;
    this.fillFilters();
  }

  /** One entry: its title, how it ended, where; its details when opened. */
  private item(o: Opened): HTMLLIElement {
    const v = o.view;
    const direct = v.via === "direct";
    const meta = el(
      "span",
      { class: "task-meta" },
      `${v.project} · `,
      el("span", { class: "mono" }, v.operation),
      ` on ${v.connector} · by `,
      accountEl(v.preparer),
      " · ",
      when(v.at, "", false),
    );
    const li = el("li", { class: "task entry", "data-entry": v.id, "data-state": v.state, "data-via": v.via });
    if (o.problem !== null) {
      li.classList.add("task-locked");
      li.append(
        ...present(
          el("span", { class: "task-title" }, o.problem === "locked" ? "Locked on this device" : "This entry cannot be shown"),
          el("span", { class: `entry-outcome${v.state === "failed" ? " failure" : ""}` }, ...toldLine(this.toldOf(o))),
          meta,
          o.problem === "locked" ? null : el("span", { class: "task-meta" }, o.problem),
        ),
      );
      return li;
    }
    const t = this.toldOf(o);
    if (t.failed) {
      li.classList.add("entry-failed");
    }
    const body = o.body as EntryBody;
    const summary = el(
      "summary",
      {},
      el("span", { class: "task-title" }, titleOf(o)),
      el("span", { class: `entry-outcome${t.failed ? " failure" : ""}` }, ...toldLine(t)),
      direct ? el("span", { class: "not-asked" }, "Not asked: ran at once under your policy") : null,
      meta,
    );
    const dl = el("dl", { class: "details entry-details" });
    const row = (dt: string, ...dd: (Node | string)[]) => dl.append(el("dt", {}, dt), el("dd", {}, ...dd));
    if (body.summary) {
      row(direct ? "What it did" : v.state === "done" ? "What approving it did" : "What approving it would have done", body.summary);
    }
    row("What happened", t.text);
    if (body.url) {
      row("Where to see it", el("a", { href: body.url, rel: "noopener noreferrer", target: "_blank" }, body.url));
    }
    row("How", direct ? "Carried out at once: your policy did not ask you." : v.task_id ? `Asked you as task ${v.task_id}.` : "Asked you.");
    row("Project", `${v.project} (the ${v.connector} connector)`);
    row("Operation", el("span", { class: "mono" }, v.operation));
    row("Agent", el("span", { class: "mono" }, v.preparer));
    row("When", utcWords(Date.parse(v.at)));
    if (v.failure_reason) {
      row("Failure", el("span", { class: "mono" }, v.failure_reason));
    }
    row("Entry", el("span", { class: "mono" }, v.id));
    li.append(el("details", {}, summary, dl));
    return li;
  }

  /** What an entry's item is drawn from. */
  private keyOf(v: EntryView): string {
    return `${v.state}|${v.failure_reason ?? ""}|${v.sealed}|${v.device_copy ?? ""}|${v.task_id ? (this.rejecters.get(v.task_id) ?? "") : ""}`;
  }

  /** Fetches the projects (their names and agents) for the filters, at most once a minute. */
  private async loadFilters(): Promise<void> {
    if (Date.now() - this.projectsAt < 60_000) {
      return;
    }
    this.projectsAt = Date.now();
    try {
      const r = await api.projects();
      for (const p of r.projects ?? []) {
        this.projects.add(p.name);
        for (const a of p.agents ?? []) {
          this.agents.add(a);
        }
      }
    } catch {
      return; // the entries' own projects and agents are offered
    }
    this.fillFilters();
  }

  /** Puts the projects and agents known in the filters, sorted, keeping the choice. */
  private fillFilters(): void {
    for (const [s, all] of [
      [this.project, this.projects],
      [this.agent, this.agents],
    ] as const) {
      const have = new Set([...s.options].map((o) => o.value));
      if ([...all].every((x) => have.has(x))) {
        continue;
      }
      const chosen = s.value;
      const first = s.options[0];
      s.replaceChildren(...(first ? [first] : []), ...[...all].sort().map((x) => el("option", { value: x }, x)));
      s.value = chosen;
    }
  }
}

/** The nodes given, without the nulls. */
function present(...nodes: (Node | null)[]): Node[] {
  return nodes.filter((n): n is Node => n !== null);
}



/** One task this page approved, until its end is told. */
interface Pending {
  id: string;
  /** What it was called on its card (kept in memory only). */
  title: string;
  banner: HTMLElement;
}

/**
 * The outcomes of the tasks this page approved: a banner each above the
 * list, "being carried out" until the task's entry is in the history, then
 * what happened (a failure loudly), until the owner dismisses it.
 */
export class Outcomes {
  readonly root = el("div", { id: "outcomes", class: "outcomes" });
  private pending = new Map<string, Pending>();

  constructor(
    private readonly history: History,
    private readonly host: HistoryHost,
  ) {
    // Tasks approved before a reload: their end is still told.
    for (const id of readPending()) {
      this.add(id, "");
    }
  }

  /** A task this page approved: its banner says so until its end is known. */
  approved(id: string, title: string): void {
    this.add(id, title);
    this.save();
  }

  private add(id: string, title: string): void {
    this.pending.get(id)?.banner.remove();
    const banner = el("div", { class: "outcome", "data-outcome": id, "data-state": "approved" });
    this.draw(banner, id, "Approved", title || `Task ${id}`, "The service carries it out now; what happens is told here.", false);
    this.pending.set(id, { id, title, banner });
    this.root.prepend(banner);
  }

  /** Whether the end of id, approved here, is still to be told from the history. */
  has(id: string): boolean {
    return this.pending.has(id);
  }

  /**
   * Tells what became of a task whose end the history does not tell (a
   * shared task, read from the closed list): its banner, drawn again as
   * the task moves, and the live region.
   */
  show(id: string, state: string, word: string, title: string, text: string, failed: boolean): void {
    if (this.pending.has(id)) {
      return;
    }
    let banner = [...this.root.children].find((b): b is HTMLElement => b instanceof HTMLElement && b.dataset["outcome"] === id);
    if (!banner) {
      banner = el("div", { class: "outcome", "data-outcome": id });
      this.root.prepend(banner);
    }
    banner.dataset["state"] = state;
    banner.classList.toggle("failure", failed);
    this.draw(banner, id, word, title, text, failed);
    this.host.say(`${word}: ${title}. ${text}`, failed);
  }

  /** Forgets every banner (signing out). */
  clear(): void {
    this.pending = new Map();
    this.root.replaceChildren();
    sessionStorage.removeItem(PENDING_ITEM);
  }

  /**
   * Tells the end of each approved task whose entry the history now holds
   * (looked for among the newest entries whatever the filters).
   */
  async check(): Promise<void> {
    if (!this.pending.size) {
      return;
    }
    let found = [...this.pending.keys()].map((id) => this.history.entry(id)).filter((o): o is Opened => o !== null);
    if (found.length < this.pending.size) {
      found = await this.history.recent(new Set(this.pending.keys()));
    }
    for (const o of found) {
      const p = this.pending.get(o.view.id);
      if (!p) {
        continue;
      }
      this.pending.delete(o.view.id);
      const t = this.history.toldOf(o);
      const title = o.body?.title || p.title || titleOf(o);
      const word = t.failed ? "Failed after your approval" : t.word || endedWord(o.view.state);
      this.draw(p.banner, o.view.id, word, title, t.text, t.failed, o.body?.url ?? "");
      p.banner.dataset["state"] = o.view.state;
      p.banner.classList.toggle("failure", t.failed || o.view.state !== "done");
      this.host.say(`${word}: ${title}. ${t.text}`, t.failed);
    }
    this.save();
  }

  private draw(banner: HTMLElement, id: string, word: string, title: string, text: string, failed: boolean, url = ""): void {
    const dismiss = button("Dismiss", () => {
      banner.remove();
      this.pending.delete(id);
      this.save();
    }, true);
    dismiss.setAttribute("aria-label", `Dismiss: ${word}, ${title}`);
    banner.replaceChildren(
      ...present(
        el("p", { class: "outcome-title" }, el("strong", {}, word), `: ${title}`),
        el("p", { class: failed ? "outcome-text failure" : "outcome-text" }, text),
        url ? el("p", {}, el("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, url)) : null,
        el("div", { class: "actions" }, dismiss),
      ),
    );
  }

  private save(): void {
    const ids = [...this.pending.keys()];
    if (ids.length) {
      sessionStorage.setItem(PENDING_ITEM, JSON.stringify(ids));
    } else {
      sessionStorage.removeItem(PENDING_ITEM);
    }
  }
}

/** The ids of approved tasks a page before a reload had not told the end of. */
function readPending(): string[] {
  try {
    const v: unknown = JSON.parse(sessionStorage.getItem(PENDING_ITEM) ?? "[]");
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && /^[a-z0-9-]{1,80}$/.test(x)).slice(0, 20) : [];
  } catch {
    return [];
  }
}
