package github

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"countersign/egress"
)

// GitHub's error bodies and headers are outside bytes.
func FuzzReadError(f *testing.F) {
	f.Add(422, `{"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"}]}`, "", "")
	f.Add(422, `{"message":"Unprocessable Entity","errors":["Can not approve your own pull request"]}`, "", "")
	f.Add(403, `{"message":"You have exceeded a secondary rate limit."}`, "60", "")
	f.Add(403, `{"message":"API rate limit exceeded"}`, "", "0")
	f.Add(500, `not json`, "-1", "x")
	f.Fuzz(func(t *testing.T, status int, body, retry, remaining string) {
		if status < 100 || status > 999 {
			return
		}
		h := http.Header{}
		h.Set("Retry-After", retry)
		h.Set("X-RateLimit-Remaining", remaining)
		e := readError(&http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}, []byte(body))
		if e.Message == "" || e.RetryAfter < 0 {
			t.Fatalf("%+v", e)
		}
		if len(e.what()) > 300+len("…") {
			t.Fatalf("what is %d bytes", len(e.what()))
		}
		_ = refusal(e, "doing")
	})
}

// A project's credentials are the owner's bytes.
func FuzzCredentials(f *testing.F) {
	f.Add([]byte(`{"token": "ghp_x"}`), false)
	f.Add([]byte(`{"token": "ghp_x", "base_url": "https://ghe.example/api/v3/"}`), false)
	f.Add([]byte(`{"token": "ghp_x", "base_url": "http://127.0.0.1:1"}`), true)
	f.Add([]byte(`{"TOKEN": "x", "token": "y"}`), false)
	// Refused credentials holding a token: the refusal must not quote it.
	f.Add([]byte(`{"token": "ghp_secret x"}`), false)
	f.Add([]byte(`{"token": "ghp_secret", "base_url": "ftp://ghp_secret@example.com"}`), false)
	f.Add([]byte(`{"token": "ghp_secret", "password": "ghp_secret"}`), false)
	f.Add([]byte(`{"token": "ghp_secret", "base_url": "https://ghp_secret.example/a/../b"}`), false)
	f.Add([]byte(`{"token": "ghp_x", "base_url": "https://169.254.169.254/latest"}`), true)
	f.Fuzz(func(t *testing.T, raw []byte, allowPrivate bool) {
		g := &GitHub{opts: Options{BaseURL: DefaultBaseURL, Egress: egress.Options{AllowPrivate: allowPrivate}}}
		c, err := g.client(raw)
		if err != nil {
			if bytes.Contains(raw, []byte("ghp_secret")) && strings.Contains(err.Error(), "ghp_secret") {
				t.Fatal("a refusal quotes the credentials")
			}
			return
		}
		u, err := url.Parse(c.base)
		if c.token == "" || err != nil || u.Scheme != "https" && !(allowPrivate && u.Scheme == "http") || u.User != nil || u.RawQuery != "" || strings.HasSuffix(c.base, "/") {
			t.Fatalf("%+v", c)
		}
		if _, err := egress.CheckBaseURL(c.base, allowPrivate); err != nil {
			t.Fatalf("the base %q does not pass again: %v", c.base, err)
		}
	})
}

// A sealed state is read back strictly.
func FuzzState(f *testing.F) {
	f.Add([]byte(`{"op":"file_put","repo":"a/b","branch":"main","path":"x","content":"y","message":"m","sha":"abc"}`))
	f.Add([]byte(`{"op":"nope"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		w, err := parseState(raw)
		if err != nil {
			return
		}
		if title(w) == "" {
			t.Fatal(w.name())
		}
	})
}

// The diff applies: its old side is old, its new side new.
func FuzzUnified(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 3)
	f.Add("", "new\n", 0)
	f.Add("x", "y", 1)
	f.Fuzz(func(t *testing.T, old, new string, context int) {
		if context < 0 || context > 10 || len(old) > 2000 || len(new) > 2000 || !utf8.ValidString(old) || !utf8.ValidString(new) {
			return
		}
		d := Unified("f", &old, &new, Whole)
		if old == new {
			if d != "" {
				t.Fatal("a diff of equal texts")
			}
			return
		}
		var a, b strings.Builder
		lines := strings.SplitAfter(d, "\n")
		for i := 2; i < len(lines); i++ {
			l := lines[i]
			if l == "" || strings.HasPrefix(l, "@@") {
				continue
			}
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ':
				a.WriteString(text)
				b.WriteString(text)
			case '-':
				a.WriteString(text)
			case '+':
				b.WriteString(text)
			}
		}
		if a.String() != old || b.String() != new {
			t.Fatalf("the whole diff does not give back the texts:\n%s", d)
		}
		_ = Unified("f", &old, &new, context)
	})
}

// Globs are the owner's.
func FuzzMatch(f *testing.F) {
	f.Add("docs/**", "docs/a/b.md")
	f.Add("owner/*", "owner/name")
	f.Add("[", "x")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 100 || len(name) > 200 || strings.Count(pattern, "**") > 4 {
			return
		}
		_ = Match(pattern, name)
		if !strings.ContainsAny(name, "*?[\\") && !Match(name, name) && name != "" {
			t.Fatalf("%q does not match itself", name)
		}
	})
}
