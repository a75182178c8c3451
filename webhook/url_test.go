package webhook

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateURLRefuses(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength-len("https://example.com/")+1)
	tests := []struct {
		name string
		raw  string
		want error
	}{
		{"empty", "", ErrURLEmpty},
		{"2 KB URL", long, ErrURLTooLong},
		{"http without allowPrivate", "http://example.com/hook", ErrURLScheme},
		{"ftp", "ftp://example.com/hook", ErrURLScheme},
		{"javascript", "javascript:alert(1)", ErrURLScheme},
		{"no scheme", "//example.com/hook", ErrURLScheme},
		{"opaque", "https:example.com", ErrURLNoHost},
		{"empty host", "https:///hook", ErrURLNoHost},
		{"userinfo", "https://user:pass@example.com/hook", ErrURLUserinfo},
		{"user only", "https://user@example.com/hook", ErrURLUserinfo},
		{"empty userinfo", "https://@example.com/hook", ErrURLUserinfo},
		{"fragment", "https://example.com/hook#x", ErrURLFragment},
		{"empty fragment", "https://example.com/hook#", ErrURLFragment},
		{"space", "https://example.com/a b", ErrURLCharacter},
		{"leading space", " https://example.com/", ErrURLCharacter},
		{"newline", "https://example.com/\nX-Evil: 1", ErrURLCharacter},
		{"NUL", "https://example.com/\x00", ErrURLCharacter},
		{"backslash", "https://example.com\\@evil.com/", ErrURLCharacter},
		{"unicode host", "https://exämple.com/", ErrURLCharacter},
		{"bad escape", "https://example.com/%zz", ErrURLSyntax},
		{"empty port", "https://example.com:/hook", ErrURLPort},
		{"port 0", "https://example.com:0/hook", ErrURLPort},
		{"port leading zero", "https://example.com:0443/hook", ErrURLPort},
		{"port too big", "https://example.com:65536/hook", ErrURLPort},
		{"port 22", "https://example.com:22/hook", ErrURLPublicPort},
		{"port 80 on https", "https://example.com:80/hook", ErrURLPublicPort},
		{"underscore", "https://a_b.example.com/", ErrURLHost},
		{"leading hyphen", "https://-a.example.com/", ErrURLHost},
		{"empty label", "https://a..example.com/", ErrURLHost},
		{"trailing dot", "https://example.com./", ErrURLHost},
		{"label too long", "https://" + strings.Repeat("a", 64) + ".com/", ErrURLHost},
		{"name of 254", "https://" + strings.Repeat("abcdefghi.", 25) + "comx/", ErrURLHost},
		{"name ending in hex", "https://example.0x1/", ErrURLHost},
		{"name ending in digits", "https://example.123/", ErrURLHost},
		{"IPv6 zone", "https://[fe80::1%25eth0]/", ErrURLHost},
		{"bracketed IPv4", "https://[127.0.0.1]/", ErrURLSyntax},
		{"bad numeric", "https://1.2.3.4.5/", ErrURLHost},
		{"numeric overflow", "https://4294967296/", ErrURLHost},

		{"localhost", "https://localhost/hook", ErrURLNotPublic},
		{"LOCALHOST", "https://LocalHost:8443/hook", ErrURLNotPublic},
		{"sub.localhost", "https://api.localhost/hook", ErrURLNotPublic},
		{"mdns", "https://printer.local/hook", ErrURLNotPublic},
		{"internal", "https://metadata.google.internal/", ErrURLNotPublic},
		{"home.arpa", "https://nas.home.arpa/", ErrURLNotPublic},
		{"single label", "https://intranet/hook", ErrURLNotPublic},

		{"loopback", "https://127.0.0.1/hook", ErrURLNotPublic},
		{"loopback other", "https://127.8.9.10/hook", ErrURLNotPublic},
		{"private 10", "https://10.0.0.1/", ErrURLNotPublic},
		{"private 172.16", "https://172.16.0.1/", ErrURLNotPublic},
		{"private 172.31", "https://172.31.255.255/", ErrURLNotPublic},
		{"private 192.168", "https://192.168.1.1/", ErrURLNotPublic},
		{"metadata", "https://169.254.169.254/latest/meta-data/", ErrURLNotPublic},
		{"CGNAT", "https://100.64.0.1/", ErrURLNotPublic},
		{"unspecified", "https://0.0.0.0/", ErrURLNotPublic},
		{"this network", "https://0.1.2.3/", ErrURLNotPublic},
		{"multicast", "https://224.0.0.1/", ErrURLNotPublic},
		{"broadcast", "https://255.255.255.255/", ErrURLNotPublic},
		{"reserved", "https://240.0.0.1/", ErrURLNotPublic},
		{"TEST-NET-1", "https://192.0.2.10/", ErrURLNotPublic},
		{"TEST-NET-2", "https://198.51.100.10/", ErrURLNotPublic},
		{"TEST-NET-3", "https://203.0.113.10/", ErrURLNotPublic},
		{"benchmarking", "https://198.18.0.1/", ErrURLNotPublic},
		{"benchmarking upper", "https://198.19.255.1/", ErrURLNotPublic},
		{"v6 loopback", "https://[::1]/", ErrURLNotPublic},
		{"v6 unspecified", "https://[::]/", ErrURLNotPublic},
		{"v6 ULA", "https://[fd00::1]/", ErrURLNotPublic},
		{"v6 ULA fc", "https://[fc00::1]/", ErrURLNotPublic},
		{"v6 link-local", "https://[fe80::1]/", ErrURLNotPublic},
		{"v6 multicast", "https://[ff02::1]/", ErrURLNotPublic},
		{"v6 documentation", "https://[2001:db8::1]/", ErrURLNotPublic},
		{"v4-mapped loopback", "https://[::ffff:127.0.0.1]/", ErrURLNotPublic},
		{"v4-mapped public", "https://[::ffff:1.1.1.1]/", ErrURLNotPublic},
		{"v4-mapped hex", "https://[::ffff:7f00:1]/", ErrURLNotPublic},
		{"v4-compatible", "https://[::127.0.0.1]/", ErrURLNotPublic},
		{"NAT64 private", "https://[64:ff9b::a00:1]/", ErrURLNotPublic},
		{"NAT64 loopback", "https://[64:ff9b::127.0.0.1]/", ErrURLNotPublic},
		{"6to4 private", "https://[2002:a00:1::]/", ErrURLNotPublic},
		{"6to4 loopback", "https://[2002:7f00:1::1]/", ErrURLNotPublic},
		{"Teredo", "https://[2001::1]/", ErrURLNotPublic},

		{"decimal loopback", "https://2130706433/", ErrURLNotPublic},
		{"hex loopback", "https://0x7f000001/", ErrURLNotPublic},
		{"hex upper X", "https://0X7F000001/", ErrURLNotPublic},
		{"hex short", "https://0x7f.1/", ErrURLNotPublic},
		{"octal dotted", "https://0177.0.0.1/", ErrURLNotPublic},
		{"octal whole", "https://017700000001/", ErrURLNotPublic},
		{"short loopback", "https://127.1/", ErrURLNotPublic},
		{"short private", "https://10.1/", ErrURLNotPublic},
		{"three-part", "https://192.168.257/", ErrURLNotPublic},
		{"trailing dot loopback", "https://127.0.0.1./", ErrURLNotPublic},
		{"decimal metadata", "https://2852039166/", ErrURLNotPublic},
		{"zero", "https://0/", ErrURLNotPublic},
		{"mixed hex octal", "https://0x7f.0.00.01/", ErrURLNotPublic},
		{"leading zero public", "https://01.1.1.1/", ErrURLNumericHost},
		{"decimal public", "https://16843009/", ErrURLNumericHost},
		{"hex public", "https://0x01010101/", ErrURLNumericHost},
		{"short public", "https://1.1/", ErrURLNumericHost},
		{"trailing dot public", "https://1.1.1.1./", ErrURLNumericHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ValidateURL(tt.raw, false)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ValidateURL(%q) = %v, %v; want %v", tt.raw, u, err, tt.want)
			}
		})
	}
}

func TestValidateURLAccepts(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://example.com",
		"https://example.com/",
		"https://hooks.example.com/countersign/alice?token=abc&x=1",
		"https://EXAMPLE.com/Hook",
		"HTTPS://example.com/hook",
		"https://example.com:443/hook",
		"https://example.com:8443/hook",
		"https://example.com:65535/hook",
		"https://xn--exmple-cua.com/",
		"https://a-b.c-d.example/",
		"https://a.0xz/",                                       // not a number: a name
		"https://" + strings.Repeat("abcdefghi.", 25) + "com/", // 253, the longest name
		"https://127.0.0.1.nip.io/",                            // a name: the dialer checks what it resolves to
		"https://1.1.1.1/hook",
		"https://8.8.8.8:8443/hook",
		"https://[2606:4700:4700::1111]/hook",
		"https://[2606:4700:4700::1111]:8443/hook",
		"https://example.com/a%2Fb",
		"https://" + strings.Repeat("a", 63) + ".com/",
		"https://example.com/" + strings.Repeat("a", MaxURLLength-len("https://example.com/")),
	} {
		u, err := ValidateURL(raw, false)
		if err != nil {
			t.Errorf("ValidateURL(%q) = %v", raw, err)
			continue
		}
		if u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
			t.Errorf("ValidateURL(%q) = %#v", raw, u)
		}
	}
}

func TestValidateURLAllowPrivate(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://127.0.0.1:8080/hook",
		"http://localhost:9000/hook",
		"http://receiver/hook",
		"http://[::1]:8080/",
		"https://10.1.2.3/",
		"http://172.20.0.5:80/",
		"http://192.168.0.10/",
		"http://[fd12:3456::1]/",
		"http://example.com:25/",
	} {
		if _, err := ValidateURL(raw, true); err != nil {
			t.Errorf("ValidateURL(%q, allowPrivate) = %v", raw, err)
		}
	}
	refused := []struct {
		raw  string
		want error
	}{
		{"http://169.254.169.254/latest/meta-data/", ErrURLNotPublic},
		{"http://100.64.0.1/", ErrURLNotPublic},
		{"http://0.0.0.0:8080/", ErrURLNotPublic},
		{"http://[fe80::1]/", ErrURLNotPublic},
		{"http://[::ffff:127.0.0.1]/", ErrURLNotPublic},
		{"http://224.0.0.1/", ErrURLNotPublic},
		{"http://2130706433/", ErrURLNumericHost},
		{"http://127.1:8080/", ErrURLNumericHost},
		{"http://0x7f000001/", ErrURLNumericHost},
		{"ws://127.0.0.1/", ErrURLScheme},
		{"http://u:p@127.0.0.1/", ErrURLUserinfo},
		{"http://127.0.0.1/#f", ErrURLFragment},
	}
	for _, tt := range refused {
		if _, err := ValidateURL(tt.raw, true); !errors.Is(err, tt.want) {
			t.Errorf("ValidateURL(%q, allowPrivate) = %v, want %v", tt.raw, err, tt.want)
		}
	}
}

// The refusal sentences go to the owner as they are: they must never repeat
// the URL, which may carry a token.
func TestValidateURLErrorsDoNotEchoTheURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://example.com/secret-token-123",
		"https://user:secret-token-123@example.com/",
		"https://example.com/secret-token-123#x",
		"https://localhost/secret-token-123",
	} {
		_, err := ValidateURL(raw, false)
		if err == nil {
			t.Fatalf("ValidateURL(%q) accepted", raw)
		}
		if strings.Contains(err.Error(), "secret-token-123") {
			t.Errorf("error %q repeats the URL", err)
		}
	}
}
