package mercury

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"countersign/egress"
)

// FuzzErrorText: whatever Mercury answers, the sentence made of it is
// short, valid UTF-8 and free of control and formatting characters.
func FuzzErrorText(f *testing.F) {
	for _, s := range []string{`{"errors":{"message":"insufficient funds"}}`, `{"message":"a\u202eb\nc"}`, `{"error":"x"}`, `not json`, ``, `{"errors":[1]}`} {
		f.Add([]byte(s), 400)
	}
	f.Fuzz(func(t *testing.T, raw []byte, status int) {
		s := errorText(raw, status)
		if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > 200 {
			t.Fatalf("%q", s)
		}
		for _, r := range s {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Fatalf("%q holds %U", s, r)
			}
		}
	})
}

// FuzzDollarsOf: an amount Mercury writes reads exactly, and reads back.
func FuzzDollarsOf(f *testing.F) {
	for _, s := range []string{"1500", "1500.5", "-12.30", "0.01", "1e3", "1.005", "-", "", "00.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := dollarsOf(json.Number(s))
		if !ok {
			return
		}
		back, ok := dollarsOf(dollarNumber(c))
		if !ok || back != c {
			t.Fatalf("%q read as %d, written %s, read back %d", s, c, dollarNumber(c), back)
		}
		if m := money(c); !strings.HasPrefix(strings.TrimPrefix(m, "-"), "$") {
			t.Fatalf("money(%d) = %q", c, m)
		}
	})
}

// FuzzParseWrite: a sealed write either reads whole or is refused, and one
// that reads can be decided by the policy without a missing fact.
func FuzzParseWrite(f *testing.F) {
	for _, s := range []string{
		`{"op":"pay_invoice","account_id":"a","recipient_id":"r","payee":"saved","cents":100,"method":"ach"}`,
		`{"op":"pay_invoice","account_id":"a","payee":"new","new":{"name":"n","email":"e","account_number":"1","routing_number":"2"},"cents":5,"method":"wire"}`,
		`{"op":"cancel_invoice","invoice_id":"i"}`, `{"op":"send_invoice","cents":1,"invoice":{}}`, `{"op":"x"}`, `[]`, `{"op":"pay_invoice","Op":"x"}`,
	} {
		f.Add([]byte(s))
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		w, err := parseWrite(raw)
		if err != nil {
			return
		}
		p := c.ParsePolicy([]byte(`{"rules":[{"when":{"op":"pay_invoice","min_usd":1},"then":"ask"}]}`))
		if d := p.Decide(w.Op, w.facts()); d.Code == "internal_error" {
			t.Fatalf("%s: %s", raw, d.Sentence)
		}
	})
}

// FuzzCredentials: a project's credentials are the owner's bytes; what is
// accepted has a base the egress rules accept, and no refusal quotes them.
func FuzzCredentials(f *testing.F) {
	f.Add([]byte(`{"token": "secret-token:x"}`), false)
	f.Add([]byte(`{"token": "secret-token:x", "base_url": "https://api-sandbox.mercury.com/api/v1/"}`), false)
	f.Add([]byte(`{"token": "secret-token:x", "base_url": "http://127.0.0.1:1/api/v1"}`), true)
	f.Add([]byte(`{"token": "secret-token:s3cr3t", "base_url": "https://s3cr3t@example.com/a/../b?c#d"}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, allowPrivate bool) {
		c := &connector{cfg: Config{BaseURL: DefaultBaseURL, Egress: egress.Options{AllowPrivate: allowPrivate}}}
		cl, err := c.client(raw)
		if err != nil {
			if bytes.Contains(raw, []byte("s3cr3t")) && strings.Contains(err.Error(), "s3cr3t") {
				t.Fatal("a refusal quotes the credentials")
			}
			return
		}
		if cl.token == "" || strings.HasSuffix(cl.base, "/") {
			t.Fatalf("%+v", cl)
		}
		if _, err := egress.CheckBaseURL(cl.base, allowPrivate); err != nil {
			t.Fatalf("the base %q does not pass again: %v", cl.base, err)
		}
	})
}
