// The waiting list's items: each task opened on this device and drawn as
// one button (its title, what it is about, who asked and when, its
// approvals), with a check box beside a confirm task to approve several
// with one signature; a task locked on this device or that cannot be
// shown says so. An item is drawn again only when what it shows changed.

import type * as api from "./api";
import { approvalsKey, approvalsOf, isApprover, listLine } from "./approvers";
import { OpenError, openTask, type KeyPair, type OpenedTask } from "./crypto";
import { el, button, withKey, when, account as accountEl, type Child } from "./dom";
import { clockWords } from "./words";

/** A listed task, waiting or closed, as GET /inbox/tasks answers it. */
export type Listed = api.TaskView;

/** A waiting task as the list shows it, kept while it stays the same. */
export interface Item {
  /** What the item was drawn from: drawn again only when this changes. */
  key: string;
  li: HTMLLIElement;
  view: Listed;
  opened: OpenedTask | null;
  /** What the item reads as, but for its exact time (two items reading the same show it). */
  same: string;
  /** The exact time it was asked, shown when another item reads the same. */
  at: HTMLElement | null;
}

/** What an item needs of the list around it. */
export interface ItemHost {
  /** The item drawn for a task before, if any. */
  drawn(id: string): Item | undefined;
  /** The tasks selected to approve together. */
  readonly picked: Set<string>;
  /** The selection changed. */
  pickedChanged(): void;
  /** Opens a task's card. */
  open(id: string): void;
  /** Unlocks the tasks locked on this device. */
  unlock(): void;
}

/** A waiting task's item: the one drawn before while it is the same, else drawn anew (opened on this device). */
export async function waitingItem(host: ItemHost, device: KeyPair, account: string, t: Listed, turn: number): Promise<Item> {
  const approvals = approvalsOf(t);
  const key = `${t.content ?? ""}|${t.device_copy ?? ""}|${t.locked ? 1 : 0}|${turn}|${approvalsKey(approvals)}`;
  const had = host.drawn(t.id);
  if (had && had.key === key) {
    had.view = t;
    return had;
  }
  const meta = (...extra: Child[]) =>
    el(
      "span",
      { class: "task-meta" },
      ...(isApprover(t) ? [`${t.project} of `, accountEl(t.owner ?? ""), " · from "] : [`${t.project} · from `]),
      accountEl(t.preparer),
      turn > 1 ? ` · turn ${turn}` : "",
      ` · asked `,
      when(t.created_at, "", false),
      ...extra,
      " · ",
      when(t.expires_at, "expires ", false),
    );
  try {
    const o = await openTask(device, account, t);
    const display = (o.envelope["display"] ?? {}) as { title?: unknown; summary?: unknown; fields?: unknown };
    const title = typeof display.title === "string" ? display.title : "(untitled)";
    const at = el("span", { class: "task-at" }, ` at ${clockWords(Date.parse(t.created_at))}, task …${t.id.slice(-8)}`);
    at.hidden = true;
    // The item holds one button (a list keeps its list semantics); its
    // name is what it shows: the title, what it is about, and the line
    // under it.
    const open = el("button", { type: "button", class: "task-open", "data-task": t.id }, el("span", { class: "task-title" }, title));
    const about = gist(display);
    if (about) {
      open.append(el("span", { class: "task-gist" }, about));
    }
    open.append(meta(at));
    if (approvals) {
      open.append(listLine(approvals, account));
    }
    open.addEventListener("click", () => host.open(t.id));
    const li = el("li", { class: "task", "data-task": t.id }, open);
    if (t.kind === "confirm" && !approvals) {
      // A check box beside it: selected, it is approved with others of its project by one signature.
      const box = el("input", { type: "checkbox", class: "task-pick", "data-task": t.id, "aria-label": `Select: ${title}` }) as HTMLInputElement;
      box.checked = host.picked.has(t.id);
      box.addEventListener("change", () => {
        if (box.checked) {
          host.picked.add(t.id);
        } else {
          host.picked.delete(t.id);
        }
        li.classList.toggle("picked", box.checked);
        host.pickedChanged();
      });
      li.classList.add("pickable");
      li.classList.toggle("picked", box.checked);
      li.prepend(box);
    }
    return { key, li, view: t, opened: o, same: `${title}|${about}|${t.project}|${t.preparer}|${turn}|${Math.round(Date.parse(t.created_at) / 60000)}`, at };
  } catch (e) {
    if (e instanceof OpenError && e.reason === "locked") {
      const li = el(
        "li",
        { class: "task task-locked", "data-task": t.id },
        el("span", { class: "task-title" }, "Locked on this device"),
        meta(),
        el("p", {}, "This task was opened before this device signed in, so it carries no key for this device. Unlock gives every waiting task a copy for each of your devices."),
        el("div", { class: "actions" }, withKey(button("Unlock", () => host.unlock(), true), "u")),
      );
      return { key, li, view: t, opened: null, same: t.id, at: null };
    }
    const why = e instanceof Error ? e.message : String(e);
    const li = el("li", { class: "task task-locked", "data-task": t.id }, el("span", { class: "task-title" }, "This task cannot be shown"), meta(), el("p", {}, why));
    return { key, li, view: t, opened: null, same: t.id, at: null };
  }
}

/** An opened task's title, as its item and card show it. */
export function displayTitle(o: OpenedTask): string {
  const d = (o.envelope["display"] ?? {}) as { title?: unknown };
  return typeof d.title === "string" ? d.title : "(untitled)";
}

/**
 * What a task is about, in one short line under its title: the display's
 * summary, else its first short field ("Amount: $1").
 */
function gist(display: { summary?: unknown; fields?: unknown }): string {
  if (typeof display.summary === "string" && display.summary) {
    return display.summary;
  }
  const fields = Array.isArray(display.fields) ? (display.fields as { kind?: unknown; label?: unknown; values?: unknown }[]) : [];
  for (const f of fields) {
    const v = Array.isArray(f.values) && f.values.length === 1 && typeof f.values[0] === "string" ? f.values[0] : null;
    if (v !== null && f.kind !== "long_text" && typeof f.label === "string" && v.length <= 80 && !v.includes("\n")) {
      return `${f.label}: ${v}`;
    }
  }
  return "";
}

/** Each task's turn in its thread (1 for the first), counting the waiting and closed tasks listed. */
export function turnsOf(waiting: Listed[], closed: Listed[]): Map<string, number> {
  const all = [...waiting.map((t) => ({ id: t.id, thread: t.thread, at: t.created_at })), ...closed.map((c) => ({ id: c.id, thread: c.thread ?? c.id, at: c.created_at }))];
  const byThread = new Map<string, { id: string; at: string }[]>();
  for (const t of all) {
    const list = byThread.get(t.thread) ?? [];
    list.push(t);
    byThread.set(t.thread, list);
  }
  const out = new Map<string, number>();
  for (const list of byThread.values()) {
    list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1));
    list.forEach((t, i) => out.set(t.id, i + 1));
  }
  return out;
}
