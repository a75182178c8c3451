package approval_test

import (
	"net/url"
	"strings"
	"testing"

	"countersign/approval"
)

// TestPublicOrigin: the origin is lowercased and loses its scheme's default
// port, so https://host:443 and https://host are one origin; anything that
// is not an origin is refused.
func TestPublicOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, origin, recipient string }{
		{"https://inbox.example", "https://inbox.example", "inbox.example"},
		{"https://inbox.example/", "https://inbox.example", "inbox.example"},
		{"https://Inbox.Example", "https://inbox.example", "inbox.example"},
		{"HTTPS://inbox.example", "https://inbox.example", "inbox.example"},
		{"https://inbox.example:443", "https://inbox.example", "inbox.example"},
		{"http://inbox.example:80", "http://inbox.example", "inbox.example"},
		{"https://inbox.example:80", "https://inbox.example:80", "inbox.example:80"},
		{"http://inbox.example:443", "http://inbox.example:443", "inbox.example:443"},
		{"https://inbox.example:8443", "https://inbox.example:8443", "inbox.example:8443"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1:8080"},
		{"http://[::1]:8080", "http://[::1]:8080", "[::1]:8080"},
		{"https://[2001:db8::1]:443", "https://[2001:db8::1]", "[2001:db8::1]"},
	} {
		got, err := approval.PublicOrigin(tc.in)
		if err != nil || got != tc.origin {
			t.Errorf("PublicOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.origin)
		}
		r, err := approval.RecipientOf(tc.in)
		if err != nil || r != tc.recipient {
			t.Errorf("RecipientOf(%q) = %q, %v; want %q", tc.in, r, err, tc.recipient)
		}
	}
	for _, in := range []string{"", "inbox.example", "ftp://inbox.example", "https://", "https://inbox.example/path",
		"https://user@inbox.example", "https://inbox.example?x=1", "https://inbox.example?", "https://inbox.example#x",
		"https://inbox.example:", "https://inbox.example:x", "mailto:a@inbox.example", "https:inbox.example"} {
		if got, err := approval.PublicOrigin(in); err == nil {
			t.Errorf("PublicOrigin(%q) = %q, want a refusal", in, got)
		}
		if _, err := approval.RecipientOf(in); err == nil {
			t.Errorf("RecipientOf(%q) accepted", in)
		}
	}
}

// TestCallbackUnder: a callback URL is accepted when it is the public
// origin or a path under it (default ports normalised both ways), and
// refused under any other origin, a look-alike host or port, or a prefix
// not followed by /.
func TestCallbackUnder(t *testing.T) {
	t.Parallel()
	const origin = "https://inbox.example"
	for _, tc := range []struct {
		origin, cb string
		under      bool
	}{
		{origin, "https://inbox.example", true},
		{origin, "https://inbox.example/", true},
		{origin, "https://inbox.example/#/tasks/t-1", true},
		{origin, "https://inbox.example/cb?x=1", true},
		{origin, "https://Inbox.Example/cb", true},
		{origin, "HTTPS://inbox.example/cb", true},
		{origin, "https://inbox.example:443/cb", true},
		{origin, "https://inbox.example:443", true},
		{"http://inbox.example", "http://inbox.example:80/cb", true},
		{"https://inbox.example:8443", "https://inbox.example:8443/cb", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", true},

		{origin, "https://inbox.example.evil", false},
		{origin, "https://inbox.example.evil/cb", false},
		{origin, "https://inbox.examplex", false},
		{origin, "https://inbox.examplex/cb", false},
		{origin, "https://inbox.example:444", false},
		{origin, "https://inbox.example:444/cb", false},
		{origin, "https://inbox.example:4430/cb", false},
		{origin, "https://inbox.example:0443/cb", false},
		{origin, "http://inbox.example/cb", false},
		{origin, "http://inbox.example:443/cb", false},
		{origin, "https://inbox.example?x=1", false},
		{origin, "https://inbox.example#/tasks", false},
		{origin, "https://evil.example/https://inbox.example/", false},
		{origin, "https://inbox.example@evil.example/cb", false},
		{origin, "https://inbox.example:443@evil.example/cb", false},
		{origin, "https://inbox.example\\@evil.example/cb", false},
		{origin, "https://evil.example", false},
		{origin, "//inbox.example/cb", false},
		{origin, "/cb", false},
		{origin, "", false},
		{origin, "inbox.example/cb", false},
		{"https://inbox.example:8443", "https://inbox.example/cb", false},
		{"http://inbox.example", "http://inbox.example:8080/cb", false},
		{"", "https://inbox.example/cb", false},
	} {
		if got := approval.CallbackUnder(tc.origin, tc.cb); got != tc.under {
			t.Errorf("CallbackUnder(%q, %q) = %v, want %v", tc.origin, tc.cb, got, tc.under)
		}
	}
}

// FuzzCallbackUnder: whatever bytes a wallet signed as its callback URL, an
// accepted one is, as a URL parser reads it, on the public origin's host
// with no user.
func FuzzCallbackUnder(f *testing.F) {
	for _, s := range []string{"https://inbox.example/cb", "https://inbox.example:443", "https://inbox.example.evil",
		"https://inbox.example@evil", "https://INBOX.example/%2e%2e", "https://inbox.example/\\evil", "https://inbox.example:443/"} {
		f.Add(s)
	}
	const origin = "https://inbox.example"
	f.Fuzz(func(t *testing.T, cb string) {
		if !approval.CallbackUnder(origin, cb) {
			return
		}
		low := strings.ToLower(cb)
		if !strings.HasPrefix(low, "https://inbox.example") {
			t.Fatalf("%q accepted", cb)
		}
		u, err := url.Parse(cb)
		if err != nil {
			return // not a URL any browser would follow
		}
		if u.User != nil || strings.ToLower(u.Hostname()) != "inbox.example" || (u.Port() != "" && u.Port() != "443") ||
			strings.ToLower(u.Scheme) != "https" {
			t.Fatalf("%q accepted: scheme %q user %v host %q port %q", cb, u.Scheme, u.User, u.Hostname(), u.Port())
		}
	})
}
