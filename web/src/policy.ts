// What a policy does and how the project editor writes it: the service's
// policy_explained drawn as it words it (SPEC §13); a policy read as one
// row per write of its connector (Allowed, Ask me, Refused), its other
// keys and its rules, and written back from them; and the rules editor.
// projects.ts says why the rows write a policy as they do.

import type * as api from "./api";
import { el, button } from "./dom";

/** What a policy does, as the service's policy reader writes it. */
export type Explained = api.ProjectView["policy_explained"];

/** What the policy does with one write: always one outcome, or cases in order and otherwise. */
export type WriteExplained = NonNullable<Explained["writes"]>[number];

/** What an outcome does to a write, as the policy reader says it in a sentence. */
function verb(outcome: string): string {
  switch (outcome) {
    case "allow":
      return "runs at once";
    case "ask":
      return "asks you first";
    case "refuse":
      return "refused";
  }
  return outcome;
}

/**
 * What a policy does, as the service wrote it: a row per write (its one
 * outcome, or its cases in order), its rules one sentence each, its other
 * limits. ids are prefixed by prefix.
 */
export function explainedView(ex: Explained, prefix: string, name: string): HTMLElement {
  const writes = el(
    "ul",
    { class: "explained-writes", id: `${prefix}-writes`, "aria-label": `What ${name} does with each write` },
    ...(ex.writes ?? []).map((w) => {
      const li = el("li", { "data-write": w.op, "data-outcome": w.always ?? "depends" });
      const op = el("span", { class: "mono write-name" }, w.op);
      if (w.always) {
        // The reader's own line, after the write's name: "refused (it is not in `actions`)."
        const rest = w.text.startsWith(w.op + ": ") ? w.text.slice(w.op.length + 2) : w.text;
        li.append(op, ": ", el("span", { class: `write-outcome write-outcome-${w.always}` }, rest));
        return li;
      }
      // Cases in order, as the reader writes them; one that tests nothing ("always") ends them.
      const cases = el("ol", { class: "explained-cases" });
      let last = false;
      for (const c of w.cases ?? []) {
        if (c.when === "always") {
          cases.append(el("li", { "data-outcome": c.outcome }, `otherwise ${verb(c.outcome)} (${c.because})`));
          last = true;
          break;
        }
        cases.append(el("li", { "data-outcome": c.outcome }, `${verb(c.outcome)} when ${c.when} (${c.because})`));
      }
      if (!last && w.otherwise) {
        cases.append(el("li", { "data-outcome": w.otherwise }, `otherwise ${verb(w.otherwise)}`));
      }
      li.append(op, ", the first that applies:", cases);
      return li;
    }),
  );
  const box = el("div", { class: "explained", id: prefix, "data-explained": "" }, el("p", { class: "explained-head" }, "What it does"), writes);
  if (ex.rules?.length) {
    box.append(el("p", { class: "explained-head" }, "Its rules, in order (the first that matches decides)"), rulesList(ex.rules, `${prefix}-rules`, `The rules of ${name}`));
  }
  if (ex.approvers) {
    box.append(el("p", { class: "explained-head" }, "Who approves"), el("p", { class: "explained-approvers", id: `${prefix}-approvers` }, ex.approvers.text));
  }
  if (ex.limits?.length) {
    box.append(el("p", { class: "explained-head" }, "Its limits"), el("ul", { class: "explained-limits", id: `${prefix}-limits`, "aria-label": `The limits of ${name}` }, ...(ex.limits ?? []).map((l) => el("li", { class: "mono" }, l))));
  }
  return box;
}

/** Rules as the policy reader writes them, one sentence each ("Rule 1: …"), as Settings lists every rule. */
export function rulesList(rules: string[], id: string, label: string): HTMLElement {
  return el("ol", { class: "explained-rules", id, "aria-label": label }, ...rules.map((r) => el("li", {}, r)));
}

export type Connector = api.Connector;

/**
 * The allow-list key of connectors whose catalogue entry does not name one
 * (the catalogue lists policy keys by name only): GitHub's `actions`.
 */
const ALLOW_LISTS: Readonly<Record<string, string>> = { github: "actions" };

/** What a policy does to one write, as its row says it. */
export type WriteRule = "allow" | "ask" | "refuse";

export const ROW_WORDS: readonly (readonly [WriteRule, string])[] = [
  ["allow", "Allowed"],
  ["ask", "Ask me"],
  ["refuse", "Refused"],
];

/** How a connector's policy says each row: its writes, its allow-list key, whether it reads rules. */
export interface PolicyShape {
  writes: string[];
  allowKey: string | null;
  rules: boolean;
}

export function shapeOf(c: Connector | undefined): PolicyShape {
  const keys = c?.policy_keys ?? [];
  const allow = c?.allowed_key ?? (c ? ALLOW_LISTS[c.name] : undefined);
  return {
    writes: (c?.operations ?? []).filter((o) => o.kind === "write").map((o) => o.name),
    allowKey: allow && keys.includes(allow) ? allow : null,
    rules: keys.includes("rules"),
  };
}

/** One rule of a policy (SPEC §13): the first whose when matches decides. */
export interface Rule {
  when: Record<string, unknown>;
  then: string;
}

/** A policy read into rows: each write's row, the rules left to edit, and the other members. */
export interface ReadPolicy {
  rows: Map<string, WriteRule>;
  /** Names in confirm or the allow-list that are no write of the connector (kept as they are). */
  strays: { confirm: string[]; allowed: string[] };
  /** The rules not said by a row (null: they cannot be shown row by row and stay in the JSON). */
  rules: Rule[] | null;
  others: Record<string, unknown>;
}

function names(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** The writes a rule's op names; null: every write (no op). */
function ruleOps(r: Rule): string[] | null {
  const op = r.when["op"];
  if (op === undefined) {
    return null;
  }
  return Array.isArray(op) ? op.map(String) : [String(op)];
}

/** Reads a policy object into its rows (see the file's comment). */
export function readPolicy(policy: Record<string, unknown>, shape: PolicyShape): ReadPolicy {
  const confirm = names(policy["confirm"]);
  const allowed = shape.allowKey ? names(policy[shape.allowKey]) : [];
  const others: Record<string, unknown> = { ...policy };
  delete others["confirm"];
  if (shape.allowKey) {
    delete others[shape.allowKey];
  }
  let rules: Rule[] | null = [];
  const refused = new Set<string>();
  if (shape.rules && policy["rules"] !== undefined) {
    const read = readRules(policy["rules"]);
    if (read === null) {
      rules = null;
    } else {
      delete others["rules"];
      // A rule refusing one write whatever its conditions, before any other
      // rule that could match that write, is the write's Refused row.
      const before = new Set<string>();
      let all = false;
      rules = [];
      for (const r of read) {
        const ops = ruleOps(r);
        const only = Object.keys(r.when).length === 1 && ops && ops.length === 1 ? ops[0] : undefined;
        if (r.then === "refuse" && only && shape.writes.includes(only) && !all && !before.has(only)) {
          refused.add(only);
          continue;
        }
        if (ops === null) {
          all = true;
        } else {
          ops.forEach((o) => before.add(o));
        }
        rules.push(r);
      }
    }
  }
  const rows = new Map<string, WriteRule>();
  for (const w of shape.writes) {
    if (refused.has(w) || (shape.allowKey && !allowed.includes(w))) {
      rows.set(w, "refuse");
    } else {
      rows.set(w, confirm.includes(w) ? "ask" : "allow");
    }
  }
  return {
    rows,
    strays: { confirm: confirm.filter((n) => !shape.writes.includes(n)), allowed: allowed.filter((n) => !shape.writes.includes(n)) },
    rules,
    others,
  };
}

/** The policy object the rows, rules and other members say (see the file's comment). */
export function writePolicy(shape: PolicyShape, rows: Map<string, WriteRule>, strays: ReadPolicy["strays"], rules: Rule[], others: Record<string, unknown>): Record<string, unknown> {
  for (const k of ["confirm", "rules", ...(shape.allowKey ? [shape.allowKey] : [])]) {
    if (k in others) {
      throw new Error(`${k} is set by the rows${k === "rules" ? " and the rules editor" : ""}, not in the JSON`);
    }
  }
  const say = (w: string) => rows.get(w) ?? "allow";
  const confirm = [...shape.writes.filter((w) => say(w) === "ask"), ...strays.confirm];
  const out: Record<string, unknown> = {};
  if (confirm.length) {
    out["confirm"] = confirm;
  }
  if (shape.allowKey) {
    const allowed = [...shape.writes.filter((w) => say(w) !== "refuse"), ...strays.allowed];
    if (allowed.length) {
      out[shape.allowKey] = allowed;
    }
  } else if (!shape.rules && shape.writes.some((w) => say(w) === "refuse")) {
    throw new Error("this connector cannot refuse a write by policy");
  }
  Object.assign(out, others);
  const refusing: Rule[] = shape.allowKey ? [] : shape.writes.filter((w) => say(w) === "refuse").map((w) => ({ when: { op: w }, then: "refuse" }));
  if (refusing.length || rules.length) {
    out["rules"] = [...refusing, ...rules];
  }
  return out;
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
    const when = o["when"] ?? {};
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
export class RulesEditor {
  readonly root: HTMLElement;
  private rows: { then: string; op: string; conds: string }[];
  private readonly list: HTMLElement;

  constructor(
    private readonly prefix: string,
    private readonly writes: string[],
    rules: Rule[],
  ) {
    this.rows = rules.map((r) => {
      const { op, ...conds } = r.when;
      return { then: r.then, op: typeof op === "string" ? op : "", conds: Object.keys(conds).length ? JSON.stringify(conds) : "" };
    });
    this.list = el("ol", { class: "rules", id: prefix + "-list" });
    const add = button(
      "Add a rule",
      () => {
        this.take();
        this.rows.push({ then: "ask", op: "", conds: "" });
        this.draw();
        this.list.querySelector<HTMLElement>(`li:last-child select`)?.focus();
      },
      true,
    );
    this.root = el(
      "fieldset",
      { class: "choices rules-editor", id: prefix },
      el("legend", { tabindex: "-1" }, "Rules"),
      el(
        "p",
        { class: "task-meta", id: prefix + "-help" },
        "Rules decide more finely than the rows above: read in order, the first rule whose write and conditions match decides, and a rule never lets through what a row asks about or refuses. Conditions are a JSON object of what the connector tests (such as {\"min_usd\": 500}); leave it empty for none. At most 50 rules.",
      ),
      this.list,
      el("div", { class: "actions" }, add),
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
        const remove = button(
          "Remove",
          () => {
            this.take();
            this.rows.splice(i, 1);
            this.draw();
            this.root.querySelector<HTMLElement>("legend")?.focus();
          },
          true,
        );
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
      this.list.append(el("li", { class: "empty rule-none" }, "No rule: the rows above decide alone."));
    }
  }

  /** The rules as the policy holds them; throws on conditions that are not a JSON object. */
  value(): Rule[] {
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
