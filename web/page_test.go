package web_test

// The inbox's page in a real Chromium against the whole service (servicetest
// on PostgreSQL): sign in with another wallet, the waiting list opened on the
// page's own device key, live updates, sign-out.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"countersign/approval"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// named is the button whose accessible name (its text) is name, exactly.
func named(name string) chromedp.Search {
	return chromedp.Search(`//button[normalize-space(.)="` + name + `"]`)
}

func do(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func run[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// signOut signs the page out with its button and waits for the sign-in
// screen; on failure it says what the page said.
func signOut(t testing.TB, ctx context.Context) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, chromedp.Click(named("Sign out")), chromedp.WaitVisible(named("Sign with another wallet"))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status")?.textContent + " | " + document.body.innerText.slice(0, 300)`))
		t.Fatalf("sign out: %v; the page shows %q", err, status)
	}
}

// textOf is the text of the element css selects, read in one evaluation (a
// listing drawn again between finding a node and reading it would take the
// node away); "" when there is none.
func textOf(t testing.TB, ctx context.Context, what, css string) string {
	t.Helper()
	q, _ := json.Marshal(css)
	return run(t, ctx, what, chromedp.Evaluate[string](`document.querySelector(`+string(q)+`)?.textContent ?? ""`))
}

// sessionCookie is the browser's session cookie for url, nil if none.
func sessionCookie(t testing.TB, ctx context.Context, url string) *network.Cookie {
	t.Helper()
	r, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Cookies {
		if c.Name == "countersign_session" {
			return c
		}
	}
	return nil
}

// listStatus is what GET /inbox/tasks answers a bearer token.
func listStatus(t testing.TB, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/inbox/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestInboxPageSignInListSignOut(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	// Opened before the page's device exists: the sign-in unlocks it for it.
	first := w.Pay()

	ctx := blankTab(t, 90*time.Second)
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign with another wallet")))
	// The page's script ran and its style applied under the CSP's nonce.
	if styled := run(t, ctx, "the style", chromedp.Evaluate[bool](`getComputedStyle(document.querySelector("button")).borderTopLeftRadius !== "0px"`)); !styled {
		t.Fatal("the page's style was not applied")
	}
	screen(t, ctx, "signin")
	do(t, ctx, "ask for the sentence", chromedp.SendKeys(chromedp.ID("account"), w.Owner.Account),
		chromedp.Click(named("Sign with another wallet")), chromedp.WaitVisible(chromedp.ID("sentence")))
	screen(t, ctx, "signin-another-wallet")
	sentence := run(t, ctx, "the sentence", chromedp.TextContent(chromedp.ID("sentence")))
	recipient := run(t, ctx, "the recipient", chromedp.TextContent(chromedp.ID("recipient")))
	nonceText := run(t, ctx, "the nonce", chromedp.TextContent(chromedp.ID("nonce")))
	cmd := run(t, ctx, "the command", chromedp.TextContent(chromedp.ID("command")))

	// The sentence is the contract's, for this account and a device key of
	// the page's, valid for less than 30 days.
	si, err := approval.ParseSignIn(sentence)
	if err != nil {
		t.Fatalf("the page shows %q: %v", sentence, err)
	}
	if si.Account != w.Owner.Account || si.DeviceKey == approval.DeviceKeyPrefix+base64.RawURLEncoding.EncodeToString(w.Owner.Key.PublicKey().Bytes()) {
		t.Fatalf("the sentence %q", sentence)
	}
	if d := time.Until(si.ValidUntil); d < 28*24*time.Hour || d > 30*24*time.Hour {
		t.Fatalf("the sentence is valid until %s", si.ValidUntil)
	}
	if recipient != w.Inbox.Recipient() {
		t.Fatalf("the page names the recipient %q, not %q", recipient, w.Inbox.Recipient())
	}
	nonce, err := approval.ParseNonce(nonceText)
	if err != nil {
		t.Fatalf("the page's nonce %q: %v", nonceText, err)
	}
	if !strings.Contains(cmd, "countersign wallet sign ") || !strings.Contains(cmd, "'"+sentence+"'") || !strings.Contains(cmd, nonceText) {
		t.Fatalf("the command shown: %q", cmd)
	}

	// The owner's wallet signs it elsewhere; its answer is pasted back.
	signed, err := wallet.Sign(approval.SignRequest{Message: sentence, Recipient: recipient, Nonce: &nonce})
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.MarshalIndent(signed, "", "  ")

	// An answer for another recipient is refused on the page, and nothing
	// is sent.
	other, err := wallet.Sign(approval.SignRequest{Message: sentence, Recipient: "elsewhere", Nonce: &nonce})
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := json.Marshal(other)
	do(t, ctx, "paste a wrong answer", chromedp.SetValue(chromedp.ID("signed"), string(wrong)), chromedp.Click(named("Send signature")),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent.includes("elsewhere")`, chromedp.WithPollingTimeout(10*time.Second)))
	if c := sessionCookie(t, ctx, w.URL); c != nil {
		t.Fatalf("a refused answer set %+v", c)
	}
	firstItem := `li[data-task="` + first + `"]`
	do(t, ctx, "sign in", chromedp.SetValue(chromedp.ID("signed"), string(answer)), chromedp.Click(named("Send signature")),
		chromedp.WaitVisible(chromedp.CSS(firstItem)), chromedp.WaitVisible(named("Sign out")))

	// The title was in the sealed envelope only: the page opened it.
	if got := textOf(t, ctx, "the title", firstItem+" .task-title"); got != "Pay" {
		t.Fatalf("the first task's title: %q", got)
	}
	if got := textOf(t, ctx, "the meta", firstItem+" .task-meta"); !strings.HasPrefix(got, "ledger · from "+w.Agent) {
		t.Fatalf("the first task's project and preparer: %q", got)
	}

	// The session is in the HttpOnly cookie only.
	c := sessionCookie(t, ctx, w.URL)
	if c == nil || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || !strings.HasPrefix(c.Value, "os_") {
		t.Fatalf("the session cookie: %+v", c)
	}
	token := c.Value
	seen := run(t, ctx, "what script sees", chromedp.Evaluate[string](
		`document.cookie + "|" + JSON.stringify(Object.assign({}, localStorage)) + "|" + JSON.stringify(Object.assign({}, sessionStorage))`))
	if strings.Contains(seen, token) || strings.Contains(seen, "os_") || strings.Contains(seen, "countersign_session") {
		t.Fatalf("script can read the session: %q", seen)
	}
	if got := listStatus(t, w.URL, token); got != 200 {
		t.Fatalf("the cookie's token lists: %d", got)
	}

	// After a reload the page is still signed in: the cookie, and the
	// account it remembers.
	do(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(firstItem+" .task-title")),
		chromedp.WaitVisible(named("Sign out")))
	if got := run(t, ctx, "who", chromedp.TextContent(chromedp.ID("who"))); got != w.Owner.Account {
		t.Fatalf("after a reload the page is signed in as %q", got)
	}

	// A task opened now appears without a reload (the event stream).
	second := w.Pay()
	do(t, ctx, "the second task appears", chromedp.WaitVisible(chromedp.CSS(`li[data-task="`+second+`"] .task-title`)))
	if got := textOf(t, ctx, "the second title", `li[data-task="`+second+`"] .task-title`); got != "Pay" {
		t.Fatalf("the second task's title: %q", got)
	}

	png := run(t, ctx, "a screenshot", chromedp.CaptureScreenshot())
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("the screenshot is not a PNG")
	}
	screen(t, ctx, "inbox-waiting")

	// Sign out ends the session and clears the cookie.
	signOut(t, ctx)
	if got := listStatus(t, w.URL, token); got != 401 {
		t.Fatalf("after signing out the token lists: %d", got)
	}
	if c := sessionCookie(t, ctx, w.URL); c != nil {
		t.Fatalf("after signing out the browser keeps %+v", c)
	}
}

// TestSignInAnswerChecks: the page reads a wallet's pasted answer as the
// service's body only when it answers the sentence shown, for the recipient
// shown; a nonce as an array of bytes (as JavaScript wallets print it) and a
// null callbackUrl are read as the service reads them.
func TestSignInAnswerChecks(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	const script = `(async () => {
  const cs = await import(window.BUNDLE);
  const s = {account: "alice.near", devicePubkey: "p256:KEY", validUntil: "2030-01-02T03:04:05Z",
    sentence: cs.signInSentence("alice.near", "p256:KEY", "2030-01-02T03:04:05Z"), recipient: "countersign", nonce: "N"};
  const good = {accountId: "alice.near", publicKey: "ed25519:PK", signature: "SIG", nonce: "AAAA", message: s.sentence, recipient: "countersign"};
  const out = {sentence: s.sentence, time: cs.sentenceTime(Date.UTC(2030, 0, 2, 3, 4, 5, 678))};
  const tryit = (v) => { try { return JSON.stringify(cs.signInBody(s, typeof v === "string" ? v : JSON.stringify(v))); } catch (e) { return "refused: " + e.message; } };
  out.good = tryit(good);
  out.array = tryit({...good, nonce: Array.from({length: 32}, (_, i) => i), callbackUrl: null});
  out.callback = tryit({...good, accountId: undefined, callbackUrl: "https://wallet.example/cb"});
  out.message = tryit({...good, message: s.sentence.replace("alice", "mallory")});
  out.recipient = tryit({...good, recipient: "other"});
  out.account = tryit({...good, accountId: "mallory.near"});
  out.short = tryit({...good, nonce: [1, 2, 3]});
  out.nokey = tryit({...good, publicKey: undefined});
  out.text = tryit("not json");
  return out;
})()`
	got := run(t, ctx, "signInBody", chromedp.Evaluate[map[string]string](script, chromedp.EvalAwaitPromise))
	want := map[string]string{
		"sentence": "Sign in to Countersign as alice.near. Device key: p256:KEY. Valid until 2030-01-02T03:04:05Z.",
		"time":     "2030-01-02T03:04:05Z",
		"good":     `{"account_id":"alice.near","device_pubkey":"p256:KEY","valid_until":"2030-01-02T03:04:05Z","public_key":"ed25519:PK","signature":"SIG","nonce":"AAAA"}`,
		"array":    `{"account_id":"alice.near","device_pubkey":"p256:KEY","valid_until":"2030-01-02T03:04:05Z","public_key":"ed25519:PK","signature":"SIG","nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`,
		"callback": `{"account_id":"alice.near","device_pubkey":"p256:KEY","valid_until":"2030-01-02T03:04:05Z","public_key":"ed25519:PK","signature":"SIG","nonce":"AAAA","callback_url":"https://wallet.example/cb"}`,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	for _, k := range []string{"message", "recipient", "account", "short", "nokey", "text"} {
		if !strings.HasPrefix(got[k], "refused: ") {
			t.Errorf("%s: %s, want a refusal", k, got[k])
		}
	}
}
