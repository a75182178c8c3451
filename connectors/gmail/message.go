package gmail

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
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
// so none is taken. The domain is written in lower case; the local part
// keeps its case, which only the receiving domain may ignore (RFC 5321
// §2.4).
func checkAddress(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !isASCII(s) || strings.ContainsAny(s, "<>,;\"\\ ") {
		return "", fmt.Errorf("not one bare address")
	}
	at := strings.LastIndexByte(s, '@')
	return s[:at+1] + strings.ToLower(s[at+1:]), nil
}

// domain is an address's domain, lower case.
func domain(addr string) string {
	return strings.ToLower(addr[strings.LastIndexByte(addr, '@')+1:])
}

// sameAddress reports whether two addresses name one mailbox as far as a
// sender can tell: the same local part, case included, at the same domain,
// case ignored.
func sameAddress(a, b string) bool {
	i, j := strings.LastIndexByte(a, '@'), strings.LastIndexByte(b, '@')
	return i >= 0 && j >= 0 && a[:i] == b[:j] && strings.EqualFold(a[i:], b[j:])
}

// isASCII reports whether s is printable ASCII (space included).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f || s[i] < 0x20 {
			return false
		}
	}
	return true
}

// maxLine is the longest header line written, CRLF aside: RFC 5322 §2.1.1
// asks for at most 78 characters (and allows 998 at most). A single address
// or media type longer than that keeps its own, longer, line.
const maxLine = 78

// build writes the RFC 5322 message, once: no From (Gmail fills in the
// account), To, Cc and Bcc as given (Gmail delivers to Bcc and removes the
// header), the subject as it is or as RFC 2047 encoded words, the body as
// UTF-8 text in base64, and each attachment in base64 in a multipart/mixed
// whose boundary is derived from the content. Every header line is folded
// within maxLine characters; a header decodes, by MIME's rules, to exactly
// the text the owner is shown. The bytes are what the owner is shown as
// message.eml and what Gmail is sent.
func build(d draft) []byte {
	var b bytes.Buffer
	header := func(name string, words []string) { b.WriteString(name + ": " + fold(name, words) + "\r\n") }
	for _, h := range []struct {
		name string
		list []string
	}{{"To", d.To}, {"Cc", d.Cc}, {"Bcc", d.Bcc}} {
		if len(h.list) > 0 {
			header(h.name, addressWords(h.list))
		}
	}
	header("Subject", subjectWords(d.Subject))
	header("MIME-Version", []string{"1.0"})
	textHeader := textproto.MIMEHeader{"Content-Type": {`text/plain; charset="UTF-8"`}, "Content-Transfer-Encoding": {"base64"}}
	if len(d.Attachments) == 0 {
		for _, k := range []string{"Content-Type", "Content-Transfer-Encoding"} {
			b.WriteString(k + ": " + textHeader.Get(k) + "\r\n")
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
	header("Content-Type", []string{"multipart/mixed;", "boundary=" + boundary})
	b.WriteString("\r\n")
	mw := multipart.NewWriter(&b)
	_ = mw.SetBoundary(boundary)
	pw, _ := mw.CreatePart(textHeader)
	writeBase64(pw, []byte(d.Body))
	for _, a := range d.Attachments {
		pw, _ := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {fold("Content-Type", withParam(a.ContentType, "name", a.Name))},
			"Content-Disposition":       {fold("Content-Disposition", withParam("attachment", "filename", a.Name))},
			"Content-Transfer-Encoding": {"base64"},
		})
		writeBase64(pw, a.Data)
	}
	_ = mw.Close()
	return b.Bytes()
}

// fold joins words with single spaces after "name: ", and starts a new
// line (CRLF before the space) where the next word would take the line
// past maxLine. Unfolding (RFC 5322 §2.2.3) gives the words joined by
// single spaces again.
func fold(name string, words []string) string {
	var b strings.Builder
	line := len(name) + 2
	for i, w := range words {
		if i > 0 {
			if line+1+len(w) > maxLine {
				b.WriteString("\r\n")
				line = 0
			}
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// addressWords are an address list's words: each address, a comma after
// all but the last.
func addressWords(list []string) []string {
	words := make([]string, len(list))
	for i, a := range list {
		words[i] = a
		if i < len(list)-1 {
			words[i] += ","
		}
	}
	return words
}

// subjectWords are the subject's words: the subject itself, split at its
// spaces, when it is printable ASCII that reads as itself (no encoded-word
// opener "=?", no space at either end or two in a row, no word too long
// for a line); otherwise RFC 2047 encoded words of its UTF-8, cut between
// characters, each short enough for its line. A subject that merely looks
// like an encoded word is so encoded, and recipients read its literal
// text.
func subjectWords(s string) []string {
	if s == "" {
		return nil
	}
	plain := isASCII(s) && !strings.Contains(s, "=?") && s[0] != ' ' && s[len(s)-1] != ' ' && !strings.Contains(s, "  ")
	words := strings.Split(s, " ")
	for i, w := range words {
		room := maxLine - 1
		if i == 0 {
			room = maxLine - len("Subject: ")
		}
		if len(w) > room {
			plain = false
		}
	}
	if plain {
		return words
	}
	return encodedWords(s, maxLine-len("Subject: "))
}

// encodedWords writes s as RFC 2047 "B" encoded words of UTF-8, cut
// between characters: the first at most first characters long, the others
// at most 75 (RFC 2047 §2), so that each fits its line.
func encodedWords(s string, first int) []string {
	const overhead = len("=?UTF-8?B?") + len("?=")
	var words []string
	limit := min(first, 75)
	for s != "" {
		// The most bytes whose base64 fits: 3 bytes per 4 characters.
		most := (limit - overhead) / 4 * 3
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > most {
				break
			}
			n += size
		}
		words = append(words, "=?UTF-8?B?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
		limit = 75
	}
	return words
}

// withParam is a media type or disposition with one parameter, as words
// for fold: attr="value" when the value is printable ASCII that reads as
// itself and fits a line; otherwise RFC 2231 §3 and §4 continuations of
// its percent-encoded UTF-8 (attr*0*= with the charset UTF-8 and no
// language, then attr*1*= and so on), each short enough for a line. A value that merely looks like an RFC 2047 encoded
// word is encoded too, since mail readers decode those even in quoted
// parameters.
func withParam(value, attr, v string) []string {
	quoted := attr + `="` + v + `"`
	if isASCII(v) && !strings.ContainsAny(v, `"\`) && !strings.Contains(v, "=?") && len(quoted) < maxLine {
		return []string{value + ";", quoted}
	}
	var enc strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			enc.WriteByte(c)
		} else {
			fmt.Fprintf(&enc, "%%%02X", c)
		}
	}
	words := []string{value + ";"}
	rest := enc.String()
	for n := 0; rest != ""; n++ {
		word := fmt.Sprintf("%s*%d*=", attr, n)
		if n == 0 {
			word += "UTF-8''"
		}
		// The line is a space, the word, the encoded text and a semicolon.
		cut := min(maxLine-2-len(word), len(rest))
		// Never split a %XX triplet.
		if i := strings.LastIndexByte(rest[:cut], '%'); i >= 0 && i > cut-3 && cut < len(rest) {
			cut = i
		}
		words = append(words, word+rest[:cut]+";")
		rest = rest[cut:]
	}
	last := words[len(words)-1]
	words[len(words)-1] = strings.TrimSuffix(last, ";")
	return words
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
