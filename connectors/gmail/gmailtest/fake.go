// Package gmailtest is a local fake of the parts of Google's APIs the gmail
// connector uses: the OAuth2 token endpoint (refresh-token grant) and three
// Gmail calls, users.messages.send, .list and .get, with Google's error
// shapes ({"error": {"code", "message", "status"}} for Gmail, {"error",
// "error_description"} for the token endpoint). Tests, serve --dev and
// `countersign sandbox gmail` run it. The messages it was sent are kept with
// their raw bytes, readable through the same API (format=raw).
package gmailtest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The seeded fake's OAuth client and refresh token.
const (
	ClientID     = "countersign-sandbox.apps.googleusercontent.com"
	ClientSecret = "sandbox-client-secret"
	RefreshToken = "1//sandbox-refresh-token"
)

// Message is a message in the fake mailbox.
type Message struct {
	ID       string
	ThreadID string
	Labels   []string
	Raw      []byte
	Date     time.Time // Gmail's internalDate: when the message was received or sent
	History  int       // Gmail's historyId
}

// Fake is the fake Google. Use New.
type Fake struct {
	mu       sync.Mutex
	refresh  map[string]bool // refresh tokens that are valid
	access   map[string]bool // access tokens issued
	messages []*Message
	failSend int // the next sends answered failCode, unsent
	failCode int
	srv      *httptest.Server
}

// New returns a fake whose mailbox holds one received message, and which
// accepts RefreshToken for ClientID.
func New() *Fake {
	f := &Fake{refresh: map[string]bool{RefreshToken: true}, access: map[string]bool{}}
	f.messages = []*Message{{ID: "18c0000000000001", ThreadID: "18c0000000000001", Labels: []string{"INBOX", "UNREAD"},
		Date: time.Date(2026, 11, 30, 9, 12, 0, 0, time.UTC), History: 1001,
		Raw: []byte("From: Dana <dana@example.com>\r\nTo: me@example.com\r\nSubject: Lunch on Friday?\r\nDate: Mon, 30 Nov 2026 09:12:00 +0000\r\n" +
			"Content-Type: text/plain; charset=\"UTF-8\"\r\n\r\nAre you free for lunch on Friday?\r\n")}}
	return f
}

// Start serves the fake on a loopback port until Close.
func (f *Fake) Start() *Fake {
	f.srv = httptest.NewServer(f)
	return f
}

// Serve serves the fake on l (countersign sandbox gmail).
func (f *Fake) Serve(l net.Listener) error { return http.Serve(l, f) }

// URL is the Gmail API's base URL; TokenURL is the token endpoint's.
func (f *Fake) URL() string      { return f.srv.URL }
func (f *Fake) TokenURL() string { return f.srv.URL + "/token" }

// Close stops a started fake.
func (f *Fake) Close() {
	if f.srv != nil {
		f.srv.Close()
	}
}

// Revoke makes a refresh token invalid, as an expired or revoked one is.
func (f *Fake) Revoke(refreshToken string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.refresh, refreshToken)
}

// FailNextSends makes the next n sends answer code without sending.
func (f *Fake) FailNextSends(n, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failSend, f.failCode = n, code
}

// Sent returns the raw bytes of every message sent, oldest first.
func (f *Fake) Sent() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, m := range f.messages {
		if slices.Contains(m.Labels, "SENT") {
			out = append(out, bytes.Clone(m.Raw))
		}
	}
	return out
}

// ServeHTTP answers the token endpoint and the Gmail API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		f.token(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/gmail/v1/users/me/")
	if !ok {
		gmailError(w, http.StatusNotFound, "Not Found", "NOT_FOUND")
		return
	}
	auth, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.access[auth] {
		gmailError(w, http.StatusUnauthorized, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "UNAUTHENTICATED")
		return
	}
	switch {
	case r.Method == http.MethodPost && rest == "messages/send":
		f.send(w, r)
	case r.Method == http.MethodGet && rest == "messages":
		f.list(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(rest, "messages/"):
		f.get(w, r, strings.TrimPrefix(rest, "messages/"))
	default:
		gmailError(w, http.StatusNotFound, "Not Found", "NOT_FOUND")
	}
}

func (f *Fake) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "Bad Request")
		return
	}
	if r.PostForm.Get("client_id") != ClientID || r.PostForm.Get("client_secret") != ClientSecret {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
		return
	}
	if r.PostForm.Get("grant_type") != "refresh_token" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.refresh[r.PostForm.Get("refresh_token")] {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
		return
	}
	tok := "ya29.sandbox-" + randomHex(16)
	f.access[tok] = true
	reply(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": 3599, "scope": "https://www.googleapis.com/auth/gmail.send", "token_type": "Bearer"})
}

func (f *Fake) send(w http.ResponseWriter, r *http.Request) {
	if f.failSend > 0 {
		f.failSend--
		status := map[int]string{429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[f.failCode]
		gmailError(w, f.failCode, "The service is currently unavailable.", status)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 48<<20))
	var in struct {
		Raw      string `json:"raw"`
		ThreadID string `json:"threadId"`
	}
	if err != nil || json.Unmarshal(body, &in) != nil {
		gmailError(w, http.StatusBadRequest, "Invalid JSON payload received.", "INVALID_ARGUMENT")
		return
	}
	raw, err := base64.URLEncoding.DecodeString(in.Raw)
	if err != nil {
		raw, err = base64.RawURLEncoding.DecodeString(in.Raw)
	}
	if err != nil || in.Raw == "" {
		gmailError(w, http.StatusBadRequest, "Invalid value for ByteString: "+cut(in.Raw, 20), "INVALID_ARGUMENT")
		return
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		gmailError(w, http.StatusBadRequest, "Invalid message: the raw bytes are not an RFC 5322 message", "INVALID_ARGUMENT")
		return
	}
	n := 0
	for _, h := range []string{"To", "Cc", "Bcc"} {
		if v := msg.Header.Get(h); v != "" {
			list, err := mail.ParseAddressList(v)
			if err != nil {
				gmailError(w, http.StatusBadRequest, "Invalid "+h+" header", "INVALID_ARGUMENT")
				return
			}
			n += len(list)
		}
	}
	if n == 0 {
		gmailError(w, http.StatusBadRequest, "Recipient address required", "INVALID_ARGUMENT")
		return
	}
	id := randomHex(8)
	thread := in.ThreadID
	if thread == "" {
		thread = id
	}
	f.messages = append(f.messages, &Message{ID: id, ThreadID: thread, Labels: []string{"SENT"}, Raw: raw, Date: time.Now(), History: 1001 + len(f.messages)})
	reply(w, http.StatusOK, map[string]any{"id": id, "threadId": thread, "labelIds": []string{"SENT"}})
}

func (f *Fake) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	max := 100
	if s := q.Get("maxResults"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			gmailError(w, http.StatusBadRequest, "Invalid maxResults", "INVALID_ARGUMENT")
			return
		}
		max = n
	}
	label := ""
	if strings.HasPrefix(q.Get("q"), "in:") {
		label = strings.ToUpper(strings.TrimPrefix(q.Get("q"), "in:"))
	}
	out := []map[string]string{}
	for i := len(f.messages) - 1; i >= 0 && len(out) < max; i-- {
		m := f.messages[i]
		if label != "" && !slices.Contains(m.Labels, label) {
			continue
		}
		out = append(out, map[string]string{"id": m.ID, "threadId": m.ThreadID})
	}
	body := map[string]any{"resultSizeEstimate": len(out)}
	if len(out) > 0 {
		body["messages"] = out // Gmail leaves the member out when nothing matches
	}
	reply(w, http.StatusOK, body)
}

func (f *Fake) get(w http.ResponseWriter, r *http.Request, id string) {
	var m *Message
	for _, x := range f.messages {
		if x.ID == id {
			m = x
		}
	}
	if m == nil {
		gmailError(w, http.StatusNotFound, "Requested entity was not found.", "NOT_FOUND")
		return
	}
	out := map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.Labels, "sizeEstimate": len(m.Raw),
		"historyId": strconv.Itoa(m.History), "internalDate": strconv.FormatInt(m.Date.UnixMilli(), 10)}
	switch format := r.URL.Query().Get("format"); format {
	case "raw":
		out["raw"] = base64.URLEncoding.EncodeToString(m.Raw)
	case "", "full", "metadata", "minimal":
		msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
		if err == nil && format != "minimal" {
			var headers []map[string]string
			for _, h := range []string{"From", "To", "Cc", "Subject", "Date"} {
				if v := msg.Header.Get(h); v != "" {
					headers = append(headers, map[string]string{"name": h, "value": v})
				}
			}
			out["payload"] = map[string]any{"mimeType": msg.Header.Get("Content-Type"), "headers": headers}
			b, _ := io.ReadAll(io.LimitReader(msg.Body, 200))
			out["snippet"] = strings.TrimSpace(string(b))
		}
	default:
		gmailError(w, http.StatusBadRequest, "Invalid value at 'format'", "INVALID_ARGUMENT")
		return
	}
	reply(w, http.StatusOK, out)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func gmailError(w http.ResponseWriter, code int, message, status string) {
	reply(w, code, map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}

func tokenError(w http.ResponseWriter, code int, e, description string) {
	reply(w, code, map[string]string{"error": e, "error_description": description})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
