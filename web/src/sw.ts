// The web inbox's service worker, served by the binary at /sw.js (SPEC §10,
// wave 3). For every push, whatever it carries, it shows the same fixed
// notification, and a click on it brings up the inbox at "/": it never
// reads the payload, so neither the push service nor anyone holding the
// VAPID key and a subscription can put words or a link on the owner's lock
// screen. The owner reads the task in the page, decrypted on the device.
//
// It exports nothing (a classic worker script); the browser tests run it
// against a stand-in for the worker's global scope.

/** The notification, always the same. */
const TITLE = "A task is waiting in Countersign";
const BODY = "Open your inbox to read it and answer.";
/** One notification at a time: a new push replaces the last one. */
const TAG = "countersign-waiting";
/** What a click opens. */
const INBOX = "/";

interface ShownOptions {
  body: string;
  tag: string;
  renotify: boolean;
  requireInteraction: boolean;
  data: { url: string };
}

interface WindowClientLike {
  readonly url: string;
  focus(): Promise<unknown>;
}

interface ExtendableEventLike {
  waitUntil(p: Promise<unknown>): void;
}

interface NotificationEventLike extends ExtendableEventLike {
  readonly notification: { close(): void };
}

interface WorkerScope {
  readonly registration: { showNotification(title: string, options: ShownOptions): Promise<void> };
  readonly clients: {
    matchAll(options: { type: "window"; includeUncontrolled: boolean }): Promise<readonly WindowClientLike[]>;
    openWindow(url: string): Promise<unknown>;
    claim(): Promise<void>;
  };
  readonly location: { readonly origin: string };
  addEventListener(type: "install" | "activate" | "push", listener: (e: ExtendableEventLike) => void): void;
  addEventListener(type: "notificationclick", listener: (e: NotificationEventLike) => void): void;
  skipWaiting(): Promise<void>;
}

const scope = self as unknown as WorkerScope;

// A new version of this worker takes over at once: it has no state.
scope.addEventListener("install", (e) => e.waitUntil(scope.skipWaiting()));
scope.addEventListener("activate", (e) => e.waitUntil(scope.clients.claim()));

// The notification is shown inside waitUntil: a push that shows nothing
// costs the subscription on some browsers (Safari ends it after three).
scope.addEventListener("push", (e) => {
  e.waitUntil(scope.registration.showNotification(TITLE, { body: BODY, tag: TAG, renotify: true, requireInteraction: false, data: { url: INBOX } }));
});

scope.addEventListener("notificationclick", (e) => {
  e.notification.close();
  e.waitUntil(bringUpInbox());
});

/** Focuses a window of the inbox if one is open (it lists the waiting tasks live), else opens "/". */
async function bringUpInbox(): Promise<unknown> {
  const home = scope.location.origin + INBOX;
  const windows = await scope.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((w) => w.url === home || w.url.startsWith(home + "#"));
  if (open) {
    return open.focus();
  }
  return scope.clients.openWindow(INBOX);
}
