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

import type * as api from "./api";
import { Devices } from "./devices";
import { el, button, refusal } from "./dom";
import { Mutes } from "./mutes";
import { Projects } from "./projects";
import { sessionOver, type SectionContext, type SettingsHost } from "./section";
import { confirmationSentence, newNonce } from "./sign";
import { Declined, type PanelIDs, type SignRequest } from "./wallet";
import { Webhook } from "./webhook";
import { sentenceTime } from "./words";

/** The sections of Settings, each its own view, in the order shown. */
export const SECTIONS: readonly { id: string; name: string; intro: string }[] = [
  { id: "devices", name: "Devices", intro: "The browsers and terminals signed in as you. Withdrawing one ends its session at once; your wallet confirms it." },
  { id: "mutes", name: "Mutes", intro: "A muted agent or project cannot ask you anything: its new tasks are refused." },
  { id: "webhook", name: "Webhook", intro: "One HTTPS address of yours that is told when something happens (never what a task shows), signed with a secret." },
  { id: "projects", name: "Projects", intro: "Your installations of connectors: what each may do at once, what it asks you first, what it refuses, and which agents may use it." },
];

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
  private readonly devices: Devices;
  private readonly mutes: Mutes;
  private readonly webhook: Webhook;

  constructor(readonly host: SettingsHost) {
    this.projects = new Projects(this);
    this.devices = new Devices(this);
    this.mutes = new Mutes(this);
    this.webhook = new Webhook(this);
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
        void this.devices.load();
        break;
      case "mutes":
        void this.mutes.load();
        break;
      case "webhook":
        void this.webhook.load(null);
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

  part(id: string): HTMLElement {
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
}
