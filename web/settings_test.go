package web_test

// The Settings view in a real Chromium against the whole service
// (servicetest on PostgreSQL), signed in with the injected test wallet,
// which signs each confirmation: the webhook named and its secret shown
// once, a test ping in the delivery log; a device withdrawn; a policy edited
// so the next call asks; mutes added and removed.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/device"
	"countersign/policy"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// settingsReady is what each section of Settings shows once it is loaded.
var settingsReady = map[string]string{"devices": "#devices-list", "mutes": "#mute-form", "webhook": "#webhook-current", "projects": "#catalogue"}

// settingsOpen opens Settings from the header, then its section from the
// overview, and waits until the section is loaded.
func settingsOpen(t *testing.T, ctx context.Context, section string) {
	t.Helper()
	do(t, ctx, "open Settings", chromedp.Click(chromedp.ID("settings-link")), chromedp.WaitVisible(chromedp.ID("settings-overview")))
	do(t, ctx, "open "+section, chromedp.Click(chromedp.CSS(`#settings-overview a[href="#/settings/`+section+`"]`)))
	waitJS(t, ctx, "the section "+section, `location.hash === "#/settings/`+section+`" && !!document.querySelector("`+settingsReady[section]+`")`)
}

// settingsSaid is the text of the page's live region.
func settingsSaid(t *testing.T, ctx context.Context) string {
	t.Helper()
	return textOf(t, ctx, "the status", "#status")
}

// settingsConfirmed checks that the wallet's last signature was the confirmation of
// action, for the owner.
func settingsConfirmed(t *testing.T, ctx context.Context, w *servicetest.World, action approval.Action) {
	t.Helper()
	signed := walletSigned(t, ctx)
	if len(signed) == 0 {
		t.Fatal("the wallet signed nothing")
	}
	text, err := action.Text()
	if err != nil {
		t.Fatal(err)
	}
	last := signed[len(signed)-1]
	prefix := "Confirm in Countersign as " + w.Owner.Account + ": " + text + ". At "
	if !strings.HasPrefix(last, prefix) {
		t.Fatalf("the wallet signed %q, not the confirmation of %q", last, text)
	}
	at, err := approval.ParseTime(strings.TrimSuffix(strings.TrimPrefix(last, prefix), "."))
	if err != nil || time.Since(at) > time.Minute || time.Until(at) > time.Minute {
		t.Fatalf("the confirmation's time in %q: %v", last, err)
	}
}

// settingsStored is everything script can read in the browser's storage for the
// page's origin: localStorage, sessionStorage and every IndexedDB record
// (a CryptoKey reads as {}).
func settingsStored(t *testing.T, ctx context.Context) string {
	t.Helper()
	return run(t, ctx, "the storage", chromedp.Evaluate[string](`(async () => {
  const out = [JSON.stringify(Object.assign({}, localStorage)), JSON.stringify(Object.assign({}, sessionStorage))];
  for (const d of await indexedDB.databases()) {
    const db = await new Promise((ok, no) => { const r = indexedDB.open(d.name); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
    for (const name of db.objectStoreNames) {
      const all = await new Promise((ok, no) => { const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
      out.push(d.name + "/" + name + ":" + JSON.stringify(all));
    }
    db.close();
  }
  return out.join("\n");
})()`, chromedp.EvalAwaitPromise))
}

// settingsReceiver is a webhook receiver on loopback that checks each delivery's
// signature with the secret it is told.
type settingsReceiver struct {
	mu     sync.Mutex
	secret string
	got    []string // event types, each with "+" when its signature verified
}

func (r *settingsReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := "-"
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.secret, "whsec_")); err == nil && r.secret != "" {
		m := hmac.New(sha256.New, key)
		m.Write(body)
		if hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(req.Header.Get("X-Webhook-Signature"))) {
			ok = "+"
		}
	}
	r.got = append(r.got, req.Header.Get("X-Event-Type")+ok)
	w.WriteHeader(http.StatusNoContent)
}

func (r *settingsReceiver) deliveries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func TestSettingsWebhook(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	recv := &settingsReceiver{}
	hook := httptest.NewServer(recv)
	t.Cleanup(hook.Close)
	url := hook.URL + "/countersign"

	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "webhook")
	if got := textOf(t, ctx, "the webhook", "#webhook-current"); !strings.Contains(got, "No webhook is named") {
		t.Fatalf("before naming one the view says %q", got)
	}

	// An address the service refuses: its own words, and nothing named.
	do(t, ctx, "name a refused address", chromedp.SendKeys(chromedp.ID("webhook-url-input"), "https://user:pw@hooks.example/x"), chromedp.Click(named("Name the webhook")))
	waitJS(t, ctx, "the refusal", `document.getElementById("status").textContent.startsWith("The webhook was not named: ") && document.getElementById("status").textContent.endsWith("(invalid_request)")`)
	if cls := run(t, ctx, "the refusal's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); !strings.Contains(cls, "error") {
		t.Fatalf("a refusal is not shown as one: %q", cls)
	}
	// Said beside the form too, where the owner is looking.
	if got := textOf(t, ctx, "beside the form", "#webhook-form #webhook-result:not([hidden])"); !strings.HasPrefix(got, "The webhook was not named: ") {
		t.Fatalf("beside the form the refusal reads %q", got)
	}
	do(t, ctx, "clear the address", chromedp.Evaluate[chromedp.Void](`document.getElementById("webhook-url-input").value = ""`))

	// Naming it: the wallet confirms the URL's hash; the secret is shown
	// once, with a Copy button and the sentence that it will not be shown
	// again.
	do(t, ctx, "name the webhook", chromedp.SendKeys(chromedp.ID("webhook-url-input"), url), chromedp.Click(named("Name the webhook")),
		chromedp.WaitVisible(chromedp.ID("webhook-secret")))
	settingsConfirmed(t, ctx, w, approval.ActionNameWebhook(url))
	waitJS(t, ctx, "said beside the form", `document.querySelector("#webhook-form #webhook-result")?.textContent.startsWith("The webhook is named.") === true`)
	secret := textOf(t, ctx, "the secret", "#webhook-secret")
	if !strings.HasPrefix(secret, "whsec_") || len(secret) != len("whsec_")+44 {
		t.Fatalf("the secret shown: %q", secret)
	}
	if got := textOf(t, ctx, "the secret's box", "#webhook-secret-box"); !strings.Contains(got, "will not be shown again") {
		t.Fatalf("the secret's box says %q", got)
	}
	if got := textOf(t, ctx, "the URL", "#webhook-url"); got != url {
		t.Fatalf("the view shows the URL %q", got)
	}
	do(t, ctx, "copy", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText = async (t) => { window.copied = t; }`), chromedp.Click(named("Copy the secret")))
	waitJS(t, ctx, "copied", `document.getElementById("status").textContent === "Copied the secret."`)
	if got := run(t, ctx, "what was copied", chromedp.Evaluate[string](`window.copied`)); got != secret {
		t.Fatalf("Copy put %q on the clipboard", got)
	}
	do(t, ctx, "the secret in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("webhook-secret-box").scrollIntoView()`))
	screen(t, ctx, "settings-secret")
	// The service's own view of it carries no secret; the browser keeps
	// none.
	wh, err := w.Owner.Client.Webhook(context.Background())
	if err != nil || wh.URL == nil || *wh.URL != url || wh.Secret != "" {
		t.Fatalf("GET /inbox/webhook: %+v, %v", wh, err)
	}
	if s := settingsStored(t, ctx); strings.Contains(s, secret) || strings.Contains(s, "whsec_") {
		t.Fatalf("the browser stored the secret: %s", s)
	}

	// A test ping, signed with the secret shown, reaches the settingsReceiver and
	// shows in the delivery log.
	recv.mu.Lock()
	recv.secret = secret
	recv.mu.Unlock()
	do(t, ctx, "send a test", chromedp.Click(named("Send a test")))
	waitJS(t, ctx, "the attempt", `document.getElementById("webhook-test")?.textContent.includes("answered 204")`)
	waitJS(t, ctx, "the log", `!!document.querySelector('#deliveries li[data-type="ping"]')`)
	if got := textOf(t, ctx, "the log's row", `#deliveries li[data-type="ping"]`); !strings.Contains(got, "answered 204") {
		t.Fatalf("the log's row: %q", got)
	}
	if got := recv.deliveries(); len(got) != 1 || got[0] != "ping+" {
		t.Fatalf("the settingsReceiver got %q", got)
	}

	// Leaving the view drops the secret; back again, it is gone.
	do(t, ctx, "back", chromedp.Click(chromedp.ID("back-to-inbox")), chromedp.WaitVisible(chromedp.ID("waiting-title")))
	if got := run(t, ctx, "the page", chromedp.Evaluate[string](`document.body.innerText + document.body.textContent`)); strings.Contains(got, secret) {
		t.Fatal("the secret is still in the page after leaving Settings")
	}
	settingsOpen(t, ctx, "webhook")
	waitJS(t, ctx, "the webhook", `document.getElementById("webhook-url")?.textContent === `+settingsJS(url))
	waitJS(t, ctx, "the log", `!!document.querySelector('#deliveries li[data-type="ping"]')`)
	if got := run(t, ctx, "the page", chromedp.Evaluate[string](`document.body.textContent`)); strings.Contains(got, secret) || strings.Contains(got, "whsec_") {
		t.Fatal("the secret is shown again")
	}
	if s := settingsStored(t, ctx); strings.Contains(s, secret) {
		t.Fatalf("the browser stored the secret: %s", s)
	}
	screen(t, ctx, "settings-webhook")

	// Removing it, confirmed.
	do(t, ctx, "remove the webhook", chromedp.Click(named("Remove the webhook")))
	waitJS(t, ctx, "removed", `document.getElementById("webhook-current")?.textContent.includes("No webhook is named")`)
	settingsConfirmed(t, ctx, w, approval.ActionRemoveWebhook())
	if wh, err := w.Owner.Client.Webhook(context.Background()); err != nil || wh.URL != nil {
		t.Fatalf("after removing it: %+v, %v", wh, err)
	}
}

func settingsJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestSettingsDevices(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	other := w.Device(wallet)
	sess, err := other.SignIn(context.Background(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "devices")
	if n := run(t, ctx, "the devices", chromedp.Evaluate[int](`document.querySelectorAll("#devices-list li[data-device]").length`)); n != 3 {
		t.Fatalf("%d devices listed, want 3 (the world's, the other, this page)", n)
	}
	if n := run(t, ctx, "this device", chromedp.Evaluate[int](`document.querySelectorAll("#devices-list .this-device").length`)); n != 1 {
		t.Fatalf("%d devices marked as this one", n)
	}
	item := `li[data-device="` + sess.DeviceID + `"]`
	if got := textOf(t, ctx, "the other device", item); !strings.Contains(got, "Another device") {
		t.Fatalf("the other device reads %q", got)
	}

	// A wallet that declines: a neutral notice, the device stays.
	do(t, ctx, "decline", chromedp.Evaluate[chromedp.Void](`window.testWallet.decline = true`), chromedp.Click(chromedp.CSS(item+" button")))
	waitJS(t, ctx, "the notice", `document.getElementById("status").textContent.includes("Nothing was changed")`)
	if cls := run(t, ctx, "the notice's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); strings.Contains(cls, "error") {
		t.Fatalf("a declining wallet is shown as an error: %q", cls)
	}
	if _, err := other.Client.Devices(context.Background()); err != nil {
		t.Fatalf("after the wallet declined the other device: %v", err)
	}

	// Withdrawn, confirmed: gone from the list and from the service.
	do(t, ctx, "withdraw", chromedp.Evaluate[chromedp.Void](`window.testWallet.decline = false`), chromedp.Click(chromedp.CSS(item+" button")))
	waitJS(t, ctx, "withdrawn", `document.getElementById("status").textContent.includes("was withdrawn") && !document.querySelector('`+item+`')`)
	settingsConfirmed(t, ctx, w, approval.ActionWithdrawDevice(sess.DeviceID))
	devices, err := w.Owner.Client.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devices {
		if d.ID == sess.DeviceID {
			t.Fatalf("the withdrawn device is still listed: %+v", devices)
		}
	}
	var refused *client.Error
	if _, err := other.Client.Devices(context.Background()); !errors.As(err, &refused) || refused.Status != http.StatusUnauthorized {
		t.Fatalf("the withdrawn device's session answers %v", err)
	}

	// Withdrawing this device signs the page out.
	do(t, ctx, "withdraw this device", chromedp.Click(chromedp.CSS("#devices-list li:has(.this-device) button")), chromedp.WaitVisible(named("Sign in")))
	if got := settingsSaid(t, ctx); !strings.Contains(got, "This device was withdrawn") {
		t.Fatalf("after withdrawing this device the page says %q", got)
	}
	if devices, err := w.Owner.Client.Devices(context.Background()); err != nil || len(devices) != 1 {
		t.Fatalf("after withdrawing this device: %+v, %v", devices, err)
	}
}

// settingsShop is a connector whose write "order" happens at once unless the
// project's policy asks first; it records the credentials it is handed.
type settingsShop struct {
	mu    sync.Mutex
	creds []string
}

func (s *settingsShop) connector() *connectors.Connector {
	return &connectors.Connector{Name: "shop", Version: "1.0.0", Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{"max_orders_per_day": policy.Count},
		Operations: []connectors.Operation{
			{Name: "order", Kind: connectors.Write, Price: 5, Description: "Orders tea, at once or once the owner confirms it.",
				Schema: json.RawMessage(`{"type": "object", "additionalProperties": false}`), Run: func(ctx context.Context, c *connectors.Call) (any, error) {
					s.mu.Lock()
					s.creds = append(s.creds, string(c.Credentials))
					s.mu.Unlock()
					switch d := c.Decide(policy.Facts{}); d.Outcome {
					case policy.Refuse:
						return nil, connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
					case policy.Ask:
						task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm,
							Display:  countersign.Display{Title: "Order", Summary: "order tea; it cannot be undone", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "Item", Values: []string{"tea"}, WrittenBy: "project"}}},
							AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}})
						if err != nil {
							return nil, err
						}
						return connectors.AwaitingOwner(task), nil
					}
					return map[string]any{"ok": true, "ordered": true}, nil
				}},
			{Name: "confirm", Kind: connectors.Answer, Description: "Orders the tea the owner confirmed.", Answer: func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
				return connectors.Report{Result: map[string]any{"ok": true, "ordered": true}}, nil
			}},
		}}
}

func (s *settingsShop) lastCreds() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.creds) == 0 {
		return ""
	}
	return s.creds[len(s.creds)-1]
}

// settingsOrder is the agent's call of shop's order: its status, or its refusal's code.
func settingsOrder(t *testing.T, w *servicetest.World) string {
	t.Helper()
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "shop", "order", nil, nil)
	var refused *client.Refusal
	if errors.As(err, &refused) {
		return refused.Code
	}
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Status  string `json:"status"`
		Ordered bool   `json:"ordered"`
	}
	_ = json.Unmarshal(raw, &out)
	if out.Ordered {
		return "done"
	}
	return out.Status
}

func TestSettingsPolicy(t *testing.T) {
	t.Parallel()
	s := &settingsShop{}
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(s.connector()))
	followClock(t, w)
	if got := settingsOrder(t, w); got != "done" {
		t.Fatalf("before the policy asks, an order is %q", got)
	}

	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	item := `#projects-list li[data-project="shop"]`
	if got := textOf(t, ctx, "the project", item); !strings.Contains(got, "The policy is in force.") || !strings.Contains(got, "order: runs at once.") {
		t.Fatalf("the shop project reads %q", got)
	}
	if got := textOf(t, ctx, "the catalogue", `#catalogue li[data-connector="shop"]`); !strings.Contains(got, "order: Orders tea, at once or once the owner confirms it.") || !strings.Contains(got, "order $0.000005") || !strings.Contains(got, "max_orders_per_day") {
		t.Fatalf("the catalogue's shop reads %q", got)
	}

	// A policy member shop does not read: saved, the project says its
	// policy is unreadable and why, and the next order is refused.
	do(t, ctx, "edit", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project shop"]`)), chromedp.WaitVisible(chromedp.ID("project-shop-policy")),
		chromedp.SetValue(chromedp.ID("project-shop-policy"), `{"colour": "red"}`), chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
	waitJS(t, ctx, "saved", `document.querySelector('`+item+` [data-mode]')?.dataset.mode === "unreadable"`)
	if got := textOf(t, ctx, "the mode", item+" [data-mode]"); !strings.HasPrefix(got, "The policy cannot be read: ") || len(got) < len("The policy cannot be read: x.") {
		t.Fatalf("the unreadable policy reads %q", got)
	}
	// What was saved is said beside the project, not only in the status line.
	if got := textOf(t, ctx, "beside the project", item+" #project-shop-result:not([hidden])"); !strings.HasPrefix(got, "The project shop is saved. The policy cannot be read: ") {
		t.Fatalf("beside the project: %q", got)
	}
	if got := settingsOrder(t, w); got != string(countersign.PolicyUnreadable) {
		t.Fatalf("with an unreadable policy an order is %q", got)
	}

	// order's row set to Ask me, the stray member gone, credentials typed:
	// the next order asks, with the credentials sealed and handed to it.
	// shop has no allow-list and no rules, so its rows cannot refuse.
	do(t, ctx, "edit again", chromedp.Click(chromedp.CSS(item+` button[aria-label="Edit the project shop"]`)), chromedp.WaitVisible(chromedp.ID("project-shop-write-order-ask")))
	if got := run(t, ctx, "order's row", chromedp.Evaluate[[]string](`[...document.querySelectorAll('input[name="project-shop-write-order"]')].map((i) => i.value + (i.checked ? "*" : "") + "=" + i.labels[0].textContent.trim())`)); strings.Join(got, " ") != "allow*=Allowed ask=Ask me" {
		t.Fatalf("order's row offers %q", got)
	}
	do(t, ctx, "ask me", chromedp.SetValue(chromedp.ID("project-shop-policy"), `{"max_orders_per_day": 3}`), chromedp.Click(chromedp.ID("project-shop-write-order-ask")),
		chromedp.SendKeys(chromedp.ID("project-shop-credentials"), "tok-secret-123"))
	do(t, ctx, "the editor in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("project-shop-editor").scrollIntoView()`))
	screen(t, ctx, "settings-policy")
	if typ := run(t, ctx, "the credentials' box", chromedp.Evaluate[string](`document.getElementById("project-shop-credentials").type`)); typ != "password" {
		t.Fatalf("credentials are typed into a %q box", typ)
	}
	do(t, ctx, "save", chromedp.Click(chromedp.CSS(item+" form button[type=submit]")))
	waitJS(t, ctx, "saved", `document.querySelector('`+item+` [data-mode]')?.dataset.mode === "ok" && document.getElementById("status").textContent.includes("is saved")`)
	if got := textOf(t, ctx, "the project", item); !strings.Contains(got, "order: asks you first.") || !strings.Contains(got, "credentials: set") {
		t.Fatalf("the saved project reads %q", got)
	}
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var saved client.Project
	for _, p := range projects {
		if p.Name == "shop" {
			saved = p
		}
	}
	if saved.Policy != `{"confirm":["order"],"max_orders_per_day":3}` || saved.PolicyMode != "ok" || !saved.Credentials || len(saved.Agents) != 1 || saved.Agents[0] != w.Agent {
		t.Fatalf("the saved project: %+v", saved)
	}
	text := `{"connector":"shop","policy":{"confirm":["order"],"max_orders_per_day":3},"credentials":"tok-secret-123","agents":["` + w.Agent + `"]}`
	settingsConfirmed(t, ctx, w, approval.ActionSetProject("shop", text))
	if got := settingsOrder(t, w); got != "awaiting_owner" {
		t.Fatalf("after choosing Ask me an order is %q", got)
	}
	if got := s.lastCreds(); got != `"tok-secret-123"` {
		t.Fatalf("the order was handed the credentials %q", got)
	}
	if got := run(t, ctx, "the page", chromedp.Evaluate[string](`document.body.textContent + [...document.querySelectorAll("input")].map((i) => i.value).join(" ")`)); strings.Contains(got, "tok-secret-123") {
		t.Fatal("the credentials are still in the page after saving")
	}
	if s := settingsStored(t, ctx); strings.Contains(s, "tok-secret-123") {
		t.Fatalf("the browser stored the credentials: %s", s)
	}

	// Deleting a project, confirmed.
	do(t, ctx, "delete probe", chromedp.Click(chromedp.CSS(`#projects-list li[data-project="probe"] button[aria-label="Delete the project probe"]`)))
	waitJS(t, ctx, "deleted", `!document.querySelector('#projects-list li[data-project="probe"]') && document.getElementById("status").textContent.includes("is deleted")`)
	settingsConfirmed(t, ctx, w, approval.ActionRemoveProject("probe"))
	projects, err = w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		if p.Name == "probe" {
			t.Fatal("the deleted project is still there")
		}
	}
}

func TestSettingsMutes(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	waiting := w.Pay()

	ctx := blankTab(t, 120*time.Second)
	signInPage(t, ctx, w)
	do(t, ctx, "the task waits", chromedp.WaitVisible(chromedp.CSS(`li[data-task="`+waiting+`"]`)))
	settingsOpen(t, ctx, "mutes")
	if got := textOf(t, ctx, "the mutes", "#mutes-box"); !strings.Contains(got, "Nothing is muted") {
		t.Fatalf("before muting the view says %q", got)
	}

	// Mute the agent, deleting what waits: the task is gone, its next one
	// is refused.
	do(t, ctx, "mute", chromedp.SendKeys(chromedp.ID("mute-subject"), w.Agent), chromedp.Click(chromedp.ID("mute-delete")), chromedp.Click(named("Mute")))
	waitJS(t, ctx, "muted", `!!document.querySelector('#mutes-list li[data-mute="agent:`+w.Agent+`"]')`)
	if got := settingsSaid(t, ctx); !strings.Contains(got, "Muted the agent "+w.Agent) || !strings.Contains(got, "1 waiting task was deleted") {
		t.Fatalf("after muting the page says %q", got)
	}
	if st := w.Task(waiting); st.State != countersign.StateCancelled {
		t.Fatalf("the waiting task is %s", st.State)
	}
	if _, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil); err == nil || !strings.Contains(err.Error(), "muted") {
		t.Fatalf("a muted agent's call: %v", err)
	}
	// A project too; the form was drawn anew, empty.
	if got := run(t, ctx, "the subject box", chromedp.Evaluate[string](`document.getElementById("mute-subject").value`)); got != "" {
		t.Fatalf("after muting the subject box holds %q", got)
	}
	do(t, ctx, "mute a project", chromedp.Click(chromedp.ID("mute-project")),
		chromedp.SendKeys(chromedp.ID("mute-subject"), "probe"), chromedp.Click(named("Mute")))
	waitJS(t, ctx, "muted", `!!document.querySelector('#mutes-list li[data-mute="project:probe"]')`)
	mutes, err := w.Owner.Client.Mutes(context.Background())
	if err != nil || len(mutes) != 2 {
		t.Fatalf("the mutes: %+v, %v", mutes, err)
	}

	// Unmuted, both: the agent may ask again.
	for _, m := range []string{"agent " + w.Agent, "project probe"} {
		do(t, ctx, "unmute "+m, chromedp.Click(chromedp.CSS(`button[aria-label="Unmute the `+m+`"]`)))
		waitJS(t, ctx, "unmuted", `!document.querySelector('button[aria-label="Unmute the `+m+`"]')`)
	}
	waitJS(t, ctx, "nothing muted", `document.getElementById("mutes-empty")?.textContent === "Nothing is muted."`)
	if mutes, err := w.Owner.Client.Mutes(context.Background()); err != nil || len(mutes) != 0 {
		t.Fatalf("after unmuting: %+v, %v", mutes, err)
	}
	if id := w.Pay(); id == "" {
		t.Fatal("after unmuting the agent cannot ask")
	}
}

// A project added from the view: named, its connector chosen, an agent
// granted; saved with a confirmation, the agent may call it.
func TestSettingsNewProject(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector((&settingsShop{}).connector()))
	followClock(t, w)
	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	do(t, ctx, "set up a project", chromedp.SendKeys(chromedp.ID("project-new-name"), "tea-shop"),
		chromedp.SetValue(chromedp.ID("project-new-connector"), "shop"), chromedp.Click(named("Set it up")),
		chromedp.WaitVisible(chromedp.ID("project-tea-shop-agents")))
	if got := textOf(t, ctx, "the editor", "#project-tea-shop-editor h3"); got != "New project tea-shop (shop)" {
		t.Fatalf("the new project's editor: %q", got)
	}
	if _, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "tea-shop", "order", nil, nil); err == nil {
		t.Fatal("an agent calls a project that is not saved yet")
	}
	do(t, ctx, "save it", chromedp.SendKeys(chromedp.ID("project-tea-shop-agents"), w.Agent), chromedp.Click(named("Save the new project")))
	waitJS(t, ctx, "saved", `!!document.querySelector('#projects-list li[data-project="tea-shop"]')`)
	settingsConfirmed(t, ctx, w, approval.ActionSetProject("tea-shop", `{"connector":"shop","policy":{},"agents":["`+w.Agent+`"]}`))
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "tea-shop", "order", nil, nil)
	if err != nil || !strings.Contains(string(raw), `"ordered":true`) {
		t.Fatalf("the agent's call of the new project: %s, %v", raw, err)
	}
}

// A wallet elsewhere: the confirmation is shown to sign and pasted back,
// and a Cancel is a neutral notice. The view is reached from the keyboard.
func TestSettingsPastedConfirmation(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	const url = "http://127.0.0.1:9/hook"
	ctx := blankTab(t, 120*time.Second)
	signInPage(t, ctx, w)
	// Settings, then its Webhook section, from the keyboard: each view
	// takes the focus on its heading.
	do(t, ctx, "Settings from the keyboard", chromedp.Focus(chromedp.ID("settings-link")), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("settings-overview")))
	waitJS(t, ctx, "the view has the focus", `document.activeElement?.id === "settings-title" && document.activeElement.textContent === "Settings"`)
	screen(t, ctx, "settings")
	do(t, ctx, "Webhook from the keyboard", chromedp.Focus(chromedp.CSS(`nav a[data-section="webhook"]`)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, "the webhook", `!!document.getElementById("webhook-current") && document.activeElement?.id === "settings-title" && document.activeElement.textContent === "Webhook"`)
	if cur := textOf(t, ctx, "the current section", `nav a[aria-current="page"]`); cur != "Webhook" {
		t.Fatalf("the section marked current is %q", cur)
	}

	do(t, ctx, "name the webhook", chromedp.SendKeys(chromedp.ID("webhook-url-input"), url), chromedp.Click(named("Name the webhook")),
		chromedp.WaitVisible(chromedp.ID("webhook-confirm-sentence")))
	do(t, ctx, "cancel", chromedp.Click(named("Cancel")))
	waitJS(t, ctx, "the notice", `document.getElementById("status").textContent === "You cancelled the signature. Nothing was changed."`)
	if cls := run(t, ctx, "the notice's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); strings.Contains(cls, "error") {
		t.Fatalf("a cancel is shown as an error: %q", cls)
	}
	if wh, err := w.Owner.Client.Webhook(context.Background()); err != nil || wh.URL != nil {
		t.Fatalf("after a cancel: %+v, %v", wh, err)
	}

	do(t, ctx, "name it again", chromedp.Click(named("Name the webhook")), chromedp.WaitVisible(chromedp.ID("webhook-confirm-sentence")))
	sentence := textOf(t, ctx, "the sentence", "#webhook-confirm-sentence")
	text, _ := approval.ActionNameWebhook(url).Text()
	if !strings.HasPrefix(sentence, "Confirm in Countersign as "+w.Owner.Account+": "+text+". At ") {
		t.Fatalf("the sentence shown: %q", sentence)
	}
	if got := textOf(t, ctx, "the recipient", "#webhook-confirm-recipient"); got != w.Inbox.Recipient() {
		t.Fatalf("the recipient shown: %q", got)
	}
	do(t, ctx, "paste the answer", chromedp.SetValue(chromedp.ID("webhook-confirm-signed"), walletSign(t, ctx, w, sentence, "webhook-confirm-nonce")),
		chromedp.Click(named("Send confirmation")), chromedp.WaitVisible(chromedp.ID("webhook-secret")))
	if wh, err := w.Owner.Client.Webhook(context.Background()); err != nil || wh.URL == nil || *wh.URL != url {
		t.Fatalf("after the pasted confirmation: %+v, %v", wh, err)
	}
}

// settingsTill is a connector that declares a rule condition: its write
// "pay" carries an amount, "cancel" carries none.
func settingsTill() *connectors.Connector {
	return &connectors.Connector{Name: "till", Version: "1.0.0", Tasks: true,
		Conditions: []policy.Condition{policy.AmountRange("amount", "min_usd", "max_usd")},
		Operations: []connectors.Operation{
			{Name: "pay", Kind: connectors.Write, Carries: []string{"amount"}, Noun: "payment", Description: "Pays an amount in dollars.",
				Schema: json.RawMessage(`{"type": "object", "properties": {"usd": {"type": "string"}}, "required": ["usd"], "additionalProperties": false}`), Run: func(ctx context.Context, c *connectors.Call) (any, error) {
					var args struct {
						USD string `json:"usd"`
					}
					if err := c.Decode(&args); err != nil {
						return nil, err
					}
					amount, err := policy.ParseCents(args.USD)
					if err != nil {
						return nil, connectors.Refuse(countersign.InvalidRequest, "usd is an amount")
					}
					switch d := c.Decide(policy.Facts{Amounts: map[string]policy.Cents{"amount": amount}}); d.Outcome {
					case policy.Refuse:
						return nil, connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
					case policy.Ask:
						return nil, connectors.Refuse(countersign.InvalidRequest, "this test's till does not ask")
					}
					return map[string]any{"ok": true, "paid": true}, nil
				}},
			{Name: "cancel", Kind: connectors.Write, Description: "Cancels nothing.",
				Schema: json.RawMessage(`{"type": "object", "additionalProperties": false}`), Run: func(_ context.Context, c *connectors.Call) (any, error) {
					if d := c.Decide(policy.Facts{}); d.Outcome != policy.Allow {
						return nil, connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
					}
					return map[string]any{"ok": true}, nil
				}},
		}}
}

// settingsPay is the agent's call of till's pay: "done", or its refusal's code.
func settingsPay(t *testing.T, w *servicetest.World, usd string) string {
	t.Helper()
	_, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "till", "pay", map[string]any{"usd": usd}, nil)
	var refused *client.Refusal
	if errors.As(err, &refused) {
		return refused.Code
	}
	if err != nil {
		t.Fatal(err)
	}
	return "done"
}

// The rules editor, for a connector that declares conditions: a rule added
// row by row refuses the next large payment; a rule the write cannot carry
// makes the policy broken, in the service's words; rules moved and removed.
func TestSettingsRules(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(settingsTill()))
	followClock(t, w)
	if got := settingsPay(t, w, "500"); got != "done" {
		t.Fatalf("before any rule a payment is %q", got)
	}
	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	item := `#projects-list li[data-project="till"]`
	edit := chromedp.Click(chromedp.CSS(item + ` button[aria-label="Edit the project till"]`))
	save := chromedp.Click(chromedp.CSS(item + " form button[type=submit]"))
	do(t, ctx, "edit", edit, chromedp.WaitVisible(chromedp.ID("project-till-rules")))
	if n := run(t, ctx, "the other members' box", chromedp.Evaluate[int](`document.querySelectorAll("#project-till-policy").length`)); n != 0 {
		t.Fatal("till reads no member but confirm and rules, yet a JSON box is shown")
	}
	do(t, ctx, "add a rule", chromedp.Click(named("Add a rule")), chromedp.WaitVisible(chromedp.ID("project-till-rules-1-op")),
		chromedp.SetValue(chromedp.ID("project-till-rules-1-op"), "pay"), chromedp.SendKeys(chromedp.ID("project-till-rules-1-conds"), `{"min_usd": 100}`),
		chromedp.SetValue(chromedp.ID("project-till-rules-1-then"), "refuse"), save)
	waitJS(t, ctx, "saved", `document.getElementById("status").textContent.includes("The project till is saved")`)
	settingsConfirmed(t, ctx, w, approval.ActionSetProject("till", `{"connector":"till","policy":{"rules":[{"when":{"op":"pay","min_usd":100},"then":"refuse"}]},"agents":["`+w.Agent+`"]}`))
	if got := settingsPay(t, w, "500"); got != string(countersign.PolicyDenied) {
		t.Fatalf("a payment of $500 under the rule is %q", got)
	}
	if got := settingsPay(t, w, "5"); got != "done" {
		t.Fatalf("a payment of $5 under the rule is %q", got)
	}

	// A second rule bounding an amount of cancel, which carries none: the
	// policy is broken, and the project says why.
	do(t, ctx, "edit again", edit, chromedp.WaitVisible(chromedp.ID("project-till-rules-1-op")), chromedp.Click(named("Add a rule")),
		chromedp.WaitVisible(chromedp.ID("project-till-rules-2-op")), chromedp.SetValue(chromedp.ID("project-till-rules-2-op"), "cancel"),
		chromedp.SendKeys(chromedp.ID("project-till-rules-2-conds"), `{"min_usd": 1}`), save)
	waitJS(t, ctx, "broken", `document.querySelector('`+item+` [data-mode]')?.dataset.mode === "broken"`)
	if got := textOf(t, ctx, "the mode", item+" [data-mode]"); !strings.HasPrefix(got, "The policy cannot be applied: rule 2 ") || !strings.Contains(got, "cancel") {
		t.Fatalf("the broken policy reads %q", got)
	}

	// Moved up, rule 2 is rule 1; removed, the policy reads again.
	do(t, ctx, "edit once more", edit, chromedp.WaitVisible(chromedp.ID("project-till-rules-2-op")),
		chromedp.Click(chromedp.CSS(`button[aria-label="Move rule 2 up"]`)))
	do(t, ctx, "the rules in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("project-till-rules").scrollIntoView()`))
	screen(t, ctx, "settings-rules")
	if got := run(t, ctx, "rule 1's write", chromedp.Evaluate[string](`document.getElementById("project-till-rules-1-op").value`)); got != "cancel" {
		t.Fatalf("after moving rule 2 up, rule 1 is for %q", got)
	}
	do(t, ctx, "remove rule 1", chromedp.Click(chromedp.CSS(`button[aria-label="Remove rule 1"]`)), save)
	waitJS(t, ctx, "readable", `document.querySelector('`+item+` [data-mode]')?.dataset.mode === "ok"`)
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		if p.Name == "till" && p.Policy != `{"rules":[{"when":{"op":"pay","min_usd":100},"then":"refuse"}]}` {
			t.Fatalf("the till's policy: %s", p.Policy)
		}
	}

	// cancel's row set to Refused: till has no allow-list, so the row is a
	// rule refusing cancel whatever its conditions, put before the others.
	// The agent's cancel is refused; read back, the row says Refused and the
	// rules editor holds the other rule alone.
	do(t, ctx, "edit to refuse cancel", edit, chromedp.WaitVisible(chromedp.ID("project-till-write-cancel-refuse")),
		chromedp.Click(chromedp.ID("project-till-write-cancel-refuse")), save)
	waitJS(t, ctx, "saved", `document.querySelector('`+item+` [data-explained] li[data-write="cancel"]')?.textContent === "cancel: refused (rule 1)."`)
	if got := textOf(t, ctx, "what pay does", item+` [data-explained] li[data-write="pay"]`); !strings.HasPrefix(got, "pay, the first that applies:") || !strings.Contains(got, "refused when ") || !strings.Contains(got, "(rule 2)") || !strings.HasSuffix(got, "otherwise runs at once") {
		t.Fatalf("the project says of pay %q", got)
	}
	settingsConfirmed(t, ctx, w, approval.ActionSetProject("till", `{"connector":"till","policy":{"rules":[{"when":{"op":"cancel"},"then":"refuse"},{"when":{"op":"pay","min_usd":100},"then":"refuse"}]},"agents":["`+w.Agent+`"]}`))
	if _, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "till", "cancel", map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), string(countersign.PolicyDenied)) {
		t.Fatalf("a cancel the row refuses: %v", err)
	}
	if got := settingsPay(t, w, "5"); got != "done" {
		t.Fatalf("a payment of $5 with cancel refused is %q", got)
	}
	do(t, ctx, "edit to read it back", edit, chromedp.WaitVisible(chromedp.ID("project-till-write-cancel-refuse")))
	if got := run(t, ctx, "the rows", chromedp.Evaluate[string](`[...document.querySelectorAll('#project-till-writes input:checked')].map((i) => i.dataset.write + "=" + i.value).join(" ")`)); got != "pay=allow cancel=refuse" {
		t.Fatalf("read back, the rows are %q", got)
	}
	if n := run(t, ctx, "the rules", chromedp.Evaluate[int](`document.querySelectorAll("#project-till-rules-list li[data-rule]").length`)); n != 1 {
		t.Fatalf("read back, the rules editor holds %d rules, want the pay rule alone", n)
	}
}
