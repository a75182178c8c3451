// Settings: the owner's devices, mutes, webhook and projects, each a view
// of its own with its own address (#/settings/devices, …), reached from
// the overview (#/settings) or the row of links on every section. Every
// change the contract guards (withdrawing a device, naming or removing the
// webhook, setting or removing a project) is signed by the owner's wallet
// as a confirmation sentence (SPEC §7) first; what was changed, or refused,
// is said next to it as well as in the page's live region. Like the rest of
// the page, everything is put in the page as text, never as markup. The
// webhook's secret is shown once, in this view only: it is never stored,
// and leaving the view drops it.

import { sha256Hex } from "./crypto";
import * as api from "./api";
import { el, button, refusal, Refused, when, account as accountEl, copyButton, type Child } from "./dom";
import { Projects } from "./projects";
import { pushSwitch } from "./push";
import { ACCOUNT, confirmationSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type Signature, type SignRequest } from "./wallet";
import { sentenceTime, utcWords } from "./words";

/** What the view needs of the page around it. */
export interface SettingsHost {
  /** The signed-in account. */
  account(): string | null;
  /** The deployment's NEP-413 recipient. */
  readonly recipient: string;
  /** Shows a status in the page's polite live region. */
  say(text: string, error?: boolean): void;
  /** Clears the live region when it still says text. */
  unsay(text: string): void;
  /** Has the owner's wallet sign req (rejects with Declined when it declines). */
  askSignature(req: SignRequest, host: HTMLElement, ids: PanelIDs, submit: string): Promise<Signature>;
  /** The session is over (this device was withdrawn): back to signing in. */
  ended(why: string): void;
}

/** The sections of Settings, each its own view, in the order shown. */
export const SECTIONS: readonly { id: string; name: string; intro: string }[] = [
  { id: "devices", name: "Devices", intro: "The browsers and terminals signed in as you. Withdrawing one ends its session at once; your wallet confirms it." },
  { id: "mutes", name: "Mutes", intro: "A muted agent or project cannot ask you anything: its new tasks are refused." },
  { id: "webhook", name: "Webhook", intro: "One HTTPS address of yours that is told when something happens (never what a task shows), signed with a secret." },
  { id: "projects", name: "Projects", intro: "Your installations of connectors: what each may do at once, what it asks you first, what it refuses, and which agents may use it." },
];

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
export const PROJECT = /^[a-z0-9][a-z0-9._-]{0,63}$/;

type Device = api.Device;
type Mute = api.Mute;
type Webhook = api.WebhookView;
type Delivery = api.Delivery;

/** What a section's code needs of the view: confirmations, results, and whether it is still shown. */
export interface SectionContext {
  readonly host: SettingsHost;
  /** The wallet's confirmation of action (see Settings.confirm). */
  confirm(action: string, step: HTMLElement, prefix: string, submit: string): Promise<api.Confirmation | null>;
  /** Says what became of a change, beside it (out) and in the live region. */
  result(out: HTMLElement | null, text: string, error?: boolean): void;
  /** Takes back what out says, beside the change and in the live region: it no longer holds. */
  retract(out: HTMLElement): void;
  /** A refusal: the session's end, or said beside the change. */
  failed(out: HTMLElement | null, what: string, e: unknown): void;
  /** Draws box anew, keeping the keyboard in its section. */
  redraw(box: HTMLElement, ...nodes: Node[]): void;
  /** A hidden confirmation step with this id. */
  step(id: string): HTMLElement;
  /** The view's generation now: a late answer of an older one draws nothing. */
  generation(): number;
  current(gen: number): boolean;
}

/** The Settings views. */
export class Settings implements SectionContext {
  readonly root = el("section", { id: "settings", class: "settings", "aria-labelledby": "settings-title", hidden: "" });
  private readonly box = el("div", { id: "settings-box" });
  /** The section shown; null: the overview. */
  section: string | null = null;
  /** Set while a confirmation is being signed: one at a time. */
  private busy = false;
  /** Bumped each time a view is drawn or left: late answers then draw nothing. */
  private gen = 0;
  private readonly projects: Projects;

  constructor(readonly host: SettingsHost) {
    this.projects = new Projects(this);
  }

  get shown(): boolean {
    return !this.root.hidden;
  }

  generation(): number {
    return this.gen;
  }

  current(gen: number): boolean {
    return gen === this.gen && this.shown;
  }

  /** Draws a section (null: the overview) and loads it; the focus goes to its heading. */
  show(section: string | null): void {
    if (this.shown && this.section === section && this.root.childElementCount) {
      return;
    }
    this.gen++;
    this.busy = false;
    this.section = section;
    const s = SECTIONS.find((x) => x.id === section) ?? null;
    const nav = el(
      "nav",
      { class: "settings-nav", "aria-label": "Settings" },
      el(
        "ul",
        {},
        el("li", {}, el("a", { href: "#/", id: "back-to-inbox" }, "← Inbox")),
        ...SECTIONS.map((x) => {
          const a = el("a", { href: `#/settings/${x.id}`, "data-section": x.id }, x.name);
          if (x.id === section) {
            a.setAttribute("aria-current", "page");
          }
          return el("li", {}, a);
        }),
      ),
    );
    const title = el("h2", { id: "settings-title", tabindex: "-1" }, s ? s.name : "Settings");
    this.box.replaceChildren();
    if (!s) {
      this.box.append(
        el(
          "ul",
          { class: "overview", id: "settings-overview" },
          ...SECTIONS.map((x) => el("li", {}, el("a", { href: `#/settings/${x.id}` }, x.name), el("p", { class: "task-meta" }, x.intro))),
        ),
      );
    } else {
      this.box.append(el("p", { class: "task-meta" }, s.intro), el("div", { id: `${s.id}-box`, class: "settings-part" }));
    }
    this.root.replaceChildren(nav, title, this.box);
    this.root.hidden = false;
    title.focus();
    switch (section) {
      case "devices":
        void this.loadDevices();
        break;
      case "mutes":
        void this.loadMutes();
        break;
      case "webhook":
        void this.loadWebhook(null);
        break;
      case "projects":
        void this.projects.load(this.part("projects"));
        break;
    }
  }

  /** Leaves the view: everything it drew is dropped, the webhook's secret with it. */
  hide(): void {
    this.gen++;
    this.busy = false;
    this.section = null;
    this.box.replaceChildren();
    this.root.replaceChildren();
    this.root.hidden = true;
  }

  private part(id: string): HTMLElement {
    return this.box.querySelector<HTMLElement>(`#${id}-box`) ?? el("div");
  }

  /**
   * Has the owner's wallet sign the confirmation of action, showing it in
   * step (for a wallet elsewhere, the paste panel, with a Cancel). Returns
   * the confirmation member of a request body, or null when the wallet
   * declined, the owner cancelled or the view was left (a neutral notice
   * said so; nothing was sent).
   */
  async confirm(action: string, step: HTMLElement, prefix: string, submit: string): Promise<api.Confirmation | null> {
    const account = this.host.account();
    if (!account) {
      return null;
    }
    if (this.busy) {
      this.host.say("Finish the signature already asked for first.", true);
      return null;
    }
    const gen = this.gen;
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
      if (gen === this.gen) {
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

  result(out: HTMLElement | null, text: string, error = false): void {
    this.host.say(text, error);
    if (out) {
      out.textContent = text;
      out.classList.toggle("failure", error);
      out.classList.toggle("ok", !error);
      out.hidden = false;
    }
  }

  retract(out: HTMLElement): void {
    if (!out.hidden && out.textContent) {
      this.host.unsay(out.textContent);
    }
    out.hidden = true;
  }

  failed(out: HTMLElement | null, what: string, e: unknown): void {
    if (sessionOver(e)) {
      this.host.ended("Your session ended: " + refusal(e));
      return;
    }
    this.result(out, `${what}: ${refusal(e)}`, true);
  }

  /**
   * Draws box anew; when the focus was in it (on a button that is gone
   * now), it goes to the section's heading, so the keyboard stays where the
   * owner was.
   */
  redraw(box: HTMLElement, ...nodes: Node[]): void {
    const had = box.contains(document.activeElement);
    box.replaceChildren(...nodes);
    if (had && !box.contains(document.activeElement)) {
      this.root.querySelector<HTMLElement>("#settings-title")?.focus();
    }
  }

  step(id: string): HTMLElement {
    const s = el("div", { id, class: "confirm-step" });
    s.hidden = true;
    return s;
  }

  // ---- devices ----

  private async loadDevices(): Promise<void> {
    const box = this.part("devices");
    const gen = this.gen;
    let devices: Device[];
    try {
      devices = (await api.devices()).devices ?? [];
    } catch (e) {
      if (this.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "Your devices cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const step = this.step("device-confirm");
    const out = resultLine("devices-result");
    const items = devices.map((d) => {
      const withdraw = button("Withdraw", () => void this.withdraw(d, step, out), true);
      withdraw.setAttribute("aria-label", d.this ? `Withdraw this device (${d.id})` : `Withdraw the device ${d.id}`);
      return el(
        "li",
        { class: "setting-item", "data-device": d.id },
        el("span", { class: "task-title" }, d.this ? el("span", { class: "this-device" }, "This device") : "Another device", " ", el("span", { class: "mono" }, d.id)),
        el("span", { class: "task-meta" }, "Signed in ", when(d.created_at), " · ends ", when(d.valid_until)),
        d.this ? el("span", { class: "task-meta" }, "Withdrawing this device signs this page out.") : null,
        !d.this && d.push ? el("span", { class: "task-meta" }, "Told when a task is waiting.") : null,
        d.this ? pushSwitch(d.push === true, { say: (t, err) => this.result(out, t, err), failed: (what, e) => this.failed(out, what, e) }) : null,
        el(
          "details",
          { class: "precise" },
          el("summary", {}, "Its keys"),
          el("dl", { class: "details" }, el("dt", {}, "Device key"), el("dd", { class: "mono" }, d.device_pubkey), el("dt", {}, "Signed in by the wallet key"), el("dd", { class: "mono" }, d.signer_pubkey)),
        ),
        el("div", { class: "actions" }, withdraw),
      );
    });
    this.redraw(box, items.length ? el("ul", { class: "tasks", id: "devices-list", "aria-label": "Your devices" }, ...items) : el("p", { class: "empty" }, "No device is signed in."), out, step);
  }

  private async withdraw(d: Device, step: HTMLElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.confirm(actions.withdrawDevice(d.id), step, "device-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    this.host.say("Withdrawing the device…");
    try {
      await api.withdrawDevice(d.id, confirmation);
    } catch (e) {
      this.failed(out, "The device was not withdrawn", e);
      return;
    }
    if (d.this) {
      this.host.ended("This device was withdrawn: you are signed out.");
      return;
    }
    await this.loadDevices();
    this.result(this.part("devices").querySelector("#devices-result"), `The device ${d.id} was withdrawn: its session is over.`);
  }

  // ---- mutes ----

  private async loadMutes(): Promise<void> {
    const box = this.part("mutes");
    const gen = this.gen;
    let mutes: Mute[];
    try {
      mutes = (await api.mutes()).mutes ?? [];
    } catch (e) {
      if (this.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "Your mutes cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const listOut = resultLine("mutes-list-result");
    const list = mutes.length
      ? el(
          "ul",
          { class: "tasks", id: "mutes-list", "aria-label": "Muted" },
          ...mutes.map((m) => {
            const what = m.subject_is === "agent" ? "Agent" : "Project";
            const unmute = button("Unmute", () => void this.unmute(m, listOut), true);
            unmute.setAttribute("aria-label", `Unmute the ${m.subject_is} ${m.subject}`);
            return el(
              "li",
              { class: "setting-item", "data-mute": `${m.subject_is}:${m.subject}` },
              el("span", { class: "task-title" }, `${what} `, m.subject_is === "agent" ? accountEl(m.subject, (t, e) => this.host.say(t, e)) : el("span", { class: "mono" }, m.subject)),
              el("span", { class: "task-meta" }, "Muted ", when(m.created_at)),
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
    const out = resultLine("mute-result");
    const form = el(
      "form",
      { id: "mute-form", class: "setting-form", "aria-labelledby": "mute-form-title" },
      el("h3", { id: "mute-form-title" }, "Mute"),
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
      out,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.mute(project.checked ? "project" : "agent", subject.value.trim(), drop.checked, out);
    });
    this.redraw(box, list, listOut, form);
  }

  private async mute(subjectIs: string, subject: string, deleteWaiting: boolean, out: HTMLElement): Promise<void> {
    if (subjectIs === "agent" ? !ACCOUNT.test(subject) : !PROJECT.test(subject)) {
      this.result(out, subjectIs === "agent" ? "Type the agent's NEAR account id (like bot.near)." : "Type the project's name (1–64 of a-z 0-9 . _ -).", true);
      document.getElementById("mute-subject")?.focus();
      return;
    }
    let deleted: number;
    try {
      deleted = (await api.mute({ subject_is: subjectIs, subject, delete_waiting: deleteWaiting })).deleted;
    } catch (e) {
      this.failed(out, "Not muted", e);
      return;
    }
    const gone = deleteWaiting ? ` ${deleted === 1 ? "1 waiting task was" : `${deleted} waiting tasks were`} deleted.` : "";
    await this.loadMutes();
    this.result(document.getElementById("mute-result"), `Muted the ${subjectIs} ${subject}: its new tasks are refused.${gone}`);
  }

  private async unmute(m: Mute, out: HTMLElement): Promise<void> {
    try {
      await api.unmute({ subject_is: m.subject_is, subject: m.subject });
    } catch (e) {
      this.failed(out, "Not unmuted", e);
      return;
    }
    await this.loadMutes();
    this.result(document.getElementById("mutes-list-result"), `Unmuted the ${m.subject_is} ${m.subject}: it can ask you again.`);
  }

  // ---- the webhook ----

  /** Draws the webhook; secret is the one the PUT just answered, shown this once. */
  private async loadWebhook(secret: string | null): Promise<void> {
    const box = this.part("webhook");
    const gen = this.gen;
    const secretBox = secret ? this.secretBox(secret) : null;
    let wh: Webhook;
    try {
      wh = await api.webhook();
    } catch (e) {
      if (this.current(gen)) {
        // The secret just made is shown whatever: it is never shown again.
        box.replaceChildren(...[el("p", { class: "empty" }, "The webhook cannot be read now: " + refusal(e)), secretBox].filter((p): p is HTMLElement => p !== null));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const step = this.step("webhook-confirm");
    const out = resultLine("webhook-result");
    const parts: Child[] = [];
    if (wh.url) {
      parts.push(
        el(
          "p",
          { id: "webhook-current" },
          "Sends to ",
          el("span", { class: "mono", id: "webhook-url" }, wh.url),
          ", named ",
          wh.set_at ? when(wh.set_at) : "",
          ".",
        ),
        el("details", { class: "precise" }, el("summary", {}, "Named by"), el("p", {}, "The wallet key ", el("span", { class: "mono" }, wh.set_by_key ?? ""), wh.set_at ? `, at ${utcWords(Date.parse(wh.set_at))}.` : ".")),
      );
    } else {
      parts.push(el("p", { id: "webhook-current", class: "empty" }, "No webhook is named: nothing is sent anywhere."));
    }
    parts.push(secretBox);
    const url = el("input", { id: "webhook-url-input", name: "webhook-url", type: "url", inputmode: "url", spellcheck: "false", autocapitalize: "none", autocomplete: "off", placeholder: "https://hooks.example.com/countersign", "aria-describedby": "webhook-url-help" });
    const form = el(
      "form",
      { id: "webhook-form", class: "setting-form", "aria-labelledby": "webhook-form-title" },
      el("h3", { id: "webhook-form-title" }, wh.url ? "Name another address" : "Name an address"),
      el("label", { for: "webhook-url-input" }, "Webhook address"),
      el("p", { id: "webhook-url-help", class: "task-meta" }, "An HTTPS address on a public host, with no user or password in it. Naming it makes a new secret."),
      url,
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Name the webhook")),
      out,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.nameWebhook(url.value.trim(), step, out);
    });
    parts.push(form);
    if (wh.url) {
      parts.push(el("div", { class: "actions" }, button("Send a test", () => void this.testWebhook(), true), button("Remove the webhook", () => void this.removeWebhook(step, out), true)));
      parts.push(el("p", { id: "webhook-test", class: "task-meta", hidden: "" }));
    }
    parts.push(step, el("div", { id: "deliveries-box" }));
    this.redraw(box, ...parts.filter((p): p is Node => p instanceof Node));
    await this.loadDeliveries();
  }

  /** The secret the PUT answered, with its Copy button and the sentence that it is shown this once. */
  private secretBox(secret: string): HTMLElement {
    const copy = copyButton(secret, "the secret", (t, e) => this.host.say(t, e));
    copy.textContent = "Copy the secret";
    copy.className = "";
    copy.removeAttribute("aria-label");
    return el(
      "div",
      { class: "secret", id: "webhook-secret-box", role: "group", "aria-labelledby": "webhook-secret-title" },
      el("h3", { id: "webhook-secret-title", tabindex: "-1" }, "The webhook's secret"),
      el("p", {}, el("code", { id: "webhook-secret" }, secret)),
      el("p", { class: "secret-once" }, "This secret is shown this once: it will not be shown again, here or anywhere. Keep it where your receiver checks the signatures; naming the webhook again makes a new one."),
      el("div", { class: "actions" }, copy),
    );
  }

  private async nameWebhook(url: string, step: HTMLElement, out: HTMLElement): Promise<void> {
    if (url === "") {
      this.result(out, "Type the webhook's address first.", true);
      document.getElementById("webhook-url-input")?.focus();
      return;
    }
    const confirmation = await this.confirm(await actions.nameWebhook(url), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    let secret: string;
    try {
      secret = (await api.putWebhook(url, confirmation)).secret ?? "";
    } catch (e) {
      this.failed(out, "The webhook was not named", e);
      return;
    }
    await this.loadWebhook(secret || null);
    this.result(document.getElementById("webhook-result"), "The webhook is named. Its secret is shown above this once.");
    document.getElementById("webhook-secret-title")?.focus();
  }

  private async removeWebhook(step: HTMLElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.confirm(actions.removeWebhook(), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    try {
      await api.deleteWebhook(confirmation);
    } catch (e) {
      this.failed(out, "The webhook was not removed", e);
      return;
    }
    await this.loadWebhook(null);
    this.result(document.getElementById("webhook-result"), "The webhook is removed: nothing is sent any more.");
  }

  private async testWebhook(): Promise<void> {
    const gen = this.gen;
    this.host.say("Sending a test ping…");
    let d: Delivery;
    try {
      d = await api.testWebhook();
    } catch (e) {
      this.failed(document.getElementById("webhook-test"), "The test was not sent", e);
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const words = `Test ping: attempt ${d.attempt}, ${answerWords(d)}.`;
    const out = document.getElementById("webhook-test");
    if (out) {
      out.textContent = words;
      out.hidden = false;
    }
    this.host.say(words, !(d.status_code >= 200 && d.status_code < 300));
    await this.loadDeliveries();
  }

  private async loadDeliveries(): Promise<void> {
    const gen = this.gen;
    const box = this.root.querySelector<HTMLElement>("#deliveries-box");
    if (!box) {
      return;
    }
    let list: Delivery[];
    try {
      list = (await api.deliveries()).deliveries ?? [];
    } catch (e) {
      if (this.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "The delivery log cannot be read now: " + refusal(e)));
      }
      return;
    }
    if (!this.current(gen)) {
      return;
    }
    const head = el("h3", { id: "deliveries-title" }, "Delivery log");
    const refresh = el("div", { class: "actions" }, button("Refresh the log", () => void this.loadDeliveries(), true));
    if (!list.length) {
      box.replaceChildren(head, el("p", { class: "empty", id: "deliveries-empty" }, "Nothing was sent yet."), refresh);
      return;
    }
    // One entry per attempt, newest first: a list, so it stays one column at any width.
    const log = el(
      "ol",
      { id: "deliveries", class: "tasks log", "aria-labelledby": "deliveries-title" },
      ...list.map((d) =>
        el(
          "li",
          { "data-event": d.event_id, "data-type": d.type, class: "setting-item" },
          el("span", { class: "task-title" }, `${d.type}, attempt ${d.attempt}: `, el("span", { class: d.status_code >= 200 && d.status_code < 300 ? "" : "failure" }, answerWords(d))),
          el("span", { class: "task-meta" }, when(d.at), d.task_id ? " · task " : "", d.task_id ? el("span", { class: "mono" }, d.task_id) : ""),
        ),
      ),
    );
    box.replaceChildren(head, el("p", { class: "task-meta" }, `The last ${list.length === 1 ? "attempt" : `${list.length} attempts`}, newest first.`), log, refresh);
  }
}

/** A line beside a change that says what became of it (hidden until then); not live: the status line is. */
export function resultLine(id: string): HTMLElement {
  const p = el("p", { id, class: "form-result" });
  p.hidden = true;
  return p;
}

/** A delivery attempt's answer in words. */
function answerWords(d: Delivery): string {
  if (d.error) {
    return d.status_code ? `answered ${d.status_code}: ${d.error}` : `failed: ${d.error}`;
  }
  return d.status_code ? `answered ${d.status_code}` : "no answer";
}

/** Whether e is a refusal of a session that is over. */
export function sessionOver(e: unknown): boolean {
  return e instanceof Refused && e.status === 401;
}
