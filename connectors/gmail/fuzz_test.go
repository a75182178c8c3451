package gmail

import (
	"bytes"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"countersign/egress"
)

// FuzzCheckAddress: an address taken is one mailbox as net/mail reads it,
// with nothing a header could be split on.
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{"dana@example.com", "Dana <dana@example.com>", "a@b.c, d@e.f", "a@b.c\r\nBcc: x@y.z", "\"a,b\"@example.com", "ü@example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := checkAddress(s)
		if err != nil {
			return
		}
		list, err := mail.ParseAddressList(a)
		if err != nil || len(list) != 1 || strings.ContainsAny(a, "\r\n,<>\" ") || !strings.Contains(a, "@") {
			t.Fatalf("%q taken as %q", s, a)
		}
	})
}

// FuzzGoogleText: whatever Google answers, the sentence is printable and short.
func FuzzGoogleText(f *testing.F) {
	for _, s := range []string{`{"error":{"code":400,"message":"Invalid","status":"INVALID_ARGUMENT"}}`, `{"error":"x"}`, ``, `{"error":{"message":"a\u202e\nb"}}`} {
		f.Add([]byte(s), 400)
	}
	f.Fuzz(func(t *testing.T, raw []byte, status int) {
		s := googleText(raw, status)
		if s == "" || len([]rune(s)) > 250 {
			t.Fatalf("%q", s)
		}
		for _, r := range s {
			if !unicode.IsPrint(r) {
				t.Fatalf("%q holds %U", s, r)
			}
		}
	})
}

// FuzzBuild: a message built from any subject, body and attachment reads
// back as one RFC 5322 message with the recipients it was given; its
// header lines are at most 78 characters, and its subject and file name
// decode to exactly the text given.
func FuzzBuild(f *testing.F) {
	f.Add("Hi", "Hello", "a.txt", []byte("x"))
	f.Add("Отчёт", "", "данные.csv", []byte{})
	f.Add("=?UTF-8?B?SGk=?=", "x", "=?UTF-8?Q?a?=.txt", []byte("y"))
	f.Add(strings.Repeat("long ", 80), "x", strings.Repeat("é", 200), []byte("z"))
	f.Fuzz(func(t *testing.T, subject, body, name string, data []byte) {
		if strings.ContainsAny(subject, "\r\n") || strings.IndexFunc(subject, unicode.IsControl) >= 0 || name == "" ||
			!utf8.ValidString(subject) || !utf8.ValidString(name) || strings.ContainsAny(name, "\r\n") {
			return
		}
		d := draft{To: []string{"dana@example.com"}, Bcc: []string{"x@example.org"}, Subject: subject, Body: body,
			Attachments: []attachment{{Name: name, ContentType: "application/octet-stream", Data: data}}}
		msg := build(d)
		m, err := mail.ReadMessage(bytes.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("To") != "dana@example.com" || m.Header.Get("Bcc") != "x@example.org" || m.Header.Get("Cc") != "" {
			t.Fatalf("headers %v", m.Header)
		}
		if !bytes.Equal(build(d), msg) {
			t.Fatal("the same draft built twice differs")
		}
		inHeader := true
		for _, line := range strings.Split(string(msg), "\r\n") {
			switch {
			case strings.HasPrefix(line, "--countersign-"):
				inHeader = true
			case inHeader && line == "":
				inHeader = false
			case inHeader && len(line) > maxLine:
				t.Fatalf("a header line of %d characters: %q", len(line), line)
			}
		}
		got, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if err != nil || got != subject {
			t.Fatalf("the subject %q reads %q (%v)", subject, got, err)
		}
		_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
		mr := multipart.NewReader(m.Body, params["boundary"])
		if _, err := mr.NextPart(); err != nil {
			t.Fatal(err)
		}
		p, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		if _, dp, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err != nil || dp["filename"] != name {
			t.Fatalf("the file name %q reads %q (%v)", name, dp["filename"], err)
		}
	})
}

// FuzzEndpoint: a base_url or token_url from the owner's credentials is
// used only when the egress rules take it, and no refusal quotes it.
func FuzzEndpoint(f *testing.F) {
	for _, s := range []string{"", "https://gmail.googleapis.com/", "http://127.0.0.1:1", "https://s3cr3t@example.com/a/../b?c#d",
		"https://169.254.169.254/token", "https://oauth2.googleapis.com/token/"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, own string, allowPrivate bool) {
		c := &connector{cfg: Config{Egress: egress.Options{AllowPrivate: allowPrivate}}}
		for _, what := range []string{"base_url", "token_url"} {
			u, mine, err := c.endpoint(what, own, DefaultBaseURL)
			if err != nil {
				if strings.Contains(own, "s3cr3t") && strings.Contains(err.Error(), "s3cr3t") {
					t.Fatal("a refusal quotes the URL")
				}
				continue
			}
			if mine != (own != "") {
				t.Fatalf("%q: own %v", own, mine)
			}
			if _, err := egress.CheckBaseURL(u, allowPrivate); err != nil {
				t.Fatalf("%s %q is used as %q, which the rules refuse: %v", what, own, u, err)
			}
		}
	})
}
