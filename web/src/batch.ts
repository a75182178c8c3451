// Approving several confirm tasks with one signature (SPEC §6 POST
// /inbox/tasks/approve, §7 the batch sentence): a check box on each open
// confirm task of the waiting list, and Approve selected for 2–10 tasks of
// one project. Each task's receipt is verified before anything is signed;
// the sentence names each task's summary, as its card shows it.

import { sha256Hex, supplyHash, type OpenedTask } from "./crypto";
import { displayOf } from "./card";
import * as api from "./api";
import { button, el, refusal, Refused } from "./dom";
import { runKeys, verifyReceipt } from "./origin";
import { approvalSentence, batchSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type Signature, type SignRequest } from "./wallet";
import { sentenceTime } from "./words";

/** A batch approves 2 to 10 tasks; its sentence is at most 1,000 UTF-8 bytes (SPEC §7). */
export const MIN_BATCH = 2;
export const MAX_BATCH = 10;
export const MAX_BATCH_BYTES = 1000;

/** A task that can be selected: an open confirm task opened on this device. */
export interface Pickable {
  id: string;
  project: string;
  opened: OpenedTask;
}

export interface BatchHost {
  account(): string | null;
  recipient: string;
  say(text: string, error?: boolean): void;
  askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature>;
  /** A task was approved here: its outcome is to be told when it ends. */
  approved(id: string, title: string): void;
  /** The tasks selected, in the list's order (those still waiting). */
  selected(): Pickable[];
  /** Everything approved (or refused): clear the selection and list again. */
  done(): void;
}

/** One task of a batch as its sentence's hash covers it. */
interface Line {
  id: string;
  task_hash: string;
  supply_hash: string;
}

/** The lowercase hex SHA-256 of the lines "{id} {task hash} {supply hash}\n", in order. */
export async function linesHash(lines: Line[]): Promise<string> {
  return sha256Hex(new TextEncoder().encode(lines.map((l) => `${l.id} ${l.task_hash} ${l.supply_hash}\n`).join("")));
}

const bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * Splits tasks, in order, into runs whose batch sentence fits in 1,000
 * bytes and which hold at most 10 tasks: each run takes as many of the
 * next tasks as fit (greedily). sentence(run) is the run's sentence.
 */
export function splitBatch<T>(tasks: T[], sentence: (run: T[]) => string): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  for (const t of tasks) {
    const next = [...run, t];
    if (run.length > 0 && (next.length > MAX_BATCH || bytes(sentence(next)) > MAX_BATCH_BYTES)) {
      out.push(run);
      run = [t];
    } else {
      run = next;
    }
  }
  if (run.length) {
    out.push(run);
  }
  return out;
}

/** Why the selection cannot be approved together ("" when it can). */
export function whyNot(sel: Pickable[]): string {
  if (sel.length === 0) {
    return "Select 2 to 10 confirm tasks of one project (the check boxes, or x on a task) to approve them with one signature.";
  }
  if (sel.length === 1) {
    return "1 task selected: select at least one more of the same project, or open it and approve it alone.";
  }
  const projects = [...new Set(sel.map((s) => s.project))];
  if (projects.length > 1) {
    return `The tasks selected belong to ${projects.length} projects (${projects.join(", ")}): one signature approves tasks of one project only.`;
  }
  if (sel.length > MAX_BATCH) {
    return `${sel.length} tasks selected: one signature approves at most ${MAX_BATCH}.`;
  }
  const bare = sel.filter((s) => displayOf(s.opened).summary === "");
  if (bare.length) {
    return `${bare.length === 1 ? "A task" : `${bare.length} tasks`} selected ${bare.length === 1 ? "has" : "have"} no summary to name in the sentence: approve ${bare.length === 1 ? "it" : "them"} alone from the card.`;
  }
  return "";
}

/** The bar under the waiting list: Approve selected, why not, and the signing step. */
export class Batch {
  readonly root: HTMLElement;
  private readonly approve: HTMLButtonElement;
  private readonly why = el("p", { id: "batch-why", class: "batch-why" });
  private readonly step = el("div", { id: "batch-step" });
  busy = false;

  constructor(private readonly host: BatchHost) {
    this.approve = button("Approve selected", () => void this.run());
    this.approve.id = "batch-approve";
    this.approve.setAttribute("aria-describedby", "batch-why");
    this.step.hidden = true;
    this.root = el("section", { id: "batch", class: "batch", "aria-label": "Approve several tasks" }, el("div", { class: "actions" }, this.approve), this.why, this.step);
    this.update();
  }

  /** Draws the button and its reason for the selection as it is. */
  update(): void {
    const sel = this.host.selected();
    const why = whyNot(sel);
    this.approve.disabled = why !== "" || this.busy;
    this.approve.textContent = sel.length >= MIN_BATCH && why === "" ? `Approve ${sel.length} selected` : "Approve selected";
    this.why.textContent = why;
    this.why.hidden = why === "";
  }

  private async run(): Promise<void> {
    const account = this.host.account();
    const sel = this.host.selected();
    if (!account || this.busy || whyNot(sel) !== "") {
      this.update();
      return;
    }
    this.busy = true;
    this.update();
    try {
      await this.approveAll(account, sel);
    } finally {
      this.busy = false;
      this.step.hidden = true;
      this.update();
    }
  }

  private async approveAll(account: string, sel: Pickable[]): Promise<void> {
    const project = sel[0]?.project ?? "";
    // Each task's receipt proves it came from the connector's own run, as
    // for an approval alone: none is signed until every one is verified.
    this.host.say(`Checking the receipts of ${sel.length} tasks…`);
    try {
      const keys = runKeys(await api.runKeyDocument());
      for (const s of sel) {
        const org = await api.taskOrigin(s.id);
        try {
          await verifyReceipt(keys, org.receipt, s.opened);
        } catch (e) {
          this.host.say(`Nothing was signed: the receipt of "${displayOf(s.opened).title || s.id}" is not verified (${e instanceof Error ? e.message : String(e)}).`, true);
          return;
        }
      }
    } catch (e) {
      this.host.say("Nothing was signed: the receipts could not be checked: " + refusal(e), true);
      return;
    }
    const supply = await supplyHash(null, null);
    const at = Math.floor(Date.now() / 1000) * 1000;
    const time = sentenceTime(at);
    const tasks = sel.map((s) => ({ s, line: { id: s.id, task_hash: s.opened.taskHash, supply_hash: supply }, summary: displayOf(s.opened).summary }));
    // The length does not depend on the hash's value: measure with any 64 hex.
    const runs = splitBatch(tasks, (r) => batchSentence(account, project, r.map((t) => t.summary), "0".repeat(64), time));
    let done = 0;
    for (const [i, r] of runs.entries()) {
      const split = runs.length > 1 ? ` (signature ${i + 1} of ${runs.length}: together the summaries are longer than one sentence holds, so the tasks are approved in ${runs.length} parts, in order)` : "";
      const single = r.length === 1 && r[0];
      const sentence = single
        ? approvalSentence(account, single.line.id, single.line.task_hash, supply, time, single.summary)
        : batchSentence(account, project, r.map((t) => t.summary), await linesHash(r.map((t) => t.line)), time);
      const req: SignRequest = { account, sentence, recipient: this.host.recipient, nonce: newNonce() };
      const sigHost = el("div");
      this.step.replaceChildren(el("h3", {}, `Sign the approval of ${r.length === 1 ? "1 task" : `${r.length} tasks`} of ${project}${split}`), sigHost);
      this.step.hidden = false;
      let sig: Signature;
      try {
        sig = await this.host.askSignature(req, sigHost, { sentence: "batch-sentence", recipient: "batch-recipient", nonce: "batch-nonce", command: "batch-command", answer: "batch-signed" }, "Send approval");
      } catch (e) {
        const left = sel.length - done;
        this.host.say((e instanceof Declined ? e.message : "The approval cannot be signed: " + refusal(e)) + ` Nothing more was sent: ${left === 1 ? "1 task still waits" : `${left} tasks still wait`} for you.`, !(e instanceof Declined));
        if (done) {
          this.host.done();
        }
        return;
      }
      const approval = { at: at / 1000, ...sig };
      this.host.say(`Sending the approval of ${r.length === 1 ? "1 task" : `${r.length} tasks`}…`);
      try {
        if (single) {
          await api.approve(single.line.id, { task_hash: single.line.task_hash, approval, summary: single.summary });
        } else {
          await api.approveBatch({ tasks: r.map((t) => t.line), approval, summaries: r.map((t) => t.summary) });
        }
      } catch (e) {
        const named = e instanceof Refused && e.taskID ? tasks.find((t) => t.line.id === e.taskID) : undefined;
        const which = named ? `"${displayOf(named.s.opened).title || named.line.id}" (task ${named.line.id})` : "";
        this.host.say(`The approval was refused${which ? `, because of ${which}` : ""}: ${refusal(e)} None of ${r.length === 1 ? "this task was" : `these ${r.length} tasks was`} approved.`, true);
        if (done) {
          this.host.done();
        }
        return;
      }
      for (const t of r) {
        this.host.approved(t.line.id, displayOf(t.s.opened).title);
      }
      done += r.length;
    }
    this.host.done();
    this.host.say(`Approved ${done} tasks: the service carries them out; what happens is told above the list.`);
  }
}
