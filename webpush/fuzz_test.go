package webpush

import (
	"strings"
	"testing"
)

// FuzzCheck: a subscription is outside bytes. Check never panics; what it
// takes has an https endpoint on a push service's host at port 443, a
// P-256 point and a 16-byte auth, and what it refuses is said without
// repeating the endpoint.
func FuzzCheck(f *testing.F) {
	f.Add("https://fcm.googleapis.com/fcm/send/x", vectorUAPublic, vectorAuth)
	f.Add("https://web.push.apple.com/QGx", vectorUAPublic+"=", vectorAuth+"==")
	f.Add("https://evil.notify.windows.com.example/w", vectorUAPublic, vectorAuth)
	f.Add("https://[::1]/x", "", "")
	f.Add("https://0x7f.1/x", vectorUAPublic, vectorAuth)
	f.Fuzz(func(t *testing.T, endpoint, p256dh, auth string) {
		var s Subscription
		s.Endpoint, s.Keys.P256dh, s.Keys.Auth = endpoint, p256dh, auth
		target, err := s.Check(false)
		if err != nil {
			if len(endpoint) > 12 && strings.Contains(err.Error(), endpoint) {
				t.Fatalf("the refusal repeats the endpoint: %v", err)
			}
			return
		}
		u := target.Endpoint
		if u.Scheme != "https" || !KnownHost(u.Hostname()) || u.Port() != "" && u.Port() != "443" || u.User != nil {
			t.Fatalf("taken: %q", endpoint)
		}
		if len(target.UA.Bytes()) != 65 || len(target.Auth) != AuthSize {
			t.Fatalf("keys taken: %q %q", p256dh, auth)
		}
	})
}
