// Settings → Mutes: the agents and projects muted (their new tasks are
// refused), muting one (and deleting its waiting tasks, when asked) and
// lifting a mute.

import * as api from "./api";
import { el, button, refusal, when, account as accountEl } from "./dom";
import { PROJECT, resultLine, type SectionContext } from "./section";
import { ACCOUNT } from "./sign";

type Mute = api.Mute;

/** The mutes view. */
export class Mutes {
  constructor(private readonly ctx: SectionContext) {}

  async load(): Promise<void> {
    const box = this.ctx.part("mutes");
    const gen = this.ctx.generation();
    let mutes: Mute[];
    try {
      mutes = (await api.mutes()).mutes ?? [];
    } catch (e) {
      if (this.ctx.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "Your mutes cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.ctx.current(gen)) {
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
              el("span", { class: "task-title" }, `${what} `, m.subject_is === "agent" ? accountEl(m.subject, (t, e) => this.ctx.host.say(t, e)) : el("span", { class: "mono" }, m.subject)),
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
    this.ctx.redraw(box, list, listOut, form);
  }

  private async mute(subjectIs: string, subject: string, deleteWaiting: boolean, out: HTMLElement): Promise<void> {
    if (subjectIs === "agent" ? !ACCOUNT.test(subject) : !PROJECT.test(subject)) {
      this.ctx.result(out, subjectIs === "agent" ? "Type the agent's NEAR account id (like bot.near)." : "Type the project's name (1–64 of a-z 0-9 . _ -).", true);
      document.getElementById("mute-subject")?.focus();
      return;
    }
    let deleted: number;
    try {
      deleted = (await api.mute({ subject_is: subjectIs, subject, delete_waiting: deleteWaiting })).deleted;
    } catch (e) {
      this.ctx.failed(out, "Not muted", e);
      return;
    }
    const gone = deleteWaiting ? ` ${deleted === 1 ? "1 waiting task was" : `${deleted} waiting tasks were`} deleted.` : "";
    await this.load();
    this.ctx.result(document.getElementById("mute-result"), `Muted the ${subjectIs} ${subject}: its new tasks are refused.${gone}`);
  }

  private async unmute(m: Mute, out: HTMLElement): Promise<void> {
    try {
      await api.unmute({ subject_is: m.subject_is, subject: m.subject });
    } catch (e) {
      this.ctx.failed(out, "Not unmuted", e);
      return;
    }
    await this.load();
    this.ctx.result(document.getElementById("mutes-list-result"), `Unmuted the ${m.subject_is} ${m.subject}: it can ask you again.`);
  }
}
