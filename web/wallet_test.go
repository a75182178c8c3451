package web_test

// Signing in and approving through near-connect, in Chromium: a wallet that
// signs with a known ed25519 key is injected through near-connect's
// near-wallet-injected event (testdata/testwallet.js), so the page's own
// near-connect picker offers it. One wallet prompt per approval; a wallet
// that declines is a neutral notice and the task stays; a wallet that signs
// the page's URL as callbackUrl (MyNearWallet's redirect) is checked both
// ways and sent as signed. No request leaves the service's origin.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/mr-tron/base58"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
	"countersign/web"
)

// injectWallet has every page the tab loads offer the test wallet, signing
// as the world's owner, and records the URL of every request the tab makes.
func injectWallet(t testing.TB, ctx context.Context, w *servicetest.World) func() []string {
	t.Helper()
	return injectWalletOf(t, ctx, w.Owner)
}

// injectWalletOf is injectWallet signing as d's account, with d's wallet.
func injectWalletOf(t testing.TB, ctx context.Context, d *device.Device) func() []string {
	t.Helper()
	wallet := d.Signer.(device.WalletSigner).Wallet
	secret, err := base58.Decode(strings.TrimPrefix(wallet.Key.SecretText(), "ed25519:"))
	if err != nil || len(secret) != 64 {
		t.Fatalf("the wallet's key: %v", err)
	}
	cfg, _ := json.Marshal(map[string]any{"account": d.Account, "publicKey": wallet.Key.PublicKey().String(),
		"seed": fmt.Sprintf("%x", secret[:32])})
	src, err := os.ReadFile("testdata/testwallet.js")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var urls []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: "const TEST_WALLET = " + string(cfg) + ";\n" + string(src)}); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), urls...)
	}
}

// signInWithWallet signs the page in through near-connect's picker with the
// injected test wallet.
func signInWithWallet(t testing.TB, ctx context.Context, w *servicetest.World) {
	t.Helper()
	item := `#wallet-picker button[data-wallet="test-wallet"]`
	do(t, ctx, "sign in with the wallet", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign in")), chromedp.Click(named("Sign in")),
		chromedp.WaitVisible(chromedp.CSS(item)), chromedp.Click(chromedp.CSS(item)),
		chromedp.WaitVisible(named("Sign out")))
	walletClosed(t, ctx)
}

// walletClosed waits until near-connect's picker and wallet windows have
// faded out and left the page, so a click lands on the page again.
func walletClosed(t testing.TB, ctx context.Context) {
	t.Helper()
	waitJS(t, ctx, "the wallet's window closed", `![...document.querySelectorAll(".hot-connector-popup")].some((p) => getComputedStyle(p).display !== "none")`)
}

func walletSigned(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return run(t, ctx, "what the wallet signed", chromedp.Evaluate[[]string](`window.testWallet.signed`))
}

func TestInboxPageWallet(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	guess := w.Guess()

	ctx := blankTab(t, 90*time.Second)
	requests := injectWallet(t, ctx, w)
	// The picker closed without choosing (Cancel): a neutral notice, nothing signed.
	do(t, ctx, "open the picker", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign in")), chromedp.Click(named("Sign in")),
		chromedp.WaitVisible(chromedp.CSS(`#wallet-picker button[data-wallet="test-wallet"]`)))
	do(t, ctx, "close the picker", chromedp.Click(chromedp.CSS(`#wallet-picker `+`button.secondary`)))
	waitJS(t, ctx, "the notice", `document.getElementById("status").textContent.includes("Nothing was signed")`)
	if cls := run(t, ctx, "the notice's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); strings.Contains(cls, "error") {
		t.Fatalf("a closed picker is shown as an error: %q", cls)
	}
	walletClosed(t, ctx)
	if n := len(walletSigned(t, ctx)); n != 0 {
		t.Fatalf("the wallet signed %d sentences after the picker was closed", n)
	}
	signInWithWallet(t, ctx, w)
	signed := walletSigned(t, ctx)
	if len(signed) != 1 {
		t.Fatalf("the wallet signed %q to sign in", signed)
	}
	si, err := approval.ParseSignIn(signed[0])
	if err != nil || si.Account != w.Owner.Account {
		t.Fatalf("the wallet signed %q to sign in: %v", signed[0], err)
	}
	if who := run(t, ctx, "who", chromedp.AttributeValue(chromedp.ID("who"), "data-account")); who.Value != w.Owner.Account {
		t.Fatalf("signed in as %q", who.Value)
	}
	if c := sessionCookie(t, ctx, w.URL); c == nil || !c.HTTPOnly {
		t.Fatalf("the session cookie: %+v", c)
	}

	// Approve: one wallet prompt, over the sentence the card shows.
	openCard(t, ctx, guess)
	do(t, ctx, "approve", chromedp.SetValue(chromedp.ID("answer"), "7"), chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	signed = walletSigned(t, ctx)
	if len(signed) != 2 || !strings.HasPrefix(signed[1], "Approve in Countersign as "+w.Owner.Account+": give the agent your guess") || !strings.Contains(signed[1], ". Task "+guess+" with hash ") {
		t.Fatalf("the wallet signed %q", signed)
	}
	if st := w.WaitState(guess, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the approved task is %s", st.State)
	}

	// A wallet that declines: a neutral notice, nothing sent, the task waits.
	pay := w.Pay()
	openCard(t, ctx, pay)
	do(t, ctx, "decline", chromedp.Evaluate[chromedp.Void](`window.testWallet.decline = true`), chromedp.Click(approveButton()))
	waitJS(t, ctx, "the notice", `document.getElementById("status").textContent.includes("Nothing was sent")`)
	if cls := run(t, ctx, "the notice's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); strings.Contains(cls, "error") {
		t.Fatalf("a declining wallet is shown as an error: %q", cls)
	}
	if st := w.Task(pay); st.State != countersign.StateOpen {
		t.Fatalf("after the wallet declined the task is %s", st.State)
	}
	if approveDisabled(t, ctx) {
		t.Fatal("after the wallet declined, Approve is off")
	}

	// A wallet whose signature verifies for nothing asked: the page refuses
	// it before sending anything, and the task still waits.
	do(t, ctx, "a bad signature", chromedp.Evaluate[chromedp.Void](`window.testWallet.decline = false; window.testWallet.corrupt = true`),
		chromedp.Click(approveButton()))
	waitJS(t, ctx, "the refusal", `document.getElementById("status").textContent.includes("does not verify for the sentence shown")`)
	if st := w.Task(pay); st.State != countersign.StateOpen {
		t.Fatalf("after a signature that does not verify the task is %s", st.State)
	}
	do(t, ctx, "a good wallet again", chromedp.Evaluate[chromedp.Void](`window.testWallet.corrupt = false`))

	// A wallet that signs the page's URL as its callback (MyNearWallet when
	// it redirects): the page finds the form that verifies and sends
	// callback_url; the service accepts it.
	do(t, ctx, "approve again", chromedp.Evaluate[chromedp.Void](`window.testWallet.decline = false; window.testWallet.callback = true`),
		chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	if st := w.WaitState(pay, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the task approved with a callback URL is %s", st.State)
	}

	// The wallet gone from the browser (near-connect forgot it): the card
	// says so and offers the paste panel instead; the task still waits.
	third := w.Pay()
	openCard(t, ctx, third)
	do(t, ctx, "forget the wallet", chromedp.Evaluate[chromedp.Void](`localStorage.removeItem("selected-wallet")`), chromedp.Click(approveButton()))
	waitJS(t, ctx, "the paste panel", `!!document.getElementById("approval-signed") && document.getElementById("status").textContent.includes("no longer connected")`)
	do(t, ctx, "paste", chromedp.SetValue(chromedp.ID("approval-signed"), walletSign(t, ctx, w, textOf(t, ctx, "the sentence", "#approval-sentence"), "approval-nonce")),
		chromedp.Click(named("Send approval")))
	waitApproved(t, ctx)

	signOut(t, ctx)
	for _, u := range requests() {
		if !strings.HasPrefix(u, w.URL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("the page asked %s, off the service's origin", u)
		}
	}
}

// serve --dev's sandbox wallet: near-connect runs its code in a sandboxed
// iframe under the page's CSP; it makes a key of its own, asks before it
// connects and before it signs, and signs the owner in as that key's
// implicit account, shown shortened in the middle with a Copy button. Each
// ask shows the whole of what it signs, and can be cancelled (Cancel, or
// Esc): a cancelled signature sends nothing and the task still waits. The
// approval it is asked to sign names what approving does: the task's
// summary.
func TestInboxPageSandboxWallet(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithSandboxWallet())
	followClock(t, w)
	w.StartJobs()
	ctx := blankTab(t, 120*time.Second)
	item := `#wallet-picker button[data-wallet="countersign-sandbox"]`
	do(t, ctx, "pick the sandbox wallet", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign in")), chromedp.Click(named("Sign in")),
		chromedp.WaitVisible(chromedp.CSS(item)), chromedp.Click(chromedp.CSS(item)))
	for _, step := range []string{"Connect", "Sign"} {
		clickInWalletFrame(t, ctx, step)
	}
	do(t, ctx, "signed in", chromedp.WaitVisible(named("Sign out")))
	who := run(t, ctx, "who", chromedp.AttributeValue(chromedp.ID("who"), "data-account")).Value
	if err := countersign.CheckAccountID(who); err != nil || len(who) != 64 {
		t.Fatalf("signed in as %q, not an implicit account: %v", who, err)
	}
	walletClosed(t, ctx)
	// The long account id, shortened in the middle, whole on hover and in Copy.
	shown := run(t, ctx, "the account shown", chromedp.Evaluate[[]string](`(() => { const m = document.querySelector("#who .mono"); return [m.textContent, m.title]; })()`))
	if shown[0] != who[:8]+"…"+who[57:] || shown[1] != who {
		t.Errorf("the account is shown as %q (title %q)", shown[0], shown[1])
	}
	do(t, ctx, "copy it", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText = async (t) => { window.copied = t; }`),
		chromedp.Click(chromedp.CSS(`#who button[aria-label="Copy the whole account id"]`)))
	waitJS(t, ctx, "copied", `window.copied === "`+who+`"`)

	// A task for this account: a ledger project of its own.
	if err := w.DB.Tx(context.Background(), func(tx store.Tx) error {
		return tx.PutProject(context.Background(), store.Project{Owner: who, Name: "ledger", UUID: countersign.NewProjectUUID(), Connector: "ledger",
			Policy: []byte(`{}`), Agents: []string{w.Agent}, CreatedAt: w.Clock.Now(), UpdatedAt: w.Clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	const summary = "pay $1.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone"
	raw, err := w.AgentClient().Call(context.Background(), who, "ledger", "pay", map[string]any{"amount": 1, "summary": summary}, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.TaskID == "" {
		t.Fatalf("the pay call: %s, %v", raw, err)
	}
	openCard(t, ctx, a.TaskID)

	// Approve: the wallet shows the whole sentence it is asked to sign,
	// wrapped, with its buttons in view; Cancel signs nothing.
	do(t, ctx, "approve at 360 px", chromedp.EmulateViewport(360, 900), chromedp.Click(approveButton()), chromedp.WaitVisible(chromedp.ID("approval-sentence")))
	sentence := textOf(t, ctx, "the sentence", "#approval-sentence")
	prompt := inWalletFrame(t, ctx, `(() => {
  const dd = [...document.querySelectorAll("#root dd")];
  const b = [...document.querySelectorAll("#root button")];
  if (!dd.length || b.length !== 2) return "";
  const row = (name) => [...document.querySelectorAll("#root dt")].find((dt) => dt.textContent === name)?.nextElementSibling?.textContent ?? "";
  const cut = dd.some((d) => d.scrollWidth > d.clientWidth + 1 || d.getBoundingClientRect().right > innerWidth || d.getBoundingClientRect().left < 0) || b.some((x) => x.getBoundingClientRect().bottom > innerHeight);
  return JSON.stringify({sentence: row("Sentence"), does: row("Approving does"), first: document.querySelector("#root dt")?.textContent ?? "", cut, buttons: b.map((x) => x.textContent), focused: document.activeElement?.textContent ?? ""});
})()`)
	var p struct {
		Does     string   `json:"does"`
		First    string   `json:"first"`
		Sentence string   `json:"sentence"`
		Cut      bool     `json:"cut"`
		Buttons  []string `json:"buttons"`
		Focused  string   `json:"focused"`
	}
	if err := json.Unmarshal([]byte(prompt), &p); err != nil {
		t.Fatalf("the wallet's prompt: %q", prompt)
	}
	if p.Sentence != sentence || p.Cut || strings.Join(p.Buttons, ",") != "Sign,Cancel" || p.Focused != "Sign" {
		t.Fatalf("the wallet shows %+v; the card asks it to sign %q", p, sentence)
	}
	if !strings.HasPrefix(p.Sentence, "Approve in Countersign as "+who+": "+summary+". Task "+a.TaskID+" with hash ") || p.Does != summary || p.First != "Approving does" {
		t.Fatalf("the wallet's prompt does not name what approving does first: %+v", p)
	}
	do(t, ctx, "1280 px", chromedp.EmulateViewport(1280, 900))
	screen(t, ctx, "sandbox-wallet-sign")
	clickInWalletFrame(t, ctx, "Cancel")
	waitJS(t, ctx, "cancelled", `document.getElementById("status").textContent.includes("Nothing was sent")`)
	if st := w.Task(a.TaskID); st.State != countersign.StateOpen {
		t.Fatalf("after Cancel in the wallet the task is %s", st.State)
	}
	walletClosed(t, ctx)

	// Esc cancels too: the focus is in the wallet's window.
	do(t, ctx, "approve again", chromedp.Evaluate[chromedp.Void](`document.getElementById("status").textContent = ""`), chromedp.Click(approveButton()))
	inWalletFrame(t, ctx, `document.querySelector("#root button") ? "shown" : ""`)
	waitJS(t, ctx, "the wallet has the focus", `document.activeElement?.tagName === "IFRAME"`)
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape))
	waitJS(t, ctx, "cancelled by Esc", `document.getElementById("status").textContent.includes("Nothing was sent")`)
	if st := w.Task(a.TaskID); st.State != countersign.StateOpen {
		t.Fatalf("after Esc in the wallet the task is %s", st.State)
	}
	walletClosed(t, ctx)

	// Signed, it is approved.
	do(t, ctx, "approve once more", chromedp.Click(approveButton()))
	clickInWalletFrame(t, ctx, "Sign")
	waitApproved(t, ctx)
	if st := w.WaitState(a.TaskID, countersign.StateDone, countersign.StateFailed, countersign.StateVoid); st.State != countersign.StateDone {
		t.Fatalf("the approved task is %s", st.State)
	}
	walletClosed(t, ctx)
	signOut(t, ctx)
}

// inWalletFrame evaluates js in the wallet's iframe (a target of its own)
// until it answers something other than "".
func inWalletFrame(t testing.TB, ctx context.Context, js string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type != "iframe" {
				continue
			}
			fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
			fctx, cancelT := context.WithTimeout(fctx, 2*time.Second)
			got, err := chromedp.Run(fctx, chromedp.Evaluate[string](js))
			cancelT()
			cancel()
			if err == nil && got != "" {
				return got
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the wallet's iframe never answered %s", js)
	return ""
}

// The wallet picker from the keyboard and to a screen reader: a modal
// dialog named by its heading, each wallet a button named by the wallet,
// the focus kept in it (Tab and Shift+Tab wrap), Esc closes it (a neutral
// notice: nothing signed) and the focus goes back to Sign in; axe-core
// finds nothing serious or critical in it.
func TestWalletPicker(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithSandboxWallet())
	ctx := blankTab(t, 90*time.Second)
	injectWallet(t, ctx, w)
	do(t, ctx, "open the picker", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign in")), chromedp.Focus(named("Sign in")), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`#wallet-picker button[data-wallet="test-wallet"]`)))
	names := run(t, ctx, "the wallets", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#wallet-picker button")].map((b) => b.textContent.trim())`))
	for _, want := range []string{"Sandbox wallet", "MyNearWallet", "Meteor Wallet", "HOT Wallet", "Test Wallet", "Cancel"} {
		if !slices.Contains(names, want) {
			t.Errorf("the picker's buttons %q lack %q", names, want)
		}
	}
	if modal := run(t, ctx, "modal", chromedp.Evaluate[bool](`document.getElementById("wallet-picker").matches(":modal") && document.getElementById("wallet-picker").getAttribute("aria-labelledby") === "wallet-picker-title"`)); !modal {
		t.Fatal("the picker is not a modal dialog named by its heading")
	}
	if in := run(t, ctx, "the focus", chromedp.Evaluate[bool](`document.getElementById("wallet-picker").contains(document.activeElement)`)); !in {
		t.Fatal("the picker opened without the focus")
	}
	screen(t, ctx, "signin-wallets")
	// Tab and Shift+Tab go round the dialog's buttons and never leave it.
	for i := 0; i < len(names)+2; i++ {
		do(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
		if in := run(t, ctx, "the focus", chromedp.Evaluate[bool](`document.getElementById("wallet-picker").contains(document.activeElement) && document.activeElement.tagName === "BUTTON"`)); !in {
			t.Fatalf("Tab %d left the picker", i+1)
		}
	}
	for i := 0; i < len(names)+2; i++ {
		do(t, ctx, "Shift+Tab", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
		if in := run(t, ctx, "the focus", chromedp.Evaluate[bool](`document.getElementById("wallet-picker").contains(document.activeElement) && document.activeElement.tagName === "BUTTON"`)); !in {
			t.Fatalf("Shift+Tab %d left the picker", i+1)
		}
	}
	do(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape))
	waitJS(t, ctx, "closed", `!document.getElementById("wallet-picker") && document.getElementById("status").textContent === "No wallet was chosen. Nothing was signed."`)
	if cls := run(t, ctx, "the notice's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); strings.Contains(cls, "error") {
		t.Fatalf("a closed picker is shown as an error: %q", cls)
	}
	if got := run(t, ctx, "the focus", chromedp.Evaluate[string](`document.activeElement?.textContent ?? ""`)); got != "Sign in" {
		t.Fatalf("after Esc the focus is on %q", got)
	}
	if n := len(walletSigned(t, ctx)); n != 0 {
		t.Fatalf("the wallet signed %d sentences", n)
	}
	// Chosen from the keyboard, it signs in.
	do(t, ctx, "reopen", chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS(`#wallet-picker button[data-wallet="test-wallet"]`)),
		chromedp.Focus(chromedp.CSS(`#wallet-picker button[data-wallet="test-wallet"]`)), chromedp.KeyEvent("\r"), chromedp.WaitVisible(named("Sign out")))
}

// clickInWalletFrame clicks the button named name in the wallet's iframe.
// Chrome runs a sandboxed iframe in a process of its own, as a target of
// its own, so the click attaches to that target.
func clickInWalletFrame(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type != "iframe" {
				continue
			}
			fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
			fctx, cancelT := context.WithTimeout(fctx, 2*time.Second)
			err := chromedp.Do(fctx, chromedp.Click(named(name)))
			cancelT()
			cancel()
			if err == nil {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	status, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.ID("status")))
	t.Fatalf("no %s button in the wallet's iframe; the page says %q", name, status)
}

// near-connect runs a wallet's code under the page's script nonce, so the
// page offers only executors that cannot change under it: at one commit of
// a repository, or on the service's own origin (the sandbox wallet, from
// the bundle). The page's CSP names no script origin at all, and lets the
// page fetch from nothing but its own origin, the executors' host, the
// NEAR RPC and HOT's relay and API.
func TestWalletExecutorsArePinned(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithSandboxWallet())
	ctx := tab(t)
	var m struct {
		Executors []string `json:"executors"`
		RPC       []string `json:"rpc"`
	}
	raw := run(t, ctx, "the shipped manifest", chromedp.Evaluate[[]byte](`(async () => {
  const cs = await import(window.BUNDLE);
  return {executors: cs.WALLETS.map((w) => w.executor), rpc: [...cs.RPC.mainnet, ...cs.RPC.testnet]};
})()`, chromedp.EvalAwaitPromise))
	if err := json.Unmarshal(raw, &m); err != nil || len(m.Executors) < 3 || len(m.RPC) != 2 {
		t.Fatalf("the shipped manifest: %s, %v", raw, err)
	}
	pinned := regexp.MustCompile(`^https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/[\w./-]+\.js$`)
	want := map[string]bool{"'self'": true, "https://h4n.app": true, "https://api0.herewallet.app": true}
	for _, e := range m.Executors {
		if !pinned.MatchString(e) {
			t.Errorf("the page offers a wallet whose executor %s is not at one commit", e)
		}
		if u, err := url.Parse(e); err == nil {
			want[u.Scheme+"://"+u.Host] = true
		}
	}
	for _, r := range m.RPC {
		want[r] = true
	}

	resp, err := http.Get(w.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sandbox := regexp.MustCompile(`<meta name="countersign-sandbox-wallet" content="([^"]*)">`).FindSubmatch(body)
	if sandbox == nil || !strings.HasPrefix(string(sandbox[1]), web.Prefix) {
		t.Errorf("the sandbox wallet's executor is not on the service's origin: %q", sandbox)
	}
	directives := map[string][]string{}
	for _, d := range strings.Split(resp.Header.Get("Content-Security-Policy"), ";") {
		if f := strings.Fields(d); len(f) > 0 {
			directives[f[0]] = f[1:]
		}
	}
	if s := directives["script-src"]; len(s) != 1 || !strings.HasPrefix(s[0], "'nonce-") {
		t.Errorf("script-src %v names more than the nonce", s)
	}
	got := map[string]bool{}
	for _, h := range directives["connect-src"] {
		got[h] = true
		if !want[h] {
			t.Errorf("connect-src names %s, which no pinned wallet needs", h)
		}
	}
	for h := range want {
		if !got[h] {
			t.Errorf("connect-src lacks %s, which a wallet needs", h)
		}
	}
}
