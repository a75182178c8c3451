// What each view of Settings shares: what it needs of the page around it
// and of the view (SectionContext: the wallet's confirmations, where a
// change's result is said, whether a late answer still draws), the
// confirmation actions exactly as the contract words them (SPEC §7), and
// the name of a project.

import type * as api from "./api";
import { sha256Hex } from "./crypto";
import { el, Refused } from "./dom";
import type { PanelIDs, Signature, SignRequest } from "./wallet";

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
  /** The view's root: what it shows now. */
  readonly root: HTMLElement;
  /** The box of a section's part (id-box), or a detached one when it is not shown. */
  part(id: string): HTMLElement;
}

/** A line beside a change that says what became of it (hidden until then); not live: the status line is. */
export function resultLine(id: string): HTMLElement {
  const p = el("p", { id, class: "form-result" });
  p.hidden = true;
  return p;
}

/** Whether e is a refusal of a session that is over. */
export function sessionOver(e: unknown): boolean {
  return e instanceof Refused && e.status === 401;
}
