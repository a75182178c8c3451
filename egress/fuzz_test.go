package egress

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{
		"https://api.github.com", "https://api.mercury.com/api/v1/", "http://127.0.0.1:8080/api/v1", "https://[::1]/",
		"https://2130706433/", "https://u:p@example.com/", "https://example.com/a?b", "https://example.com/a/../b",
		"https://example.com/a%2Fb", "https://example.com/%2e", "https://example.com//", "https://[fe80::1%25eth0]/",
		"https://example.com:443/a#c", "https:example.com", "https://example.com/a%zz",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool) {
		u, err := CheckBaseURL(raw, allowPrivate)
		if err != nil {
			var ue *URLError
			if u != nil || !errors.As(err, &ue) || !slices.Contains(URLErrors, ue) {
				t.Fatalf("refusal %v (URL %v) is not one of the package's", err, u)
			}
			return
		}
		if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" || u.Hostname() == "" {
			t.Fatalf("accepted %q: %#v", raw, u)
		}
		if u.Scheme != "https" && !(allowPrivate && u.Scheme == "http") {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && !Allowed(a, allowPrivate) {
			t.Fatalf("accepted %q, whose address the dialer refuses", raw)
		}
		p := u.EscapedPath()
		if strings.HasSuffix(p, "/") {
			t.Fatalf("accepted %q with a trailing slash %q", raw, p)
		}
		if p != "" {
			for _, seg := range strings.Split(p, "/")[1:] {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("accepted %q with path %q", raw, p)
				}
			}
		}
		// A base accepted once is accepted again as it is used.
		if v, err := CheckBaseURL(u.String(), allowPrivate); err != nil || v.String() != u.String() {
			t.Fatalf("accepted %q as %q, which then reads %v, %v", raw, u, v, err)
		}
	})
}
