// The Settings view (issue 12, item 6): the owner's devices, mutes, webhook
// and projects. Every change the contract guards (withdrawing a device,
// naming or removing the webhook, setting or removing a project) is signed
// by the owner's wallet as a confirmation sentence (SPEC §7) first. Like
// the rest of the page, everything is put in the page as text, never as
// markup. The webhook's secret is shown once, in this view only: it is never
// stored, and leaving the view drops it.

import { sha256Hex } from "./crypto";
import { el, button, api, refusal, Refused, type Child } from "./dom";
import { ACCOUNT, confirmationSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type Signature, type SignRequest } from "./wallet";
import { sentenceTime } from "./words";

/** What the view needs of the page around it. */
export interface SettingsHost {
  /** The signed-in account. */
  account(): string | null;
  /** The deployment's NEP-413 recipient. */
  readonly recipient: string;
  /** Shows a status in the page's polite live region. */
  say(text: string, error?: boolean): void;
  /** Has the owner's wallet sign req (rejects with Declined when it declines). */
  askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature>;
  /** The session is over (this device was withdrawn): back to signing in. */
  ended(why: string): void;
  /** Back to the inbox. */
  back(): void;
}

/** The confirmation actions (SPEC §7), exactly. */
export const actions = {
  withdrawDevice: (id: string) => `withdraw the device ${id}`,
  nameWebhook: async (url: string) => `name the webhook ${await textHash(url)}`,
  removeWebhook: () => "remove the webhook",
  setProject: async (name: string, text: string) => `set the project ${name} to ${await textHash(text)}`,
  removeProject: (name: string) => `remove the project ${name}`,
};

/** The lowercase hex SHA-256 of a text's UTF-8 bytes. */
export async function textHash(text: string): Promise<string> {
  return sha256Hex(new TextEncoder().encode(text));
}

/** A project name as the contract reads it: 1–64 of a-z 0-9 . _ -, first a letter or digit. */
const PROJECT = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A project name as a part of element ids, one to one: "_" is "__", "." is "_d". */
function idPart(name: string): string {
  return name.replace(/_/g, "__").replace(/\./g, "_d");
}

/** A price in micro-USD, in dollars. */
export function price(micro: number): string {
  if (!micro) {
    return "free";
  }
  return "$" + (micro / 1_000_000).toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
}

interface Device {
  id: string;
  device_pubkey: string;
  signer_pubkey: string;
  created_at: string;
  valid_until: string;
  this: boolean;
}

interface Mute {
  subject_is: string;
  subject: string;
  created_at: string;
}

interface Webhook {
  url: string | null;
  set_at?: string;
  set_by_key?: string;
  secret?: string;
}

interface Delivery {
  event_id: string;
  type: string;
  task_id?: string;
  attempt: number;
  status_code: number;
  error: string;
  at: string;
}

interface Project {
  name: string;
  connector: string;
  agents: string[];
  policy: string;
  policy_mode: string;
  policy_sentence?: string;
  credentials: boolean;
  updated_at: string;
}

interface Operation {
  name: string;
  kind: string;
  price: number;
  description?: string;
}

interface Connector {
  name: string;
  version: string;
  build: string;
  tasks: boolean;
  operations: Operation[];
  policy_keys: string[];
}

/** What a policy's mode means for the owner. */
export function policyWords(mode: string, sentence: string | undefined): string {
  switch (mode) {
    case "ok":
      return "Policy readable: writes follow it.";
    case "unreadable":
      return `Policy unreadable: ${sentence || "it does not read"}. Every write is refused until it is fixed.`;
    case "broken":
      return `Policy broken: ${sentence || "a rule cannot apply"}. Writes are refused until it is fixed.`;
  }
  return `Policy ${mode}${sentence ? ": " + sentence : ""}.`;
}

/** The Settings view. */
export class Settings {
  readonly root = el("section", { id: "settings", class: "settings", "aria-labelledby": "settings-title", hidden: "" });
  private readonly devicesBox = el("div", { id: "devices-box" });
  private readonly mutesBox = el("div", { id: "mutes-box" });
  private readonly webhookBox = el("div", { id: "webhook-box" });
  private readonly deliveriesBox = el("div", { id: "deliveries-box" });
  private readonly projectsBox = el("div", { id: "projects-box" });
  private readonly catalogueBox = el("div", { id: "catalogue-box" });
  /** Set while a confirmation is being signed: one at a time. */
  private busy = false;
  /** Bumped each time the view is left: late answers then draw nothing. */
  private generation = 0;
  private catalogue: Connector[] = [];

  constructor(private readonly host: SettingsHost) {}

  get shown(): boolean {
    return !this.root.hidden;
  }

  /** Draws the view and loads every section. */
  show(): void {
    this.generation++;
    this.busy = false;
    const region = (id: string, title: string, intro: string, ...children: Child[]) =>
      el("section", { id, class: "settings-part", "aria-labelledby": id + "-title" }, el("h3", { id: id + "-title", tabindex: "-1" }, title), el("p", { class: "task-meta" }, intro), ...children);
    this.root.replaceChildren(
      el("div", { class: "actions" }, button("Back to the inbox", () => this.host.back(), true)),
      el("h2", { id: "settings-title", tabindex: "-1" }, "Settings"),
      region("devices", "Devices", "The browsers and terminals signed in as you. Withdrawing one ends its session at once; your wallet confirms it.", this.devicesBox),
      region("mutes", "Mutes", "A muted agent or project cannot ask you anything: its new tasks are refused.", this.mutesBox),
      region("webhook", "Webhook", "One HTTPS address of yours that is told when something happens (never what a task shows), signed with a secret.", this.webhookBox, this.deliveriesBox),
      region("projects", "Projects", "Your installations of connectors: what each may do at once, what it asks you first, and which agents may use it.", this.projectsBox, this.catalogueBox),
    );
    this.root.hidden = false;
    (this.root.querySelector("#settings-title") as HTMLElement | null)?.focus();
    void this.loadDevices();
    void this.loadMutes();
    void this.loadWebhook(null);
    void this.loadProjects();
  }

  /** Leaves the view: everything it drew is dropped, the webhook's secret with it. */
  hide(): void {
    this.generation++;
    this.busy = false;
    for (const b of [this.devicesBox, this.mutesBox, this.webhookBox, this.deliveriesBox, this.projectsBox, this.catalogueBox]) {
      b.replaceChildren();
    }
    this.root.replaceChildren();
    this.root.hidden = true;
  }

  private current(gen: number): boolean {
    return gen === this.generation && this.shown;
  }

  /**
   * Has the owner's wallet sign the confirmation of action, showing it in
   * step (for a wallet elsewhere, the paste panel, with a Cancel). Returns
   * the confirmation member of a request body, or null when the wallet
   * declined, the owner cancelled or the view was left (a neutral notice
   * said so; nothing was sent).
   */
  private async confirm(action: string, step: HTMLElement, prefix: string, submit: string): Promise<Record<string, unknown> | null> {
    const account = this.host.account();
    if (!account) {
      return null;
    }
    if (this.busy) {
      this.host.say("Finish the signature already asked for first.", true);
      return null;
    }
    const gen = this.generation;
    const atMs = Math.floor(Date.now() / 1000) * 1000;
    const req: SignRequest = { account, sentence: confirmationSentence(account, action, sentenceTime(atMs)), recipient: this.host.recipient, nonce: newNonce() };
    const panel = el("div");
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    let cancel: () => void = () => undefined;
    const cancelled = new Promise<never>((_, reject) => {
      cancel = () => reject(new Declined("You cancelled the signature."));
    });
    step.replaceChildren(
      el("h4", { tabindex: "-1" }, "Confirm with your wallet"),
      el("p", {}, "Your wallet signs this confirmation; nothing changes until it does."),
      panel,
      el("div", { class: "actions" }, button("Cancel", () => cancel(), true)),
    );
    step.hidden = false;
    step.querySelector<HTMLElement>("h4")?.focus();
    this.busy = true;
    const ids: PanelIDs = { sentence: prefix + "-sentence", recipient: prefix + "-recipient", nonce: prefix + "-nonce", command: prefix + "-command", answer: prefix + "-signed" };
    try {
      const asked = this.host.askSignature(req, panel, ids, submit);
      asked.catch(() => undefined); // a wallet that answers after a Cancel is not listened to
      const sig = await Promise.race([asked, cancelled]);
      if (!this.current(gen)) {
        return null;
      }
      return { at: atMs / 1000, ...sig };
    } catch (e) {
      if (this.current(gen)) {
        this.host.say(e instanceof Declined ? e.message + " Nothing was changed." : "The confirmation cannot be signed: " + refusal(e), !(e instanceof Declined));
      }
      return null;
    } finally {
      if (gen === this.generation) {
        this.busy = false;
        const lost = step.contains(document.activeElement);
        step.replaceChildren();
        step.hidden = true;
        if (lost && before?.isConnected) {
          before.focus();
        }
      }
    }
  }

  /**
   * Draws box anew; when the focus was in it (on a button that is gone
   * now), it goes to the heading of its section, so the keyboard stays
   * where the owner was.
   */
  private redraw(box: HTMLElement, ...nodes: Node[]): void {
    const had = box.contains(document.activeElement);
    box.replaceChildren(...nodes);
    if (had && !box.contains(document.activeElement)) {
      box.closest("section")?.querySelector<HTMLElement>("h3")?.focus();
    }
  }

  private step(id: string): HTMLElement {
    const s = el("div", { id, class: "confirm-step" });
    s.hidden = true;
    return s;
  }

  private failed(what: string, e: unknown): void {
    if (sessionOver(e)) {
      this.host.ended("Your session ended: " + refusal(e));
      return;
    }
    this.host.say(`${what}: ${refusal(e)}`, true);
  }

  // ---- devices ----

  private async loadDevices(): Promise<void> {
    const gen = this.generation;
    let devices: Device[];
    try {
      devices = ((await api("GET", "/inbox/devices")) as { devices?: Device[] }).devices ?? [];
    } catch (e) {
      if (this.current(gen)) {
        this.devicesBox.replaceChildren(el("p", { class: "empty" }, "Your devices cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const step = this.step("device-confirm");
    const items = devices.map((d) => {
      const withdraw = button("Withdraw", () => void this.withdraw(d, step), true);
      withdraw.setAttribute("aria-label", d.this ? `Withdraw this device (${d.id})` : `Withdraw the device ${d.id}`);
      return el(
        "li",
        { class: "setting-item", "data-device": d.id },
        el("span", { class: "task-title" }, d.this ? el("span", { class: "this-device" }, "This device") : "Another device", " ", el("span", { class: "mono" }, d.id)),
        el("span", { class: "task-meta" }, `Signed in ${d.created_at} · until ${d.valid_until} · by the key ${d.signer_pubkey}`),
        el("span", { class: "task-meta mono" }, d.device_pubkey),
        d.this ? el("span", { class: "task-meta" }, "Withdrawing this device signs this page out.") : null,
        el("div", { class: "actions" }, withdraw),
      );
    });
    this.redraw(this.devicesBox, items.length ? el("ul", { class: "tasks", id: "devices-list", "aria-label": "Your devices" }, ...items) : el("p", { class: "empty" }, "No device is signed in."), step);
  }

  private async withdraw(d: Device, step: HTMLElement): Promise<void> {
    const confirmation = await this.confirm(actions.withdrawDevice(d.id), step, "device-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    this.host.say("Withdrawing the device…");
    try {
      await api("DELETE", `/inbox/devices/${encodeURIComponent(d.id)}`, { confirmation });
    } catch (e) {
      this.failed("The device was not withdrawn", e);
      return;
    }
    if (d.this) {
      this.host.ended("This device was withdrawn: you are signed out.");
      return;
    }
    this.host.say(`The device ${d.id} was withdrawn: its session is over.`);
    void this.loadDevices();
  }

  // ---- mutes ----

  private async loadMutes(): Promise<void> {
    const gen = this.generation;
    let mutes: Mute[];
    try {
      mutes = ((await api("GET", "/inbox/mutes")) as { mutes?: Mute[] }).mutes ?? [];
    } catch (e) {
      if (this.current(gen)) {
        this.mutesBox.replaceChildren(el("p", { class: "empty" }, "Your mutes cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const list = mutes.length
      ? el(
          "ul",
          { class: "tasks", id: "mutes-list", "aria-label": "Muted" },
          ...mutes.map((m) => {
            const what = m.subject_is === "agent" ? "Agent" : "Project";
            const unmute = button("Unmute", () => void this.unmute(m), true);
            unmute.setAttribute("aria-label", `Unmute the ${m.subject_is} ${m.subject}`);
            return el(
              "li",
              { class: "setting-item", "data-mute": `${m.subject_is}:${m.subject}` },
              el("span", { class: "task-title" }, `${what} `, el("span", { class: "mono" }, m.subject)),
              el("span", { class: "task-meta" }, `Muted ${m.created_at}`),
              el("div", { class: "actions" }, unmute),
            );
          }),
        )
      : el("p", { class: "empty", id: "mutes-empty" }, "Nothing is muted.");

    const agent = el("input", { type: "radio", name: "mute-kind", id: "mute-agent", value: "agent" });
    agent.checked = true;
    const project = el("input", { type: "radio", name: "mute-kind", id: "mute-project", value: "project" });
    const subject = el("input", { id: "mute-subject", name: "mute-subject", spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": "mute-subject-help" });
    const drop = el("input", { type: "checkbox", id: "mute-delete", name: "mute-delete" });
    const form = el(
      "form",
      { id: "mute-form", class: "setting-form", "aria-labelledby": "mute-form-title" },
      el("h4", { id: "mute-form-title" }, "Mute"),
      el(
        "fieldset",
        { class: "choices" },
        el("legend", {}, "What to mute"),
        el("label", { class: "choice", for: "mute-agent" }, agent, " An agent"),
        el("label", { class: "choice", for: "mute-project" }, project, " A project"),
      ),
      el("label", { for: "mute-subject" }, "The agent's account or the project's name"),
      el("p", { id: "mute-subject-help", class: "task-meta" }, "Like bot.near for an agent, or github for a project."),
      subject,
      el("label", { class: "choice", for: "mute-delete" }, drop, " Also delete what is waiting from it"),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Mute")),
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.mute(project.checked ? "project" : "agent", subject.value.trim(), drop.checked);
    });
    this.redraw(this.mutesBox, list, form);
  }

  private async mute(subjectIs: string, subject: string, deleteWaiting: boolean): Promise<void> {
    if (subjectIs === "agent" ? !ACCOUNT.test(subject) : !PROJECT.test(subject)) {
      this.host.say(subjectIs === "agent" ? "Type the agent's NEAR account id (like bot.near)." : "Type the project's name (1–64 of a-z 0-9 . _ -).", true);
      document.getElementById("mute-subject")?.focus();
      return;
    }
    let deleted: number;
    try {
      const r = (await api("POST", "/inbox/mutes", { subject_is: subjectIs, subject, delete_waiting: deleteWaiting })) as { deleted?: unknown };
      deleted = typeof r.deleted === "number" ? r.deleted : 0;
    } catch (e) {
      this.failed("Not muted", e);
      return;
    }
    const gone = deleteWaiting ? ` ${deleted === 1 ? "1 waiting task was" : `${deleted} waiting tasks were`} deleted.` : "";
    this.host.say(`Muted the ${subjectIs} ${subject}: its new tasks are refused.${gone}`);
    await this.loadMutes();
  }

  private async unmute(m: Mute): Promise<void> {
    try {
      await api("DELETE", "/inbox/mutes", { subject_is: m.subject_is, subject: m.subject });
    } catch (e) {
      this.failed("Not unmuted", e);
      return;
    }
    this.host.say(`Unmuted the ${m.subject_is} ${m.subject}: it can ask you again.`);
    await this.loadMutes();
  }

  // ---- the webhook ----

  /** Draws the webhook; secret is the one the PUT just answered, shown this once. */
  private async loadWebhook(secret: string | null): Promise<void> {
    const gen = this.generation;
    const secretBox = secret ? this.secretBox(secret) : null;
    let wh: Webhook;
    try {
      wh = (await api("GET", "/inbox/webhook")) as Webhook;
    } catch (e) {
      if (this.current(gen)) {
        // The secret just made is shown whatever: it is never shown again.
        this.webhookBox.replaceChildren(...[el("p", { class: "empty" }, "The webhook cannot be read now: " + refusal(e)), secretBox].filter((p): p is HTMLElement => p !== null));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const step = this.step("webhook-confirm");
    const parts: Child[] = [];
    if (wh.url) {
      parts.push(
        el("p", { id: "webhook-current" }, "Sends to ", el("span", { class: "mono", id: "webhook-url" }, wh.url), `, named ${wh.set_at ?? ""} by the key `, el("span", { class: "mono" }, wh.set_by_key ?? ""), "."),
      );
    } else {
      parts.push(el("p", { id: "webhook-current", class: "empty" }, "No webhook is named: nothing is sent anywhere."));
    }
    parts.push(secretBox);
    const url = el("input", { id: "webhook-url-input", name: "webhook-url", type: "url", inputmode: "url", spellcheck: "false", autocapitalize: "none", autocomplete: "off", placeholder: "https://hooks.example.com/countersign", "aria-describedby": "webhook-url-help" });
    const form = el(
      "form",
      { id: "webhook-form", class: "setting-form", "aria-labelledby": "webhook-form-title" },
      el("h4", { id: "webhook-form-title" }, wh.url ? "Name another address" : "Name an address"),
      el("label", { for: "webhook-url-input" }, "Webhook address"),
      el("p", { id: "webhook-url-help", class: "task-meta" }, "An HTTPS address on a public host, with no user or password in it. Naming it makes a new secret."),
      url,
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Name the webhook")),
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.nameWebhook(url.value.trim(), step);
    });
    parts.push(form);
    if (wh.url) {
      parts.push(el("div", { class: "actions" }, button("Send a test", () => void this.testWebhook(), true), button("Remove the webhook", () => void this.removeWebhook(step), true)));
      parts.push(el("p", { id: "webhook-test", class: "task-meta", hidden: "" }));
    }
    parts.push(step);
    this.redraw(this.webhookBox, ...parts.filter((p): p is Node => p instanceof Node));
    await this.loadDeliveries();
  }

  /** The secret the PUT answered, with its Copy button and the sentence that it is shown this once. */
  private secretBox(secret: string): HTMLElement {
    const copy = button(
      "Copy the secret",
      () =>
        void navigator.clipboard.writeText(secret).then(
          () => this.host.say("The secret is copied."),
          () => this.host.say("The secret could not be copied: select it and copy it yourself.", true),
        ),
    );
    return el(
      "div",
      { class: "secret", id: "webhook-secret-box", role: "group", "aria-labelledby": "webhook-secret-title" },
      el("h4", { id: "webhook-secret-title" }, "The webhook's secret"),
      el("p", {}, el("code", { id: "webhook-secret" }, secret)),
      el("p", { class: "secret-once" }, "This secret is shown this once: it will not be shown again, here or anywhere. Keep it where your receiver checks the signatures; naming the webhook again makes a new one."),
      el("div", { class: "actions" }, copy),
    );
  }

  private async nameWebhook(url: string, step: HTMLElement): Promise<void> {
    if (url === "") {
      this.host.say("Type the webhook's address first.", true);
      document.getElementById("webhook-url-input")?.focus();
      return;
    }
    const confirmation = await this.confirm(await actions.nameWebhook(url), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    let secret: string;
    try {
      const r = (await api("PUT", "/inbox/webhook", { url, confirmation })) as Webhook;
      secret = typeof r.secret === "string" ? r.secret : "";
    } catch (e) {
      this.failed("The webhook was not named", e);
      return;
    }
    this.host.say("The webhook is named. Its secret is shown below this once.");
    await this.loadWebhook(secret || null);
    document.getElementById("webhook-secret-title")?.setAttribute("tabindex", "-1");
    document.getElementById("webhook-secret-title")?.focus();
  }

  private async removeWebhook(step: HTMLElement): Promise<void> {
    const confirmation = await this.confirm(actions.removeWebhook(), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    try {
      await api("DELETE", "/inbox/webhook", { confirmation });
    } catch (e) {
      this.failed("The webhook was not removed", e);
      return;
    }
    this.host.say("The webhook is removed: nothing is sent any more.");
    await this.loadWebhook(null);
  }

  private async testWebhook(): Promise<void> {
    const gen = this.generation;
    this.host.say("Sending a test ping…");
    let d: Delivery;
    try {
      d = (await api("POST", "/inbox/webhook/test")) as Delivery;
    } catch (e) {
      this.failed("The test was not sent", e);
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const words = `Test ping: attempt ${d.attempt} at ${d.at}, ${answerWords(d)}.`;
    const out = document.getElementById("webhook-test");
    if (out) {
      out.textContent = words;
      out.hidden = false;
    }
    this.host.say(words, !(d.status_code >= 200 && d.status_code < 300));
    await this.loadDeliveries();
  }

  private async loadDeliveries(): Promise<void> {
    const gen = this.generation;
    let list: Delivery[];
    try {
      list = ((await api("GET", "/inbox/webhook/deliveries")) as { deliveries?: Delivery[] }).deliveries ?? [];
    } catch (e) {
      if (this.current(gen)) {
        this.deliveriesBox.replaceChildren(el("p", { class: "empty" }, "The delivery log cannot be read now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const head = el("h4", { id: "deliveries-title" }, "Delivery log");
    const refresh = el("div", { class: "actions" }, button("Refresh the log", () => void this.loadDeliveries(), true));
    if (!list.length) {
      this.deliveriesBox.replaceChildren(head, el("p", { class: "empty", id: "deliveries-empty" }, "Nothing was sent yet."), refresh);
      return;
    }
    const th = (t: string) => el("th", { scope: "col" }, t);
    const table = el(
      "table",
      { id: "deliveries", class: "log" },
      el("caption", {}, `The last ${list.length === 1 ? "attempt" : `${list.length} attempts`}, newest first`),
      el("thead", {}, el("tr", {}, th("When"), th("Event"), th("Task"), th("Attempt"), th("Answer"))),
      el(
        "tbody",
        {},
        ...list.map((d) =>
          el(
            "tr",
            { "data-event": d.event_id, "data-type": d.type },
            el("td", { class: "mono" }, d.at),
            el("td", {}, d.type),
            el("td", { class: "mono" }, d.task_id || "—"),
            el("td", {}, String(d.attempt)),
            el("td", { class: d.status_code >= 200 && d.status_code < 300 ? "" : "failure" }, answerWords(d)),
          ),
        ),
      ),
    );
    this.deliveriesBox.replaceChildren(head, el("div", { class: "table-scroll", role: "region", "aria-labelledby": "deliveries-title", tabindex: "0" }, table), refresh);
  }

  // ---- projects ----

  private async loadProjects(): Promise<void> {
    const gen = this.generation;
    let projects: Project[];
    try {
      const [p, c] = await Promise.all([api("GET", "/inbox/projects"), api("GET", "/connectors")]);
      projects = (p as { projects?: Project[] }).projects ?? [];
      this.catalogue = (c as { connectors?: Connector[] }).connectors ?? [];
    } catch (e) {
      if (this.current(gen)) {
        this.projectsBox.replaceChildren(el("p", { class: "empty" }, "Your projects cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const items = projects.map((p) => this.projectItem(p));
    const name = el("input", { id: "project-new-name", name: "project-new-name", spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": "project-new-help" });
    const conn = el("select", { id: "project-new-connector", name: "project-new-connector" }, ...this.catalogue.map((c) => el("option", { value: c.name }, `${c.name} ${c.version}`)));
    const newBox = el("div", { id: "project-new-editor" });
    const form = el(
      "form",
      { id: "project-new", class: "setting-form", "aria-labelledby": "project-new-title" },
      el("h4", { id: "project-new-title" }, "Add a project"),
      el("label", { for: "project-new-name" }, "Its name"),
      el("p", { id: "project-new-help", class: "task-meta" }, "1–64 of a-z 0-9 . _ -, beginning with a letter or digit; agents call it by this name."),
      name,
      el("label", { for: "project-new-connector" }, "Its connector"),
      conn,
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Set it up")),
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const n = name.value.trim();
      if (!PROJECT.test(n)) {
        this.host.say("A project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit.", true);
        name.focus();
        return;
      }
      if (projects.some((p) => p.name === n)) {
        this.host.say(`You have a project ${n} already: edit it above.`, true);
        return;
      }
      const fresh: Project = { name: n, connector: conn.value, agents: [], policy: "{}", policy_mode: "ok", credentials: false, updated_at: "" };
      newBox.replaceChildren(this.editor(fresh, true));
    });
    this.redraw(
      this.projectsBox,
      items.length ? el("ul", { class: "tasks", id: "projects-list", "aria-label": "Your projects" }, ...items) : el("p", { class: "empty", id: "projects-empty" }, "You have no project yet."),
      form,
      newBox,
    );
    this.drawCatalogue();
  }

  private connector(name: string): Connector | undefined {
    return this.catalogue.find((c) => c.name === name);
  }

  private projectItem(p: Project): HTMLElement {
    const editorBox = el("div", { class: "project-editor-box" });
    const step = this.step(`project-${idPart(p.name)}-confirm`);
    const edit = button("Edit", () => {
      const open = editorBox.childElementCount > 0;
      editorBox.replaceChildren(...(open ? [] : [this.editor(p, false)]));
      edit.setAttribute("aria-expanded", String(!open));
      if (!open) {
        editorBox.querySelector<HTMLElement>("input, textarea")?.focus();
      }
    }, true);
    edit.setAttribute("aria-label", `Edit the project ${p.name}`);
    edit.setAttribute("aria-expanded", "false");
    const del = button("Delete", () => void this.deleteProject(p, step), true);
    del.setAttribute("aria-label", `Delete the project ${p.name}`);
    let confirmNames: string[] = [];
    try {
      const pol = JSON.parse(p.policy) as { confirm?: unknown };
      if (Array.isArray(pol.confirm)) {
        confirmNames = pol.confirm.map(String);
      }
    } catch {
      // shown as its mode says
    }
    return el(
      "li",
      { class: "setting-item", "data-project": p.name },
      el("span", { class: "task-title" }, p.name),
      el("span", { class: "task-meta" }, `${p.connector} · agents: ${p.agents.length ? p.agents.join(", ") : "none"} · credentials: ${p.credentials ? "set" : "none"}${p.updated_at ? " · changed " + p.updated_at : ""}`),
      el("span", { class: "task-meta" }, confirmNames.length ? `Asks you before: ${confirmNames.join(", ")}.` : "Asks you before: nothing (writes act at once unless the connector always asks)."),
      el("span", { class: p.policy_mode === "ok" ? "policy-mode" : "policy-mode failure", "data-mode": p.policy_mode }, policyWords(p.policy_mode, p.policy_sentence)),
      el("div", { class: "actions" }, edit, del),
      step,
      editorBox,
    );
  }

  /** The editor of one project (fresh: not saved yet). */
  private editor(p: Project, fresh: boolean): HTMLElement {
    const conn = this.connector(p.connector);
    const slug = idPart(p.name);
    const id = (s: string) => `project-${slug}-${s}`;
    let policy: Record<string, unknown> = {};
    let policyText = "";
    try {
      const v = JSON.parse(p.policy) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) {
        policy = v as Record<string, unknown>;
      } else {
        policyText = p.policy;
      }
    } catch {
      policyText = p.policy;
    }
    const asked = Array.isArray(policy["confirm"]) ? (policy["confirm"] as unknown[]).map(String) : [];
    const rest: Record<string, unknown> = { ...policy };
    if (Array.isArray(policy["confirm"])) {
      delete rest["confirm"];
    }
    if (!policyText) {
      policyText = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
    }

    // "Ask me before": one box per write; a name that is no write of the
    // connector stays listed (ticked), so saving never drops it unseen.
    const writes = (conn?.operations ?? []).filter((o) => o.kind === "write").map((o) => o.name);
    const strays = asked.filter((n) => !writes.includes(n));
    const boxes: HTMLInputElement[] = [];
    const choice = (name: string, note: string) => {
      const b = el("input", { type: "checkbox", id: id("ask-" + name), name: id("ask"), value: name, "data-write": name });
      b.checked = asked.includes(name);
      boxes.push(b);
      return el("label", { class: "choice", for: id("ask-" + name) }, b, " ", el("span", { class: "mono" }, name), note ? el("span", { class: "task-meta" }, " " + note) : null);
    };
    const op = (n: string) => conn?.operations.find((o) => o.name === n);
    const ask = el(
      "fieldset",
      { class: "choices", id: id("ask") },
      el("legend", {}, "Ask me before"),
      writes.length ? null : el("p", { class: "task-meta" }, conn ? `${p.connector} has no write.` : `The service runs no connector ${p.connector}.`),
      ...writes.map((n) => choice(n, `(${price(op(n)?.price ?? 0)})${op(n)?.description ? " " + op(n)?.description : ""}`)),
      ...strays.map((n) => choice(n, `— not a write of ${p.connector}: it makes the policy unreadable`)),
    );

    const keys = (conn?.policy_keys ?? []).filter((k) => k !== "confirm");
    // Rules, for a connector that declares conditions: edited row by row
    // when each reads as {when: {op?, …}, then}; otherwise left in the JSON.
    const rules = keys.includes("rules") ? new RulesEditor(id("rules"), writes, readRules(rest["rules"])) : null;
    if (rules && rest["rules"] !== undefined && rules.read) {
      delete rest["rules"];
      policyText = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
    }
    const showRest = keys.some((k) => k !== "rules") || policyText !== "";
    const restBox = el("textarea", { id: id("policy"), name: id("policy"), spellcheck: "false", "aria-describedby": id("policy-help"), rows: "6" });
    restBox.value = policyText;
    const restHelp = keys.includes("rules")
      ? `A JSON object of the policy's other members. ${p.connector} reads ${keys.join(", ")}. rules is an ordered list of {"when": {…}, "then": "allow" | "ask" | "refuse"}; the first that matches decides, and never more loosely than Ask me before.`
      : keys.length
        ? `A JSON object of the policy's other members. ${p.connector} reads ${keys.join(", ")}; any other member makes the policy unreadable.`
        : `${p.connector} reads no other member: any member here makes the policy unreadable.`;

    const agents = el("input", { id: id("agents"), name: id("agents"), spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": id("agents-help") });
    agents.value = p.agents.join(", ");
    const creds = el("input", { id: id("credentials"), name: id("credentials"), type: "password", autocomplete: "new-password", spellcheck: "false", "aria-describedby": id("credentials-help") });
    const dropCreds = el("input", { type: "checkbox", id: id("credentials-remove"), name: id("credentials-remove") });
    const step = this.step(id("save-confirm"));
    const form = el(
      "form",
      { class: "setting-form project-editor", id: id("editor"), "aria-labelledby": id("editor-title") },
      el("h4", { id: id("editor-title") }, fresh ? `New project ${p.name} (${p.connector})` : `Edit ${p.name} (${p.connector})`),
      ask,
      showRest ? el("label", { for: id("policy") }, "The policy's other members (JSON)") : null,
      showRest ? el("p", { id: id("policy-help"), class: "task-meta" }, restHelp) : null,
      showRest ? restBox : null,
      rules ? rules.root : null,
      el("label", { for: id("agents") }, "Agents granted this project"),
      el("p", { id: id("agents-help"), class: "task-meta" }, "Their NEAR account ids, separated by commas or spaces. An agent not named here is refused (not_granted)."),
      agents,
      el("label", { for: id("credentials") }, "New credentials"),
      el(
        "p",
        { id: id("credentials-help"), class: "task-meta" },
        `${p.credentials ? "This project has credentials; they are never shown again." : "This project has no credentials."} Leave this empty to keep what it has. A JSON object is sent as it is; anything else as a JSON string (a token). They are sealed by the service at once.`,
      ),
      creds,
      p.credentials ? el("label", { class: "choice", for: id("credentials-remove") }, dropCreds, " Remove its credentials") : null,
      el("div", { class: "actions" }, el("button", { type: "submit" }, fresh ? "Save the new project" : "Save")),
      step,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      let text: string;
      try {
        text = projectText(p.connector, boxes.filter((b) => b.checked).map((b) => b.value), showRest ? restBox.value : "", agents.value, creds.value, dropCreds.checked, rules ? rules.value() : null);
      } catch (e) {
        this.host.say("This project cannot be saved: " + (e instanceof Error ? e.message : String(e)), true);
        return;
      }
      void this.saveProject(p.name, text, step, creds);
    });
    return form;
  }

  private async saveProject(name: string, text: string, step: HTMLElement, creds: HTMLInputElement): Promise<void> {
    const confirmation = await this.confirm(await actions.setProject(name, text), step, `project-${idPart(name)}-save-confirm`, "Send confirmation");
    if (!confirmation) {
      return;
    }
    let saved: Project;
    try {
      saved = (await api("PUT", `/inbox/projects/${encodeURIComponent(name)}`, { project: text, confirmation })) as Project;
    } catch (e) {
      this.failed(`The project ${name} was not saved`, e);
      return;
    }
    creds.value = "";
    this.host.say(`The project ${name} is saved. ${policyWords(saved.policy_mode, saved.policy_sentence)}`, saved.policy_mode !== "ok");
    await this.loadProjects();
  }

  private async deleteProject(p: Project, step: HTMLElement): Promise<void> {
    const confirmation = await this.confirm(actions.removeProject(p.name), step, `project-${idPart(p.name)}-confirm`, "Send confirmation");
    if (!confirmation) {
      return;
    }
    try {
      await api("DELETE", `/inbox/projects/${encodeURIComponent(p.name)}`, { confirmation });
    } catch (e) {
      this.failed(`The project ${p.name} was not deleted`, e);
      return;
    }
    this.host.say(`The project ${p.name} is deleted: agents can no longer call it.`);
    await this.loadProjects();
  }

  private drawCatalogue(): void {
    const items = this.catalogue.map((c) => {
      const of = (kind: string) => c.operations.filter((o) => o.kind === kind);
      const ops = (kind: string, label: string) => {
        const list = of(kind);
        return list.length
          ? el("span", { class: "task-meta" }, `${label}: `, ...list.flatMap((o, i) => [i ? "; " : "", el("span", { class: "mono" }, o.name), ` (${price(o.price)})${o.description ? ": " + o.description : ""}`]))
          : null;
      };
      return el(
        "li",
        { class: "setting-item", "data-connector": c.name },
        el("span", { class: "task-title" }, `${c.name} `, el("span", { class: "task-meta mono" }, c.build)),
        ops("write", "Writes"),
        ops("read", "Reads"),
        ops("answer", "Answers"),
        el("span", { class: "task-meta" }, `Policy members: ${c.policy_keys.join(", ")}`),
      );
    });
    this.catalogueBox.replaceChildren(
      el("h4", { id: "catalogue-title" }, "Connectors this service runs"),
      items.length ? el("ul", { class: "tasks", id: "catalogue", "aria-labelledby": "catalogue-title" }, ...items) : el("p", { class: "empty" }, "None."),
    );
  }
}

/** A delivery attempt's answer in words. */
function answerWords(d: Delivery): string {
  if (d.error) {
    return d.status_code ? `answered ${d.status_code}: ${d.error}` : `failed: ${d.error}`;
  }
  return d.status_code ? `answered ${d.status_code}` : "no answer";
}

/**
 * The project text the owner signs (SPEC §6): exactly {connector, policy,
 * credentials?, agents}, as one JSON text sent as it is hashed.
 */
export function projectText(connector: string, asked: string[], rest: string, agentsText: string, credentials: string, removeCredentials: boolean, rules: Rule[] | null = null): string {
  let others: Record<string, unknown> = {};
  if (rest.trim() !== "") {
    let v: unknown;
    try {
      v = JSON.parse(rest);
    } catch {
      throw new Error("the policy's other members are not JSON");
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) {
      throw new Error("the policy's other members are not a JSON object");
    }
    others = v as Record<string, unknown>;
    if ("confirm" in others) {
      throw new Error("confirm is set by the Ask me before boxes, not in the JSON");
    }
    if (rules?.length && "rules" in others) {
      throw new Error("the rules are set in the rules editor, not in the JSON");
    }
  }
  const policy: Record<string, unknown> = asked.length ? { confirm: asked, ...others } : { ...others };
  if (rules?.length) {
    policy["rules"] = rules;
  }
  const agents = agentsText.split(/[\s,]+/).filter((a) => a !== "");
  for (const a of agents) {
    if (!ACCOUNT.test(a)) {
      throw new Error(`${a} is not a NEAR account id`);
    }
  }
  const out: Record<string, unknown> = { connector, policy };
  if (removeCredentials) {
    out["credentials"] = null;
  } else if (credentials !== "") {
    if (credentials.trim().startsWith("{")) {
      let c: unknown;
      try {
        c = JSON.parse(credentials);
      } catch {
        throw new Error("the credentials begin like a JSON object but are not JSON");
      }
      out["credentials"] = c;
    } else {
      out["credentials"] = credentials;
    }
  }
  out["agents"] = [...new Set(agents)];
  return JSON.stringify(out);
}

/** Whether e is a refusal of a session that is over. */
export function sessionOver(e: unknown): boolean {
  return e instanceof Refused && e.status === 401;
}

/** One rule of a policy (SPEC §13): the first whose when matches decides. */
export interface Rule {
  when: Record<string, unknown>;
  then: string;
}

const THENS: readonly (readonly [string, string])[] = [
  ["allow", "allow at once"],
  ["ask", "ask me first"],
  ["refuse", "refuse"],
];

/** The rules as the editor can show them row by row; null when some rule cannot be (it stays in the JSON). */
export function readRules(v: unknown): Rule[] | null {
  if (v === undefined) {
    return [];
  }
  if (!Array.isArray(v)) {
    return null;
  }
  const out: Rule[] = [];
  for (const r of v) {
    if (!r || typeof r !== "object" || Array.isArray(r)) {
      return null;
    }
    const o = r as Record<string, unknown>;
    const when = o["when"];
    const then = o["then"];
    if (Object.keys(o).some((k) => k !== "when" && k !== "then") || typeof then !== "string" || !THENS.some(([t]) => t === then)) {
      return null;
    }
    if (!when || typeof when !== "object" || Array.isArray(when)) {
      return null;
    }
    const w = when as Record<string, unknown>;
    if (w["op"] !== undefined && typeof w["op"] !== "string") {
      return null;
    }
    out.push({ when: w, then });
  }
  return out;
}

/**
 * The rules editor: an ordered list of rows, each a `then`, the write it is
 * about (or any write) and the rest of its `when` as JSON (the conditions
 * the connector declares: the catalogue names no more than that rules
 * exist, so they are typed, and the service says when one does not apply).
 */
class RulesEditor {
  readonly root: HTMLElement;
  /** Whether the policy's rules were read into the rows (false: they stay in the JSON). */
  readonly read: boolean;
  private rows: { then: string; op: string; conds: string }[];
  private readonly list: HTMLElement;

  constructor(
    private readonly prefix: string,
    private readonly writes: string[],
    rules: Rule[] | null,
  ) {
    this.read = rules !== null;
    this.rows = (rules ?? []).map((r) => {
      const { op, ...conds } = r.when;
      return { then: r.then, op: typeof op === "string" ? op : "", conds: Object.keys(conds).length ? JSON.stringify(conds) : "" };
    });
    this.list = el("ol", { class: "rules", id: prefix + "-list" });
    const add = button("Add a rule", () => {
      this.take();
      this.rows.push({ then: "ask", op: "", conds: "" });
      this.draw();
      this.list.querySelector<HTMLElement>(`li:last-child select`)?.focus();
    }, true);
    this.root = el(
      "fieldset",
      { class: "choices rules-editor", id: prefix },
      el("legend", {}, "Rules"),
      el(
        "p",
        { class: "task-meta", id: prefix + "-help" },
        this.read
          ? "Read in order: the first rule whose write and conditions match decides, never more loosely than Ask me before. Conditions are a JSON object of what the connector tests (such as {\"min_usd\": 500}); leave it empty for none. At most 50 rules."
          : "These rules cannot be shown row by row: they stay in the JSON above, under rules.",
      ),
      this.list,
      this.read ? el("div", { class: "actions" }, add) : null,
    );
    this.draw();
  }

  /** Reads the rows back from their controls. */
  private take(): void {
    this.rows = [...this.list.querySelectorAll<HTMLLIElement>("li[data-rule]")].map((li) => ({
      then: li.querySelector<HTMLSelectElement>("select[data-then]")?.value ?? "ask",
      op: li.querySelector<HTMLSelectElement>("select[data-op]")?.value ?? "",
      conds: li.querySelector<HTMLInputElement>("input[data-conds]")?.value ?? "",
    }));
  }

  private draw(): void {
    const n = this.rows.length;
    this.list.replaceChildren(
      ...this.rows.map((r, i) => {
        const k = `${this.prefix}-${i + 1}`;
        const then = el("select", { id: k + "-then", "data-then": "" }, ...THENS.map(([v, words]) => el("option", { value: v }, words)));
        then.value = r.then;
        const ops = [...this.writes];
        if (r.op && !ops.includes(r.op)) {
          ops.push(r.op);
        }
        const op = el("select", { id: k + "-op", "data-op": "" }, el("option", { value: "" }, "any write"), ...ops.map((o) => el("option", { value: o }, o)));
        op.value = r.op;
        const conds = el("input", { id: k + "-conds", "data-conds": "", spellcheck: "false", autocomplete: "off", "aria-describedby": this.prefix + "-help" });
        conds.value = r.conds;
        const move = (d: number) => () => {
          this.take();
          const [row] = this.rows.splice(i, 1);
          if (row) {
            this.rows.splice(i + d, 0, row);
          }
          this.draw();
          this.list.querySelector<HTMLElement>(`#${CSS.escape(`${this.prefix}-${i + d + 1}-then`)}`)?.focus();
        };
        const up = button("Up", move(-1), true);
        up.setAttribute("aria-label", `Move rule ${i + 1} up`);
        up.disabled = i === 0;
        const down = button("Down", move(1), true);
        down.setAttribute("aria-label", `Move rule ${i + 1} down`);
        down.disabled = i === n - 1;
        const remove = button("Remove", () => {
          this.take();
          this.rows.splice(i, 1);
          this.draw();
          this.root.querySelector<HTMLElement>("legend")?.focus();
        }, true);
        remove.setAttribute("aria-label", `Remove rule ${i + 1}`);
        return el(
          "li",
          { class: "rule", "data-rule": String(i + 1) },
          el("span", { class: "task-title" }, `Rule ${i + 1}`),
          el("label", { for: k + "-op" }, "For"),
          op,
          el("label", { for: k + "-conds" }, "When (conditions, JSON)"),
          conds,
          el("label", { for: k + "-then" }, "Then"),
          then,
          el("div", { class: "actions" }, up, down, remove),
        );
      }),
    );
    if (!n) {
      this.list.append(el("li", { class: "empty rule-none" }, "No rule: Ask me before decides alone."));
    }
  }

  /** The rules as the policy holds them; throws on conditions that are not a JSON object. */
  value(): Rule[] {
    if (!this.read) {
      return [];
    }
    this.take();
    return this.rows.map((r, i) => {
      let conds: Record<string, unknown> = {};
      if (r.conds.trim() !== "") {
        let v: unknown;
        try {
          v = JSON.parse(r.conds);
        } catch {
          throw new Error(`rule ${i + 1}'s conditions are not JSON`);
        }
        if (!v || typeof v !== "object" || Array.isArray(v)) {
          throw new Error(`rule ${i + 1}'s conditions are not a JSON object`);
        }
        conds = v as Record<string, unknown>;
        if ("op" in conds) {
          throw new Error(`rule ${i + 1} names its write in For, not in its conditions`);
        }
      }
      return { when: r.op ? { op: r.op, ...conds } : conds, then: r.then };
    });
  }
}
