// Settings → Webhook: the one HTTPS address told when something happens,
// named and removed with the wallet's confirmation; its secret shown once,
// in this view only (never stored; leaving the view drops it); a test ping
// and the delivery log.

import * as api from "./api";
import { el, button, refusal, when, copyButton, type Child } from "./dom";
import { actions, resultLine, type SectionContext } from "./section";
import { utcWords } from "./words";

type Delivery = api.Delivery;

/** The webhook view. */
export class Webhook {
  constructor(private readonly ctx: SectionContext) {}

  /** Draws the webhook; secret is the one the PUT just answered, shown this once. */
  async load(secret: string | null): Promise<void> {
    const box = this.ctx.part("webhook");
    const gen = this.ctx.generation();
    const secretBox = secret ? this.secretBox(secret) : null;
    let wh: api.WebhookView;
    try {
      wh = await api.webhook();
    } catch (e) {
      if (this.ctx.current(gen)) {
        // The secret just made is shown whatever: it is never shown again.
        box.replaceChildren(...[el("p", { class: "empty" }, "The webhook cannot be read now: " + refusal(e)), secretBox].filter((p): p is HTMLElement => p !== null));
      }
      return;
    }
    if (!this.ctx.current(gen)) {
      return;
    }
    const step = this.ctx.step("webhook-confirm");
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
    this.ctx.redraw(box, ...parts.filter((p): p is Node => p instanceof Node));
    await this.loadDeliveries();
  }

  /** The secret the PUT answered, with its Copy button and the sentence that it is shown this once. */
  private secretBox(secret: string): HTMLElement {
    const copy = copyButton(secret, "the secret", (t, e) => this.ctx.host.say(t, e));
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
      this.ctx.result(out, "Type the webhook's address first.", true);
      document.getElementById("webhook-url-input")?.focus();
      return;
    }
    const confirmation = await this.ctx.confirm(await actions.nameWebhook(url), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    let secret: string;
    try {
      secret = (await api.putWebhook(url, confirmation)).secret ?? "";
    } catch (e) {
      this.ctx.failed(out, "The webhook was not named", e);
      return;
    }
    await this.load(secret || null);
    this.ctx.result(document.getElementById("webhook-result"), "The webhook is named. Its secret is shown above this once.");
    document.getElementById("webhook-secret-title")?.focus();
  }

  private async removeWebhook(step: HTMLElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.ctx.confirm(actions.removeWebhook(), step, "webhook-confirm", "Send confirmation");
    if (!confirmation) {
      return;
    }
    try {
      await api.deleteWebhook(confirmation);
    } catch (e) {
      this.ctx.failed(out, "The webhook was not removed", e);
      return;
    }
    await this.load(null);
    this.ctx.result(document.getElementById("webhook-result"), "The webhook is removed: nothing is sent any more.");
  }

  private async testWebhook(): Promise<void> {
    const gen = this.ctx.generation();
    this.ctx.host.say("Sending a test ping…");
    let d: Delivery;
    try {
      d = await api.testWebhook();
    } catch (e) {
      this.ctx.failed(document.getElementById("webhook-test"), "The test was not sent", e);
      return;
    }
    if (!this.ctx.current(gen)) {
      return;
    }
    const words = `Test ping: attempt ${d.attempt}, ${answerWords(d)}.`;
    const out = document.getElementById("webhook-test");
    if (out) {
      out.textContent = words;
      out.hidden = false;
    }
    this.ctx.host.say(words, !(d.status_code >= 200 && d.status_code < 300));
    await this.loadDeliveries();
  }

  private async loadDeliveries(): Promise<void> {
    const gen = this.ctx.generation();
    const box = this.ctx.root.querySelector<HTMLElement>("#deliveries-box");
    if (!box) {
      return;
    }
    let list: Delivery[];
    try {
      list = (await api.deliveries()).deliveries ?? [];
    } catch (e) {
      if (this.ctx.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "The delivery log cannot be read now: " + refusal(e)));
      }
      return;
    }
    if (!this.ctx.current(gen)) {
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

/** A delivery attempt's answer in words. */
function answerWords(d: Delivery): string {
  if (d.error) {
    return d.status_code ? `answered ${d.status_code}: ${d.error}` : `failed: ${d.error}`;
  }
  return d.status_code ? `answered ${d.status_code}` : "no answer";
}
