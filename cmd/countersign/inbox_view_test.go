package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"countersign"
)

func testEnvelope() countersign.Envelope {
	created := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return countersign.Envelope{
		AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone},
		Build:    "github@1.2.0", CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour),
		ID: "0123456789abcdefghjkmnpqrs-1", Kind: countersign.KindConfirm, Owner: "alice.near", Preparer: "bot.near",
		Project: "github", ProjectUUID: "6f1c0c39-2b7e-4a43-9d3e-3c2d2c1e8a11",
		Display: countersign.Display{Title: "Merge pull request #12", Summary: "merge pull request #12 of alice/app into main at 3f2a9c1", Fields: []countersign.Field{
			{Kind: countersign.FieldText, Label: "Repository", Values: []string{"alice/app"}, WrittenBy: countersign.WrittenByProject},
			{Kind: countersign.FieldLongText, Label: "Why", Values: []string{"The tests pass.\n\tAll of them.\nShip it."}, WrittenBy: countersign.WrittenByAgent},
			{Kind: countersign.FieldList, Label: "Files", Values: []string{"a.go", "b.go"}, WrittenBy: countersign.WrittenByProject},
		}},
		Files: []countersign.File{{ContentType: "text/x-diff", Name: "change.diff", SHA256: strings.Repeat("a", 64), Size: 12345}},
	}
}

// TestPreview: what approving does comes first; the agent's words are
// marked and the project's are not; long texts keep their lines, indented;
// lists show one value a line; the files, expiry, what an answer needs and
// the hash follow.
func TestPreview(t *testing.T) {
	t.Parallel()
	e := testEnvelope()
	var b bytes.Buffer
	preview{Envelope: e, TaskHash: strings.Repeat("f", 64), State: string(countersign.StateOpen), Receipt: "verified (run 0123456789abcdefghjkmnpqrs)",
		Now: e.CreatedAt.Add(90 * time.Minute)}.write(&b)
	want := `If you approve: merge pull request #12 of alice/app into main at 3f2a9c1
Merge pull request #12
task: 0123456789abcdefghjkmnpqrs-1 (confirm, open)
from: bot.near in project github (github@1.2.0)
receipt: verified (run 0123456789abcdefghjkmnpqrs)
  Repository: alice/app
  🤖 Why: The tests pass.
      	All of them.
      Ship it.
  Files:
      - a.go
      - b.go
  (🤖: the agent's own words, not the connector's)
files:
  1. change.diff (text/x-diff, 12.3 kB)
expires: 2026-11-30T12:00:00Z (in 22h30m)
answer: none, approve or reject (confirm)
hash: ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
`
	if b.String() != want {
		t.Fatalf("preview:\n%s\nwant:\n%s", b.String(), want)
	}

	// A summary that could drive the terminal is printed escaped.
	e.Display.Summary = "merge \x1b[2Jnow"
	b.Reset()
	preview{Envelope: e, State: string(countersign.StateOpen), Receipt: "verified", Now: e.CreatedAt}.write(&b)
	if !strings.HasPrefix(b.String(), "If you approve: merge \\u001b[2Jnow\nMerge pull request #12\n") {
		t.Errorf("an escaped summary:\n%s", b.String())
	}
	// A task without a summary (opened before summaries) starts with its
	// title.
	e.Display.Summary = ""
	b.Reset()
	preview{Envelope: e, State: string(countersign.StateOpen), Receipt: "verified", Now: e.CreatedAt}.write(&b)
	if !strings.HasPrefix(b.String(), "Merge pull request #12\ntask: ") {
		t.Errorf("without a summary:\n%s", b.String())
	}

	// Without agent fields there is no mark and no legend; a notice says
	// how to acknowledge it; an input task says what to supply.
	e.Display.Fields = e.Display.Fields[:1]
	e.Files = nil
	for _, tc := range []struct {
		answerBy *countersign.AnswerBy
		want     string
	}{
		{nil, "answer: nothing, it is a notice (countersign inbox ack 0123456789abcdefghjkmnpqrs-1)\n"},
		{&countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText}, "answer: text (guess): approve with --text\n"},
		{&countersign.AnswerBy{Operation: "upload", Supplies: countersign.SuppliesFile}, "answer: file (upload): approve with --file\n"},
	} {
		e.AnswerBy = tc.answerBy
		b.Reset()
		preview{Envelope: e, State: string(countersign.StateOpen), Receipt: "NOT VERIFIED: x", Now: e.ExpiresAt.Add(time.Second)}.write(&b)
		out := b.String()
		if strings.Contains(out, agentMark) || !strings.Contains(out, tc.want) || !strings.Contains(out, "files: none\n") ||
			!strings.Contains(out, "receipt: NOT VERIFIED: x\n") || !strings.Contains(out, "(expired by this machine's clock)") {
			t.Errorf("preview:\n%s\nwant %q", out, tc.want)
		}
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain text, ünïcode, 数字, emoji 👍🏽": "plain text, ünïcode, 数字, emoji 👍🏽",
		"\x1b[31mred\x1b[0m":                `\u001b[31mred\u001b[0m`,
		"a\nb\tc\rd":                        `a\u000ab\u0009c\u000dd`,
		"pay \u202eevil\u202c":              `pay \u202eevil\u202c`,
		"zero\u200bwidth\ufeff":             `zero\u200bwidth\ufeff`,
		"line\u2028sep":                     `line\u2028sep`,
		"c1 \u009b31m":                      `c1 \u009b31m`,
		"bad \xff utf8":                     `bad \xff utf8`,
		"tag \U000E0041":                    `tag \U000e0041`,
		"selector a\ufe00":                  `selector a\ufe00`,
		"text style \u2764\ufe0f":           "text style \u2764\ufe0f",
	}
	for in, want := range cases {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cleanLine("a\tb\x1b"); got != "a\tb\\u001b" {
		t.Errorf("cleanLine keeps tabs only: %q", got)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\u202e", "a\tb\nc", "\xff\xfe", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, keepTab := range []bool{false, true} {
			out := escapeInvisible(s, keepTab)
			if !utf8.ValidString(out) {
				t.Fatalf("%q: invalid UTF-8 out: %q", s, out)
			}
			for _, r := range out {
				if invisible(r, keepTab) {
					t.Fatalf("%q: %U left in %q", s, r, out)
				}
			}
			if !needsEscape(s, keepTab) && out != s {
				t.Fatalf("%q: changed to %q", s, out)
			}
		}
	})
}

func BenchmarkPreview(b *testing.B) {
	e := testEnvelope()
	p := preview{Envelope: e, TaskHash: strings.Repeat("f", 64), State: string(countersign.StateOpen), Receipt: "verified (run x)", Now: e.CreatedAt}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		p.write(&buf)
	}
}
