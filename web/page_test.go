package web_test

// The inbox's page in a real Chromium against the whole service (servicetest
// on PostgreSQL): sign in with another wallet, the waiting list opened on the
// page's own device key, live updates, sign-out.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/mr-tron/base58"

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
	if got := run(t, ctx, "who", chromedp.AttributeValue(chromedp.ID("who"), "data-account")); got.Value != w.Owner.Account {
		t.Fatalf("after a reload the page is signed in as %q", got.Value)
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

// TestPastedAnswerChecks: the page reads a wallet's pasted answer as the
// service's body only when it is one JSON object of the members a wallet
// gives, with the nonce shown, the account, sentence and recipient shown
// when it names them, and a signature that verifies here over exactly that
// (with the callback URL it names, or, when it names none, with none or the
// page's address); each refusal says why. Answers a byte away from a good
// one are refused or read as the same body.
func TestPastedAnswerChecks(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	owner, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	other, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	k1, err := approval.NewSecp256k1Key(randomBytes(t, 32))
	if err != nil {
		t.Fatal(err)
	}
	secp := &approval.Wallet{AccountID: owner.AccountID, Key: k1}
	nonce, _ := approval.NewNonce()
	another, _ := approval.NewNonce()
	const recipient = "inbox.example"
	sentence := "Sign in to Countersign as " + owner.AccountID + ". Device key: p256:KEY. Valid until 2030-01-02T03:04:05Z."
	here := shared.srv.URL + "/"
	cb := "https://inbox.example/cb"
	asked := approval.SignRequest{Message: sentence, Recipient: recipient, Nonce: &nonce}
	with := func(change func(*approval.SignRequest)) approval.SignRequest {
		r := asked
		change(&r)
		return r
	}
	sig := func(w *approval.Wallet, r approval.SignRequest) string {
		signed, err := w.Sign(r)
		if err != nil {
			t.Fatal(err)
		}
		return signed.Signature
	}
	good := answer(t, owner, asked, nil)
	body := func(w *approval.Wallet, signature, callback string) string {
		m := map[string]string{"public_key": w.Key.PublicKey().String(), "signature": signature, "nonce": nonce.String()}
		if callback != "" {
			m["callback_url"] = callback
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	goodBody := body(owner, sig(owner, asked), "")
	raw, _ := base64.StdEncoding.DecodeString(sig(owner, asked))
	flipped := bytes.Clone(raw)
	flipped[0] ^= 0x80
	bytesOf := func(n approval.Nonce) []int {
		out := make([]int, len(n))
		for i, b := range n {
			out[i] = int(b)
		}
		return out
	}
	type answerCase struct {
		name, text, want string
	}
	cases := []answerCase{
		{"as printed", good, goodBody},
		{"the nonce as bytes, a null callbackUrl, state", answer(t, owner, asked, map[string]any{"nonce": bytesOf(nonce), "callbackUrl": json.RawMessage("null"), "state": "s"}), goodBody},
		{"no accountId, message or recipient", answer(t, owner, asked, map[string]any{"accountId": nil, "message": nil, "recipient": nil}), goodBody},
		{"a null accountId", answer(t, owner, asked, map[string]any{"accountId": json.RawMessage("null")}), goodBody},
		{"the signature as ed25519:base58", answer(t, owner, asked, map[string]any{"signature": "ed25519:" + base58.Encode(raw)}), body(owner, "ed25519:"+base58.Encode(raw), "")},
		{"a callbackUrl named and signed", answer(t, owner, with(func(r *approval.SignRequest) { r.CallbackURL = &cb }), nil),
			body(owner, sig(owner, with(func(r *approval.SignRequest) { r.CallbackURL = &cb })), cb)},
		{"the page's address signed, not named", answer(t, owner, with(func(r *approval.SignRequest) { r.CallbackURL = &here }), map[string]any{"callbackUrl": nil}),
			body(owner, sig(owner, with(func(r *approval.SignRequest) { r.CallbackURL = &here })), here)},
		{"a secp256k1 key, sent as signed", answer(t, secp, asked, nil), body(secp, sig(secp, asked), "")},

		{"another nonce", answer(t, owner, with(func(r *approval.SignRequest) { r.Nonce = &another }), nil), "refused: The wallet signed another nonce than the one shown here"},
		{"another nonce as bytes", answer(t, owner, with(func(r *approval.SignRequest) { r.Nonce = &another }), map[string]any{"nonce": bytesOf(another)}), "refused: The wallet signed another nonce"},
		{"a nonce of 3 bytes", answer(t, owner, asked, map[string]any{"nonce": []int{1, 2, 3}}), "refused: The wallet's nonce is not base64 of 32 bytes"},
		{"a nonce byte of 256", answer(t, owner, asked, map[string]any{"nonce": append(bytesOf(nonce)[:31], 256)}), "refused: The wallet's nonce is not base64 of 32 bytes"},
		{"a nonce without padding", answer(t, owner, asked, map[string]any{"nonce": strings.TrimRight(nonce.String(), "=")}), "refused: The wallet's nonce is not base64 of 32 bytes"},
		{"a nonce as a number", answer(t, owner, asked, map[string]any{"nonce": 7}), "refused: The wallet's nonce is not base64 of 32 bytes"},
		{"no nonce", answer(t, owner, asked, map[string]any{"nonce": nil}), "refused: The wallet's answer has no nonce."},
		{"another sentence named", answer(t, owner, with(func(r *approval.SignRequest) { r.Message += " " }), nil), "refused: The wallet signed another sentence than the one shown here."},
		{"another sentence signed, not named", answer(t, owner, with(func(r *approval.SignRequest) { r.Message += " " }), map[string]any{"message": nil}), "refused: The wallet's signature does not verify"},
		{"another recipient named", answer(t, owner, with(func(r *approval.SignRequest) { r.Recipient = "elsewhere" }), nil), "refused: The wallet signed for the recipient elsewhere, not " + recipient + "."},
		{"another recipient signed, not named", answer(t, owner, with(func(r *approval.SignRequest) { r.Recipient = "elsewhere" }), map[string]any{"recipient": nil}), "refused: The wallet's signature does not verify"},
		{"another account named", answer(t, owner, asked, map[string]any{"accountId": "mallory.near"}), "refused: The wallet signed as mallory.near, not " + owner.AccountID + "."},
		{"a bad signature", answer(t, owner, asked, map[string]any{"signature": base64.StdEncoding.EncodeToString(flipped)}), "refused: The wallet's signature does not verify"},
		{"a signature by another key than the one named", answer(t, owner, asked, map[string]any{"signature": sig(other, asked)}), "refused: The wallet's signature does not verify"},
		{"a callbackUrl named, not signed", answer(t, owner, asked, map[string]any{"callbackUrl": cb}), "refused: The wallet's signature does not verify for the sentence, recipient and nonce shown with the callbackUrl it names."},
		{"a null callbackUrl, one signed", answer(t, owner, with(func(r *approval.SignRequest) { r.CallbackURL = &cb }), map[string]any{"callbackUrl": json.RawMessage("null")}), "refused: The wallet's signature does not verify"},
		{"a callbackUrl as a number", answer(t, owner, asked, map[string]any{"callbackUrl": 1}), "refused: The wallet's callbackUrl is not text."},
		{"a signature of 63 bytes", answer(t, owner, asked, map[string]any{"signature": base64.StdEncoding.EncodeToString(raw[:63])}), "refused: The wallet's signature is not 64 bytes"},
		{"a signature not base64", answer(t, owner, asked, map[string]any{"signature": "%%%"}), "refused: The wallet's signature is not 64 bytes"},
		{"a key of another type", answer(t, owner, asked, map[string]any{"publicKey": "rsa:" + base58.Encode(raw[:32])}), "refused: The wallet's key is neither an ed25519 nor a secp256k1 key."},
		{"a key of 31 bytes", answer(t, owner, asked, map[string]any{"publicKey": "ed25519:" + base58.Encode(raw[:31])}), "refused: The wallet's publicKey is not ed25519:"},
		{"no publicKey", answer(t, owner, asked, map[string]any{"publicKey": nil}), "refused: The wallet's answer has no publicKey."},
		{"no signature", answer(t, owner, asked, map[string]any{"signature": ""}), "refused: The wallet's answer has no signature."},
		{"a message as a number", answer(t, owner, asked, map[string]any{"message": 1}), "refused: The wallet's message is not text."},
		{"a member the page does not know", answer(t, owner, asked, map[string]any{"nonce_shown": true}), "refused: The wallet's answer has a member other than"},
		{"a __proto__ member", strings.Replace(good, "{", `{"__proto__": {"x": 1},`, 1), "refused: The wallet's answer has a member other than"},
		{"an array", "[" + good + "]", "refused: The wallet's answer is not a JSON object."},
		{"null", "null", "refused: The wallet's answer is not a JSON object."},
		{"two objects", good + good, "refused: The wallet's answer is not JSON."},
		{"text", "signed!", "refused: The wallet's answer is not JSON."},
		{"longer than 64 KiB", strings.Repeat(" ", 64<<10) + good, "refused: The wallet's answer is longer than 64 KiB."},
	}
	// Answers a byte away from the good one: a character replaced by another
	// printable one.
	mr := mathrand.New(mathrand.NewPCG(1, 2))
	var near []string
	for range 300 {
		b := []byte(good)
		b[mr.IntN(len(b))] = byte(' ' + mr.IntN(95))
		near = append(near, string(b))
	}
	texts := make([]string, 0, len(cases)+len(near))
	for _, c := range cases {
		texts = append(texts, c.text)
	}
	texts = append(texts, near...)
	req, _ := json.Marshal(map[string]string{"account": owner.AccountID, "sentence": sentence, "recipient": recipient, "nonce": nonce.String()})
	in, _ := json.Marshal(texts)
	got := run(t, ctx, "pasted", chromedp.Evaluate[[]string](`(async () => {
  const cs = await import(window.BUNDLE);
  const r = `+string(req)+`;
  const req = {account: r.account, sentence: r.sentence, recipient: r.recipient, nonce: cs.fromBase64(r.nonce)};
  return Promise.all(`+string(in)+`.map((text) => cs.pasted(req, text).then((b) => JSON.stringify(b), (e) => "refused: " + e.message)));
})()`, chromedp.EvalAwaitPromise))
	if len(got) != len(texts) {
		t.Fatalf("%d answers for %d texts", len(got), len(texts))
	}
	// sameBody: a and b are the same JSON object of strings.
	sameBody := func(a, b string) bool {
		var x, y map[string]string
		return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && maps.Equal(x, y)
	}
	for i, c := range cases {
		if strings.HasPrefix(c.want, "refused: ") && !strings.HasPrefix(got[i], c.want) || !strings.HasPrefix(c.want, "refused: ") && !sameBody(got[i], c.want) {
			t.Errorf("%s: %s, want %s", c.name, got[i], c.want)
		}
	}
	same := 0
	for i, text := range near {
		g := got[len(cases)+i]
		switch {
		case sameBody(g, goodBody):
			same++
		case !strings.HasPrefix(g, "refused: "):
			t.Errorf("the answer %s was read as %s", text, g)
		}
	}
	if same == len(near) {
		t.Errorf("%d of %d answers a byte away were read as the good one", same, len(near))
	}
}
