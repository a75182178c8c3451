package gmail

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
	"unicode/utf8"
)

// attachment is one file of a message.
type attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// draft is what a message is built from.
type draft struct {
	To, Cc, Bcc []string
	Subject     string
	Body        string
	Attachments []attachment
}

// checkAddress reads one bare address: no display name, no list, ASCII.
// A display name is where a second recipient can hide from a policy check,
// so none is taken.
func checkAddress(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !isASCII(s) || strings.ContainsAny(s, "<>,;\"\\ ") {
		return "", fmt.Errorf("not one bare address")
	}
	return strings.ToLower(s), nil
}

// domain is an address's domain, lower case.
func domain(addr string) string {
	return strings.ToLower(addr[strings.LastIndexByte(addr, '@')+1:])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return false
		}
	}
	return true
}

// build writes the RFC 5322 message, once: no From (Gmail fills in the
// account), To, Cc and Bcc as given (Gmail delivers to Bcc and removes the
// header), the subject encoded when it is not ASCII, the body as UTF-8
// text in base64, and each attachment in base64 in a multipart/mixed whose
// boundary is derived from the content. The bytes are what the owner is
// shown as message.eml and what Gmail is sent.
func build(d draft) []byte {
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	if len(d.To) > 0 {
		header("To", strings.Join(d.To, ", "))
	}
	if len(d.Cc) > 0 {
		header("Cc", strings.Join(d.Cc, ", "))
	}
	if len(d.Bcc) > 0 {
		header("Bcc", strings.Join(d.Bcc, ", "))
	}
	header("Subject", encodeHeader(d.Subject))
	header("MIME-Version", "1.0")
	textHeader := textproto.MIMEHeader{"Content-Type": {`text/plain; charset="UTF-8"`}, "Content-Transfer-Encoding": {"base64"}}
	if len(d.Attachments) == 0 {
		for _, k := range []string{"Content-Type", "Content-Transfer-Encoding"} {
			header(k, textHeader.Get(k))
		}
		b.WriteString("\r\n")
		writeBase64(&b, []byte(d.Body))
		return b.Bytes()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q|%q|%q|%q|%q", d.To, d.Cc, d.Bcc, d.Subject, d.Body)
	for _, a := range d.Attachments {
		fmt.Fprintf(h, "|%q|%q|%x", a.Name, a.ContentType, sha256.Sum256(a.Data))
	}
	boundary := "countersign-" + hex.EncodeToString(h.Sum(nil))[:32]
	header("Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": boundary}))
	b.WriteString("\r\n")
	mw := multipart.NewWriter(&b)
	_ = mw.SetBoundary(boundary)
	pw, _ := mw.CreatePart(textHeader)
	writeBase64(pw, []byte(d.Body))
	for _, a := range d.Attachments {
		pw, _ := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {mime.FormatMediaType(a.ContentType, map[string]string{"name": a.Name})},
			"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": a.Name})},
			"Content-Transfer-Encoding": {"base64"},
		})
		writeBase64(pw, a.Data)
	}
	_ = mw.Close()
	return b.Bytes()
}

// encodeHeader writes a header value: as it is when it is printable ASCII,
// else as RFC 2047 encoded words.
func encodeHeader(s string) string {
	if isASCII(s) {
		return s
	}
	return mime.BEncoding.Encode("UTF-8", s)
}

// writeBase64 writes data in base64 with lines of 76 characters.
func writeBase64(w io.Writer, data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		_, _ = w.Write([]byte(enc[:76] + "\r\n"))
		enc = enc[76:]
	}
	_, _ = w.Write([]byte(enc + "\r\n"))
}

// cutRunes cuts s to n characters.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
