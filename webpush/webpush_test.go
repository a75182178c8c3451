package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/egress/egresstest"
	"countersign/webpush/webpushtest"
)

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 8291 Appendix A.
const (
	vectorPlaintext = "When I grow up, I want to be a watermelon"
	vectorASPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
	vectorASPublic  = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
	vectorUAPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
	vectorUAPublic  = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
	vectorAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	vectorSalt      = "DGv6ra1nlYgDCS1FRnbzlw"
	vectorBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
)

// TestRFC8291Vector: with the appendix's salt and ephemeral key, the body
// is the appendix's byte for byte, and the fake push service (which
// decrypts with code of its own) opens the appendix's body to its text.
func TestRFC8291Vector(t *testing.T) {
	t.Parallel()
	as, err := ecdh.P256().NewPrivateKey(b64(t, vectorASPrivate))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(as.PublicKey().Bytes(), b64(t, vectorASPublic)) {
		t.Fatal("the application server's public key is not the appendix's")
	}
	ua, err := ecdh.P256().NewPublicKey(b64(t, vectorUAPublic))
	if err != nil {
		t.Fatal(err)
	}
	body, err := encrypt([]byte(vectorPlaintext), ua, b64(t, vectorAuth), b64(t, vectorSalt), as)
	if err != nil {
		t.Fatal(err)
	}
	if want := b64(t, vectorBody); !bytes.Equal(body, want) {
		t.Fatalf("body\n got %s\nwant %s", base64.RawURLEncoding.EncodeToString(body), vectorBody)
	}
	if len(body) != 144 {
		t.Fatalf("the body is %d bytes, the appendix's 144", len(body))
	}
	plain, err := webpushtest.Decrypt(b64(t, vectorBody), vectorUAPrivate, vectorAuth)
	if err != nil || string(plain) != vectorPlaintext {
		t.Fatalf("the fake opens the appendix's body to %q, %v", plain, err)
	}
	// A fresh key and salt every time: two bodies of one message differ,
	// and both open.
	ua2 := b64(t, vectorUAPublic)
	k, _ := ecdh.P256().NewPublicKey(ua2)
	one, _ := Encrypt([]byte(vectorPlaintext), k, b64(t, vectorAuth))
	two, _ := Encrypt([]byte(vectorPlaintext), k, b64(t, vectorAuth))
	if bytes.Equal(one[:16], two[:16]) || bytes.Equal(one[21:86], two[21:86]) {
		t.Fatal("two messages share a salt or an ephemeral key")
	}
	for _, b := range [][]byte{one, two} {
		if p, err := webpushtest.Decrypt(b, vectorUAPrivate, vectorAuth); err != nil || string(p) != vectorPlaintext {
			t.Fatalf("a fresh body opens to %q, %v", p, err)
		}
	}
}

func TestEncryptLimits(t *testing.T) {
	t.Parallel()
	ua, _ := ecdh.P256().NewPublicKey(b64(t, vectorUAPublic))
	auth := b64(t, vectorAuth)
	full, err := Encrypt(make([]byte, MaxPlaintext), ua, auth)
	if err != nil || len(full) != RecordSize {
		t.Fatalf("the largest message: %d bytes, %v; want exactly %d", len(full), err, RecordSize)
	}
	if _, err := webpushtest.Decrypt(full, vectorUAPrivate, vectorAuth); err != nil {
		t.Fatalf("the largest message does not open: %v", err)
	}
	if _, err := Encrypt(make([]byte, MaxPlaintext+1), ua, auth); err == nil {
		t.Fatal("a message over 3,993 bytes was encrypted")
	}
	if _, err := Encrypt(nil, ua, auth[:15]); err == nil {
		t.Fatal("a 15-byte auth secret was taken")
	}
	one, err := Encrypt([]byte{1}, ua, auth)
	if err != nil || len(one) != 104 {
		t.Fatalf("a one-byte message is %d bytes (%v), want 104", len(one), err)
	}
}

func TestAudience(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://fcm.googleapis.com/fcm/send/abc":         "https://fcm.googleapis.com",
		"https://Web.Push.Apple.com:443/QGx?x=1":          "https://web.push.apple.com",
		"http://127.0.0.1:8123/push/1":                    "http://127.0.0.1:8123",
		"https://wns2-par02p.notify.windows.com/w/?token": "https://wns2-par02p.notify.windows.com",
		"http://[::1]:80/p":                               "http://[::1]",
	} {
		u, _ := url.Parse(raw)
		if got := Audience(u); got != want {
			t.Errorf("Audience(%s) = %s, want %s", raw, got, want)
		}
	}
}

// validSub is a subscription of the RFC's browser key on an allowed host.
func validSub(endpoint string) Subscription {
	var s Subscription
	s.Endpoint = endpoint
	s.Keys.P256dh, s.Keys.Auth = vectorUAPublic, vectorAuth
	return s
}

// TestCheckRefusals: every subscription a browser of a known push service
// would not give, or that would make the service reach elsewhere, is
// refused with a sentence that repeats neither the endpoint nor a key.
func TestCheckRefusals(t *testing.T) {
	t.Parallel()
	offCurve := append([]byte{4}, bytes.Repeat([]byte{1}, 64)...)
	compressed := append([]byte{2}, b64(t, vectorUAPublic)[1:33]...)
	cases := []struct {
		name, endpoint, p256dh, auth string
		want                         string
	}{
		{"empty endpoint", "", vectorUAPublic, vectorAuth, "the push endpoint is empty"},
		{"http", "http://fcm.googleapis.com/fcm/send/x", vectorUAPublic, vectorAuth, "must use https"},
		{"unknown host", "https://push.example.com/x", vectorUAPublic, vectorAuth, "not a known push service"},
		{"lookalike suffix", "https://fcm.googleapis.com.evil.example/x", vectorUAPublic, vectorAuth, "not a known push service"},
		{"lookalike prefix", "https://evilpush.apple.com/x", vectorUAPublic, vectorAuth, "not a known push service"},
		{"subdomain of an exact host", "https://x.fcm.googleapis.com/x", vectorUAPublic, vectorAuth, "not a known push service"},
		{"windows apex", "https://notify.windows.com/w", vectorUAPublic, vectorAuth, "not a known push service"},
		{"port", "https://fcm.googleapis.com:8443/x", vectorUAPublic, vectorAuth, "port 443"},
		{"userinfo", "https://user@fcm.googleapis.com/x", vectorUAPublic, vectorAuth, "user name or password"},
		{"fragment", "https://fcm.googleapis.com/x#y", vectorUAPublic, vectorAuth, "fragment"},
		{"loopback literal", "https://127.0.0.1/x", vectorUAPublic, vectorAuth, "public host"},
		{"trailing dot", "https://fcm.googleapis.com./x", vectorUAPublic, vectorAuth, "not a valid host"},
		{"space", "https://fcm.googleapis.com/a b", vectorUAPublic, vectorAuth, "not allowed in a URL"},
		{"too long", "https://fcm.googleapis.com/" + strings.Repeat("a", 2100), vectorUAPublic, vectorAuth, "longer than 2,048"},
		{"no p256dh", "https://fcm.googleapis.com/x", "", vectorAuth, "keys.p256dh"},
		{"p256dh not base64url", "https://fcm.googleapis.com/x", "BCVx+r7N/eNg", vectorAuth, "keys.p256dh"},
		{"p256dh off the curve", "https://fcm.googleapis.com/x", base64.RawURLEncoding.EncodeToString(offCurve), vectorAuth, "keys.p256dh"},
		{"p256dh compressed", "https://fcm.googleapis.com/x", base64.RawURLEncoding.EncodeToString(compressed), vectorAuth, "keys.p256dh"},
		{"p256dh short", "https://fcm.googleapis.com/x", vectorUAPublic[:80], vectorAuth, "keys.p256dh"},
		{"no auth", "https://fcm.googleapis.com/x", vectorUAPublic, "", "keys.auth"},
		{"auth 15 bytes", "https://fcm.googleapis.com/x", vectorUAPublic, base64.RawURLEncoding.EncodeToString(make([]byte, 15)), "keys.auth"},
		{"auth 32 bytes", "https://fcm.googleapis.com/x", vectorUAPublic, base64.RawURLEncoding.EncodeToString(make([]byte, 32)), "keys.auth"},
	}
	for _, c := range cases {
		s := validSub(c.endpoint)
		s.Keys.P256dh, s.Keys.Auth = c.p256dh, c.auth
		_, err := s.Check(false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
			continue
		}
		for _, secret := range []string{c.endpoint, c.p256dh, c.auth} {
			if len(secret) > 8 && strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the refusal repeats what was sent: %v", c.name, err)
			}
		}
	}
	for _, ok := range []string{
		"https://fcm.googleapis.com/fcm/send/dGVzdA:APA91b",
		"https://web.push.apple.com/QGxvbmcgdG9rZW4",
		"https://push.apple.com/x",
		"https://updates.push.services.mozilla.com/wpush/v2/gAAAAA",
		"https://wns2-par02p.notify.windows.com/w/?token=BQYAAAB",
		"https://FCM.googleapis.com:443/fcm/send/x",
	} {
		if _, err := validSub(ok).Check(false); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	// Padded base64url, as some browsers wrote it, is taken.
	s := validSub("https://fcm.googleapis.com/x")
	s.Keys.P256dh += "="
	s.Keys.Auth += "=="
	if _, err := s.Check(false); err != nil {
		t.Errorf("padded keys refused: %v", err)
	}
	// The test setting admits a loopback endpoint over http; only it.
	if _, err := validSub("http://127.0.0.1:9/push/1").Check(true); err != nil {
		t.Errorf("allowAny refuses a loopback endpoint: %v", err)
	}
	if _, err := validSub("http://169.254.169.254/latest").Check(true); err == nil {
		t.Error("allowAny admits the link-local metadata address")
	}
}

// testKey is a fresh VAPID key.
func testKey(t *testing.T) *Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func subOf(f webpushtest.Subscription) Subscription {
	var s Subscription
	s.Endpoint, s.Keys.P256dh, s.Keys.Auth = f.Endpoint, f.P256dh, f.Auth
	return s
}

var message = Message{Payload: []byte{1}, TTL: 90 * time.Minute, Urgency: UrgencyHigh, Topic: "tasks-waiting"}

// TestSendToFakePushService: over TLS, the fake decrypts the push to its
// payload and finds the VAPID JWT good: signed under the key the
// subscription was made with, aud its origin, exp within 24 hours, sub
// the contact; TTL, Urgency and Topic as asked.
func TestSendToFakePushService(t *testing.T) {
	t.Parallel()
	fake := webpushtest.NewTLS(t)
	key := testKey(t)
	sub := fake.Subscribe(key.PublicKey())
	s := NewSender(true, WithRootCAs(fake.TLS().RootCAs))
	before := time.Now()
	r := s.Send(context.Background(), subOf(sub), key, "mailto:ops@example.com", message)
	if r.Outcome != Delivered || r.StatusCode != http.StatusCreated || r.Error != "" {
		t.Fatalf("result %+v", r)
	}
	got := fake.Pushes()
	if len(got) != 1 {
		t.Fatalf("%d pushes", len(got))
	}
	p := got[0]
	if p.Problem != "" {
		t.Fatalf("the fake found: %s", p.Problem)
	}
	if !bytes.Equal(p.Plaintext, []byte{1}) || p.BodyBytes != 104 || r.Bytes != 104 {
		t.Fatalf("payload %x in %d bytes (sender says %d)", p.Plaintext, p.BodyBytes, r.Bytes)
	}
	if p.TTL != 5400 || p.Urgency != "high" || p.Topic != "tasks-waiting" {
		t.Fatalf("TTL %d, Urgency %q, Topic %q", p.TTL, p.Urgency, p.Topic)
	}
	if p.Aud != fake.URL || p.Sub != "mailto:ops@example.com" || p.Key != key.PublicKey() {
		t.Fatalf("aud %q sub %q k %q", p.Aud, p.Sub, p.Key)
	}
	if p.Exp.Before(before.Add(JWTLife-time.Minute)) || p.Exp.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("exp %s is not about 12 hours ahead", p.Exp)
	}
	// A TTL over 24 hours is sent as 24 hours.
	long := message
	long.TTL = 48 * time.Hour
	if r := s.Send(context.Background(), subOf(sub), key, "https://example.com", long); r.Outcome != Delivered {
		t.Fatalf("result %+v", r)
	}
	if p := fake.Pushes()[1]; p.TTL != 86400 || p.Problem != "" {
		t.Fatalf("TTL %d, problem %q", p.TTL, p.Problem)
	}
}

// TestFakeRefusesAnotherKey: the fake is not lenient: a push signed with a
// key other than the subscription's is refused 403, and the sender reads
// that as the subscription's end.
func TestFakeRefusesAnotherKey(t *testing.T) {
	t.Parallel()
	fake := webpushtest.New(t)
	sub := fake.Subscribe(testKey(t).PublicKey())
	r := NewSender(true).Send(context.Background(), subOf(sub), testKey(t), "mailto:ops@example.com", message)
	if r.Outcome != Gone || r.StatusCode != http.StatusForbidden {
		t.Fatalf("result %+v", r)
	}
	if p := fake.Pushes()[0]; !strings.Contains(p.Problem, "k= is not the key") {
		t.Fatalf("the fake found %q", p.Problem)
	}
}

// TestOutcomes: what each answer of a push service means.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	fake := webpushtest.New(t)
	key := testKey(t)
	s := NewSender(true)
	for status, want := range map[int]Outcome{
		200: Delivered, 201: Delivered, 202: Delivered,
		400: Gone, 401: Gone, 403: Gone, 404: Gone, 410: Gone, 418: Gone,
		408: Retry, 413: Retry, 429: Retry, 500: Retry, 502: Retry, 503: Retry,
		301: Retry, 307: Retry,
	} {
		sub := fake.Subscribe(key.PublicKey())
		fake.Answer(sub.ID, status)
		r := s.Send(context.Background(), subOf(sub), key, "mailto:ops@example.com", message)
		if r.Outcome != want || r.StatusCode != status {
			t.Errorf("HTTP %d: %v (%d), want %v", status, r.Outcome, r.StatusCode, want)
		}
		if status == 429 && r.RetryAfter != time.Second {
			t.Errorf("HTTP 429: Retry-After %s, want 1s", r.RetryAfter)
		}
	}
	sub := fake.Subscribe(key.PublicKey())
	fake.Drop(sub.ID, http.StatusGone)
	if r := s.Send(context.Background(), subOf(sub), key, "mailto:ops@example.com", message); r.Outcome != Gone {
		t.Errorf("a dropped subscription: %+v", r)
	}
	// Refused before sending: nothing reaches the push service.
	n := len(fake.Pushes())
	for name, m := range map[string]Message{
		"no TTL":    {Payload: []byte{1}, Urgency: UrgencyHigh},
		"bad topic": {Payload: []byte{1}, TTL: time.Hour, Urgency: UrgencyHigh, Topic: "tasks waiting"},
		"urgency":   {Payload: []byte{1}, TTL: time.Hour, Urgency: "urgent"},
	} {
		if r := s.Send(context.Background(), subOf(sub), key, "mailto:ops@example.com", m); r.Outcome != Unsendable {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if len(fake.Pushes()) != n {
		t.Error("a message refused before sending reached the push service")
	}
}

// TestGuard: without the test setting, a loopback endpoint is refused
// before any connection, and a push service's name that resolves to
// loopback is refused when dialed.
func TestGuard(t *testing.T) {
	t.Parallel()
	fake := webpushtest.New(t)
	key := testKey(t)
	sub := fake.Subscribe(key.PublicKey())
	r := NewSender(false).Send(context.Background(), subOf(sub), key, "mailto:ops@example.com", message)
	if r.Outcome != Unsendable || len(fake.Pushes()) != 0 {
		t.Fatalf("a loopback endpoint in production: %+v", r)
	}
	dns := egresstest.NewDNS(t, egresstest.Fixed(map[string][]string{"fcm.googleapis.com": {"127.0.0.1"}}))
	var s Subscription
	s.Endpoint, s.Keys.P256dh, s.Keys.Auth = "https://fcm.googleapis.com/fcm/send/x", sub.P256dh, sub.Auth
	r = NewSender(false, WithResolver(dns.Resolver())).Send(context.Background(), s, key, "mailto:ops@example.com", message)
	if r.Outcome != Retry || !strings.Contains(r.Error, "not public") {
		t.Fatalf("a push service's name resolving to loopback: %+v", r)
	}
}

func TestCheckSubject(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"mailto:ops@example.com", "https://inbox.example.com", "https://example.com/contact"} {
		if err := CheckSubject(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ops@example.com", "mailto:", "mailto:ops", "http://example.com", "https://", "mailto:a b@example.com"} {
		if CheckSubject(bad) == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	k := testKey(t)
	raw, err := k.Bytes()
	if err != nil || len(raw) != 32 {
		t.Fatalf("%d bytes, %v", len(raw), err)
	}
	again, err := ParseKey(raw)
	if err != nil || again.PublicKey() != k.PublicKey() {
		t.Fatalf("parsed %v, %v", again, err)
	}
	if len(b64(t, k.PublicKey())) != 65 {
		t.Fatal("the public key is not 65 bytes")
	}
	if _, err := ParseKey(make([]byte, 32)); err == nil {
		t.Fatal("a zero scalar was taken")
	}
}
