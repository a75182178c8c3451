package httpapi

import "testing"

// TestBrowserOrigin: the cookie is Secure for every public origin but plain
// http on a loopback address; a default port in the public URL is dropped,
// so the browser's Origin (which never names it) matches; a public URL
// that is no origin gives no browser sessions.
func TestBrowserOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, origin string
		secure      bool
	}{
		{"https://inbox.example", "https://inbox.example", true},
		{"https://Inbox.Example:8443", "https://inbox.example:8443", true},
		{"https://inbox.example:443", "https://inbox.example", true},
		{"https://inbox.example:443/", "https://inbox.example", true},
		{"http://inbox.example:80", "http://inbox.example", true},
		{"http://127.0.0.1:80", "http://127.0.0.1", false},
		{"https://inbox.example:80", "https://inbox.example:80", true},
		{"http://inbox.example", "http://inbox.example", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", false},
		{"http://[::1]:8080", "http://[::1]:8080", false},
		{"http://localhost:8080", "http://localhost:8080", false},
		{"http://10.0.0.1", "http://10.0.0.1", true},
		{"", "", false},
		{"ftp://inbox.example", "", false},
		{"inbox.example", "", false},
	} {
		b := newBrowserOrigin(tc.url)
		if b.origin != tc.origin || b.origin != "" && b.secure != tc.secure {
			t.Errorf("newBrowserOrigin(%q) = %+v, want origin %q secure %v", tc.url, b, tc.origin, tc.secure)
		}
	}
}
