// The service's JSON API as the page calls it: one function per route it
// uses, each typed by the service's own wire types (wire.gen.ts, written
// from the OpenAPI document), and every answer read before it is used —
// readAnswer checks it holds what the document says the route answers,
// readRefusal reads a refusal's body as the service words it.

import { Refused } from "./dom";
import {
  answerChecks,
  type AllowProposal,
  type Approved,
  type ApproveRequest,
  type BatchApproved,
  type BatchApproveRequest,
  type ActivityPage,
  type CatalogueAnswer,
  type Check,
  type ConfirmationRequest,
  type CountAnswer,
  type DeletedAnswer,
  type DeliveriesAnswer,
  type DeliveryView,
  type DevicesAnswer,
  type FileAnswer,
  type Members,
  type Moved,
  type MutesAnswer,
  type MuteRequest,
  type Origin,
  type ProjectsAnswer,
  type ProjectView,
  type PushKeyView,
  type PushRequest,
  type PushView,
  type RejectRequest,
  type RemovedAnswer,
  type RevokedAnswer,
  type Routes,
  type RunKeysAnswer,
  type SignedIn,
  type SignInRequest,
  type TaskPage,
  type TaskView,
  type UnmuteRequest,
  type WaitingAnswer,
  type WebhookView,
} from "./wire.gen";

export type { ActivityPage, AllowProposal, Approved, ApproveRequest, CatalogueAnswer, DeliveryView, ProjectView, RejectRequest, TaskView, WebhookView } from "./wire.gen";

/** A wallet's confirmation of an action, as a request body carries it (SPEC §7). */
export type Confirmation = ConfirmationRequest["confirmation"];
/** A device of the account, as GET /inbox/devices lists it. */
export type Device = NonNullable<DevicesAnswer["devices"]>[number];
/** A mute, as GET /inbox/mutes lists it. */
export type Mute = NonNullable<MutesAnswer["mutes"]>[number];
/** An attempt to deliver a webhook event. */
export type Delivery = DeliveryView;
/** An entry of the owner's history, as GET /inbox/activity lists it. */
export type ActivityEntry = NonNullable<ActivityPage["entries"]>[number];
/** A connector of the catalogue (GET /connectors). */
export type Connector = NonNullable<CatalogueAnswer["connectors"]>[number];
/** A task's approvals, as a listing or an approval's answer carries them. */
export type Approvals = NonNullable<TaskView["approvals"]>;

export type Route = keyof Routes;

/** JSON's kinds as Check names them. */
function kindOf(v: unknown): string {
  if (v === null) {
    return "z";
  }
  if (Array.isArray(v)) {
    return "a";
  }
  switch (typeof v) {
    case "string":
      return "s";
    case "boolean":
      return "b";
    case "number":
      return Number.isInteger(v) ? "i" : "n";
    case "object":
      return "o";
    default:
      return "?";
  }
}

const kindWords: Readonly<Record<string, string>> = { z: "null", a: "an array", s: "a string", b: "true or false", i: "a whole number", n: "a number", o: "an object", "?": "no JSON value" };

function isMembers(c: Check | Members): c is Members {
  return typeof c === "object" && !Array.isArray(c);
}

/** Where v does not hold what c says, in words (at names it); "" when it does. */
function fault(v: unknown, c: Check, at: string): string {
  const [kinds, of] = typeof c === "string" ? [c, undefined] : c;
  const k = kindOf(v);
  if (kinds !== "" && !kinds.includes(k) && !(k === "i" && kinds.includes("n"))) {
    return `${at} is ${kindWords[k] ?? k}`;
  }
  if (of === undefined || v === null || typeof v !== "object") {
    return "";
  }
  if (Array.isArray(v)) {
    if (isMembers(of)) {
      return "";
    }
    for (const [i, x] of v.entries()) {
      const f = fault(x, of, `${at}[${i}]`);
      if (f) {
        return f;
      }
    }
    return "";
  }
  const members = new Map<string, unknown>(Object.entries(v));
  if (!isMembers(of)) {
    for (const [name, x] of members) {
      const f = fault(x, of, `${at}.${name}`);
      if (f) {
        return f;
      }
    }
    return "";
  }
  for (const [spec, mc] of Object.entries(of)) {
    const optional = spec.endsWith("?");
    const name = optional ? spec.slice(0, -1) : spec;
    if (!members.has(name)) {
      if (optional) {
        continue;
      }
      return `${at}.${name} is missing`;
    }
    const f = fault(members.get(name), mc, `${at}.${name}`);
    if (f) {
      return f;
    }
  }
  return "";
}

function holds<T>(v: unknown, c: Check, at: string): v is T {
  return fault(v, c, at) === "";
}

/** An answer that does not hold what the service's document says its route answers. */
export class Unreadable extends Error {}

/** Reads the answer of a success of route: what the document says it holds, or Unreadable. */
export function readAnswer<R extends Route>(route: R, v: unknown): Routes[R]["answer"] {
  if (holds<Routes[R]["answer"]>(v, answerChecks[route], "answer")) {
    return v;
  }
  throw new Unreadable(`The service's answer to ${route} cannot be read: ${fault(v, answerChecks[route], "answer")}.`);
}

/**
 * Reads a refusal's body (the service's OwnerError, or anything a proxy may
 * answer instead), each member only when it is a string: its sentence, else
 * the status; its reason and the task it is about, when it names them.
 */
export function readRefusal(status: number, v: unknown): Refused {
  const o = new Map<string, unknown>(v !== null && typeof v === "object" && !Array.isArray(v) ? Object.entries(v) : []);
  const text = (name: string): string | null => {
    const x = o.get(name);
    return typeof x === "string" ? x : null;
  };
  return new Refused(status, text("reason") ?? "", text("error") ?? `the service answered ${status}`, text("task_id") ?? "");
}

/** Calls route at path (route's path with its variables filled in, and a query), with body when it reads one. */
async function call<R extends Route>(route: R, path: string, body: Routes[R]["body"]): Promise<Routes[R]["answer"]> {
  const method = route.slice(0, route.indexOf(" "));
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
    throw readRefusal(r.status, v);
  }
  return readAnswer(route, v);
}

const seg = encodeURIComponent;

// ---- sessions and devices ----

export const signIn = (body: SignInRequest): Promise<SignedIn> => call("POST /inbox/session", "/inbox/session", body);
export const signOut = (): Promise<RevokedAnswer> => call("DELETE /inbox/session", "/inbox/session", undefined);
export const devices = (): Promise<DevicesAnswer> => call("GET /inbox/devices", "/inbox/devices", undefined);
export const withdrawDevice = (id: string, confirmation: Confirmation): Promise<RevokedAnswer> =>
  call("DELETE /inbox/devices/{id}", `/inbox/devices/${seg(id)}`, { confirmation });

// ---- tasks ----

export const tasks = (show: "waiting" | "closed"): Promise<TaskPage> => call("GET /inbox/tasks", `/inbox/tasks?show=${show}`, undefined);
export const task = (id: string): Promise<TaskView> => call("GET /inbox/tasks/{id}", `/inbox/tasks/${seg(id)}`, undefined);
export const taskFile = (id: string, n: number): Promise<FileAnswer> => call("GET /inbox/tasks/{id}/files/{n}", `/inbox/tasks/${seg(id)}/files/${n}`, undefined);
export const taskOrigin = (id: string): Promise<Origin> => call("GET /inbox/tasks/{id}/origin", `/inbox/tasks/${seg(id)}/origin`, undefined);
export const approve = (id: string, body: ApproveRequest): Promise<Approved> => call("POST /inbox/tasks/{id}/approve", `/inbox/tasks/${seg(id)}/approve`, body);
export const approveBatch = (body: BatchApproveRequest): Promise<BatchApproved> => call("POST /inbox/tasks/approve", "/inbox/tasks/approve", body);
export const reject = (id: string, body: RejectRequest | undefined): Promise<Moved> => call("POST /inbox/tasks/{id}/reject", `/inbox/tasks/${seg(id)}/reject`, body);
export const acknowledge = (id: string): Promise<Moved> => call("POST /inbox/tasks/{id}/acknowledge", `/inbox/tasks/${seg(id)}/acknowledge`, undefined);
export const unlock = (): Promise<WaitingAnswer> => call("POST /inbox/unlock", "/inbox/unlock", undefined);
/** One page of the owner's history; query: its filters and page (limit, before, …). */
export const activity = (query: URLSearchParams): Promise<ActivityPage> => call("GET /inbox/activity", "/inbox/activity?" + query.toString(), undefined);

// ---- the service ----

export const catalogue = (): Promise<CatalogueAnswer> => call("GET /connectors", "/connectors", undefined);
export const runKeyDocument = (): Promise<RunKeysAnswer> => call("GET /.well-known/countersign-run-key", "/.well-known/countersign-run-key", undefined);

// ---- projects ----

export const projects = (): Promise<ProjectsAnswer> => call("GET /inbox/projects", "/inbox/projects", undefined);
export const putProject = (name: string, project: string, confirmation: Confirmation): Promise<ProjectView> =>
  call("PUT /inbox/projects/{name}", `/inbox/projects/${seg(name)}`, { project, confirmation });
export const deleteProject = (name: string, confirmation: Confirmation): Promise<DeletedAnswer> =>
  call("DELETE /inbox/projects/{name}", `/inbox/projects/${seg(name)}`, { confirmation });
export const proposeAllow = (name: string, when: unknown): Promise<AllowProposal> => call("POST /inbox/projects/{name}/allow", `/inbox/projects/${seg(name)}/allow`, { when });

// ---- mutes ----

export const mutes = (): Promise<MutesAnswer> => call("GET /inbox/mutes", "/inbox/mutes", undefined);
export const mute = (body: MuteRequest): Promise<CountAnswer> => call("POST /inbox/mutes", "/inbox/mutes", body);
export const unmute = (body: UnmuteRequest): Promise<CountAnswer> => call("DELETE /inbox/mutes", "/inbox/mutes", body);

// ---- the webhook ----

export const webhook = (): Promise<WebhookView> => call("GET /inbox/webhook", "/inbox/webhook", undefined);
export const putWebhook = (url: string, confirmation: Confirmation): Promise<WebhookView> => call("PUT /inbox/webhook", "/inbox/webhook", { url, confirmation });
export const deleteWebhook = (confirmation: Confirmation): Promise<RemovedAnswer> => call("DELETE /inbox/webhook", "/inbox/webhook", { confirmation });
export const testWebhook = (): Promise<DeliveryView> => call("POST /inbox/webhook/test", "/inbox/webhook/test", undefined);
export const deliveries = (): Promise<DeliveriesAnswer> => call("GET /inbox/webhook/deliveries", "/inbox/webhook/deliveries", undefined);

// ---- Web Push ----

export const pushKey = (): Promise<PushKeyView> => call("GET /inbox/push/key", "/inbox/push/key", undefined);
export const putPush = (body: PushRequest): Promise<PushView> => call("PUT /inbox/push", "/inbox/push", body);
export const deletePush = (): Promise<PushView> => call("DELETE /inbox/push", "/inbox/push", undefined);
