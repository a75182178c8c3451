package webhook

import (
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/egress"
)

var urlRefusals = []error{ErrURLEmpty, ErrURLTooLong, ErrURLCharacter, ErrURLFragment, ErrURLSyntax, ErrURLScheme,
	ErrURLNoHost, ErrURLUserinfo, ErrURLPort, ErrURLPublicPort, ErrURLHost, ErrURLNumericHost, ErrURLNotPublic}

func FuzzValidateURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/hook", "http://127.0.0.1:8080/", "https://[::1]/", "https://2130706433/",
		"https://0x7f.1/", "https://0177.0.0.1/", "https://127.1/", "https://u:p@example.com/",
		"https://example.com:443/a?b#c", "https://[fe80::1%25eth0]/", "https://[::ffff:127.0.0.1]/",
		"https://[2606:4700::1111]:8443/", "https://xn--exmple-cua.com/", "https:example.com", "https://example.com.:0/",
		"https://1.1.1.1./", "https://a.localhost/", "https://example.com/%zz", "https://example.com/a%2Fb",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool) {
		u, err := ValidateURL(raw, allowPrivate)
		if err != nil {
			if u != nil {
				t.Fatal("a refusal returned a URL")
			}
			// Refusals are the fixed sentences, which repeat nothing.
			if !slices.Contains(urlRefusals, err) {
				t.Fatalf("refusal %q is not one of the package's sentences", err)
			}
			return
		}
		if len(raw) > MaxURLLength || u.Hostname() == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("accepted %q: %#v", raw, u)
		}
		if u.Scheme != "https" && !(allowPrivate && u.Scheme == "http") {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && !egress.Allowed(a, allowPrivate) {
			t.Fatalf("accepted %q, whose address is refused when dialed", raw)
		}
		// The sender validates the parsed URL again: it must still pass.
		if _, err := ValidateURL(u.String(), allowPrivate); err != nil {
			t.Fatalf("accepted %q but not its String() %q: %v", raw, u.String(), err)
		}
		if !allowPrivate {
			if _, err := ValidateURL(raw, true); err != nil {
				t.Fatalf("accepted %q for public use but not with allowPrivate: %v", raw, err)
			}
		}
	})
}

func FuzzDecodeSecret(f *testing.F) {
	f.Add("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	f.Add("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=")
	f.Add("whsec_")
	f.Add("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	f.Fuzz(func(t *testing.T, s string) {
		key, err := DecodeSecret(s)
		if err != nil {
			if key != nil || err != ErrSecret {
				t.Fatalf("DecodeSecret = %x, %v", key, err)
			}
			return
		}
		if len(key) != KeySize {
			t.Fatalf("a %d-byte key", len(key))
		}
		// Only the one canonical spelling of each key is accepted.
		if s != SecretPrefix+base64.StdEncoding.EncodeToString(key) {
			t.Fatalf("accepted a non-canonical secret")
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "Sun, 29 Nov 2026 14:00:00 GMT", "Sunday, 29-Nov-26 12:05:00 GMT",
		"Sun Nov 29 12:00:30 2026", "-1", "99999999999999999999", " 5 ", "1e3"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter(%q) = %v, %v", s, d, ok)
		}
		last := Attempt{StatusCode: 503, Error: "x", RetryAfter: d}
		for n := 1; n < MaxAttempts; n++ {
			next, retry := NextAttempt(n, last, func() float64 { return 0.5 })
			if !retry || next < schedule[n] || next > max(schedule[n], MaxRetryAfter) {
				t.Fatalf("NextAttempt(%d) with Retry-After %v = %v, %v", n, d, next, retry)
			}
		}
	})
}

// FuzzEventEncode feeds arbitrary text into every field: whatever Encode
// accepts is JSON holding exactly those fields, and its headers carry no
// line break.
func FuzzEventEncode(f *testing.F) {
	f.Add("evt_1", "task_failed", "alice.near", "agent", "github", "run-1-0", "confirm", "run-2", "run_refused:conflict", "https://i.example/")
	f.Add("evt_2", "ping", "bob.near", "", "", "", "", "", "", "https://i.example/")
	f.Add("e\r\n", "task_created", "a\nb", "\x00", "é", "r", "notice", "", "", "http://x")
	f.Fuzz(func(t *testing.T, id, typ, owner, preparer, project, taskID, kind, run, reason, link string) {
		ev := Event{ID: id, Type: EventType(typ), At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Owner: owner,
			Preparer: preparer, Project: project, TaskID: taskID, Kind: kind, Run: run, FailureReason: reason, Link: link}
		body, h, err := Sign(make([]byte, KeySize), ev, time.Unix(1_800_000_000, 0))
		if err != nil {
			return
		}
		var got map[string]string
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("body %q is not a JSON object of strings: %v", body, err)
		}
		if got["id"] != id || got["type"] != typ || got["owner"] != owner || got["link"] != link ||
			got["at"] != "2026-01-02T03:04:05Z" {
			t.Fatalf("body %s does not hold the event", body)
		}
		if typ != string(Ping) && (got["preparer"] != preparer || got["project"] != project || got["task_id"] != taskID ||
			got["kind"] != kind || got["run"] != run || got["failure_reason"] != reason || got["state"] == "") {
			t.Fatalf("body %s does not hold the task event", body)
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.ContainsAny(v, "\r\n\x00") {
					t.Fatalf("header %s has a line break: %q", k, v)
				}
			}
		}
	})
}
