package web_test

// The paste panel ("Sign with another wallet") in a real Chromium against the
// whole service (servicetest on PostgreSQL): a pasted answer is sent only
// when it signs, in the page's own check, exactly the sentence, recipient and
// nonce shown, under the key the answer names. Each refusal is the
// page's sentence in its live region, no request leaves the page and the
// service shows nothing changed; then the right answer is accepted. So for
// signing in, approving and confirming.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"countersign"
	"countersign/approval"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// recordWrites records the state-changing requests the tab sends, as
// "METHOD /path".
func recordWrites(t testing.TB, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var writes []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request.Method != "GET" && e.Request.Method != "HEAD" {
			path := e.Request.URL
			if u, err := url.Parse(e.Request.URL); err == nil {
				path = u.Path
			}
			mu.Lock()
			writes = append(writes, e.Request.Method+" "+path)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), writes...)
	}
}

// shown is what a paste panel shows: the sentence, recipient and nonce.
type shown struct {
	sentence, recipient string
	nonce               approval.Nonce
}

// readShown reads the panel whose parts' ids begin with prefix ("" for the
// sign-in's, "approval-", "webhook-confirm-").
func readShown(t testing.TB, ctx context.Context, prefix string) shown {
	t.Helper()
	s := shown{sentence: textOf(t, ctx, "the sentence", "#"+prefix+"sentence"), recipient: textOf(t, ctx, "the recipient", "#"+prefix+"recipient")}
	n, err := approval.ParseNonce(textOf(t, ctx, "the nonce", "#"+prefix+"nonce"))
	if err != nil || s.sentence == "" || s.recipient == "" {
		t.Fatalf("the panel %q shows %+v: %v", prefix, s, err)
	}
	s.nonce = n
	return s
}

// answer is wallet's JSON answer signing req, with the members in change
// set (nil removes one) after signing.
func answer(t testing.TB, wallet *approval.Wallet, req approval.SignRequest, change map[string]any) string {
	t.Helper()
	signed, err := wallet.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(signed)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range change {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	return string(b)
}

// pasteCase is one pasted answer the page must refuse, and the words its
// refusal says.
type pasteCase struct {
	name   string
	answer func(s shown) string
	says   string
}

// pasteCases are the refusals every paste panel gives, for the owner's
// wallet signing what s shows.
func pasteCases(t testing.TB, w *servicetest.World) []pasteCase {
	owner := w.Owner.Signer.(device.WalletSigner).Wallet
	other, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *approval.Nonce {
		n, err := approval.NewNonce()
		if err != nil {
			t.Fatal(err)
		}
		return &n
	}
	asked := func(s shown) approval.SignRequest {
		return approval.SignRequest{Message: s.sentence, Recipient: s.recipient, Nonce: &s.nonce}
	}
	return []pasteCase{
		{"another nonce", func(s shown) string {
			return answer(t, owner, approval.SignRequest{Message: s.sentence, Recipient: s.recipient, Nonce: fresh()}, nil)
		}, "another nonce than the one shown"},
		{"a bad signature", func(s shown) string {
			signed, _ := owner.Sign(asked(s))
			sig, _ := base64.StdEncoding.DecodeString(signed.Signature)
			sig[10] ^= 0x01
			return answer(t, owner, asked(s), map[string]any{"signature": base64.StdEncoding.EncodeToString(sig)})
		}, "does not verify"},
		{"another message", func(s shown) string {
			return answer(t, owner, approval.SignRequest{Message: s.sentence + " ", Recipient: s.recipient, Nonce: &s.nonce}, nil)
		}, "another sentence than the one shown"},
		{"another message, not echoed", func(s shown) string {
			return answer(t, owner, approval.SignRequest{Message: s.sentence + " ", Recipient: s.recipient, Nonce: &s.nonce}, map[string]any{"message": nil})
		}, "does not verify"},
		{"another recipient, not echoed", func(s shown) string {
			return answer(t, owner, approval.SignRequest{Message: s.sentence, Recipient: "elsewhere", Nonce: &s.nonce}, map[string]any{"recipient": nil})
		}, "does not verify"},
		{"a signature by another key than the one named", func(s shown) string {
			signed, _ := other.Sign(asked(s))
			return answer(t, owner, asked(s), map[string]any{"signature": signed.Signature})
		}, "does not verify"},
		{"a member the page does not know", func(s shown) string {
			return answer(t, owner, asked(s), map[string]any{"nonce_shown": "yes"})
		}, "a member other than"},
	}
}

// refusePastes pastes each case's answer into the panel (its parts' ids
// begin with prefix) and checks the page refuses it with its sentence and
// sends nothing; unchanged then says the service saw nothing.
func refusePastes(t *testing.T, ctx context.Context, w *servicetest.World, prefix, submit string, writes func() []string, unchanged func(what string)) {
	t.Helper()
	for _, c := range pasteCases(t, w) {
		s := readShown(t, ctx, prefix)
		before := len(writes())
		text := c.answer(s)
		says, _ := json.Marshal(c.says)
		do(t, ctx, c.name, chromedp.Evaluate[chromedp.Void](`document.getElementById("status").textContent = ""`),
			chromedp.SetValue(chromedp.ID(prefix+"signed"), text), chromedp.Click(named(submit)))
		waitJS(t, ctx, c.name+": the refusal", `document.getElementById("status").textContent.includes(`+string(says)+`)`)
		if cls := run(t, ctx, "the status's class", chromedp.Evaluate[string](`document.getElementById("status").className`)); !strings.Contains(cls, "error") {
			t.Errorf("%s: the refusal is not shown as one: %q", c.name, cls)
		}
		if got := textOf(t, ctx, "the refusal by the button", "#"+prefix+"signed-refused:not([hidden])"); !strings.Contains(got, c.says) || !strings.HasSuffix(got, "Nothing was sent.") {
			t.Errorf("%s: beside the button the panel says %q", c.name, got)
		}
		// Give a request that was sent anyway the time to show.
		time.Sleep(300 * time.Millisecond)
		if sent := writes()[before:]; len(sent) != 0 {
			t.Errorf("%s: the page sent %v", c.name, sent)
		}
		unchanged(c.name)
		if got := readShown(t, ctx, prefix); got != s {
			t.Fatalf("%s: the panel shows %+v after the refusal, not %+v", c.name, got, s)
		}
	}
}

func TestInboxPagePastedAnswersChecked(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	owner := w.Owner.Signer.(device.WalletSigner).Wallet
	ctxb := context.Background()
	devices := func() int {
		d, err := w.Owner.Client.Devices(ctxb)
		if err != nil {
			t.Fatal(err)
		}
		return len(d)
	}
	signedIn := devices()

	ctx := blankTab(t, 360*time.Second)
	writes := recordWrites(t, ctx)
	do(t, ctx, "ask for the sentence", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"),
		chromedp.WaitVisible(named("Sign with another wallet")), chromedp.SendKeys(chromedp.ID("account"), w.Owner.Account),
		chromedp.Click(named("Sign with another wallet")), chromedp.WaitVisible(chromedp.ID("sentence")))

	// Signing in: each refused, no session made.
	refusePastes(t, ctx, w, "", "Send signature", writes, func(what string) {
		if c := sessionCookie(t, ctx, w.URL); c != nil {
			t.Fatalf("%s: the browser holds %+v", what, c)
		}
		if n := devices(); n != signedIn {
			t.Fatalf("%s: the owner has %d devices, not %d", what, n, signedIn)
		}
	})
	screen(t, ctx, "signin-paste-refused")
	s := readShown(t, ctx, "")
	do(t, ctx, "sign in", chromedp.SetValue(chromedp.ID("signed"), answer(t, owner, approval.SignRequest{Message: s.sentence, Recipient: s.recipient, Nonce: &s.nonce}, nil)),
		chromedp.Click(named("Send signature")), chromedp.WaitVisible(named("Sign out")))
	if n := devices(); n != signedIn+1 {
		t.Fatalf("after signing in the owner has %d devices", n)
	}

	// Approving: each refused, the task still open.
	pay := w.Pay()
	openCard(t, ctx, pay)
	do(t, ctx, "approve", chromedp.Click(approveButton()), chromedp.WaitVisible(chromedp.ID("approval-sentence")))
	refusePastes(t, ctx, w, "approval-", "Send approval", writes, func(what string) {
		if st := w.Task(pay); st.State != countersign.StateOpen {
			t.Fatalf("%s: the task is %s", what, st.State)
		}
	})
	screen(t, ctx, "approval-paste-refused")
	s = readShown(t, ctx, "approval-")
	do(t, ctx, "send the approval", chromedp.SetValue(chromedp.ID("approval-signed"), answer(t, owner, approval.SignRequest{Message: s.sentence, Recipient: s.recipient, Nonce: &s.nonce}, nil)),
		chromedp.Click(named("Send approval")))
	waitApproved(t, ctx)
	if st := w.WaitState(pay, countersign.StateDone, countersign.StateFailed); st.State != countersign.StateDone {
		t.Fatalf("the approved task is %s", st.State)
	}

	// Confirming: each refused, no webhook named.
	const hook = "http://127.0.0.1:9/hook"
	settingsOpen(t, ctx, "webhook")
	do(t, ctx, "name the webhook", chromedp.SendKeys(chromedp.ID("webhook-url-input"), hook), chromedp.Click(named("Name the webhook")),
		chromedp.WaitVisible(chromedp.ID("webhook-confirm-sentence")))
	refusePastes(t, ctx, w, "webhook-confirm-", "Send confirmation", writes, func(what string) {
		if wh, err := w.Owner.Client.Webhook(ctxb); err != nil || wh.URL != nil {
			t.Fatalf("%s: the webhook is %+v, %v", what, wh, err)
		}
	})
	s = readShown(t, ctx, "webhook-confirm-")
	do(t, ctx, "confirm", chromedp.SetValue(chromedp.ID("webhook-confirm-signed"), answer(t, owner, approval.SignRequest{Message: s.sentence, Recipient: s.recipient, Nonce: &s.nonce}, nil)),
		chromedp.Click(named("Send confirmation")), chromedp.WaitVisible(chromedp.ID("webhook-secret")))
	if wh, err := w.Owner.Client.Webhook(ctxb); err != nil || wh.URL == nil || *wh.URL != hook {
		t.Fatalf("after the confirmation: %+v, %v", wh, err)
	}
}
