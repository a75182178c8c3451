package egress

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw          string
		allowPrivate bool
		want         string // the base as used, or the refusal
	}{
		{"https://api.github.com", false, "https://api.github.com"},
		{"https://api.github.com/", false, "https://api.github.com"},
		{"https://api.mercury.com/api/v1", false, "https://api.mercury.com/api/v1"},
		{"https://api.mercury.com/api/v1/", false, "https://api.mercury.com/api/v1"},
		{"https://ghe.example.com:8443/api/v3", false, "https://ghe.example.com:8443/api/v3"},
		{"https://example.com/a%20b", false, "https://example.com/a%20b"},
		{"http://127.0.0.1:8080/api/v1", true, "http://127.0.0.1:8080/api/v1"},
		{"http://localhost:9000", true, "http://localhost:9000"},

		{"http://api.github.com", false, ErrURLScheme.Error()},
		{"ftp://api.github.com", true, ErrURLScheme.Error()},
		{"https://api.github.com?x=1", false, ErrURLQuery.Error()},
		{"https://api.github.com/?", false, ErrURLQuery.Error()},
		{"https://api.github.com/#x", false, ErrURLFragment.Error()},
		{"https://u:p@api.github.com", false, ErrURLUserinfo.Error()},
		{"https://@api.github.com", false, ErrURLUserinfo.Error()},
		{"https://api.github.com/a/../b", false, ErrURLPath.Error()},
		{"https://api.github.com/a/./b", false, ErrURLPath.Error()},
		{"https://api.github.com/a/%2e%2e/b", false, ErrURLPath.Error()},
		{"https://api.github.com/..", false, ErrURLPath.Error()},
		{"https://api.github.com//x", false, ErrURLPath.Error()},
		{"https://api.github.com/a%2Fb", false, ErrURLPath.Error()},
		{"https://api.github.com/a%zz", false, ErrURLSyntax.Error()},
		{"https://127.0.0.1", false, ErrURLNotPublic.Error()},
		{"https://10.0.0.1/api", false, ErrURLNotPublic.Error()},
		{"https://192.168.1.1/api", false, ErrURLNotPublic.Error()},
		{"https://169.254.169.254/latest", false, ErrURLNotPublic.Error()},
		{"http://169.254.169.254/latest", true, ErrURLNotPublic.Error()},
		{"https://[::1]/", false, ErrURLNotPublic.Error()},
		{"https://[fd00::1]/", false, ErrURLNotPublic.Error()},
		{"https://localhost/", false, ErrURLNotPublic.Error()},
		{"https://metadata.google.internal/", false, ErrURLNotPublic.Error()},
		{"https://2130706433/", false, ErrURLNotPublic.Error()},
		{"https://api.github.com:25/", false, ErrURLPublicPort.Error()},
		{"", false, ErrURLEmpty.Error()},
	} {
		u, err := CheckBaseURL(tt.raw, tt.allowPrivate)
		got := ""
		if err != nil {
			got = err.Error()
			if u != nil {
				t.Errorf("CheckBaseURL(%q) refused and returned a URL", tt.raw)
			}
		} else {
			got = u.String()
		}
		if got != tt.want {
			t.Errorf("CheckBaseURL(%q, %v) = %q, want %q", tt.raw, tt.allowPrivate, got, tt.want)
		}
	}
}

// The sentences say what is wrong about the caller's subject and never
// repeat the URL, which may carry a token.
func TestURLErrorSentences(t *testing.T) {
	t.Parallel()
	if got := ErrURLScheme.Of("the project's base_url"); got != "the project's base_url must use https" {
		t.Fatal(got)
	}
	if got := ErrURLPort.Of("the project's token_url"); got != "the project's token_url's port must be a number from 1 to 65535" {
		t.Fatal(got)
	}
	for _, raw := range []string{
		"http://example.com/secret-token-123", "https://user:secret-token-123@example.com/",
		"https://example.com/secret-token-123#x", "https://localhost/secret-token-123",
		"https://example.com/secret-token-123?a=b", "https://example.com/secret-token-123/../x",
	} {
		_, err := CheckBaseURL(raw, false)
		var ue *URLError
		if !errors.As(err, &ue) {
			t.Fatalf("CheckBaseURL(%q) = %v", raw, err)
		}
		if strings.Contains(err.Error(), "secret-token-123") {
			t.Errorf("error %q repeats the URL", err)
		}
	}
}

func TestParseLooseIPv4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"192.168.257", "192.168.1.1"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.", "1.2.3.4"},
		{"255.255.255.255", "255.255.255.255"},
		{"4294967295", "255.255.255.255"},
	}
	for _, tt := range tests {
		a, ok := parseLooseIPv4(tt.in)
		if !ok || a.String() != tt.want {
			t.Errorf("parseLooseIPv4(%q) = %v, %v; want %s", tt.in, a, ok, tt.want)
		}
	}
	for _, in := range []string{"", "4294967296", "256.1.1.1", "1.2.3.256", "1.2.65536", "1.2.3.4.5", "08", "0x1g", "1..2", "a.b", "99999999999999999999999"} {
		if a, ok := parseLooseIPv4(in); ok {
			t.Errorf("parseLooseIPv4(%q) = %v, want failure", in, a)
		}
	}
}
