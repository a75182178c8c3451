// A task's card: what the task shows (each field as text with its label, a
// connector's diff as a code review draws it, long texts as the plain text
// that will be sent), its files, exactly what is signed, the agent's
// request, the countdown to its expiry, the check of the run's receipt
// before Approve, and the answers: Approve (one wallet prompt), Reject
// (asked once more, with a reason), Got it. The technical words stay one
// click away, under Details. Always allow this (allow.ts) adds a rule from
// a confirm task, and may approve it in the same step. A shared task (M-of-N
// approvers, approvers.ts) shows whose it is and who has approved; it takes
// no note, and is never always allowed.

import { approvalsOf, approvalsPanel, isApprover, recordedWords, type SharedView } from "./approvers";
import { AllowStep, allowWhen, connectorOf, declaresRules, readsWrites, type PreparedApproval } from "./allow";
import { fitsShape, shapeFor, type TextShape } from "./answer";
import { FileMismatchError, MAX_SEALED_REPLY_BYTES, SEALED_OVERHEAD, sealTo, fromBase64, openTaskFile, sealText, sha256Hex, supplyHash, toBase64, type Bytes, type OpenedTask, type TaskView } from "./crypto";
import { diffView, parseDiff } from "./diff";
import * as api from "./api";
import { el, button, withKey, refusal, Refused, when, account as accountEl, type Child } from "./dom";
import { ReceiptError, runKeys, verifyReceipt } from "./origin";
import { approvalSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type Signature, type SignRequest } from "./wallet";
import { WORDS, FIELD_LABELS, buildWords, byteCount, countdown, kindWords, localWords, safeFileName, sentenceTime, utcWords } from "./words";

/** The bytes an answer supplies (null: nothing), read when Approve is pressed. */
type Answer = () => Promise<Bytes | null>;

/** An answer that does not fit what the connector expects: told next to its box, and nothing signed. */
class AnswerMismatch extends Error {}

/** The largest file an answer can carry: the contract's 8 KiB sealed, less the sealing's overhead. */
const MAX_ANSWER_FILE = MAX_SEALED_REPLY_BYTES - SEALED_OVERHEAD;

/** What the card needs of the page around it. */
export interface CardHost {
  readonly recipient: string;
  account(): string | null;
  /** The wallet connected through near-connect, if any (its prompt is one at a time). */
  walletName(): string | null;
  say(text: string, error?: boolean): void;
  askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature>;
  /** The card was answered (approved, rejected, closed): said says so. */
  answered(said: string): void;
  /** The task was approved here: what happens is to be told when it ends (from the history). */
  approved(id: string, title: string): void;
  /** The owner leaves the card (Back to the list, Esc). */
  leave(): void;
}

type Field = { kind?: unknown; label?: unknown; values?: unknown; written_by?: unknown };

const str = (v: unknown) => (typeof v === "string" ? v : String(v ?? ""));

/** A task's title and summary (SPEC §8 display), "" where it has none. */
export function displayOf(o: OpenedTask): { title: string; summary: string } {
  const d = (o.envelope["display"] ?? {}) as { title?: unknown; summary?: unknown };
  return { title: typeof d.title === "string" ? d.title : "", summary: typeof d.summary === "string" ? d.summary : "" };
}

/** The task card, drawn in root. */
export class Card {
  readonly root = el("section", { id: "card", "aria-labelledby": "card-title", hidden: "" });
  /** The open task's id, null when none. */
  id: string | null = null;
  /** Set while an answer is on its way: a listing does not close the card then. */
  busy = false;
  /** A task to start Always allow this on once its card is open and its receipt checked (Shift+A in the list). */
  wantAllow: string | null = null;
  /** Whether the open card reached its expires_at and is read-only. */
  private expired = false;
  /** The open card's shared task: its approvals panel and Approve, drawn again as its approvals change. */
  private shared: { view: TaskView & SharedView; panel: HTMLElement; approve: HTMLButtonElement | null } | null = null;
  private timer: number | undefined;

  constructor(private readonly host: CardHost) {}

  close(): void {
    window.clearInterval(this.timer);
    this.id = null;
    this.busy = false;
    this.shared = null;
    this.root.replaceChildren();
    this.root.hidden = true;
  }

  /**
   * The open card's shared task listed again: its approvals panel drawn
   * anew when who approved changed (another approver, or this account on
   * another device), and Approve hidden once this account approved.
   */
  refresh(view: TaskView & SharedView): void {
    const sh = this.shared;
    const account = this.host.account();
    const a = approvalsOf(view);
    if (!sh || !account || !a || view.id !== this.id) {
      return;
    }
    const panel = approvalsPanel(view, a, account);
    if (panel.textContent === sh.panel.textContent) {
      return;
    }
    sh.panel.replaceWith(panel);
    this.shared = { view, panel, approve: sh.approve };
    if (sh.approve && a.approved && !this.busy) {
      sh.approve.hidden = true;
      this.root.querySelector("#approve-step")?.setAttribute("hidden", "");
    }
  }

  /** a approves, Shift+A always allows (k "A"), r rejects, g closes a notice: the card's buttons by their keys. */
  key(k: string): boolean {
    if (!this.id || this.root.hidden) {
      return false;
    }
    const b = this.root.querySelector<HTMLButtonElement>(`#card-actions button[aria-keyshortcuts="${k === "A" ? "Shift+A" : k}"]`);
    if (!b || b.disabled || b.offsetParent === null) {
      return false;
    }
    b.focus();
    b.click();
    return true;
  }

  /** Opens a task's card: what it shows, exactly what is signed, the countdown, the receipt's check, the answers. */
  async open(view: TaskView & SharedView, o: OpenedTask): Promise<void> {
    const account = this.host.account();
    if (!account) {
      return;
    }
    window.clearInterval(this.timer);
    if (this.wantAllow !== view.id) {
      this.wantAllow = null;
    }
    this.id = view.id;
    this.busy = false;
    this.expired = false;
    this.shared = null;
    const e = o.envelope;
    const id = view.id;
    const display = (e["display"] ?? {}) as { title?: unknown; summary?: unknown; fields?: unknown };
    const title = typeof display.title === "string" ? display.title : "(untitled)";
    const summary = typeof display.summary === "string" ? display.summary : "";
    const fields = Array.isArray(display.fields) ? (display.fields as Field[]) : [];
    const files = Array.isArray(e["files"]) ? (e["files"] as { name?: unknown; content_type?: unknown; size?: unknown }[]) : [];
    const answerBy = (e["answer_by"] ?? null) as { operation?: unknown; supplies?: unknown } | null;
    const build = str(e["build"]);

    const { dl, agentWrote, longText } = this.fields(fields);
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
      : el("p", { id: "files" }, WORDS.noFiles);

    const rawText = new TextDecoder("utf-8", { fatal: false }).decode(o.envelopeBytes);
    // What the answer operation expects of a text answer, from the
    // catalogue, fetched while the hashes are computed.
    const shaped = answerBy && str(answerBy.supplies) === "text" ? shapeFor(build, str(answerBy.operation)) : Promise.resolve(null);
    const [rawHash, requestHash, shape] = await Promise.all([sha256Hex(o.envelopeBytes), sha256Hex(o.request), shaped]);
    if (this.id !== id) {
      return;
    }

    const expiresAt = str(e["expires_at"]);
    const expiresMs = Date.parse(expiresAt);
    const left = el("span", { id: "countdown", title: `${localWords(expiresMs)} (${utcWords(expiresMs)})`, tabindex: "0" }, countdown(Date.now(), expiresMs));
    const expires = el("span", {}, Date.now() >= expiresMs ? "It " : "Expires ");
    this.timer = window.setInterval(() => {
      const text = countdown(Date.now(), expiresMs);
      if (left.textContent !== text) {
        left.textContent = text;
        expires.textContent = Date.now() >= expiresMs ? "It " : "Expires ";
      }
      this.checkExpiry(id, expiresMs);
    }, 1000);

    const receipt = el("p", { id: "receipt", class: "receipt" }, WORDS.receiptChecking);
    const receiptPrecise = el("dd", { id: "receipt-precise" }, "Not checked yet.");
    const actions = el("div", { class: "card-actions", id: "card-actions" });
    const createdAt = str(e["created_at"]) || view.created_at;
    const approvals = approvalsOf(view);
    const approver = isApprover(view);
    const panel = approvals ? approvalsPanel(view, approvals, account) : null;
    if (panel) {
      this.shared = { view, panel, approve: null };
    }

    const parts: Child[] = [
      el("div", { class: "actions" }, withKey(button("Back to the list", () => this.host.leave(), true), "Escape", "Esc")),
      el("h2", { id: "card-title", tabindex: "-1" }, title),
      summary ? el("p", { class: "card-summary", id: "card-summary" }, el("span", { class: "summary-label" }, WORDS.summaryLabel), summary) : null,
      el(
        "p",
        { class: "task-meta", id: "card-meta" },
        approver ? el("span", { class: "card-owner" }, `${view.project} of `, accountEl(view.owner ?? "", (t, err) => this.host.say(t, err))) : view.project,
        " · from ",
        accountEl(view.preparer, (t, err) => this.host.say(t, err)),
        ` · ${kindWords(view.kind)} · asked `,
        when(createdAt),
      ),
      el("p", { class: "expiry" }, expires, left),
      panel,
      receipt,
      el("h3", {}, view.kind === "notice" ? "What it says" : "What it asks"),
      dl,
      agentWrote ? el("p", { class: "task-meta" }, WORDS.agentMarkNote) : null,
      longText ? el("p", { class: "task-meta" }, WORDS.longTextNote) : null,
      el("h3", {}, "Files"),
      fileList,
      el(
        "details",
        { id: "raw-form" },
        el("summary", {}, WORDS.rawForm),
        el("p", { class: "task-meta" }, WORDS.rawFormPrecise),
        el("pre", { id: "raw", class: "raw" }, rawText),
        el("p", {}, "SHA-256: ", el("code", { id: "raw-sha" }, rawHash)),
      ),
      el(
        "details",
        { id: "raw-request" },
        el("summary", {}, WORDS.rawRequest),
        el("p", { class: "task-meta" }, WORDS.rawRequestPrecise),
        el("pre", { id: "request", class: "raw" }, new TextDecoder("utf-8", { fatal: false }).decode(o.request)),
        el("p", {}, `${byteCount(o.request.length)}, SHA-256: `, el("code", { id: "request-sha" }, requestHash)),
      ),
      el(
        "details",
        { id: "card-details" },
        el("summary", {}, "Details"),
        el(
          "dl",
          { class: "details" },
          el("dt", {}, "Task"),
          el("dd", { class: "mono", id: "card-task-id" }, id),
          el("dt", {}, "Kind"),
          el("dd", {}, `${view.kind} (${kindWords(view.kind)})`),
          el("dt", {}, "Agent"),
          el("dd", { class: "mono" }, view.preparer),
          el("dt", {}, "Made by"),
          el("dd", {}, `${build} (${buildWords(build)})`),
          el("dt", {}, "Asked"),
          el("dd", {}, utcWords(Date.parse(createdAt))),
          el("dt", {}, "Expires"),
          el("dd", {}, utcWords(expiresMs)),
          el("dt", {}, "Receipt"),
          receiptPrecise,
        ),
      ),
      actions,
    ];
    this.root.replaceChildren(...parts.filter((p): p is Node => p instanceof Node));
    this.root.hidden = false;

    if (approver && (view.kind !== "confirm" || !answerBy)) {
      // Approvers approve and reject confirm tasks; anything else is the owner's alone.
      actions.append(el("p", { class: "task-meta" }, `Only ${view.owner ?? "its owner"} answers this task.`));
      this.checkExpiry(id, expiresMs);
      void this.checkReceipt(id, o, receipt, receiptPrecise, []);
      return;
    }
    if (!answerBy || view.kind === "notice") {
      actions.append(el("div", { class: "actions" }, withKey(button("Got it", () => void this.acknowledge(id)), "g")));
      this.checkExpiry(id, expiresMs);
      void this.checkReceipt(id, o, receipt, receiptPrecise, []);
      return;
    }
    this.answers(account, view.kind, o, answerBy, shape, actions, receipt, receiptPrecise, expiresMs);
  }

  /** The fields as a definition list: each with its label; the agent's marked; diffs drawn; long texts as plain text. */
  private fields(fields: Field[]): { dl: HTMLElement; agentWrote: boolean; longText: boolean } {
    const dl = el("dl", { class: "fields", id: "fields" });
    let agentWrote = false;
    let longText = false;
    for (const f of fields) {
      const values = Array.isArray(f.values) ? f.values.map(str) : [];
      const byAgent = f.written_by === "agent";
      agentWrote ||= byAgent;
      const label = str(f.label);
      const plain = FIELD_LABELS[label];
      const dt = el("dt", { class: "field-label" });
      if (byAgent) {
        dt.append(el("span", { class: "agent-mark", role: "img", "aria-label": WORDS.agentMark, title: WORDS.agentMark }, "agent"), " ");
      }
      dt.append(plain ?? label);
      let dd: HTMLElement;
      if (f.kind === "list" || values.length !== 1) {
        dd = el("dd", { class: "field-value" }, el("ul", {}, ...values.map((v) => el("li", {}, v))));
      } else if (f.kind === "long_text") {
        const v = values[0] ?? "";
        // A connector's diff is drawn as one; the agent's words never are.
        const diff = f.written_by === "project" ? parseDiff(v) : null;
        if (diff) {
          dd = el("dd", { class: "field-value wide" }, diffView(diff, label));
        } else {
          longText = true;
          dd = el("dd", { class: "field-value wide" }, el("pre", { class: "long-text" }, v));
        }
      } else {
        dd = el("dd", { class: "field-value" }, values[0] ?? "");
      }
      if (plain) {
        dd.append(el("details", { class: "precise" }, el("summary", {}, "In the connector's words"), el("p", {}, `${label}: `, el("span", { class: "mono" }, values.join(", ")))));
      }
      if (byAgent) {
        dt.classList.add("by-agent");
        dd.classList.add("by-agent");
      }
      dl.append(dt, dd);
    }
    return { dl, agentWrote, longText };
  }

  /** The answer a task asks for, Approve, and Reject asked once more. */
  private answers(
    account: string,
    kind: string,
    o: OpenedTask,
    answerBy: { operation?: unknown; supplies?: unknown },
    shape: TextShape | null,
    actions: HTMLElement,
    receipt: HTMLElement,
    receiptPrecise: HTMLElement,
    expiresMs: number,
  ): void {
    const id = String(o.envelope["id"]);
    const supplies = str(answerBy.supplies);
    let answer: Answer = async () => null;
    const parts: Child[] = [];
    if (supplies === "text") {
      const { box, hint, error, check } = this.textBox(shape);
      answer = async () => {
        check(true);
        return new TextEncoder().encode(box.value);
      };
      parts.push(el("label", { for: "answer" }, "Your answer"), hint, box, error);
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
        el("p", { id: "answer-file-help", class: "task-meta" }, `Sealed on this device for the agent; at most ${byteCount(MAX_ANSWER_FILE)}.`),
        pick,
      );
    }
    const note = el("textarea", { id: "note", name: "note", class: "answer", rows: "1", spellcheck: "false" });
    // A shared task takes no note (the service refuses one): several accounts sign the same approval.
    if (!this.shared) {
      parts.push(el("label", { for: "note" }, "A note for the agent (optional)"), note);
    }
    const approveStep = el("div", { id: "approve-step" });
    approveStep.hidden = true;
    // The button says what approving does: "Approve: pay $750.25 to …".
    const { title, summary } = displayOf(o);
    const approve = button(summary ? `Approve: ${summary}` : "Approve", () => void this.approve(account, o, answer, note, approveStep));
    if (summary) {
      approve.classList.add("approve-summary");
    }
    approve.disabled = true;
    if (this.shared) {
      this.shared.approve = approve;
      // Approved already with this account: it waits for the others.
      approve.hidden = approvalsOf(this.shared.view)?.approved === true;
    }

    // Reject asks once more: the reason, and a second, explicit Reject.
    const reason = el("textarea", { id: "reason", name: "reason", class: "answer", rows: "2", spellcheck: "false", "aria-describedby": "reject-help" });
    const rejectStep = el(
      "div",
      { id: "reject-step", class: "confirm-step", role: "group", "aria-labelledby": "reject-title" },
      el("h3", { id: "reject-title", tabindex: "-1" }, "Reject this task?"),
      el("p", { id: "reject-help" }, "The agent is told you rejected it, with your reason if you give one. A rejection cannot be undone."),
      el("label", { for: "reason" }, "Why (optional, for the agent)"),
      reason,
    );
    rejectStep.hidden = true;
    const reject = button("Reject", () => {
      rejectStep.hidden = false;
      reject.setAttribute("aria-expanded", "true");
      reason.focus();
    }, true);
    reject.setAttribute("aria-expanded", "false");
    reject.setAttribute("aria-controls", "reject-step");
    const keep = button("Keep it waiting", () => {
      rejectStep.hidden = true;
      reject.setAttribute("aria-expanded", "false");
      reject.focus();
    }, true);
    const rejectForGood = button("Reject this task", () => void this.reject(o, reason));
    rejectForGood.classList.add("danger");
    rejectStep.append(el("div", { class: "actions" }, rejectForGood, keep));

    // Always allow this: offered on a confirm task of a connector whose
    // writes the page reads for a rule, once the catalogue says it reads rules.
    const build = str(o.envelope["build"]);
    const connector = connectorOf(build);
    const allow =
      kind === "confirm" && !this.shared && readsWrites(connector)
        ? new AllowStep(
            {
              recipient: this.host.recipient,
              account: () => this.host.account(),
              say: (t, err) => this.host.say(t, err),
              askSignature: (req, host, ids, submit) => this.host.askSignature(req, host, ids, submit),
              prepareApproval: () => this.prepareApproval(account, o, answer, note),
              showing: () => this.id === id,
              setBusy: (b) => {
                if (this.id === id) {
                  this.busy = b;
                }
              },
              approved: (said) => {
                this.host.approved(id, title);
                this.host.answered(said);
              },
            },
            id,
            title,
            str(o.envelope["project_uuid"]),
            () => allowWhen(connector, o.request, o.envelope),
          )
        : null;
    const allowKey = allow ? withKey(allow.button, "Shift+A", "Shift+A") : null;
    if (allow && allowKey) {
      allow.button.disabled = true;
      allowKey.hidden = true;
    }

    actions.append(...parts.filter((p): p is Node => p instanceof Node), el("div", { class: "actions" }, withKey(approve, "a"), allowKey, withKey(reject, "r")), approveStep, ...(allow ? [allow.root] : []), rejectStep);
    this.checkExpiry(id, expiresMs);
    const verified = this.checkReceipt(id, o, receipt, receiptPrecise, allow ? [approve, allow.button] : [approve]);
    if (!allow || !allowKey) {
      if (this.wantAllow === id) {
        this.wantAllow = null;
        this.host.say(
          this.shared
            ? "This task cannot be always allowed: it waits for the approvals of several accounts, and a rule would let its like through without them."
            : "This task cannot be always allowed: only a yes-or-no task of a connector whose policy takes rules (Mercury, GitHub, Gmail) can.",
          true,
        );
      }
      return;
    }
    void Promise.all([verified, declaresRules(build)]).then(([ok, rules]) => {
      if (this.id !== id) {
        return;
      }
      allowKey.hidden = rules !== true;
      if (this.wantAllow !== id) {
        return;
      }
      this.wantAllow = null;
      if (rules !== true) {
        this.host.say(rules === null ? "This task cannot be always allowed now: the service's catalogue could not be read." : `This task cannot be always allowed: ${connector}'s policy takes no rules here.`, true);
      } else if (ok && !allow.button.disabled) {
        allow.button.focus();
        allow.button.click();
      }
    });
  }

  /**
   * The box a text answer is typed in, fitted to what the connector
   * expects (shape): one line for a short pattern-shaped answer (with a
   * numeric keyboard for digits), several otherwise; the expectation as
   * its hint. check(true) holds the text to the shape when Approve is
   * pressed: a text that does not fit is told next to the box (and the box
   * marked invalid) and throws AnswerMismatch, so the wallet is not asked.
   * Once told, each change is checked again, and the mark goes when the
   * text fits.
   */
  private textBox(shape: TextShape | null): { box: HTMLInputElement | HTMLTextAreaElement; hint: HTMLElement; error: HTMLElement; check: (strict: boolean) => void } {
    const box = shape?.oneLine
      ? el("input", { id: "answer", name: "answer", type: "text", class: "answer one-line", autocomplete: "off", spellcheck: "false", "aria-describedby": "answer-help" })
      : el("textarea", { id: "answer", name: "answer", class: "answer", rows: "1", spellcheck: "false", "aria-describedby": "answer-help" });
    if (shape?.oneLine && shape.numeric) {
      box.setAttribute("inputmode", "numeric");
    }
    const hint = el("p", { id: "answer-help", class: "task-meta" }, shape ? WORDS.answerHint(shape.description) : WORDS.answerSent);
    const error = el("p", { id: "answer-error", class: "answer-error" });
    error.hidden = true;
    const check = (strict: boolean): void => {
      if (!shape || fitsShape(shape, box.value)) {
        error.hidden = true;
        error.replaceChildren();
        box.removeAttribute("aria-invalid");
        box.setAttribute("aria-describedby", "answer-help");
        return;
      }
      if (!strict) {
        return;
      }
      error.textContent = WORDS.answerExpected(shape.description);
      error.hidden = false;
      box.setAttribute("aria-invalid", "true");
      box.setAttribute("aria-describedby", "answer-error answer-help");
      box.focus();
      throw new AnswerMismatch(WORDS.answerExpected(shape.description));
    };
    // Once told, the mark follows the text as it changes.
    box.addEventListener("input", () => {
      if (box.getAttribute("aria-invalid") === "true") {
        check(false);
      }
    });
    return { box, hint, error, check };
  }

  /**
   * At expires_at (by this device's clock) the card turns read-only: its
   * buttons off, its boxes read-only, and a sentence says the task expired.
   * The service refuses an answer then too (409 task_expired).
   */
  private checkExpiry(id: string, expiresMs: number): void {
    if (this.id !== id || this.expired || !(Date.now() >= expiresMs)) {
      return;
    }
    this.expired = true;
    const actions = this.root.querySelector("#card-actions");
    for (const b of this.root.querySelectorAll<HTMLButtonElement>("button")) {
      if (actions?.contains(b) || b.dataset["file"] !== undefined) {
        b.disabled = true;
      }
    }
    for (const t of this.root.querySelectorAll<HTMLTextAreaElement | HTMLInputElement>("textarea, input.answer")) {
      t.readOnly = true;
    }
    const note = el("p", { id: "expired", class: "receipt error" }, `This task expired at ${localWords(expiresMs)} (${utcWords(expiresMs)}): it can no longer be answered, and the service refuses an answer now.`);
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
      const r = await api.taskFile(id, n);
      if (typeof r.ciphertext !== "string") {
        throw new FileMismatchError("the service sent no file");
      }
      const plain = await openTaskFile(o, n, fromBase64(r.ciphertext));
      if (this.id !== id) {
        return;
      }
      const url = URL.createObjectURL(new Blob([plain], { type: "application/octet-stream" }));
      const a = el("a", { href: url, download: safeFileName(name), hidden: "" });
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.host.say(`Downloaded ${name}: its size and SHA-256 match the task.`);
    } catch (e) {
      if (e instanceof Refused) {
        this.host.say(`The file ${name} could not be fetched: ${e.message}`, true);
      } else {
        this.host.say(`The file ${name} is refused: it is not the file this task names (its size or SHA-256 does not match, or it does not open on this device).`, true);
      }
    } finally {
      b.disabled = this.expired;
    }
  }

  /** Fetches the proof of origin and the run keys; enables Approve (and Always allow) only when the receipt proves the task. */
  private async checkReceipt(id: string, o: OpenedTask, out: HTMLElement, precise: HTMLElement, enable: HTMLButtonElement[]): Promise<boolean> {
    let why: string;
    try {
      const [org, doc] = await Promise.all([api.taskOrigin(id), api.runKeyDocument()]);
      const r = await verifyReceipt(runKeys(doc), org.receipt, o);
      if (this.id !== id) {
        return false;
      }
      out.textContent = WORDS.receiptOK;
      precise.textContent = WORDS.receiptPrecise(r.run, r.build);
      out.classList.remove("error");
      out.classList.add("ok");
      for (const b of enable) {
        b.disabled = this.expired;
      }
      return true;
    } catch (e) {
      why = e instanceof ReceiptError || e instanceof Refused ? e.message : "the receipt could not be checked: " + (e instanceof Error ? e.message : String(e));
    }
    if (this.id !== id) {
      return false;
    }
    out.textContent = WORDS.receiptBad(why);
    precise.textContent = `Receipt not verified: ${why}.`;
    out.classList.add("error");
    for (const b of enable) {
      b.disabled = true;
    }
    if (this.wantAllow === id) {
      this.wantAllow = null;
      this.host.say(`This task cannot be always allowed: ${WORDS.receiptBad(why)}`, true);
    }
    return false;
  }

  /**
   * Seals the answer and note to the task's reply key and builds the
   * approval sentence that covers them, sending nothing: what the wallet is
   * asked, and how the approval is sent once signed. Null when the answer
   * cannot be sent (said why).
   */
  private async prepareApproval(account: string, o: OpenedTask, answer: Answer, note: HTMLTextAreaElement): Promise<PreparedApproval | null> {
    const id = String(o.envelope["id"]);
    const { summary } = displayOf(o);
    const reply = o.replyPubkey;
    if (!reply) {
      return null;
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
      if (e instanceof AnswerMismatch) {
        this.host.say(`${e.message} ${WORDS.answerNotSent}`, true);
        return null;
      }
      this.host.say("This answer cannot be sent: " + (e instanceof Error ? e.message : String(e)), true);
      return null;
    }
    const supply = await supplyHash(sealedNote, sealedSupply);
    const atMs = Math.floor(Date.now() / 1000) * 1000;
    // The sentence names the summary of the envelope decrypted here: the
    // wallet shows what approving does, and the answer run checks it again.
    const req: SignRequest = { account, sentence: approvalSentence(account, id, o.taskHash, supply, sentenceTime(atMs), summary), recipient: this.host.recipient, nonce: newNonce() };
    const send = async (sig: Signature): Promise<api.Approved> => {
      const body: api.ApproveRequest = { task_hash: o.taskHash, approval: { at: atMs / 1000, ...sig } };
      if (summary) {
        body.summary = summary;
      }
      if (sealedSupply) {
        body.supplied = toBase64(sealedSupply);
      }
      if (sealedNote) {
        body.note = toBase64(sealedNote);
      }
      return api.approve(id, body);
    };
    return { req, send };
  }

  /**
   * Seals the answer and note to the task's reply key, then has the wallet
   * sign the approval sentence that covers them: the connected wallet (one
   * prompt), or a wallet elsewhere through the paste panel.
   */
  private async approve(account: string, o: OpenedTask, answer: Answer, note: HTMLTextAreaElement, step: HTMLElement): Promise<void> {
    const id = String(o.envelope["id"]);
    const { title, summary } = displayOf(o);
    if (this.busy) {
      return;
    }
    const prepared = await this.prepareApproval(account, o, answer, note);
    if (!prepared) {
      return;
    }
    const host = el("div");
    step.replaceChildren(
      el("h3", {}, "Sign the approval"),
      el("p", {}, summary ? "Your answer and note are sealed for the agent; this sentence names what approving does and covers them and exactly what you read here." : "Your answer and note are sealed for the agent; this sentence covers them and exactly what you read here."),
      host,
    );
    step.hidden = false;
    let sig: Signature;
    try {
      if (this.host.walletName()) {
        this.busy = true;
      }
      sig = await this.host.askSignature(prepared.req, host, { sentence: "approval-sentence", recipient: "approval-recipient", nonce: "approval-nonce", command: "approval-command", answer: "approval-signed" }, "Send approval");
    } catch (e) {
      this.busy = false;
      step.hidden = true;
      this.host.say(e instanceof Declined ? e.message + " Nothing was sent: the task still waits for you." : "The approval cannot be signed: " + refusal(e), !(e instanceof Declined));
      return;
    }
    if (this.id !== id) {
      this.busy = false;
      return;
    }
    this.busy = true;
    this.host.say("Sending the approval…");
    let reply: api.Approved;
    try {
      reply = await prepared.send(sig);
    } catch (e) {
      this.busy = false;
      step.hidden = true;
      this.host.say("The approval was refused: " + refusal(e), true);
      return;
    }
    const shared = this.shared;
    if (shared) {
      // A shared task: open until enough accounts approve; its end is told from the closed list.
      const a = approvalsOf(reply);
      if (reply.state === "open" && a) {
        this.host.answered(recordedWords(a));
        return;
      }
      if (!isApprover(shared.view)) {
        this.host.approved(id, title);
      }
      this.host.answered(`Approved${a ? ` (${a.have} of ${a.need})` : ""}: the service carries it out; what happens is told above the list.`);
      return;
    }
    this.host.approved(id, title);
    this.host.answered("Approved: the service carries it out; what happens is told above the list.");
  }

  private async reject(o: OpenedTask, reason: HTMLTextAreaElement): Promise<void> {
    const id = String(o.envelope["id"]);
    if (this.busy) {
      return;
    }
    const body: api.RejectRequest = {};
    try {
      if (reason.value !== "" && o.replyPubkey) {
        body.reason = toBase64(await sealText(o.replyPubkey, "rejection", id, reason.value));
      }
    } catch (e) {
      this.host.say("This reason cannot be sent: " + (e instanceof Error ? e.message : String(e)), true);
      return;
    }
    this.busy = true;
    this.host.say("Rejecting…");
    try {
      await api.reject(id, body);
    } catch (e) {
      this.busy = false;
      this.host.say("The rejection was refused: " + refusal(e), true);
      return;
    }
    this.host.answered("Rejected.");
  }

  private async acknowledge(id: string): Promise<void> {
    this.busy = true;
    try {
      await api.acknowledge(id);
    } catch (e) {
      this.busy = false;
      this.host.say("Closing the notice was refused: " + refusal(e), true);
      return;
    }
    this.host.answered("Closed.");
  }
}
