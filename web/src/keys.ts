// The page's keys: j and k move between tasks, x selects one, a approves,
// Shift+A always allows, r rejects, g closes a notice, u unlocks, Esc goes
// back, ? shows the list of them; never while typing.

import type { Card } from "./card";
import { el } from "./dom";
import { closeWalletFrame } from "./wallet";

/** The keys the page answers to, as the ? list shows them. */
const KEYS: readonly (readonly [string, string])[] = [
  ["j", "next task in the list"],
  ["k", "previous task in the list"],
  ["Enter", "open the task"],
  ["x", "select the task (or not), to approve several with one signature"],
  ["a", "Approve the open task"],
  ["Shift+A", "Always allow this: a rule that lets writes like the open or focused task run at once (it asks once more)"],
  ["r", "Reject the open task (it asks once more)"],
  ["g", "Got it: close the open notice"],
  ["u", "Unlock the tasks locked on this device"],
  ["Esc", "back to the list; hide this list"],
  ["?", "show or hide this list"],
];

/** What the keys need of the page. */
export interface KeysHost {
  /** The signed-in account, null before signing in. */
  account(): string | null;
  readonly card: Card;
  /** The waiting list's view, and its list of tasks. */
  readonly listBox: HTMLElement;
  readonly waitingList: HTMLElement;
  /** Whether a waiting task is opened on this device. */
  opened(id: string): boolean;
  /** Back to the list from a task's card. */
  leaveCard(): void;
  /** Goes to an address (from: where it was left). */
  go(hash: string, from: string): void;
}

/** The keys and their list. */
export class Keys {
  /** The ? list of the keys, a dialog. */
  readonly root = el(
    "section",
    { id: "keys", class: "keys", role: "dialog", "aria-labelledby": "keys-title", hidden: "", tabindex: "-1" },
    el("h2", { id: "keys-title" }, "Keys"),
    el("dl", {}, ...KEYS.flatMap(([k, what]) => [el("dt", {}, el("kbd", {}, k)), el("dd", {}, what)])),
  );

  /** j/k move between tasks, a approves, Shift+A always allows, r rejects, Esc goes back, ? lists the keys; not while typing. */
  constructor(private readonly host: KeysHost) {}

  onKey(ev: KeyboardEvent): void {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) {
      return;
    }
    if (ev.key === "Escape" && closeWalletFrame()) {
      ev.preventDefault();
      return;
    }
    const t = ev.target as HTMLElement | null;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable || t.closest("dialog"))) {
      return;
    }
    if (ev.key === "?") {
      ev.preventDefault();
      this.root.hidden = !this.root.hidden;
      if (!this.root.hidden) {
        this.root.focus();
      }
      return;
    }
    if (ev.key === "Escape" && !this.root.hidden) {
      ev.preventDefault();
      this.root.hidden = true;
      return;
    }
    if (!this.host.account()) {
      return;
    }
    if (ev.key === "Escape" && this.host.card.id && !this.host.card.root.hidden) {
      ev.preventDefault();
      this.host.leaveCard();
      return;
    }
    if ((ev.key === "j" || ev.key === "k") && !this.host.listBox.hidden) {
      const items = [...this.host.waitingList.querySelectorAll<HTMLElement>("button.task-open")];
      if (!items.length) {
        return;
      }
      ev.preventDefault();
      const at = items.indexOf(document.activeElement as HTMLElement);
      const next = at < 0 ? (ev.key === "j" ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, at + (ev.key === "j" ? 1 : -1)));
      items[next]?.focus();
      return;
    }
    if (ev.key === "x" && !this.host.listBox.hidden) {
      const box = (document.activeElement as HTMLElement | null)?.closest("ul.tasks > li")?.querySelector<HTMLInputElement>("input.task-pick");
      if (box && this.host.waitingList.contains(box) && !box.disabled) {
        ev.preventDefault();
        box.click();
      }
      return;
    }
    if (ev.key === "u" && !this.host.listBox.hidden) {
      const b = this.host.listBox.querySelector<HTMLButtonElement>('button[aria-keyshortcuts="u"]');
      if (b && !b.disabled) {
        ev.preventDefault();
        b.click();
      }
      return;
    }
    if (ev.key === "A" && !this.host.listBox.hidden) {
      // Shift+A on a task in the list: its card opens with Always allow this.
      const id = (document.activeElement as HTMLElement | null)?.closest("ul.tasks > li")?.getAttribute("data-task");
      if (id && this.host.opened(id) && this.host.waitingList.contains(document.activeElement)) {
        ev.preventDefault();
        this.host.card.wantAllow = id;
        this.host.go(`#/tasks/${encodeURIComponent(id)}`, "list");
      }
      return;
    }
    if ((ev.key === "a" || ev.key === "A" || ev.key === "r" || ev.key === "g") && this.host.card.key(ev.key)) {
      ev.preventDefault();
    }
  }
}
