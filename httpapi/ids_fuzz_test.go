package httpapi

import (
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"countersign"
)

// FuzzCheckVar: a path part the edge lets through is valid UTF-8 without
// NUL or control bytes and within 80 bytes, whatever its name; a refusal
// is always invalid_request.
func FuzzCheckVar(f *testing.F) {
	for _, s := range []string{"alice.near", "alice.test\x00", "\xff", "probe", "r1-1", "0123456789abcdefghjkmnpqrs", "01", "..", "A"} {
		for _, name := range []string{"owner", "project", "name", "id", "n", "other"} {
			f.Add(name, s)
		}
	}
	f.Fuzz(func(t *testing.T, name, v string) {
		for _, tpl := range []string{"/inbox/tasks/{id}", "/inbox/devices/{id}", "/call/{owner}/{project}"} {
			err := checkVar(tpl, name, v)
			if err != nil {
				if countersign.ErrorCode(err) != countersign.InvalidRequest {
					t.Fatalf("checkVar(%q, %q) refused with %v", name, v, err)
				}
				continue
			}
			if !utf8.ValidString(v) || len(v) > 80 || v == "" {
				t.Fatalf("checkVar(%q, %q) let it through", name, v)
			}
			for i := 0; i < len(v); i++ {
				if v[i] < 0x21 || v[i] > 0x7e {
					t.Fatalf("checkVar(%q, %q) let byte %#x through", name, v, v[i])
				}
			}
		}
	})
}

// FuzzIdempotencyKey: an Idempotency-Key is taken only as 1–128 visible ASCII
// characters (or none); anything else is invalid_request.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"", "k1", "\xff", "a b", "key\x00", string(make([]byte, 129))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		r := httptest.NewRequest("POST", "/call/alice.near/probe", nil)
		r.Header["Idempotency-Key"] = []string{k}
		got, err := idempotencyKey(r)
		if err != nil {
			if countersign.ErrorCode(err) != countersign.InvalidRequest {
				t.Fatalf("refused %q with %v", k, err)
			}
			return
		}
		if got != k || len(k) > 128 {
			t.Fatalf("took %q as %q", k, got)
		}
		for i := 0; i < len(k); i++ {
			if k[i] < '!' || k[i] > '~' {
				t.Fatalf("took %q with byte %#x", k, k[i])
			}
		}
	})
}
