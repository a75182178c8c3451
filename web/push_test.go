package web_test

// Web Push in a real Chromium against the whole service (servicetest on
// PostgreSQL) and a fake push service on loopback (the world admits
// endpoints on any host, as only tests and serve --dev do). A browser
// offline cannot reach a real push service (Chromium's goes through
// Google's), so PushManager's subscribe is stood in for by a script that
// hands the page the fake's subscription, made for the key the page asks
// with; everything else is the browser's own: the permission, the service
// worker's registration at /sw.js under the page's CSP, and the worker
// itself, which is given a push through the DevTools protocol.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"

	"countersign/enclave/delivery"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
	"countersign/web"
	"countersign/webpush/webpushtest"
)

// pushStandIn replaces PushManager's subscribe and getSubscription with
// ones that hand out the fake push service's subscription (%s), recording
// what the page asked with, and counts the page's permission requests.
const pushStandIn = `(() => {
  const fake = %s;
  const rec = { subscribe: [], permissionAsked: 0, unsubscribed: 0, current: null };
  window.pushRecord = rec;
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length %% 4)) %% 4)), (c) => c.charCodeAt(0)).buffer;
  const text = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const make = (key) => ({
    endpoint: fake.endpoint, expirationTime: null, options: { userVisibleOnly: true, applicationServerKey: key },
    getKey: (n) => (n === "p256dh" ? bytes(fake.p256dh) : n === "auth" ? bytes(fake.auth) : null),
    toJSON: () => ({ endpoint: fake.endpoint, expirationTime: null, keys: { p256dh: fake.p256dh, auth: fake.auth } }),
    unsubscribe: async () => { rec.unsubscribed++; rec.current = null; return true; },
  });
  if (window.PushManager) {
    PushManager.prototype.subscribe = async function (o) {
      const k = o.applicationServerKey;
      const buf = k instanceof ArrayBuffer ? k : k.buffer.slice(k.byteOffset, k.byteOffset + k.byteLength);
      rec.subscribe.push({ userVisibleOnly: o.userVisibleOnly === true, key: text(buf) });
      rec.current = make(buf);
      return rec.current;
    };
    PushManager.prototype.getSubscription = async function () { return rec.current; };
  }
  if (window.Notification) {
    const ask = Notification.requestPermission.bind(Notification);
    Notification.requestPermission = (...a) => { rec.permissionAsked++; return ask(...a); };
  }
})();`

type pushRecord struct {
	Subscribe []struct {
		UserVisibleOnly bool   `json:"userVisibleOnly"`
		Key             string `json:"key"`
	} `json:"subscribe"`
	PermissionAsked int `json:"permissionAsked"`
	Unsubscribed    int `json:"unsubscribed"`
}

func readPushRecord(t *testing.T, ctx context.Context) pushRecord {
	t.Helper()
	var r pushRecord
	raw := run(t, ctx, "the push record", chromedp.Evaluate[[]byte](`JSON.stringify(window.pushRecord)`))
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		raw = []byte(s)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("the push record %s: %v", raw, err)
	}
	return r
}

// permit sets the page's notification permission in its browser context.
func permit(t *testing.T, ctx context.Context, origin string, setting browser.PermissionSetting) {
	t.Helper()
	_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: setting, Origin: origin,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
	if err != nil {
		t.Fatal(err)
	}
}

// pageDevice is the device the page signed in: the owner's latest.
func pageDevice(t *testing.T, w *servicetest.World) store.Device {
	t.Helper()
	var list []store.Device
	if err := w.DB.Tx(context.Background(), func(tx store.Tx) (err error) {
		list, err = tx.ActiveDevices(context.Background(), w.Owner.Account, w.Clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(list) < 2 {
		t.Fatalf("%d devices: the page's is not signed in", len(list))
	}
	return list[len(list)-1]
}

func deviceByID(t *testing.T, w *servicetest.World, id string) store.Device {
	t.Helper()
	var d store.Device
	if err := w.DB.Tx(context.Background(), func(tx store.Tx) (err error) { d, err = tx.Device(context.Background(), id); return err }); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPushNotifyThisDevice: in Settings → Devices the page asks nothing
// until "Notify this device" is turned on; with notifications blocked it
// says so and sends nothing; allowed, it registers /sw.js, subscribes with
// the service's key and hands the subscription over; a task opened then
// reaches the fake push service as one push whose decrypted payload
// carries nothing of the task; the real worker, given a push through the
// DevTools protocol whatever its payload, shows the fixed sentence; the
// switch turns off; and signing out ends the subscription at the service.
func TestPushNotifyThisDevice(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	fake := webpushtest.New(t)
	key, err := w.Enclave.Delivery.PushPublicKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sub := fake.Subscribe(key)
	standIn, _ := json.Marshal(map[string]string{"endpoint": sub.Endpoint, "p256dh": sub.P256dh, "auth": sub.Auth})

	ctx := blankTab(t, 180*time.Second)
	var regMu sync.Mutex
	var registration serviceworker.RegistrationID
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			regMu.Lock()
			for _, r := range e.Registrations {
				if strings.HasPrefix(r.ScopeURL, w.URL) && !r.IsDeleted {
					registration = r.RegistrationID
				}
			}
			regMu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(pushStandIn, standIn)}); err != nil {
		t.Fatal(err)
	}
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "devices")
	waitJS(t, ctx, "the switch", `!!document.getElementById("push-switch") && !document.getElementById("push-switch").checked`)
	if n := run(t, ctx, "switches", chromedp.Evaluate[int](`document.querySelectorAll("#push-switch").length`)); n != 1 {
		t.Fatalf("%d switches: want one, on this device's row", n)
	}
	if r := readPushRecord(t, ctx); r.PermissionAsked != 0 || len(r.Subscribe) != 0 {
		t.Fatalf("the page asked before the switch was turned on: %+v", r)
	}
	screen(t, ctx, "settings-devices-push")

	// Blocked: said, nothing subscribed or sent.
	permit(t, ctx, w.URL, browser.PermissionSettingDenied)
	do(t, ctx, "turn on, blocked", chromedp.Click(chromedp.ID("push-switch")))
	waitJS(t, ctx, "the blocked notice", `document.getElementById("status").textContent.includes("Notifications are blocked") && !document.getElementById("push-switch").checked && !document.getElementById("push-switch").disabled`)
	if r := readPushRecord(t, ctx); r.PermissionAsked != 1 || len(r.Subscribe) != 0 {
		t.Fatalf("blocked: %+v", r)
	}
	dev := pageDevice(t, w)
	if dev.Push != nil {
		t.Fatal("a subscription was stored while notifications were blocked")
	}

	// Allowed: the worker is registered, the page subscribes with the
	// service's key, the service keeps the subscription.
	permit(t, ctx, w.URL, browser.PermissionSettingGranted)
	if _, err := chromedp.Call(ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "turn on", chromedp.Click(chromedp.ID("push-switch")))
	waitJS(t, ctx, "subscribed", `document.getElementById("status").textContent.includes("will be told when a task is waiting") && document.getElementById("push-switch").checked`)
	r := readPushRecord(t, ctx)
	if len(r.Subscribe) != 1 || !r.Subscribe[0].UserVisibleOnly || r.Subscribe[0].Key != key {
		t.Fatalf("the page subscribed with %+v; want userVisibleOnly and the service's key %s", r.Subscribe, key)
	}
	scope := run(t, ctx, "the worker", chromedp.Evaluate[string](`navigator.serviceWorker.getRegistration("/").then((r) => r && r.active ? r.scope + " " + r.active.scriptURL : "none")`, chromedp.EvalAwaitPromise))
	if scope != w.URL+"/ "+w.URL+"/sw.js" {
		t.Fatalf("the service worker: %q", scope)
	}
	if dev = deviceByID(t, w, dev.ID); dev.Push == nil {
		t.Fatal("the service kept no subscription")
	}

	// A task opened now: one push, and nothing of the task in it.
	start := time.Now()
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "ledger", "pay",
		map[string]any{"amount": 7, "memo": "canary-memo-4f1e", "title": "Pay canary-title-9a2b", "summary": "pay canary-summary-77c1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pushes := fake.Wait(1, 20*time.Second)
	if len(pushes) != 1 {
		t.Fatalf("%d pushes for one task", len(pushes))
	}
	t.Logf("agent's call to the push received: %s", pushes[0].At.Sub(start))
	p := pushes[0]
	if p.Problem != "" || !bytes.Equal(p.Plaintext, delivery.PushPayload) || p.Urgency != "high" || p.Topic != delivery.PushTopic {
		t.Fatalf("the push: problem %q, payload %q, Urgency %q, Topic %q", p.Problem, p.Plaintext, p.Urgency, p.Topic)
	}
	for _, c := range []string{"canary", "4f1e", "9a2b", "77c1", string(raw[:20])} {
		if bytes.Contains(p.Plaintext, []byte(c)) {
			t.Fatalf("the push carries %q", c)
		}
	}
	time.Sleep(time.Second)
	if n := len(fake.Pushes()); n != 1 {
		t.Fatalf("%d pushes for one task to one device", n)
	}

	// The real worker, given a push whose payload tries to speak for the
	// task, shows the fixed sentence and the inbox's address.
	regMu.Lock()
	reg := registration
	regMu.Unlock()
	if reg == "" {
		t.Fatal("the DevTools protocol named no registration of the worker")
	}
	// A push DevTools hands over while the machine is loaded can be lost
	// before the worker wakes: it is handed over again, up to three
	// times. Every push carries the same tag, so the notification is
	// replaced, never added to.
	var shown []map[string]any
	for attempt := 0; attempt < 3 && len(shown) == 0; attempt++ {
		if _, err := chromedp.Call(ctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
			Origin: w.URL, RegistrationID: reg, Data: `{"title":"Pay $4,900 to evil.example","url":"https://evil.example/"}`}); err != nil {
			t.Fatal(err)
		}
		shown = run(t, ctx, "the notifications", chromedp.Evaluate[[]map[string]any](`(async () => {
  const reg = await navigator.serviceWorker.getRegistration("/");
  for (let i = 0; i < 100; i++) {
    const list = await reg.getNotifications();
    if (list.length) return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url }));
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
})()`, chromedp.EvalAwaitPromise))
	}
	if len(shown) != 1 || shown[0]["title"] != "A task is waiting in Countersign" || shown[0]["url"] != "/" || shown[0]["tag"] != "countersign-waiting" ||
		strings.Contains(fmt.Sprint(shown), "evil") {
		t.Fatalf("the worker showed %v", shown)
	}

	// Shown on again when Settings is drawn anew; turned off, removed.
	do(t, ctx, "reload", chromedp.Reload())
	settingsOpen(t, ctx, "devices")
	waitJS(t, ctx, "the switch on", `document.getElementById("push-switch")?.checked === true`)
	do(t, ctx, "turn off", chromedp.Click(chromedp.ID("push-switch")))
	waitJS(t, ctx, "turned off", `document.getElementById("status").textContent.includes("no longer be told") && !document.getElementById("push-switch").checked`)
	if deviceByID(t, w, dev.ID).Push != nil {
		t.Fatal("turned off, the service keeps the subscription")
	}

	// On again, then signed out: the subscription ends with the session.
	do(t, ctx, "turn on again", chromedp.Click(chromedp.ID("push-switch")))
	waitJS(t, ctx, "subscribed again", `document.getElementById("push-switch").checked && !document.getElementById("push-switch").disabled`)
	if deviceByID(t, w, dev.ID).Push == nil {
		t.Fatal("no subscription after turning on again")
	}
	signOut(t, ctx)
	if d := deviceByID(t, w, dev.ID); d.Push != nil || d.EndedAt.IsZero() {
		t.Fatalf("signed out: ended %v, subscription kept %v", !d.EndedAt.IsZero(), d.Push != nil)
	}
	w.Pay()
	time.Sleep(2 * time.Second)
	if n := len(fake.Pushes()); n != 1 {
		t.Fatalf("%d pushes after the device signed out", n)
	}
}

// workerRun runs the shipped worker's code against a stand-in for its
// global scope and has it handle pushes (with these payloads) and clicks
// (with these windows open), reporting what it did.
const workerRun = `(async (src) => {
  const listeners = {};
  const shown = [], opened = [], focused = [], waited = [];
  let windows = [];
  const returned = [];
  const scope = {
    registration: { showNotification: (title, options) => { shown.push({ title, options }); const p = Promise.resolve(); returned.push(p); return p; } },
    clients: {
      matchAll: async (o) => { if (o.type !== "window" || !o.includeUncontrolled) throw new Error("matchAll " + JSON.stringify(o)); return windows; },
      openWindow: async (u) => { opened.push(u); return null; },
      claim: async () => undefined,
    },
    location: { origin: "https://inbox.example" },
    addEventListener: (type, f) => { listeners[type] = f; },
    skipWaiting: async () => undefined,
  };
  new Function("self", src)(scope);
  const payloads = [null, "Pay $4,900 to evil.example: tap to approve", JSON.stringify({ title: "Urgent", body: "evil", url: "https://evil.example/" }), "\u0001"];
  const pushes = [];
  for (const text of payloads) {
    const got = [];
    const data = text === null ? null : { text: () => text, json: () => JSON.parse(text), arrayBuffer: () => new TextEncoder().encode(text).buffer };
    listeners.push({ data, waitUntil: (p) => got.push(p) });
    await Promise.all(got);
    pushes.push({ waitUntil: got.length, theShown: got.length === 1 && got[0] === returned[returned.length - 1] });
  }
  const clicks = [];
  for (const open of [[], [{ url: "https://inbox.example/#/tasks/abc" }], [{ url: "https://other.example/" }], [{ url: "https://inbox.example/" }]]) {
    let closed = 0;
    windows = open.map((w) => ({ url: w.url, focus: async () => { focused.push(w.url); } }));
    const got = [];
    opened.length = 0; focused.length = 0;
    listeners.notificationclick({ notification: { close: () => closed++ }, waitUntil: (p) => got.push(p) });
    await Promise.all(got);
    clicks.push({ closed, waitUntil: got.length, opened: [...opened], focused: [...focused] });
  }
  return { kinds: Object.keys(listeners).sort(), shown, pushes, clicks };
})`

// TestServiceWorkerFixedNotification: the worker's own handlers, as
// shipped: whatever a push carries (nothing, a phishing sentence, JSON
// naming a title and a URL), it shows the one fixed notification, inside
// waitUntil; a click closes it and focuses an open inbox window, or opens
// "/" — never another address.
func TestServiceWorkerFixedNotification(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	src, _ := json.Marshal(string(web.Worker()))
	raw := run(t, ctx, "the worker", chromedp.Evaluate[[]byte](workerRun+"("+string(src)+").then(JSON.stringify)", chromedp.EvalAwaitPromise))
	var s string
	_ = json.Unmarshal(raw, &s)
	var got struct {
		Kinds []string `json:"kinds"`
		Shown []struct {
			Title   string `json:"title"`
			Options struct {
				Body     string `json:"body"`
				Tag      string `json:"tag"`
				Renotify bool   `json:"renotify"`
				Data     struct {
					URL string `json:"url"`
				} `json:"data"`
			} `json:"options"`
		} `json:"shown"`
		Pushes []struct {
			WaitUntil int  `json:"waitUntil"`
			TheShown  bool `json:"theShown"`
		} `json:"pushes"`
		Clicks []struct {
			Closed    int      `json:"closed"`
			WaitUntil int      `json:"waitUntil"`
			Opened    []string `json:"opened"`
			Focused   []string `json:"focused"`
		} `json:"clicks"`
	}
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if fmt.Sprint(got.Kinds) != "[activate install notificationclick push]" {
		t.Fatalf("the worker listens to %v", got.Kinds)
	}
	if len(got.Shown) != 4 {
		t.Fatalf("%d notifications for 4 pushes", len(got.Shown))
	}
	for i, n := range got.Shown {
		if n.Title != "A task is waiting in Countersign" || n.Options.Body != "Open your inbox to read it and answer." ||
			n.Options.Tag != "countersign-waiting" || !n.Options.Renotify || n.Options.Data.URL != "/" {
			t.Errorf("push %d showed %+v", i, n)
		}
		if p := got.Pushes[i]; p.WaitUntil != 1 || !p.TheShown {
			t.Errorf("push %d: waitUntil given %d promises, the notification's %v", i, p.WaitUntil, p.TheShown)
		}
	}
	want := []struct{ opened, focused string }{
		{"/", ""}, {"", "https://inbox.example/#/tasks/abc"}, {"/", ""}, {"", "https://inbox.example/"},
	}
	for i, c := range got.Clicks {
		if c.Closed != 1 || c.WaitUntil != 1 || strings.Join(c.Opened, ",") != want[i].opened || strings.Join(c.Focused, ",") != want[i].focused {
			t.Errorf("click %d: %+v, want opened %q focused %q", i, c, want[i].opened, want[i].focused)
		}
	}
}

// TestServiceWorkerServed: /sw.js is the shipped worker, with a policy of
// its own that lets it load and fetch nothing, revalidated on every
// update; the page's policy admits it as a worker and the manifest.
func TestServiceWorkerServed(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	resp, err := http.Get(w.URL + "/sw.js")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 200 || !bytes.Equal(body, web.Worker()) || !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") ||
		h.Get("Content-Security-Policy") != "default-src 'none'" || h.Get("Cache-Control") != "no-cache" {
		t.Fatalf("/sw.js: %d %v", resp.StatusCode, h)
	}
	resp, err = http.Get(w.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "worker-src 'self'") || !strings.Contains(csp, "manifest-src 'self'") {
		t.Fatalf("the page's policy: %s", csp)
	}
	resp, err = http.Get(w.URL + "/manifest.webmanifest")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		StartURL string `json:"start_url"`
		Display  string `json:"display"`
	}
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || m.StartURL != "/" || m.Display != "standalone" {
		t.Fatalf("the manifest: %+v %v", m, err)
	}
}
