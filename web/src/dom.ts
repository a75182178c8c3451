// The page's small DOM helpers: elements built from text only (never
// markup), buttons with their keys, the service's refusals kept as they were
// said (api.ts reads them); times, account ids and Copy.

import { localWords, relativeWords, utcWords } from "./words";

export type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    e.setAttribute(k, v);
  }
  for (const c of children) {
    if (typeof c === "string") {
      e.append(document.createTextNode(c));
    } else if (c) {
      e.append(c);
    }
  }
  return e;
}

export function button(name: string, onClick: () => void, secondary = false): HTMLButtonElement {
  const b = el("button", { type: "button" }, name);
  if (secondary) {
    b.className = "secondary";
  }
  b.addEventListener("click", onClick);
  return b;
}

/**
 * A button with its key: aria-keyshortcuts on it, and the key shown next to
 * it (outside it, so its accessible name stays its own word).
 */
export function withKey(b: HTMLButtonElement, key: string, shown = key): HTMLElement {
  b.setAttribute("aria-keyshortcuts", key);
  return el("span", { class: "with-key" }, b, el("kbd", { class: "key-hint", "aria-hidden": "true", title: `key ${shown}` }, shown));
}

/** A refusal the service answered, in its own words. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    /** The task a refusal is about, when its body names one (task_id). */
    readonly taskID = "",
  ) {
    super(message);
  }
}

/** A refusal in plain words: the service's own, with its reason code. */
export function refusal(e: unknown): string {
  if (e instanceof Refused) {
    return e.reason ? `${e.message} (${e.reason})` : e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * A time as a person reads it: relative ("in 23 h", "2 min ago") and kept
 * so by the page's clock (data-at), with the exact time, in UTC and in this
 * device's zone, on hover and on focus (its title, and shown beside it while
 * focused). focusable: whether it takes the focus itself (not inside a
 * button).
 */
export function when(iso: string, prefix = "", focusable = true): HTMLElement {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) {
    return el("span", {}, prefix + iso);
  }
  const exact = `${localWords(ms)} (${utcWords(ms)})`;
  const t = el("time", { datetime: iso, title: exact, "data-at": String(ms), "data-prefix": prefix, "data-exact": utcWords(ms) }, prefix + relativeWords(Date.now(), ms));
  if (focusable) {
    t.tabIndex = 0;
  }
  return t;
}

/** Brings every relative time under root up to now. */
export function refreshTimes(root: ParentNode): void {
  const now = Date.now();
  for (const t of root.querySelectorAll<HTMLElement>("time[data-at]")) {
    const text = (t.dataset["prefix"] ?? "") + relativeWords(now, Number(t.dataset["at"]));
    if (t.textContent !== text) {
      t.textContent = text;
    }
  }
}

/** An id longer than this is shortened in the middle where it is shown. */
const LONG_ID = 24;

/** id shortened in the middle ("0850126d…b12d7b7") when long, else id. */
export function shortened(id: string): string {
  return id.length > LONG_ID ? `${id.slice(0, 8)}…${id.slice(-7)}` : id;
}

/** A Copy button for text, named "Copy " + what; says the result through say. */
export function copyButton(text: string, what: string, say: (t: string, error?: boolean) => void): HTMLButtonElement {
  const b = button(
    "Copy",
    () =>
      void navigator.clipboard.writeText(text).then(
        () => say(`Copied ${what}.`),
        () => say(`${what[0]?.toUpperCase() ?? ""}${what.slice(1)} could not be copied: select it and copy it yourself.`, true),
      ),
    true,
  );
  b.classList.add("copy");
  b.setAttribute("aria-label", `Copy ${what}`);
  return b;
}

/**
 * An account id as the page shows it: whole when short; a long one (an
 * implicit account's 64 hex characters) shortened in the middle, whole in
 * its title, with a Copy button when say is given. data-account holds it
 * whole.
 */
export function account(id: string, say?: (t: string, error?: boolean) => void, attrs: Record<string, string> = {}): HTMLElement {
  const s = el("span", { class: "account", "data-account": id, ...attrs });
  if (id.length <= LONG_ID) {
    s.append(el("span", { class: "mono" }, id));
    return s;
  }
  s.append(el("span", { class: "mono", title: id }, shortened(id)));
  if (say) {
    s.append(" ", copyButton(id, "the whole account id", say));
  }
  return s;
}
