// Package webpushtest is a fake push service for tests: it hands out
// subscriptions as a browser's push service would (an endpoint on itself, a
// P-256 key pair and an auth secret it keeps the private halves of), and
// for every push it receives it checks what a real push service and the
// browser check — the VAPID JWT (ES256 under the k= key the subscription
// was made with, aud its own origin, exp in the future and at most 24
// hours ahead, sub mailto: or https), the TTL, Urgency and Topic headers,
// the aes128gcm body (RFC 8188, RFC 8291), decrypted with the
// subscription's private key, the padding delimiter required — and keeps
// the plaintext. It answers as scripted (201 by default; 404 or 410 once a
// subscription is dropped).
//
// It uses the standard library only and shares no code with the sender it
// tests: a fake that decrypted with the code under test could not catch
// its mistakes.
package webpushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Subscription is what a browser gets from PushManager.subscribe, as its
// toJSON gives it, and the id the fake knows it by.
type Subscription struct {
	ID       string
	Endpoint string
	P256dh   string // unpadded base64url of the 65-byte public key
	Auth     string // unpadded base64url of 16 bytes
}

// Push is one push the fake received.
type Push struct {
	Subscription string // its id ("" when the path named none)
	At           time.Time
	Status       int // what the fake answered
	// Problem is "" when every check passed; else what failed.
	Problem string
	// Plaintext is the decrypted payload, the delimiter and padding
	// removed.
	Plaintext []byte
	BodyBytes int
	// Header is the request's headers; HeaderBytes their size on the wire
	// (name: value\r\n each).
	Header      http.Header
	HeaderBytes int
	TTL         int
	Urgency     string
	Topic       string
	// Aud, Sub and Exp are the VAPID JWT's claims; Key is its k=.
	Aud, Sub string
	Exp      time.Time
	Key      string
}

type sub struct {
	priv    *ecdh.PrivateKey
	auth    []byte
	appKey  string
	gone    int   // 0: live; else the status a push now gets (404 or 410)
	answers []int // scripted statuses, first first; then 201
}

// Server is the fake push service.
type Server struct {
	// URL is its origin (http://127.0.0.1:port, or https with NewTLS).
	URL string
	srv *httptest.Server

	mu     sync.Mutex
	subs   map[string]*sub
	pushes []Push
	signal chan struct{}
}

// New starts a fake push service over plain http on loopback.
func New(t testing.TB) *Server { return start(t, false) }

// NewTLS starts it over https; Certificate is its certificate, to trust.
func NewTLS(t testing.TB) *Server { return start(t, true) }

func start(t testing.TB, tlsOn bool) *Server {
	t.Helper()
	s := &Server{subs: map[string]*sub{}, signal: make(chan struct{})}
	h := http.HandlerFunc(s.serve)
	if tlsOn {
		s.srv = httptest.NewTLSServer(h)
	} else {
		s.srv = httptest.NewServer(h)
	}
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// TLS is the https server's client configuration (nil over http).
func (s *Server) TLS() *tls.Config {
	if s.srv.TLS == nil {
		return nil
	}
	return s.srv.Client().Transport.(*http.Transport).TLSClientConfig
}

// Server is the underlying test server.
func (s *Server) Server() *httptest.Server { return s.srv }

// Subscribe makes a subscription for the application server key appKey
// (unpadded base64url of the VAPID public key); pushes signed with another
// key are refused 403, as push services do.
func (s *Server) Subscribe(appKey string) Subscription {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	var idb [12]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	s.mu.Lock()
	s.subs[id] = &sub{priv: priv, auth: auth, appKey: appKey}
	s.mu.Unlock()
	enc := base64.RawURLEncoding
	return Subscription{ID: id, Endpoint: s.URL + "/push/" + id, P256dh: enc.EncodeToString(priv.PublicKey().Bytes()), Auth: enc.EncodeToString(auth)}
}

// Answer scripts the statuses the next pushes to a subscription get, in
// order; after them, 201.
func (s *Server) Answer(id string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.subs[id]; x != nil {
		x.answers = append(x.answers, statuses...)
	}
}

// Drop ends a subscription: every later push to it gets status (404 or
// 410), as when the browser unsubscribed.
func (s *Server) Drop(id string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.subs[id]; x != nil {
		x.gone = status
	}
}

// Pushes are the pushes received so far, in order.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// Wait waits until n pushes arrived, or timeout; it returns those there are.
func (s *Server) Wait(n int, timeout time.Duration) []Push {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, ch := len(s.pushes), s.signal
		s.mu.Unlock()
		if got >= n {
			return s.Pushes()
		}
		select {
		case <-ch:
		case <-deadline:
			return s.Pushes()
		}
	}
}

var pushPath = regexp.MustCompile(`^/push/([0-9a-f]{24})$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	p := Push{At: time.Now(), BodyBytes: len(body), Header: r.Header.Clone(), HeaderBytes: headerBytes(r)}
	m := pushPath.FindStringSubmatch(r.URL.Path)
	s.mu.Lock()
	var x *sub
	if m != nil {
		p.Subscription = m[1]
		x = s.subs[m[1]]
	}
	status := http.StatusCreated
	switch {
	case r.Method != http.MethodPost:
		status, p.Problem = http.StatusMethodNotAllowed, "not a POST"
	case x == nil:
		status, p.Problem = http.StatusNotFound, "no such subscription"
	case x.gone != 0:
		status, p.Problem = x.gone, "the subscription was dropped"
	default:
		var err error
		if p.Problem = s.checkHeaders(r, x, &p); p.Problem != "" {
			status = http.StatusBadRequest
			if strings.HasPrefix(p.Problem, "vapid") {
				status = http.StatusForbidden
			}
		} else if p.Plaintext, err = decrypt(body, x.priv, x.auth); err != nil {
			status, p.Problem = http.StatusBadRequest, "body: "+err.Error()
		} else if len(x.answers) > 0 {
			status, x.answers = x.answers[0], x.answers[1:]
		}
	}
	p.Status = status
	s.pushes = append(s.pushes, p)
	close(s.signal)
	s.signal = make(chan struct{})
	s.mu.Unlock()
	if status == http.StatusCreated {
		w.Header().Set("Location", s.URL+"/message/"+strconv.Itoa(len(body)))
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
}

// headerBytes is the size of a request's headers as HTTP/1.1 writes them.
func headerBytes(r *http.Request) int {
	n := 0
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + len("Host: ") + len(r.Host) + 2
}

var topicChars = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// checkHeaders checks the headers and the VAPID JWT as a push service
// does, filling p; it returns "" or the problem.
func (s *Server) checkHeaders(r *http.Request, x *sub, p *Push) string {
	h := r.Header
	if h.Get("Content-Encoding") != "aes128gcm" {
		return "Content-Encoding is not aes128gcm"
	}
	ttl, err := strconv.Atoi(h.Get("TTL"))
	if err != nil || ttl < 0 {
		return "TTL is missing or not a number of seconds"
	}
	p.TTL = ttl
	p.Urgency = h.Get("Urgency")
	switch p.Urgency {
	case "", "very-low", "low", "normal", "high":
	default:
		return "Urgency is not one of RFC 8030's"
	}
	if vs := h.Values("Topic"); len(vs) > 0 {
		if len(vs) > 1 || !topicChars.MatchString(vs[0]) {
			return "Topic is not at most 32 base64url characters"
		}
		p.Topic = vs[0]
	}
	return s.checkVAPID(h.Get("Authorization"), x, p)
}

func (s *Server) checkVAPID(auth string, x *sub, p *Push) string {
	rest, ok := strings.CutPrefix(auth, "vapid ")
	if !ok {
		return "vapid: Authorization is not vapid t=…, k=…"
	}
	var token string
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.TrimSpace(part)
		switch {
		case strings.HasPrefix(part, "t="):
			token = part[2:]
		case strings.HasPrefix(part, "k="):
			p.Key = part[2:]
		default:
			return "vapid: an unknown parameter in Authorization"
		}
	}
	if token == "" || p.Key == "" {
		return "vapid: t= or k= is missing"
	}
	if p.Key != x.appKey {
		return "vapid: k= is not the key the subscription was made with"
	}
	enc := base64.RawURLEncoding
	kb, err := enc.DecodeString(p.Key)
	if err != nil {
		return "vapid: k= is not base64url"
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), kb)
	if err != nil {
		return "vapid: k= is not an uncompressed P-256 point on the curve"
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "vapid: the JWT does not have three parts"
	}
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) != 64 {
		return "vapid: the JWT is not base64url, or its signature is not 64 bytes"
	}
	var head struct{ Alg, Typ string }
	if json.Unmarshal(hb, &head) != nil || head.Alg != "ES256" {
		return "vapid: the JWT's alg is not ES256"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "vapid: the JWT's signature does not verify under k="
	}
	var claims struct {
		Aud string `json:"aud"`
		Exp *int64 `json:"exp"`
		Sub string `json:"sub"`
	}
	if json.Unmarshal(cb, &claims) != nil || claims.Exp == nil {
		return "vapid: the JWT's claims are not {aud, exp, sub}"
	}
	p.Aud, p.Sub, p.Exp = claims.Aud, claims.Sub, time.Unix(*claims.Exp, 0)
	now := time.Now()
	switch {
	case claims.Aud != s.URL:
		return fmt.Sprintf("vapid: aud is %q, not the push service's origin", claims.Aud)
	case !p.Exp.After(now):
		return "vapid: exp has passed"
	case p.Exp.After(now.Add(24 * time.Hour)):
		return "vapid: exp is more than 24 hours ahead"
	case !strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "https://"):
		return "vapid: sub is neither mailto: nor https:"
	}
	return ""
}

// decrypt opens an aes128gcm body (RFC 8188) encrypted for (priv, auth)
// per RFC 8291, as the browser does.
func decrypt(body []byte, priv *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	if len(body) > 4096 {
		return nil, errors.New("longer than the 4,096 bytes a push service must take")
	}
	if len(body) < 21 {
		return nil, errors.New("shorter than its header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen+16 {
		return nil, errors.New("keyid is not a 65-byte point")
	}
	keyid, ct := body[21:21+idlen], body[21+idlen:]
	if rs < 18 || uint32(len(ct)) > rs {
		return nil, errors.New("not one record of at most rs bytes")
	}
	as, err := ecdh.P256().NewPublicKey(keyid)
	if err != nil {
		return nil, errors.New("keyid is not a P-256 point")
	}
	secret, err := priv.ECDH(as)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), priv.PublicKey().Bytes()...), keyid...)
	ikm, err := hkdf.Key(sha256.New, secret, auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return nil, errors.New("does not open")
	}
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("the last record's delimiter 0x02 is missing")
	}
	return plain[:end], nil
}

// Decrypt opens an aes128gcm body for a subscription's private key
// (unpadded base64url of its 32-byte scalar) and auth secret: for vectors.
func Decrypt(body []byte, privateKey, auth string) ([]byte, error) {
	enc := base64.RawURLEncoding
	pk, err := enc.DecodeString(privateKey)
	if err != nil {
		return nil, err
	}
	priv, err := ecdh.P256().NewPrivateKey(pk)
	if err != nil {
		return nil, err
	}
	a, err := enc.DecodeString(auth)
	if err != nil {
		return nil, err
	}
	return decrypt(body, priv, a)
}
