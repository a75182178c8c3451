// "Always allow this" on a task's card (SPEC §13): from a waiting confirm
// task of a connector that declares rule conditions, the narrow rule that
// lets writes like it run at once from now on (the same operation, the same
// payee, recipients, repository, branch or paths, the amount at most this
// one), inserted first in the project's policy with the owner's
// confirmation, and, when the owner also chooses it, the approval of this
// task in the same step.
//
// The page reads the write's values from the task it opened here, as the
// connector's own TaskFacts reads them (allowWhen), and sends only the
// rule's `when` to POST /inbox/projects/{name}/allow, which answers the
// exact project text to confirm and the rule as the sentence Settings shows
// for every rule. Every signature the step needs (the confirmation, and the
// approval when chosen) is asked for before anything is sent: a cancelled
// or declined wallet changes nothing. Just before the PUT the project is
// read again: one whose policy, agents or connector changed since the rule
// was shown is not overwritten, and the owner is told so.

import { connectorCatalogue } from "./answer";
import * as api from "./api";
import { button, el, refusal, Refused, type Child } from "./dom";
import { rulesList } from "./policy";
import { actions } from "./section";
import { confirmationSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type Signature, type SignRequest } from "./wallet";
import { sentenceTime } from "./words";

/** The write a task asks about as a rule names it: {"op": …, one value per condition the write carries}. */
export type When = Record<string, unknown>;

/** A task whose write cannot be read for a rule: the sentence says why. */
export class NotAllowable extends Error {}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const text = (v: unknown): string => (typeof v === "string" ? v : "");
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** An amount in dollars (a JSON number, at most two decimals) as whole cents. */
function cents(v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw new NotAllowable("the amount is not a number of dollars");
  }
  const c = Math.round(v * 100);
  if (Math.abs(v * 100 - c) > 1e-6) {
    throw new NotAllowable("the amount has more than two decimals");
  }
  return c;
}

/** A number of cents as the policy writes an amount: dollars, and cents when there are some (120, 120.5, 0.05). */
const dollars = (c: number): number => c / 100;

/** The value a task's display shows under label when it shows one value there, else "". */
function shown(envelope: Record<string, unknown>, label: string): string {
  const fields = obj(envelope["display"])["fields"];
  for (const f of Array.isArray(fields) ? fields : []) {
    const o = obj(f);
    const values = texts(o["values"]);
    if (o["label"] === label && values.length === 1 && Array.isArray(o["values"]) && o["values"].length === 1) {
      return values[0] ?? "";
    }
  }
  return "";
}

/** Mercury: a payment's amount, method, payee (saved or new) and saved payee's id; an invoice's total. */
function mercury(op: string, req: Record<string, unknown>): When {
  switch (op) {
    case "pay_invoice": {
      const isNew = Object.hasOwn(req, "recipient");
      const id = text(req["recipient_id"]);
      return { op, max_usd: dollars(cents(req["amount_usd"])), methods: [text(req["method"])], payee: isNew ? "new" : "saved", recipients: isNew || id === "" ? [] : [id] };
    }
    case "send_invoice": {
      let total = 0;
      for (const li of Array.isArray(req["line_items"]) ? req["line_items"] : []) {
        const q = obj(li)["quantity"];
        total += (typeof q === "number" && Number.isInteger(q) ? q : 0) * cents(obj(li)["unit_price_usd"]);
      }
      return { op, max_usd: dollars(total) };
    }
  }
  return { op };
}

/** GitHub: the repository of every write with one, the branch it changes, the paths it changes. */
function github(op: string, req: Record<string, unknown>, envelope: Record<string, unknown>): When {
  if (op === "gist_create" || op === "gist_update") {
    return { op };
  }
  const out: When = { op, repos: [text(req["repo"])] };
  let branch: string | null = null;
  switch (op) {
    case "branch_create":
      branch = text(req["branch"]);
      break;
    case "file_put":
    case "commit":
      // A write to the default branch names it only where the task shows it.
      branch = shown(envelope, "Branch");
      break;
    case "pr_merge": {
      const both = shown(envelope, "Branches");
      const at = both.indexOf(" into ");
      branch = at < 0 ? "" : both.slice(at + " into ".length);
      break;
    }
  }
  if (branch !== null) {
    if (branch === "") {
      throw new NotAllowable("the task does not show the branch it changes");
    }
    out["branches"] = [branch];
  }
  if (op === "file_put") {
    out["paths"] = [text(req["path"])];
  } else if (op === "commit") {
    out["paths"] = (Array.isArray(req["changes"]) ? req["changes"] : []).map((c) => text(obj(c)["path"]));
  }
  return out;
}

/** Gmail: every to, cc and bcc address (the domain in lower case) and their domains. */
function gmail(op: string, req: Record<string, unknown>): When {
  if (op !== "send") {
    return { op };
  }
  const recipients: string[] = [];
  const domains: string[] = [];
  for (const a of [...texts(req["to"]), ...texts(req["cc"]), ...texts(req["bcc"])]) {
    const at = a.lastIndexOf("@");
    if (at < 0) {
      throw new NotAllowable(`${a} is not one bare email address`);
    }
    const domain = a.slice(at + 1).toLowerCase();
    recipients.push(a.slice(0, at + 1) + domain);
    if (!domains.includes(domain)) {
      domains.push(domain);
    }
  }
  return { op, recipients, domains };
}

/** The connectors whose writes the page can read for a rule, by name. */
const READERS: Readonly<Record<string, (op: string, req: Record<string, unknown>, envelope: Record<string, unknown>) => When>> = { mercury, github, gmail };

/** Whether the page can read the writes of a connector for a rule. */
export function readsWrites(connector: string): boolean {
  return Object.hasOwn(READERS, connector);
}

/**
 * The `when` of the rule "Always allow this" adds for the write a task asks
 * about, read from the agent's request as sealed and the task's display, as
 * the connector's TaskFacts reads them; throws NotAllowable when the task
 * cannot be read so. A write that carries no condition is {"op": …} alone,
 * which the service refuses in its own words.
 */
export function allowWhen(connector: string, request: Uint8Array, envelope: Record<string, unknown>): When {
  const read = Object.hasOwn(READERS, connector) ? READERS[connector] : undefined;
  if (!read) {
    throw new NotAllowable(`this page cannot read the writes of ${connector} for a rule`);
  }
  let req: Record<string, unknown>;
  try {
    req = obj(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(request)));
  } catch {
    throw new NotAllowable("the agent's request is not JSON");
  }
  const op = text(req["operation"]);
  if (!/^[a-z][a-z0-9_]*$/.test(op)) {
    throw new NotAllowable("the request names no operation");
  }
  return read(op, req, envelope);
}

/** The connector of a build ("mercury@1" → mercury). */
export function connectorOf(build: string): string {
  const at = build.lastIndexOf("@");
  return at < 0 ? build : build.slice(0, at);
}

/** Whether the service's catalogue says the connector of build reads rules (null: it could not be asked). */
export async function declaresRules(build: string): Promise<boolean | null> {
  const c = await connectorCatalogue();
  if (!c) {
    return null;
  }
  const conn = (c.connectors ?? []).find((x) => x.build === build);
  return Array.isArray(conn?.policy_keys) && conn.policy_keys.includes("rules");
}

/** What POST /inbox/projects/{name}/allow answers: the project text to confirm, the rule and its sentence. */
type Proposal = api.AllowProposal;

/** A project as GET /inbox/projects lists it. */
type Listed = api.ProjectView;

/** An approval signed but not sent: what it asks the wallet, and how it is sent once signed. */
export interface PreparedApproval {
  req: SignRequest;
  /** Sends the approval with the wallet's signature; answers the service's answer, throws the refusal. */
  send(sig: Signature): Promise<api.Approved>;
}

/** What the step needs of the card around it. */
export interface AllowHost {
  readonly recipient: string;
  account(): string | null;
  say(text: string, error?: boolean): void;
  askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature>;
  /** Seals the answer and note and builds the approval's sentence, sending nothing (null: told why not). */
  prepareApproval(): Promise<PreparedApproval | null>;
  /** Whether the card still shows the task (the owner may have left it). */
  showing(): boolean;
  /** Marks the card busy (an answer on its way: a listing does not close it). */
  setBusy(busy: boolean): void;
  /** The task was approved here: its outcome is told when it ends, and the card closes. */
  approved(said: string): void;
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Reads the owner's project of uuid, or null when there is none any more. */
async function projectOf(uuid: string): Promise<Listed | null> {
  return ((await api.projects()).projects ?? []).find((p) => p.project_uuid === uuid) ?? null;
}

/** The Always allow this step of one card: its button and the panel it opens. */
export class AllowStep {
  readonly button: HTMLButtonElement;
  readonly root = el("div", { id: "allow-step", class: "confirm-step", role: "group", "aria-labelledby": "allow-title" });
  private busy = false;
  /** Set once the rule was added from this card: asking again would add it twice. */
  private added = false;

  constructor(
    private readonly host: AllowHost,
    private readonly taskID: string,
    private readonly title: string,
    private readonly projectUUID: string,
    private readonly when: () => When,
  ) {
    this.root.hidden = true;
    this.button = button("Always allow this", () => void this.show(), true);
    this.button.id = "allow-open";
    this.button.setAttribute("aria-expanded", "false");
    this.button.setAttribute("aria-controls", "allow-step");
  }

  private close(focus: boolean): void {
    this.busy = false;
    const had = this.root.contains(document.activeElement);
    this.root.replaceChildren();
    this.root.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if ((focus || had) && this.button.isConnected && !this.button.disabled) {
      this.button.focus();
    }
  }

  /** Asks the service for the exact rule and project text, and shows them with the choices. */
  private async show(): Promise<void> {
    if (this.busy || this.added) {
      return;
    }
    let when: When;
    try {
      when = this.when();
    } catch (e) {
      this.host.say(`This task cannot be always allowed: ${e instanceof Error ? e.message : String(e)}.`, true);
      return;
    }
    this.busy = true;
    this.host.say("Asking the service for the rule…");
    let shown: Listed | null;
    let p: Proposal;
    try {
      shown = await projectOf(this.projectUUID);
      if (!shown) {
        throw new Error("its project is no longer there");
      }
      p = await api.proposeAllow(shown.name, when);
    } catch (e) {
      this.busy = false;
      if (this.host.showing()) {
        this.host.say(`This task cannot be always allowed: ${e instanceof Refused ? e.message : refusal(e)}`, true);
      }
      return;
    }
    this.busy = false;
    if (!this.host.showing()) {
      return;
    }
    const project = shown;
    const both = button("Always allow and approve", () => void this.run(project, p, true));
    both.id = "allow-and-approve";
    const only = button("Always allow only", () => void this.run(project, p, false), true);
    only.id = "allow-only";
    const cancel = button("Cancel", () => {
      this.host.say("Nothing was changed.");
      this.close(true);
    }, true);
    cancel.id = "allow-cancel";
    const parts: Child[] = [
      el("h3", { id: "allow-title", tabindex: "-1" }, "Always allow this?"),
      el("p", {}, "This rule is added to the project ", el("strong", {}, project.name), ", before every other rule:"),
      rulesList([p.sentence], "allow-rule", `The rule added to ${project.name}`),
      el(
        "p",
        { id: "allow-help" },
        "From now on, a write like this one (the same operation and values, an amount up to this one's) runs at once without asking you. Writes that differ still follow the rest of the policy. You can remove the rule in Settings → Projects like any other.",
      ),
      p.moved
        ? el(
            "p",
            { id: "allow-moved" },
            "Your policy asked before every write of this kind (“Ask me”): a rule cannot let through what that asks about, so the write leaves “Ask me”, and rules after this one keep asking about every other such write exactly as before.",
          )
        : null,
      el("details", { class: "precise" }, el("summary", {}, "In the policy's words"), el("p", {}, "Rule 1: ", el("code", { id: "allow-rule-json" }, p.rule)), el("p", {}, "The whole policy: ", el("code", { id: "allow-policy" }, p.policy))),
      el("p", { class: "task-meta" }, "Your wallet confirms the new policy, and the approval too when you choose both; nothing is sent until it has signed."),
      el("div", { class: "actions", id: "allow-choices" }, both, only, cancel),
    ];
    this.root.replaceChildren(...parts.filter((x): x is Node => x instanceof Node));
    this.root.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.host.say("");
    this.root.querySelector<HTMLElement>("h3")?.focus();
  }

  /**
   * Has the wallet sign the project's confirmation (and the approval, when
   * approve), then reads the project again and, when it is as shown, puts
   * it and sends the approval. A cancelled or declined signature, or a
   * project changed meanwhile, sends nothing.
   */
  private async run(shown: Listed, p: Proposal, approve: boolean): Promise<void> {
    const account = this.host.account();
    if (!account || this.busy) {
      return;
    }
    this.busy = true;
    const choices = this.root.querySelector<HTMLElement>("#allow-choices");
    if (choices) {
      choices.hidden = true;
    }
    const panel = el("div", { id: "allow-sign" });
    let cancel: () => void = () => undefined;
    const cancelled = new Promise<never>((_, reject) => {
      cancel = () => reject(new Declined("You cancelled the signature."));
    });
    const stop = button("Cancel", () => cancel(), true);
    stop.id = "allow-sign-cancel";
    const signing = el("div", { id: "allow-signing" }, el("h4", { tabindex: "-1" }, "Sign with your wallet"), panel, el("div", { class: "actions" }, stop));
    this.root.append(signing);
    const ask = async (req: SignRequest, prefix: string, submit: string): Promise<Signature> => {
      const asked = this.host.askSignature(req, panel, { sentence: prefix + "-sentence", recipient: prefix + "-recipient", nonce: prefix + "-nonce", command: prefix + "-command", answer: prefix + "-signed" }, submit);
      asked.catch(() => undefined); // a wallet that answers after a Cancel is not listened to
      return Promise.race([asked, cancelled]);
    };
    const back = () => {
      this.busy = false;
      signing.remove();
      if (choices) {
        choices.hidden = false;
        choices.querySelector<HTMLElement>("button")?.focus();
      }
    };
    // Every signature first: nothing is sent unless all of them are given.
    let confirmation: api.Confirmation;
    let prepared: PreparedApproval | null = null;
    let approval: Signature | null = null;
    try {
      if (approve) {
        prepared = await this.host.prepareApproval();
        if (!prepared) {
          back();
          return;
        }
      }
      const atMs = Math.floor(Date.now() / 1000) * 1000;
      const action = await actions.setProject(shown.name, p.project);
      const req: SignRequest = { account, sentence: confirmationSentence(account, action, sentenceTime(atMs)), recipient: this.host.recipient, nonce: newNonce() };
      signing.querySelector("h4")?.replaceChildren(approve ? "Sign 1 of 2: the new policy" : "Sign the new policy");
      confirmation = { at: atMs / 1000, ...(await ask(req, "allow-confirm", "Send confirmation")) };
      if (prepared) {
        signing.querySelector("h4")?.replaceChildren("Sign 2 of 2: the approval of this task");
        approval = await ask(prepared.req, "allow-approval", "Send approval");
      }
    } catch (e) {
      if (this.host.showing()) {
        this.host.say(
          (e instanceof Declined ? e.message : "The signature cannot be given: " + refusal(e)) + " Nothing was sent: the policy is unchanged and the task still waits for you.",
          !(e instanceof Declined),
        );
        back();
      }
      return;
    }
    if (!this.host.showing()) {
      return;
    }
    this.host.setBusy(true);
    stop.disabled = true;
    this.host.say("Checking the project has not changed…");
    // The project again, just before it is put: a change made elsewhere
    // since the rule was shown is not overwritten.
    let now: Listed | null;
    try {
      now = await projectOf(shown.project_uuid);
    } catch (e) {
      this.host.setBusy(false);
      this.host.say("Nothing was sent: the project could not be read again: " + refusal(e), true);
      back();
      return;
    }
    if (!now || now.name !== shown.name || now.connector !== shown.connector || now.policy !== shown.policy || !sameList(now.agents ?? [], shown.agents ?? [])) {
      this.host.setBusy(false);
      this.host.say(
        `Nothing was sent: the project ${shown.name} ${now ? "changed" : "was removed"} since the rule was shown (saved from another device or tab). Your signatures are not used. Look at it again, then choose Always allow this again if you still want the rule.`,
        true,
      );
      this.close(true);
      return;
    }
    this.host.say("Adding the rule…");
    try {
      await api.putProject(shown.name, p.project, confirmation);
    } catch (e) {
      this.host.setBusy(false);
      this.host.say(`The rule was not added: ${refusal(e)} Nothing was approved: the task still waits for you.`, true);
      back();
      return;
    }
    this.added = true;
    this.button.disabled = true;
    if (!prepared || !approval) {
      this.host.setBusy(false);
      this.close(false);
      this.host.say(`The rule is added first in ${shown.name}: writes like this one run at once from now on. This task still waits for you.`);
      this.root.closest("#card")?.querySelector<HTMLElement>("#card-title")?.focus();
      return;
    }
    this.host.say("The rule is added. Sending the approval…");
    try {
      await prepared.send(approval);
    } catch (e) {
      this.host.setBusy(false);
      this.close(false);
      this.host.say(`The rule is added first in ${shown.name}, but the approval was refused: ${refusal(e)} The task still waits for you.`, true);
      return;
    }
    this.host.approved(`Always allowed in ${shown.name}, and approved: the service carries out ${this.title ? `“${this.title}”` : `task ${this.taskID}`}; what happens is told above the list.`);
  }
}
