// The page's small DOM and HTTP helpers: elements built from text only
// (never markup), buttons with their keys, and the service's JSON API with
// its refusals kept as they were said.

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
export function withKey(b: HTMLButtonElement, key: string): HTMLElement {
  b.setAttribute("aria-keyshortcuts", key);
  return el("span", { class: "with-key" }, b, el("kbd", { class: "key-hint", "aria-hidden": "true", title: `key ${key}` }, key));
}

/** A refusal the service answered, in its own words. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers = { Accept: "application/json", "Content-Type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  let v: unknown = null;
  try {
    v = await r.json();
  } catch {
    v = null;
  }
  if (!r.ok) {
    const o = (v ?? {}) as { error?: unknown; reason?: unknown };
    throw new Refused(r.status, typeof o.reason === "string" ? o.reason : "", typeof o.error === "string" ? o.error : `the service answered ${r.status}`);
  }
  return v;
}

/** A refusal in plain words: the service's own, with its reason code. */
export function refusal(e: unknown): string {
  if (e instanceof Refused) {
    return e.reason ? `${e.message} (${e.reason})` : e.message;
  }
  return e instanceof Error ? e.message : String(e);
}
