// M-of-N approvers in the page (SPEC §7, §13 `approvers`, wave 3). A
// project's policy may name up to 9 accounts besides its owner and a
// threshold; each of its confirm tasks is then shared: sealed to every
// approver's devices, listed in each approver's inbox with its owner, and
// approved once the threshold of distinct accounts has signed the approve
// sentence, each with their own wallet. Any one of them may reject it.
//
// What is here: the words and panels a shared task shows (whose it is,
// "1 of 2 approved", who has and whether you have), in the list and on the
// card; what became of a shared task once it left the list (SharedWatch,
// told from the closed list, since an approver has no history of another
// owner's tasks); and, in Settings, the project editor's approvers and
// threshold (ApproversEditor).

import type * as api from "./api";
import { el, account as accountEl } from "./dom";
import { ACCOUNT } from "./sign";
import { clockWords, endingWords, utcWords } from "./words";

/** The most accounts a policy names as approvers besides its owner (SPEC §12). */
export const MAX_APPROVERS = 9;

/** Who approved a shared task so far, as the service lists it. */
export interface Approvals {
  /** How many distinct accounts that may approve it have; it needs need. */
  have: number;
  need: number;
  /** Who may approve it: the owner first, then the others. */
  approvers: string[];
  /** Who approved it, oldest first, with when the service took each approval. */
  by: { account: string; at: string }[];
  /** Whether this account approved it. */
  approved: boolean;
}

/** The members of a listed task (waiting or closed) this file reads. */
export interface SharedView {
  id: string;
  project: string;
  state?: string;
  owner?: string;
  role?: string;
  /** Read through approvalsOf. */
  approvals?: api.Approvals | null;
  rejected_by?: string;
  failure_reason?: string | null;
}

/** A task's approvals as the page can show them, or null: a task its owner alone approves (or a listing that names no approvers). */
export function approvalsOf(v: { approvals?: api.Approvals | null | undefined }): Approvals | null {
  const a = v.approvals;
  if (!a || !a.approvers || !a.by) {
    return null;
  }
  return { have: a.have, need: a.need, approvers: a.approvers, by: a.by, approved: a.approved };
}

/** Whether this account sees the task as an approver of another owner's project. */
export function isApprover(v: { role?: string }): boolean {
  return v.role === "approver";
}

/** "a", "a and b", "a, b and c". */
export function andList(words: string[]): string {
  if (words.length <= 1) {
    return words.join("");
  }
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1] ?? ""}`;
}

/** An account as the page says it to me: "you" for my own. */
function who(account: string, me: string): string {
  return account === me ? "you" : account;
}

/** "1 of 2 approved". */
export function countWords(a: Approvals): string {
  return `${a.have} of ${a.need} approved`;
}

/** Who approved it, in words ("carol.near and you"), "" when nobody has. */
export function whoApproved(a: Approvals, me: string): string {
  return andList(a.by.map((b) => who(b.account, me)));
}

/** How many more approvals it waits for, in words. */
function moreWords(a: Approvals): string {
  const left = Math.max(0, a.need - a.have);
  return left === 1 ? "1 more approval" : `${left} more approvals`;
}

/** How a rejection reads: "You rejected it. …", or who did. */
export function rejectedWords(by: string | undefined, me: string): string {
  if (!by || by === me) {
    return endingWords("rejected");
  }
  return `Rejected by ${by}. Nothing was written.`;
}

/** What the page says once this account's approval of a shared task is recorded and the task still waits. */
export function recordedWords(a: Approvals): string {
  return `Your approval is recorded: ${countWords(a)}. It waits for ${moreWords(a)}; any approver may still reject it.`;
}

/** The line a shared task shows in the waiting list: its count, who approved, and whether I have. */
export function listLine(a: Approvals, me: string): HTMLElement {
  const by = whoApproved(a, me);
  return el(
    "span",
    { class: "task-approvals", "data-have": String(a.have), "data-need": String(a.need), "data-approved": String(a.approved) },
    el("strong", {}, countWords(a)),
    by ? ` (by ${by})` : "",
    a.approved ? " · you approved it" : " · waiting for your approval",
  );
}

/** What a listed task's approvals look like, for telling when they changed. */
export function approvalsKey(a: Approvals | null): string {
  return a ? `${a.have}/${a.need}/${a.approved ? 1 : 0}/${a.approvers.join(",")}/${a.by.map((b) => b.account).join(",")}` : "";
}

/**
 * The card's panel of a shared task: whose it is, what it needs, and each
 * approver, in the service's order (the owner first), with whether and
 * when they approved.
 */
export function approvalsPanel(v: SharedView, a: Approvals, me: string): HTMLElement {
  const owner = v.owner ?? a.approvers[0] ?? "";
  const all = a.approvers.length;
  const rule = `it is carried out once ${a.need} of its ${all} approvers approve it, each with their own wallet; any one of them may reject it.`;
  const intro = isApprover(v)
    ? [`The project ${v.project} of `, accountEl(owner), ` names you among its approvers: ${rule}`]
    : [`Your project ${v.project} shares this task with its approvers (you among them): ${rule}`];
  const approvedAt = new Map(a.by.map((b) => [b.account, b.at]));
  const list = el(
    "ul",
    { class: "approvers", id: "card-approvers", "aria-label": "Who approves it" },
    ...a.approvers.map((acc, i) => {
      const at = approvedAt.get(acc);
      const ms = at ? Date.parse(at) : NaN;
      const li = el(
        "li",
        { "data-account": acc, "data-approved": String(at !== undefined) },
        acc === me ? "you" : accountEl(acc),
        i === 0 ? " (owner)" : "",
        " · ",
        at !== undefined
          ? el("span", { class: "approved-mark", title: Number.isNaN(ms) ? at : utcWords(ms) }, Number.isNaN(ms) ? "approved" : `approved at ${clockWords(ms)}`)
          : el("span", { class: "task-meta" }, "not yet"),
      );
      return li;
    }),
  );
  const mine = a.approved
    ? el("p", { id: "card-approved-already", class: "receipt ok" }, `You approved it. It waits for ${moreWords(a)}; you may still reject it.`)
    : null;
  return el(
    "section",
    { class: "shared", id: "card-approvals", "aria-labelledby": "card-approvals-title" },
    el("h3", { id: "card-approvals-title" }, "Approvals: ", el("span", { id: "card-approvals-count" }, countWords(a))),
    el("p", { id: "card-shared" }, ...intro),
    list,
    ...(mine ? [mine] : []),
  );
}

/** What the watch needs of the page around it. */
export interface WatchHost {
  account(): string | null;
  /** Whether the history will tell what became of id (the owner approved it here, crossing the threshold). */
  toldByHistory(id: string): boolean;
  /** The connector's words for how id ended, when the owner's history holds them (null: none). */
  historyWords(id: string): { word: string; text: string; failed: boolean } | null;
  /** The task as the service shows it now; null when it is not in this inbox any more. */
  task(id: string): Promise<SharedView | null>;
  /** Draws (or draws again) the banner of id above the list, and says it. */
  tell(id: string, state: string, word: string, title: string, text: string, failed: boolean): void;
}

/** A shared task the page saw waiting, until what became of it is told. */
interface Watched {
  title: string;
  role: string;
  /** The state last told ("" none yet). */
  told: string;
}

/**
 * What became of the shared tasks this page saw waiting, told in a banner
 * above the list once each leaves it: approved and being carried out, then
 * how it ended (done, failed, expired, void), or rejected and by whom. An
 * approver has no history of another owner's tasks, so this reads the
 * closed list (its state, rejected_by and failure_reason), for owner and
 * approver alike. A task this account rejected is not told again, and one
 * the owner approved here is told by the history (with the connector's
 * words).
 */
export class SharedWatch {
  private watched = new Map<string, Watched>();
  /** The tasks asked for alone just now. */
  private asking = new Set<string>();

  constructor(private readonly host: WatchHost) {}

  /** Forgets everything (signing out). */
  clear(): void {
    this.watched = new Map();
  }

  /**
   * Called with each listing: the shared tasks waiting (and their titles),
   * and the closed list (null when it could not be fetched).
   */
  async update(waiting: { view: SharedView; title: string | null }[], closed: SharedView[] | null): Promise<void> {
    const me = this.host.account();
    if (!me) {
      return;
    }
    const now = new Set<string>();
    for (const { view, title } of waiting) {
      if (!approvalsOf(view)) {
        continue;
      }
      now.add(view.id);
      const had = this.watched.get(view.id);
      this.watched.set(view.id, { title: title ?? had?.title ?? `Task ${view.id}`, role: view.role ?? "owner", told: "" });
    }
    if (closed === null) {
      return;
    }
    for (const [id, w] of [...this.watched]) {
      if (now.has(id) || this.asking.has(id)) {
        continue;
      }
      if (w.role !== "approver" && this.host.toldByHistory(id)) {
        this.watched.delete(id);
        continue;
      }
      let c: SharedView | null | undefined = closed.find((x) => x.id === id);
      if (!c) {
        // Not among the closed tasks listed (the newest): asked for alone.
        this.asking.add(id);
        try {
          c = await this.host.task(id);
        } catch {
          continue; // asked again with the next listing
        } finally {
          this.asking.delete(id);
        }
        if (this.watched.get(id) !== w || this.host.account() !== me) {
          continue;
        }
      }
      if (!c) {
        // Neither waiting nor closed in this inbox: taken off its approvers.
        this.watched.delete(id);
        if (w.role === "approver") {
          this.host.tell(id, "gone", "No longer yours to approve", w.title, "Its owner no longer lists you among the project's approvers: it left your inbox, and an approval you gave it no longer counts.", false);
        }
        continue;
      }
      this.told(id, w, c, me);
    }
  }

  /** Tells what c, a watched task no longer waiting, became (once per state). */
  private told(id: string, w: Watched, c: SharedView, me: string): void {
    const state = c.state === "answering" ? "approved" : (c.state ?? "");
    if (state === w.told || state === "open") {
      return;
    }
    const a = approvalsOf(c);
    const by = a ? whoApproved(a, me) : "";
    w.told = state;
    switch (state) {
      case "approved":
        this.host.tell(id, state, "Approved", w.title, `${a ? countWords(a) : "Approved"}${by ? ` (by ${by})` : ""}: the service carries it out now; what happens is told here.`, false);
        return;
      case "rejected":
        this.watched.delete(id);
        if (c.rejected_by === me) {
          return; // rejected here (or on another of my devices): said then
        }
        this.host.tell(id, state, c.rejected_by ? `Rejected by ${c.rejected_by}` : "Rejected", w.title,
          `Nothing was written. A reason, if ${c.rejected_by || "they"} gave one, is sealed for the agent alone.`, true);
        return;
    }
    this.watched.delete(id);
    const h = w.role !== "approver" ? this.host.historyWords(id) : null;
    const failed = state === "failed";
    const text = h?.text ?? (state === "done" ? `Approved by ${by || "its approvers"}, and carried out.` : endingWords(state, c.failure_reason ?? ""));
    const word = failed ? "Failed after its approval" : (ENDS[state] ?? state);
    this.host.tell(id, state, word, w.title, text, state !== "done");
  }
}

/** The word a banner leads with for how a shared task ended. */
const ENDS: Readonly<Record<string, string>> = { done: "Done", expired: "Expired", void: "Not carried out", cancelled: "Cancelled" };

// ---- Settings: a project's approvers and threshold ----

/** A policy's `approvers` as the editor shows it. */
export interface ApproversValue {
  accounts: string[];
  threshold: number;
}

/** Reads a policy's `approvers` member (undefined: none); null when it is not {accounts: [strings], threshold: a whole number} (it stays in the JSON). */
export function readApprovers(v: unknown): ApproversValue | null | undefined {
  if (v === undefined) {
    return undefined;
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    return null;
  }
  const o = v as Record<string, unknown>;
  const accounts = o["accounts"];
  const threshold = o["threshold"];
  if (Object.keys(o).some((k) => k !== "accounts" && k !== "threshold") || !Array.isArray(accounts) || !accounts.every((a) => typeof a === "string") || !Number.isInteger(threshold)) {
    return null;
  }
  return { accounts: accounts as string[], threshold: threshold as number };
}

/**
 * Checks approvers as the service reads them (SPEC §13, approvers.go's
 * Check): NEAR account ids, each once, at most 9, none the owner; the
 * threshold from 1 to 1 + accounts. Throws the sentence the page tells.
 */
export function checkApprovers(a: ApproversValue, owner: string): void {
  if (a.accounts.length > MAX_APPROVERS) {
    throw new Error(`${a.accounts.length} approvers are named; at most ${MAX_APPROVERS} besides you`);
  }
  a.accounts.forEach((acc, i) => {
    if (!ACCOUNT.test(acc)) {
      throw new Error(`approver ${acc} is not a NEAR account id`);
    }
    if (acc === owner) {
      throw new Error("you are named among the approvers: you approve already, so list the other accounts only");
    }
    if (a.accounts.indexOf(acc) !== i) {
      throw new Error(`${acc} is named twice among the approvers`);
    }
  });
  if (!Number.isInteger(a.threshold) || a.threshold < 1 || a.threshold > 1 + a.accounts.length) {
    throw new Error(`the number who must approve is ${a.threshold}; with ${a.accounts.length} approvers besides you it is from 1 to ${1 + a.accounts.length}`);
  }
}

/** What approvers do, in the words the service's policy reader uses. */
export function approversWords(a: ApproversValue | null): string {
  if (!a || a.accounts.length === 0) {
    return "Only you approve what a write asks.";
  }
  const all = andList(["you", ...a.accounts]);
  return a.threshold === a.accounts.length + 1
    ? `A write that asks waits for each of ${all} to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone.`
    : `A write that asks waits for ${a.threshold} of ${all} to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone.`;
}

/**
 * The project editor's approvers: the other accounts (separated by commas
 * or spaces) and how many must approve, 1 to 1 + accounts, said in words
 * as they change. Adding the first approver sets the number to 2 (you and
 * them); taking approvers off lowers it to what is left.
 */
export class ApproversEditor {
  readonly root: HTMLElement;
  private readonly accounts: HTMLInputElement;
  private readonly threshold: HTMLSelectElement;
  private readonly words: HTMLElement;
  private count = 0;

  constructor(prefix: string, start: ApproversValue | undefined, changed: () => void) {
    this.accounts = el("input", { id: `${prefix}-accounts`, name: `${prefix}-accounts`, spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": `${prefix}-help` });
    this.accounts.value = start?.accounts.join(", ") ?? "";
    this.threshold = el("select", { id: `${prefix}-threshold`, name: `${prefix}-threshold`, "aria-describedby": `${prefix}-words` });
    this.words = el("p", { id: `${prefix}-words`, class: "approvers-words" });
    this.root = el(
      "fieldset",
      { class: "choices approvers-editor", id: prefix },
      el("legend", {}, "Who approves what asks"),
      el(
        "p",
        { class: "task-meta", id: `${prefix}-help` },
        `Besides you, up to ${MAX_APPROVERS} NEAR accounts, separated by commas or spaces. Each sees what this project asks in their own inbox and approves with their own wallet; any of them may reject it. Listing an account grants it nothing else.`,
      ),
      el("label", { for: `${prefix}-accounts` }, "Approvers besides you"),
      this.accounts,
      el("label", { for: `${prefix}-threshold` }, "How many must approve, you included"),
      this.threshold,
      this.words,
    );
    this.count = this.typed().length;
    this.fill(start?.threshold ?? 1);
    this.accounts.addEventListener("input", () => {
      const n = this.typed().length;
      let want = Math.min(Number(this.threshold.value) || 1, 1 + Math.max(n, 0));
      if (this.count === 0 && n > 0 && want === 1) {
        want = 2; // the first approver: you and them
      }
      this.count = n;
      this.fill(want);
      changed();
    });
    this.threshold.addEventListener("change", () => {
      this.say();
      changed();
    });
  }

  /** The accounts typed, as written. */
  private typed(): string[] {
    return this.accounts.value.split(/[\s,]+/).filter((a) => a !== "");
  }

  /** The threshold's choices for the accounts typed, keeping want within them. */
  private fill(want: number): void {
    const most = 1 + Math.min(this.count, MAX_APPROVERS);
    const opts = [];
    for (let k = 1; k <= most; k++) {
      opts.push(el("option", { value: String(k) }, k === 1 && most === 1 ? "1 (you)" : `${k} of ${most}`));
    }
    // A saved threshold outside the choices stays, so that saving does not change it unseen.
    if (want > most) {
      opts.push(el("option", { value: String(want) }, `${want} of ${most} (more than there are)`));
    }
    this.threshold.replaceChildren(...opts);
    this.threshold.value = String(Math.max(1, want));
    this.say();
  }

  private say(): void {
    const accounts = this.typed();
    this.words.textContent = accounts.length ? approversWords({ accounts, threshold: Number(this.threshold.value) }) : approversWords(null);
  }

  /** The `approvers` member to save (null: none), checked; throws the refusal. */
  value(owner: string): ApproversValue | null {
    const accounts = this.typed();
    const threshold = Number(this.threshold.value);
    if (accounts.length === 0) {
      return null;
    }
    const a = { accounts, threshold };
    checkApprovers(a, owner);
    return a;
  }
}
