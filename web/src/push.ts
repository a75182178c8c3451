// Web Push on this device (SPEC §10, wave 3): the "Notify this device"
// switch Settings → Devices shows on this device's row. Turning it on asks
// the browser's permission (only then, never before), registers the
// service worker the binary serves at /sw.js, subscribes with the
// service's VAPID key (GET /inbox/push/key) and hands the subscription to
// the service (PUT /inbox/push), which keeps it sealed with this device's
// session: it ends when the device signs out or is withdrawn. Turning it
// off removes it there (DELETE /inbox/push) and unsubscribes here. A push
// carries nothing of a task; the worker shows one fixed sentence.

import * as api from "./api";
import { el, refusal } from "./dom";

/** What the switch tells the page: results in the live region and beside it; a refusal that ends the session. */
export interface PushHost {
  say(text: string, error?: boolean): void;
  failed(what: string, e: unknown): void;
}

/** The service worker's address and scope. */
const WORKER = "/sw.js";

/** Whether this browser can receive pushes here. */
export function pushSupported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && window.isSecureContext;
}

/** The unpadded base64url of bytes. */
function b64url(bytes: ArrayBuffer | null): string {
  if (!bytes) {
    return "";
  }
  let s = "";
  for (const b of new Uint8Array(bytes)) {
    s += String.fromCharCode(b);
  }
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of unpadded base64url. */
function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    out[i] = bin.charCodeAt(i);
  }
  return out;
}

/** This browser's subscription for key: the one it has if made with key, else a new one. */
async function subscribe(key: string): Promise<PushSubscription> {
  await navigator.serviceWorker.register(WORKER, { scope: "/" });
  const reg = await navigator.serviceWorker.ready;
  const had = await reg.pushManager.getSubscription();
  if (had) {
    if (b64url(had.options.applicationServerKey) === key) {
      return had;
    }
    await had.unsubscribe();
  }
  return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromB64url(key) });
}

/** Drops this browser's subscription, if it has one. */
async function unsubscribe(): Promise<void> {
  const reg = await navigator.serviceWorker.getRegistration("/");
  const had = await reg?.pushManager.getSubscription();
  await had?.unsubscribe();
}

/** Turns pushes to this device on; returns whether they are on. */
async function turnOn(host: PushHost): Promise<boolean> {
  if (!pushSupported()) {
    host.say("This browser cannot be told of tasks here. On an iPhone or iPad, add the inbox to the Home Screen and turn this on there.", true);
    return false;
  }
  // The browser asks the owner now, as they turned the switch on.
  const permission = await Notification.requestPermission();
  if (permission !== "granted") {
    host.say("Notifications are blocked for this page: allow them in the browser's settings for this site, then turn this on again.", true);
    return false;
  }
  let key: string;
  try {
    key = (await api.pushKey()).key;
  } catch (e) {
    host.failed("This device cannot be told of tasks", e);
    return false;
  }
  let sub: PushSubscription;
  try {
    sub = await subscribe(key);
  } catch (e) {
    host.say("The browser could not subscribe this device: " + refusal(e), true);
    return false;
  }
  const j = sub.toJSON();
  try {
    await api.putPush({ endpoint: j.endpoint ?? sub.endpoint, keys: { p256dh: j.keys?.["p256dh"] ?? b64url(sub.getKey("p256dh")), auth: j.keys?.["auth"] ?? b64url(sub.getKey("auth")) } });
  } catch (e) {
    host.failed("This device cannot be told of tasks", e);
    return false;
  }
  host.say("This device will be told when a task is waiting, and nothing of the task.");
  return true;
}

/** Turns pushes to this device off; returns whether they are on. */
async function turnOff(host: PushHost): Promise<boolean> {
  try {
    await api.deletePush();
  } catch (e) {
    host.failed("This device is still told of tasks", e);
    return true;
  }
  try {
    await unsubscribe();
  } catch {
    // The service sends nothing more either way.
  }
  host.say("This device will no longer be told when a task is waiting.");
  return false;
}

/** The "Notify this device" switch, on when this device has a subscription. */
export function pushSwitch(on: boolean, host: PushHost): HTMLElement {
  const input = el("input", { type: "checkbox", role: "switch", id: "push-switch", name: "push-switch", "aria-describedby": "push-about" });
  input.checked = on;
  input.addEventListener("change", () => {
    const want = input.checked;
    input.disabled = true;
    void (want ? turnOn(host) : turnOff(host)).then(
      (now) => {
        input.checked = now;
        input.disabled = false;
      },
      (e: unknown) => {
        input.checked = !want;
        input.disabled = false;
        host.say("The switch could not be turned: " + refusal(e), true);
      },
    );
  });
  return el(
    "div",
    { class: "push" },
    el("label", { class: "choice", for: "push-switch" }, input, "Notify this device"),
    el("span", { class: "task-meta", id: "push-about" }, "A notification says only that a task is waiting, never what it is. The browser asks you first."),
  );
}
