package history

import (
	"strings"
	"testing"
)

// TestShownWords: what a connector tells the owner's history reaches it
// only as shown text; a refusal's sentence is put on one line and cut to
// fit rather than lost.
func TestShownWords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 150)
	for _, c := range []struct {
		name, in, want string
		f              func(string) string
	}{
		{"a title", "Pay Acme", "Pay Acme", shownTitle},
		{"a title over 80 characters", strings.Repeat("x", 81), "", shownTitle},
		{"a title of two lines", "a\nb", "", shownTitle},
		{"a summary", "pay $1 to Acme Corp; it cannot be undone", "pay $1 to Acme Corp; it cannot be undone", shownSummary},
		{"a summary over 200 characters", strings.Repeat("x", 201), "", shownSummary},
		{"a summary with a bidi control", "pay \u202e1$", "", shownSummary},
		{"a summary with a zero-width space", "pay\u200b $1", "", shownSummary},
		{"a link", "https://github.com/octo/app/commit/3f2a9c1", "https://github.com/octo/app/commit/3f2a9c1", shownLink},
		{"an http link", "http://github.com/x", "", shownLink},
		{"a link with credentials", "https://user:pass@github.com/x", "", shownLink},
		{"a link without a host", "https:///x", "", shownLink},
		{"a link that is not one", "https://exa mple.com/", "", shownLink},
		{"a script link", "javascript:alert(1)", "", shownLink},
		{"a link over 2048 bytes", "https://e.example/" + strings.Repeat("a", 2048), "", shownLink},
		{"a sentence", "The head moved. Nothing was written.", "The head moved. Nothing was written.", Sentence},
		{"a sentence of lines", "The head\nmoved.\tNothing  was written.", "The head moved. Nothing was written.", Sentence},
		{"a long sentence", long, strings.TrimSpace(long)[:maxSentenceChars-1] + "…", Sentence},
		{"a sentence with an escape", "done\u001b[31m", "", Sentence},
		{"a blank sentence", " \n ", "", Sentence},
	} {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
