package github

import (
	"strings"
	"testing"
	"unicode/utf8"

	"countersign"
	"countersign/egress"
)

// A line stays one line of shown text whatever its values hold: a name
// that is not one plain word is quoted, a value too long is cut without
// parting a letter from its marks, and a value no quoting makes shown
// text is escaped to ASCII.
func TestLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		l    line
		want string
	}{
		{"a plain name", line{words("star "), name("octo/app")}, "star octo/app"},
		{"a name with a space", line{words("star "), name("octo app")}, `star "octo app"`},
		{"a name with a quote", line{words("on "), name(`a"b`)}, `on "a\"b"`},
		{"a bidi control", line{words("on "), name("main\u202egnp.exe")}, `on "main\u202egnp.exe"`},
		{"a line break in a title", line{words("open "), quoted("a\nb")}, `open "a\nb"`},
		{"non-ASCII stays", line{words("open "), quoted("Grüße")}, `open "Grüße"`},
		{"too many marks", line{words("open "), quoted("a\u0301\u0301\u0301\u0301\u0301")}, `open "a\u0301\u0301\u0301\u0301\u0301"`},
		{"cut before marks", line{words(strings.Repeat("w", 186)), quoted("abcdefgh" + strings.Repeat("e\u0301", 20))},
			strings.Repeat("w", 186) + `"abcdefghe` + "\u0301" + `…"`},
	} {
		got := tt.l.String()
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		if err := countersign.ValidateSummary(got); err != nil || utf8.RuneCountInString(got) > countersign.MaxSummaryChars {
			t.Errorf("%s: %q: %v", tt.name, got, err)
		}
	}
	// However many long values, the line fits.
	var l line
	for range 12 {
		l = append(l, words(" and "), quoted(strings.Repeat("z", 300)))
	}
	if got := l.String(); utf8.RuneCountInString(got) > countersign.MaxSummaryChars || countersign.ValidateSummary(got) != nil {
		t.Fatalf("%d: %q", utf8.RuneCountInString(got), got)
	}
}

// An outcome's link is a page the owner may open: https, or http where
// wiring allows private hosts; nothing else GitHub might answer.
func TestPages(t *testing.T) {
	t.Parallel()
	prod, dev := &GitHub{}, &GitHub{opts: Options{Egress: egress.Options{AllowPrivate: true}}}
	for _, tt := range []struct {
		url       string
		prod, dev bool
	}{
		{"https://github.com/o/r/pull/1", true, true},
		{"http://127.0.0.1:8080/o/r/pull/1", false, true},
		{"javascript:alert(1)", false, false},
		{"//github.com/o/r", false, false},
		{"https://user:pw@github.com/o/r", false, false},
		{"", false, false},
	} {
		if got := prod.page(tt.url) != ""; got != tt.prod {
			t.Errorf("%q: kept %v", tt.url, got)
		}
		if got := dev.page(tt.url) != ""; got != tt.dev {
			t.Errorf("%q under --dev: kept %v", tt.url, got)
		}
	}
	if got := treeURL("https://github.com/o/r", "topic/a b#c"); got != "https://github.com/o/r/tree/topic/a%20b%23c" {
		t.Fatal(got)
	}
}
