package gmail_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// read is what Python's standard MIME parser (email, policy.default) reads
// in a message: what a recipient's mail reader shows.
type read struct {
	To, Cc, Bcc       []string
	Subject           *string
	Body              string
	Defects           []string
	LongestHeaderLine int `json:"longest_header_line"`
	Attachments       []struct {
		Filename    string
		Name        string
		ContentType string `json:"content_type"`
		Data        []byte
	}
}

// python3 is the interpreter the MIME test reads messages with. Without
// it the test is skipped, loudly, and fails under CI.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		msg := "python3 is not installed: the messages are not read by a standard MIME parser (install Debian's python3)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	return p
}

func readMessage(t *testing.T, py string, msg []byte) read {
	t.Helper()
	f := filepath.Join(t.TempDir(), "message.eml")
	if err := os.WriteFile(f, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "read_message.py"), f).Output()
	if err != nil {
		t.Fatalf("python3 could not read the message: %v\n%s", err, msg)
	}
	var r read
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r
}

// Every header of a message sent decodes, by a standard MIME parser, to
// exactly what the owner was shown, and no header line is longer than 78
// characters: non-ASCII and long subjects and file names, text that looks
// like an encoded word, many recipients, addresses keeping their case, and
// binary attachments.
func TestMessagesReadAsShown(t *testing.T) {
	t.Parallel()
	py := python3(t)
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s.%02d.someone-with-a-long-name@department.example.com", prefix, i))
		}
		return out
	}
	type file struct {
		name, contentType string
		data              []byte
	}
	for _, tc := range []struct {
		name        string
		to, cc, bcc []string
		subject     string
		files       []file
	}{
		{"non-ASCII", []string{"dana@example.com"}, []string{"lee@example.com"}, []string{"audit@example.org"}, "Отчёт за ноябрь: 100 % готов 🎉",
			[]file{{"данные 2026.csv", "text/csv", []byte("a,b\n1,2\n")}, {"résumé final.pdf", "application/pdf", []byte("%PDF-1.4")}}},
		{"400 ASCII characters", []string{"dana@example.com"}, nil, nil, strings.Repeat("Quarterly numbers and notes ", 15)[:400], nil},
		{"400 characters not ASCII", []string{"dana@example.com"}, nil, nil, string([]rune(strings.Repeat("Квартальные итоги ", 23))[:400]), nil},
		{"one word of 200 characters", []string{"dana@example.com"}, nil, nil, strings.Repeat("x", 200), nil},
		{"a subject that looks like an encoded word", []string{"dana@example.com"}, nil, nil, "=?UTF-8?B?SGFja2VkIQ==?=", nil},
		{"a subject with one inside", []string{"dana@example.com"}, nil, nil, "Re: =?UTF-8?Q?caf=C3=A9?= and more", nil},
		{"spaces at the ends and in a row", []string{"dana@example.com"}, nil, nil, "  two  spaces  ", nil},
		{"60 recipients", many("to", 20), many("cc", 20), many("bcc", 20), "To everyone", nil},
		{"addresses keep their local part's case", []string{"Dana.Smith@Example.COM", "dana.smith@example.com"}, nil, nil, "Case", nil},
		{"a binary attachment with a long name", []string{"dana@example.com"}, nil, nil, "Binary",
			[]file{{string([]rune(strings.Repeat("очень длинное имя ", 10))[:150]) + ".bin", "application/octet-stream", binary}, {strings.Repeat("n", 190) + ".txt", "text/plain", []byte("long")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, f := setup(t, `{"confirm": ["send"]}`)
			args := map[string]any{"operation": "send", "to": tc.to, "subject": tc.subject, "body": "Hello,\nsee below.\n"}
			if tc.cc != nil {
				args["cc"] = tc.cc
			}
			if tc.bcc != nil {
				args["bcc"] = tc.bcc
			}
			var atts []map[string]string
			for _, fl := range tc.files {
				atts = append(atts, map[string]string{"name": fl.name, "content_type": fl.contentType, "data_base64": base64.StdEncoding.EncodeToString(fl.data)})
			}
			if atts != nil {
				args["attachments"] = atts
			}
			body, _ := json.Marshal(args)
			out, err := h.Call(ctx, string(body))
			if err != nil {
				t.Fatal(err)
			}
			task, err := h.Awaiting(out)
			if err != nil {
				t.Fatal(err)
			}
			shown := map[string][]string{}
			for _, fl := range task.Spec.Display.Fields {
				shown[fl.Label] = fl.Values
			}
			var shownFiles []string
			for _, fl := range task.Spec.Files {
				shownFiles = append(shownFiles, fl.Name)
			}
			if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
				t.Fatal(err)
			}
			sent := f.Sent()
			if len(sent) != 1 || !bytes.Equal(sent[0], task.Spec.Files[len(task.Spec.Files)-1].Data) {
				t.Fatal("Gmail was not sent message.eml")
			}
			r := readMessage(t, py, sent[0])
			if len(r.Defects) != 0 {
				t.Errorf("the parser found defects: %v", r.Defects)
			}
			if r.LongestHeaderLine > 78 {
				t.Errorf("a header line is %d characters long", r.LongestHeaderLine)
			}
			for _, l := range []struct {
				label string
				got   []string
			}{{"To", r.To}, {"Cc", r.Cc}, {"Bcc", r.Bcc}} {
				if !slices.Equal(l.got, shown[l.label]) {
					t.Errorf("%s reads %q; the owner was shown %q", l.label, l.got, shown[l.label])
				}
			}
			if r.Subject == nil || !slices.Equal([]string{*r.Subject}, shown["Subject"]) {
				t.Errorf("the subject reads %q; the owner was shown %q", deref(r.Subject), shown["Subject"])
			}
			if r.Body != strings.Join(shown["Body"], "") {
				t.Errorf("the body reads %q; the owner was shown %q", r.Body, shown["Body"])
			}
			if len(r.Attachments) != len(tc.files) {
				t.Fatalf("%d attachments read, %d sent", len(r.Attachments), len(tc.files))
			}
			for i, a := range r.Attachments {
				want := tc.files[i]
				if a.Filename != shownFiles[i] || a.Name != shownFiles[i] || a.Filename != want.name ||
					a.ContentType != want.contentType || !bytes.Equal(a.Data, want.data) {
					t.Errorf("attachment %d reads %q (name %q, %s, %d bytes); the owner was shown the file %q", i+1, a.Filename, a.Name, a.ContentType, len(a.Data), shownFiles[i])
				}
			}
			if got := shown["Attachments"]; len(tc.files) > 0 && !slices.Equal(got, shownFiles[:len(tc.files)]) {
				t.Errorf("the Attachments field shows %q, the files are %q", got, shownFiles)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
