// Settings → Projects: the owner's projects, each with what its policy does
// to each write, an editor, and the connectors the service runs.
//
// What a policy does is told in the words of the code that decides (the
// service's policy_explained, SPEC §13): for each write, the one outcome
// it always has, or its cases in order (the first that applies decides);
// then each rule as a sentence, and the other limits. The page works out
// none of it.
//
// The editor shows one row per write of the project's connector: Allowed
// (at once), Ask me (the write waits for the owner), or Refused. Those rows
// are the page's way of writing the policy (SPEC §13):
//
//   - Ask me is the write's name in `confirm`.
//   - For a connector whose policy has an allow-list (GitHub's `actions`: a
//     write it does not list is refused, and without it nothing is
//     allowed), Allowed and Ask me list the write there, Refused leaves it
//     out.
//   - For a connector that declares conditions (and so reads `rules`),
//     Refused is a rule {"when": {"op": W}, "then": "refuse"}, put before
//     every other rule, so that it decides every call of W (a rule never
//     widens `confirm`, and the first rule that matches decides).
//   - A connector with neither cannot refuse a write by policy: its rows
//     offer Allowed and Ask me only.
//
// The connector's other policy keys are a JSON object, and its other rules
// are edited row by row. Who approves besides the owner (`approvers`, every
// connector) has an editor of its own (approvers.ts).

import { ApproversEditor, readApprovers } from "./approvers";
import * as api from "./api";
import { el, button, refusal } from "./dom";
import { PROJECT, actions, resultLine, type SectionContext } from "./section";
import { ACCOUNT } from "./sign";
import { policyWords, price } from "./words";
import { ROW_WORDS, RulesEditor, explainedView, readPolicy, shapeOf, writePolicy, type Connector, type WriteRule } from "./policy";

/** A project as the editor shows it: as GET /inbox/projects lists it, or a new one (nothing explained yet). */
type Project = Omit<api.ProjectView, "policy_explained" | "project_uuid" | "created_at"> & Partial<Pick<api.ProjectView, "policy_explained">>;

/** A project name as a part of element ids, one to one: "_" is "__", "." is "_d". */
function idPart(name: string): string {
  return name.replace(/_/g, "__").replace(/\./g, "_d");
}

/** Settings → Projects. */
export class Projects {
  private catalogue: Connector[] = [];

  constructor(private readonly ctx: SectionContext) {}

  private connector(name: string): Connector | undefined {
    return this.catalogue.find((c) => c.name === name);
  }

  async load(box: HTMLElement): Promise<void> {
    const gen = this.ctx.generation();
    let projects: Project[];
    try {
      const [p, c] = await Promise.all([api.projects(), api.catalogue()]);
      projects = p.projects ?? [];
      this.catalogue = c.connectors ?? [];
    } catch (e) {
      if (this.ctx.current(gen)) {
        box.replaceChildren(el("p", { class: "empty" }, "Your projects cannot be listed now: " + refusal(e)));
      }
      return;
    }
    if (!this.ctx.current(gen)) {
      return;
    }
    const items = projects.map((p) => this.item(box, p));
    const name = el("input", { id: "project-new-name", name: "project-new-name", spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": "project-new-help" });
    const conn = el("select", { id: "project-new-connector", name: "project-new-connector" }, ...this.catalogue.map((c) => el("option", { value: c.name }, `${c.name} (version ${c.version})`)));
    const newBox = el("div", { id: "project-new-editor" });
    const out = resultLine("project-new-result");
    const form = el(
      "form",
      { id: "project-new", class: "setting-form", "aria-labelledby": "project-new-title" },
      el("h3", { id: "project-new-title" }, "Add a project"),
      el("label", { for: "project-new-name" }, "Its name"),
      el("p", { id: "project-new-help", class: "task-meta" }, "1–64 of a-z 0-9 . _ -, beginning with a letter or digit; agents call it by this name."),
      name,
      el("label", { for: "project-new-connector" }, "Its connector"),
      conn,
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Set it up")),
      out,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const n = name.value.trim();
      if (!PROJECT.test(n)) {
        this.ctx.result(out, "A project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit.", true);
        name.focus();
        return;
      }
      if (projects.some((p) => p.name === n)) {
        this.ctx.result(out, `You have a project ${n} already: edit it above.`, true);
        return;
      }
      out.hidden = true;
      const fresh: Project = { name: n, connector: conn.value, agents: [], policy: "{}", policy_mode: "ok", credentials: false, updated_at: "" };
      newBox.replaceChildren(this.editor(box, fresh, true));
      newBox.querySelector<HTMLElement>("h3")?.focus();
    });
    this.ctx.redraw(
      box,
      items.length ? el("ul", { class: "tasks", id: "projects-list", "aria-label": "Your projects" }, ...items) : el("p", { class: "empty", id: "projects-empty" }, "You have no project yet: add one below, and name the agents that may use it."),
      form,
      newBox,
      this.drawCatalogue(),
    );
  }

  private item(box: HTMLElement, p: Project): HTMLElement {
    const editorBox = el("div", { class: "project-editor-box" });
    const step = this.ctx.step(`project-${idPart(p.name)}-confirm`);
    const out = resultLine(`project-${idPart(p.name)}-result`);
    const edit = button("Edit", () => {
      const open = editorBox.childElementCount > 0;
      editorBox.replaceChildren(...(open ? [] : [this.editor(box, p, false)]));
      edit.setAttribute("aria-expanded", String(!open));
      if (!open) {
        editorBox.querySelector<HTMLElement>("h3")?.focus();
      }
    }, true);
    edit.setAttribute("aria-label", `Edit the project ${p.name}`);
    edit.setAttribute("aria-expanded", "false");
    const del = button("Delete", () => void this.remove(box, p, step, out), true);
    del.setAttribute("aria-label", `Delete the project ${p.name}`);
    const does = p.policy_explained?.writes?.length ? explainedView(p.policy_explained, `project-${idPart(p.name)}-explained`, p.name) : null;
    return el(
      "li",
      { class: "setting-item", "data-project": p.name },
      el("span", { class: "task-title" }, p.name),
      el("span", { class: "task-meta" }, `${p.connector} · agents: ${p.agents?.length ? p.agents.join(", ") : "none"} · credentials: ${p.credentials ? "set" : "none"}`),
      el("span", { class: p.policy_mode === "ok" ? "policy-mode" : "policy-mode failure", "data-mode": p.policy_mode }, policyWords(p.policy_mode, p.policy_sentence)),
      does,
      el("div", { class: "actions" }, edit, del),
      out,
      step,
      editorBox,
    );
  }

  /** The editor of one project (fresh: not saved yet). */
  private editor(box: HTMLElement, p: Project, fresh: boolean): HTMLElement {
    const conn = this.connector(p.connector);
    const shape = shapeOf(conn);
    const slug = idPart(p.name);
    const id = (s: string) => `project-${slug}-${s}`;
    let policy: Record<string, unknown> | null = null;
    try {
      const v = JSON.parse(p.policy) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) {
        policy = v as Record<string, unknown>;
      }
    } catch {
      policy = null;
    }
    const read = policy ? readPolicy(policy, shape) : null;
    // Approvers have their own editor, unless they are not of the shape it edits (they stay in the JSON then).
    const approversRead = read ? readApprovers(read.others["approvers"]) : undefined;
    if (read && approversRead) {
      delete read.others["approvers"];
    }
    const rowsOf = read?.rows ?? new Map(shape.writes.map((w) => [w, (shape.allowKey ? "refuse" : "allow") as WriteRule]));
    const strays = read?.strays ?? { confirm: [], allowed: [] };
    let restText = policy === null ? p.policy : read && Object.keys(read.others).length ? JSON.stringify(read.others, null, 2) : "";
    if (read?.rules === null && policy) {
      // Rules that cannot be shown row by row stay in the JSON.
      restText = JSON.stringify({ ...read.others, rules: policy["rules"] }, null, 2);
    }

    // One row per write: Allowed, Ask me, Refused.
    const op = (n: string) => conn?.operations?.find((o) => o.name === n);
    const canRefuse = shape.allowKey !== null || (shape.rules && read?.rules !== null);
    const rowInputs = new Map<string, HTMLInputElement[]>();
    const rows = el(
      "fieldset",
      { class: "choices write-rows", id: id("writes") },
      el("legend", {}, "What each write may do"),
      el(
        "p",
        { class: "task-meta", id: id("writes-help") },
        shape.writes.length === 0
          ? conn
            ? `${p.connector} has no write.`
            : `The service runs no connector ${p.connector}.`
          : canRefuse
            ? `Allowed: the agent's write happens at once. Ask me: it waits in your inbox until you approve it. Refused: the agent is told no.${shape.rules ? " A rule below may still ask about or refuse a write its row allows." : ""}`
            : shape.rules
              ? "Allowed: the agent's write happens at once, unless a rule says otherwise. Ask me: it waits in your inbox until you approve it. This policy's rules cannot be edited row by row here: they stay in the JSON below, as the policy holds them, and a rule there may still ask about or refuse a write its row allows."
              : `Allowed: the agent's write happens at once. Ask me: it waits in your inbox until you approve it. ${p.connector} cannot refuse a write by policy: to stop an agent, take it off the project or mute it.`,
      ),
      ...shape.writes.map((w) => {
        const o = op(w);
        const inputs = ROW_WORDS.filter(([r]) => r !== "refuse" || canRefuse).map(([r, words]) => {
          const input = el("input", { type: "radio", name: id(`write-${w}`), id: id(`write-${w}-${r}`), value: r, "data-write": w });
          input.checked = rowsOf.get(w) === r;
          return [input, el("label", { class: "choice", for: id(`write-${w}-${r}`) }, input, ` ${words}`)] as const;
        });
        rowInputs.set(
          w,
          inputs.map(([i]) => i),
        );
        // What the saved policy does with it now, in the words of the code that decides.
        const now = fresh ? undefined : p.policy_explained?.writes?.find((x) => x.op === w)?.text;
        return el(
          "div",
          {
            class: "write-row",
            role: "radiogroup",
            "aria-labelledby": id(`write-${w}-name`),
            "aria-describedby": id(`write-${w}-about`) + (now ? " " + id(`write-${w}-now`) : ""),
            "data-write": w,
          },
          el(
            "div",
            { class: "write-about" },
            el("span", { class: "mono write-name", id: id(`write-${w}-name`) }, w),
            el("span", { class: "task-meta", id: id(`write-${w}-about`) }, `${o?.description ?? ""}${o?.price ? ` (${price(o.price)})` : ""}`),
            now ? el("span", { class: "task-meta write-now", id: id(`write-${w}-now`) }, `As saved: ${now}`) : null,
          ),
          el("div", { class: "row-choices" }, ...inputs.map(([, l]) => l)),
        );
      }),
      strays.confirm.length || strays.allowed.length
        ? el("p", { class: "failure" }, `The policy also names ${[...new Set([...strays.confirm, ...strays.allowed])].join(", ")}, which ${p.connector} has no write of: it is kept, and makes the policy unreadable until it is taken out (in the JSON of the project, through the terminal).`)
        : null,
    );

    const otherKeys = (conn?.policy_keys ?? []).filter((k) => k !== "confirm" && k !== "rules" && k !== shape.allowKey);
    const rules = shape.rules && read?.rules !== null ? new RulesEditor(id("rules"), shape.writes, read?.rules ?? []) : null;
    // A refusal told beside Save (and in the live region) goes once the approvers it was about change.
    const approvers = approversRead !== null ? new ApproversEditor(id("approvers"), approversRead, () => this.ctx.retract(out)) : null;
    const showRest = otherKeys.length > 0 || restText !== "";
    const restBox = el("textarea", { id: id("policy"), name: id("policy"), spellcheck: "false", "aria-describedby": id("policy-help"), rows: "6" });
    restBox.value = restText;
    const restHelp = otherKeys.length
      ? `A JSON object of the policy's other settings. ${p.connector} reads ${otherKeys.join(", ")}; any other member makes the policy unreadable.`
      : `${p.connector} reads no other setting: any member here makes the policy unreadable.`;

    const agents = el("input", { id: id("agents"), name: id("agents"), spellcheck: "false", autocapitalize: "none", autocomplete: "off", "aria-describedby": id("agents-help") });
    agents.value = (p.agents ?? []).join(", ");
    const creds = el("input", { id: id("credentials"), name: id("credentials"), type: "password", autocomplete: "new-password", spellcheck: "false", "aria-describedby": id("credentials-help") });
    const dropCreds = el("input", { type: "checkbox", id: id("credentials-remove"), name: id("credentials-remove") });
    const step = this.ctx.step(id("save-confirm"));
    const out = resultLine(id("save-result"));
    const form = el(
      "form",
      { class: "setting-form project-editor", id: id("editor"), "aria-labelledby": id("editor-title") },
      el("h3", { id: id("editor-title"), tabindex: "-1" }, fresh ? `New project ${p.name} (${p.connector})` : `Edit ${p.name} (${p.connector})`),
      rows,
      rules ? rules.root : null,
      approvers ? approvers.root : el("p", { class: "failure", id: id("approvers-kept") }, "The policy's approvers are not of the shape this page edits ({\"accounts\": [accounts], \"threshold\": a number}): they stay in the JSON below, as the policy holds them."),
      showRest ? el("label", { for: id("policy") }, "The policy's other settings (JSON)") : null,
      showRest ? el("p", { id: id("policy-help"), class: "task-meta" }, restHelp) : null,
      showRest ? restBox : null,
      el("label", { for: id("agents") }, "Agents granted this project"),
      el("p", { id: id("agents-help"), class: "task-meta" }, "Their NEAR account ids, separated by commas or spaces. An agent not named here is refused."),
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
      out,
      step,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      let text: string;
      try {
        let others: Record<string, unknown> = {};
        if (showRest && restBox.value.trim() !== "") {
          let v: unknown;
          try {
            v = JSON.parse(restBox.value);
          } catch {
            throw new Error("the policy's other settings are not JSON");
          }
          if (!v || typeof v !== "object" || Array.isArray(v)) {
            throw new Error("the policy's other settings are not a JSON object");
          }
          others = v as Record<string, unknown>;
        }
        if (approvers) {
          if ("approvers" in others) {
            throw new Error("approvers are set under Who approves what asks, not in the JSON");
          }
          const owner = this.ctx.host.account() ?? "";
          const a = approvers.value(owner);
          if (a) {
            others = { ...others, approvers: a };
          }
        }
        const chosen = new Map<string, WriteRule>();
        for (const [w, inputs] of rowInputs) {
          chosen.set(w, (inputs.find((i) => i.checked)?.value as WriteRule | undefined) ?? rowsOf.get(w) ?? "allow");
        }
        let pol: Record<string, unknown>;
        if (read?.rules === null && "rules" in others) {
          // Rules kept in the JSON: the rows say confirm and the allow-list only.
          const { rules: kept, ...rest } = others;
          pol = writePolicy({ ...shape, rules: false }, chosen, strays, [], rest);
          pol["rules"] = kept;
        } else {
          pol = writePolicy(shape, chosen, strays, rules ? rules.value() : [], others);
        }
        text = projectText(p.connector, pol, agents.value, creds.value, dropCreds.checked);
      } catch (e) {
        this.ctx.result(out, "This project cannot be saved: " + (e instanceof Error ? e.message : String(e)), true);
        return;
      }
      void this.save(box, p.name, text, step, creds, out);
    });
    return form;
  }

  private async save(box: HTMLElement, name: string, text: string, step: HTMLElement, creds: HTMLInputElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.ctx.confirm(await actions.setProject(name, text), step, `project-${idPart(name)}-save-confirm`, "Send confirmation");
    if (!confirmation) {
      return;
    }
    let saved: Project;
    try {
      saved = await api.putProject(name, text, confirmation);
    } catch (e) {
      this.ctx.failed(out, `The project ${name} was not saved`, e);
      return;
    }
    creds.value = "";
    await this.load(box);
    this.ctx.result(box.querySelector(`#project-${CSS.escape(idPart(name))}-result`), `The project ${name} is saved. ${policyWords(saved.policy_mode, saved.policy_sentence)}`, saved.policy_mode !== "ok");
  }

  private async remove(box: HTMLElement, p: Project, step: HTMLElement, out: HTMLElement): Promise<void> {
    const confirmation = await this.ctx.confirm(actions.removeProject(p.name), step, `project-${idPart(p.name)}-confirm`, "Send confirmation");
    if (!confirmation) {
      return;
    }
    try {
      await api.deleteProject(p.name, confirmation);
    } catch (e) {
      this.ctx.failed(out, `The project ${p.name} was not deleted`, e);
      return;
    }
    await this.load(box);
    this.ctx.host.say(`The project ${p.name} is deleted: agents can no longer call it.`);
  }

  private drawCatalogue(): HTMLElement {
    const items = this.catalogue.map((c) => {
      const of = (kind: string) => (c.operations ?? []).filter((o) => o.kind === kind);
      const ops = (kind: string, label: string) => {
        const list = of(kind);
        return list.length ? el("span", { class: "task-meta" }, `${label}: `, ...list.flatMap((o, i) => [i ? "; " : "", el("span", { class: "mono" }, o.name), o.description ? `: ${o.description}` : ""])) : null;
      };
      return el(
        "li",
        { class: "setting-item", "data-connector": c.name },
        el("span", { class: "task-title" }, `${c.name} `, el("span", { class: "task-meta" }, `version ${c.version}`)),
        ops("write", "Writes"),
        ops("read", "Reads"),
        el(
          "details",
          { class: "precise" },
          el("summary", {}, "Technical details"),
          el(
            "dl",
            { class: "details" },
            el("dt", {}, "Build"),
            el("dd", { class: "mono" }, c.build),
            el("dt", {}, "Prices"),
            el("dd", {}, (c.operations ?? []).map((o) => `${o.name} ${price(o.price)}`).join(", ")),
            el("dt", {}, "Answer operations"),
            el("dd", {}, of("answer").map((o) => o.name).join(", ") || "none"),
            el("dt", {}, "Policy members"),
            el("dd", { class: "mono" }, (c.policy_keys ?? []).join(", ")),
          ),
        ),
      );
    });
    return el(
      "section",
      { id: "catalogue-box", "aria-labelledby": "catalogue-title" },
      el("h3", { id: "catalogue-title" }, "Connectors this service runs"),
      items.length ? el("ul", { class: "tasks", id: "catalogue", "aria-labelledby": "catalogue-title" }, ...items) : el("p", { class: "empty" }, "None."),
    );
  }
}

/**
 * The project text the owner signs (SPEC §6): exactly {connector, policy,
 * credentials?, agents}, as one JSON text sent as it is hashed.
 */
export function projectText(connector: string, policy: Record<string, unknown>, agentsText: string, credentials: string, removeCredentials: boolean): string {
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
