package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/httpapi"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// browserReq sends a request as the web page would: with the session
// cookie (if any) and the Origin it names (if any).
func browserReq(t *testing.T, w *servicetest.World, method, path, origin string, cookie *http.Cookie, body any) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp, m
}

// signInBody is a signed sign-in request of a new device of wallet.
func browserSignIn(t *testing.T, w *servicetest.World, wallet *approval.Wallet) client.SignInRequest {
	t.Helper()
	d := w.Device(wallet)
	validUntil := w.Clock.Now().Add(time.Hour)
	sentence, err := approval.SignIn{Account: d.Account, DeviceKey: d.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := d.Signer.Sign(sentence, w.Inbox.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	return client.SignInRequest{AccountID: d.Account, DevicePubkey: d.Pubkey(), ValidUntil: validUntil.Format(approval.TimeLayout), Signed: signed}
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "countersign_session" {
			return c
		}
	}
	return nil
}

// TestBrowserSession: SPEC §6's browser session. A sign-in from the public
// origin also sets the HttpOnly, SameSite=Strict cookie (not Secure on a
// loopback http origin), expiring with the session; the cookie
// authenticates reads; a change made with it needs the public origin in
// Origin (403 origin_refused otherwise); cookie and bearer together are
// 400, and so are two session cookies; signing out clears it and ends it.
func TestBrowserSession(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	page := w.URL // the public origin of the test server

	resp, _ := browserReq(t, w, "POST", "/inbox/session", "", nil, browserSignIn(t, w, wallet))
	if resp.StatusCode != 200 || sessionCookie(resp) != nil {
		t.Fatalf("a sign-in from no page: %d, cookie %v", resp.StatusCode, sessionCookie(resp))
	}
	resp, _ = browserReq(t, w, "POST", "/inbox/session", "https://evil.example", nil, browserSignIn(t, w, wallet))
	if resp.StatusCode != 200 || sessionCookie(resp) != nil {
		t.Fatalf("a sign-in from another origin: %d, cookie %v", resp.StatusCode, sessionCookie(resp))
	}
	resp, body := browserReq(t, w, "POST", "/inbox/session", page, nil, browserSignIn(t, w, wallet))
	c := sessionCookie(resp)
	if resp.StatusCode != 200 || c == nil {
		t.Fatalf("a sign-in from the page: %d %v, no cookie", resp.StatusCode, body)
	}
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/", "Expires="} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if strings.Contains(set, "Secure") {
		t.Errorf("Set-Cookie %q is Secure on a loopback http origin", set)
	}
	if c.Value != body["token"] {
		t.Errorf("the cookie does not carry the session's token")
	}
	cookie := &http.Cookie{Name: c.Name, Value: c.Value}

	if resp, body := browserReq(t, w, "GET", "/inbox/devices", "", cookie, nil); resp.StatusCode != 200 {
		t.Fatalf("a read with the cookie: %d %v", resp.StatusCode, body)
	}
	for name, origin := range map[string]string{"no Origin": "", "another origin": "https://evil.example", "null": "null"} {
		resp, body := browserReq(t, w, "POST", "/inbox/unlock", origin, cookie, map[string]any{})
		if resp.StatusCode != 403 || body["reason"] != "origin_refused" {
			t.Errorf("a change with the cookie and %s: %d %v", name, resp.StatusCode, body)
		}
	}
	if resp, body := browserReq(t, w, "POST", "/inbox/unlock", page, cookie, map[string]any{}); resp.StatusCode != 200 {
		t.Fatalf("a change with the cookie from the page: %d %v", resp.StatusCode, body)
	}
	// Cookie and bearer together.
	req, _ := http.NewRequest("GET", w.URL+"/inbox/devices", nil)
	req.AddCookie(cookie)
	req.Header.Set("Authorization", "Bearer "+w.Owner.Client.Session)
	both, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	both.Body.Close()
	if both.StatusCode != 400 {
		t.Errorf("cookie and bearer together: %d", both.StatusCode)
	}
	// A second session cookie (as a page on another port of the host sets
	// one with Path=/inbox, which the browser sends beside the owner's):
	// refused, whoever's it is.
	tossed := w.NewOwner()
	for name, extra := range map[string]*http.Cookie{
		"another session's":       {Name: c.Name, Value: tossed.Client.Session},
		"the same one again":      {Name: c.Name, Value: c.Value},
		"under the prefixed name": {Name: "__Host-countersign_session", Value: tossed.Client.Session},
	} {
		req, _ := http.NewRequest("GET", w.URL+"/inbox/tasks", nil)
		req.AddCookie(extra)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 400 || body["reason"] != "invalid_request" {
			t.Errorf("two session cookies, %s: %d %v", name, resp.StatusCode, body)
		}
	}
	// The event stream takes the cookie (a browser's EventSource sends no
	// header of its own).
	req, _ = http.NewRequest("GET", w.URL+"/inbox/events", nil)
	req.AddCookie(cookie)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if stream.StatusCode != 200 || !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("events with the cookie: %d %s", stream.StatusCode, stream.Header.Get("Content-Type"))
	}

	// Signing out clears the cookie and ends the session.
	resp, body = browserReq(t, w, "DELETE", "/inbox/session", page, cookie, nil)
	if resp.StatusCode != 200 || body["revoked"] != true {
		t.Fatalf("sign-out with the cookie: %d %v", resp.StatusCode, body)
	}
	if cleared := sessionCookie(resp); cleared == nil || cleared.MaxAge >= 0 && cleared.Value != "" {
		t.Errorf("sign-out does not clear the cookie: %v", resp.Header.Get("Set-Cookie"))
	}
	// The stream ended with its session.
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stream.Body); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the cookie's event stream outlived its session")
	}
	stream.Body.Close()
	if resp, body := browserReq(t, w, "GET", "/inbox/devices", "", cookie, nil); resp.StatusCode != 401 {
		t.Errorf("the cookie after sign-out: %d %v", resp.StatusCode, body)
	}
}

// TestSecureSessionCookie: SPEC §6. On a public origin where the
// cookie is Secure (here https://inbox.example, configured with its
// default port, which the browser's Origin never names), a sign-in from the
// page sets __Host-countersign_session (Secure, HttpOnly, SameSite=Strict,
// Path=/, no Domain) and clears the cookie by the plain name; that cookie
// authenticates; one by the plain name does not; and a request carrying
// more than one session cookie, of either name, is refused 400.
func TestSecureSessionCookie(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	api := httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Inbox: w.Inbox, PublicURL: "https://inbox.example:443"})
	const page = "https://inbox.example"
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	do := func(method, path, origin string, body any, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req := httptest.NewRequest(method, path, rd)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec
	}
	rec := do("POST", "/inbox/session", page, browserSignIn(t, w, wallet))
	var set, cleared *http.Cookie
	for _, c := range rec.Result().Cookies() {
		switch c.Name {
		case "__Host-countersign_session":
			set = c
		case "countersign_session":
			cleared = c
		}
	}
	if rec.Code != 200 || set == nil {
		t.Fatalf("a sign-in from the page: %d %s, cookies %v", rec.Code, rec.Body, rec.Header().Values("Set-Cookie"))
	}
	if !set.Secure || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.Path != "/" || set.Domain != "" || set.Expires.IsZero() {
		t.Errorf("the session cookie: %s", set.Raw)
	}
	if cleared == nil || cleared.MaxAge >= 0 || cleared.Value != "" || cleared.Path != "/" {
		t.Errorf("the cookie by the plain name is not cleared: %v", rec.Header().Values("Set-Cookie"))
	}
	owners := &http.Cookie{Name: set.Name, Value: set.Value}
	if rec := do("GET", "/inbox/tasks", "", nil, owners); rec.Code != 200 {
		t.Fatalf("a read with the cookie: %d %s", rec.Code, rec.Body)
	}
	if rec := do("POST", "/inbox/unlock", page, map[string]any{}, owners); rec.Code != 200 {
		t.Fatalf("a change with the cookie from the page: %d %s", rec.Code, rec.Body)
	}
	if rec := do("GET", "/inbox/tasks", "", nil, &http.Cookie{Name: "countersign_session", Value: set.Value}); rec.Code != 401 {
		t.Errorf("the token under the plain name on a secure origin: %d %s", rec.Code, rec.Body)
	}
	tossed := w.NewOwner().Client.Session
	for name, cookies := range map[string][]*http.Cookie{
		"another session under the prefixed name": {{Name: set.Name, Value: tossed}, owners},
		"another session under the plain name":    {{Name: "countersign_session", Value: tossed}, owners},
		"the owner's, twice":                      {owners, owners},
		"three":                                   {owners, {Name: set.Name, Value: tossed}, {Name: "countersign_session", Value: tossed}},
		"two under the plain name":                {{Name: "countersign_session", Value: tossed}, {Name: "countersign_session", Value: set.Value}},
	} {
		rec := do("GET", "/inbox/tasks", "", nil, cookies...)
		var body map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != 400 || body["reason"] != "invalid_request" {
			t.Errorf("%s: %d %v", name, rec.Code, body)
		}
	}
	rec = do("DELETE", "/inbox/session", page, nil, owners)
	if rec.Code != 200 {
		t.Fatalf("sign-out: %d %s", rec.Code, rec.Body)
	}
	names := map[string]bool{}
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			names[c.Name] = true
		}
	}
	if !names["__Host-countersign_session"] || !names["countersign_session"] {
		t.Errorf("sign-out clears %v", rec.Header().Values("Set-Cookie"))
	}
}
