package github

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
	"countersign/egress"
)

// A line is a task's summary or a write's outcome: one line of at most
// countersign.MaxSummaryChars, made of fixed words and of values (names,
// titles) that come from the agent or from GitHub. Values are cut, the
// longest first, each ending in "…" where cut, until the line fits; a
// title or a path is always quoted (strconv.Quote, so a quote inside it
// cannot end it early), a name (a repository, a branch) when it is not
// one plain word.
type line []piece

type piece struct {
	text         string
	value, quote bool
}

func words(s string) piece  { return piece{text: s} }
func name(s string) piece   { return piece{text: s, value: true} }
func quoted(s string) piece { return piece{text: s, value: true, quote: true} }

// minKept is the fewest characters a cut value keeps.
const minKept = 8

func (l line) String() string {
	keep := make([]int, len(l))
	for i, p := range l {
		keep[i] = utf8.RuneCountInString(p.text)
	}
	for {
		s := l.render(keep, false)
		over := utf8.RuneCountInString(s) - countersign.MaxSummaryChars
		if over <= 0 {
			if countersign.ValidateSummary(s) != nil {
				// Only escapes make it shown text: every value quoted,
				// in ASCII.
				s = l.render(keep, true)
			}
			return s
		}
		longest := -1
		for i, p := range l {
			if p.value && keep[i] > minKept && (longest < 0 || keep[i] > keep[longest]) {
				longest = i
			}
		}
		if longest < 0 {
			// Fixed words are far shorter than a summary.
			return string([]rune(s)[:countersign.MaxSummaryChars-1]) + "…"
		}
		keep[longest] = max(minKept, keep[longest]-over-1)
	}
}

// render writes the line with each value cut to keep; ascii quotes every
// value, escaping all but printable ASCII.
func (l line) render(keep []int, ascii bool) string {
	var b strings.Builder
	for i, p := range l {
		t := cut(p.text, keep[i])
		switch {
		case !p.value:
		case ascii:
			t = strconv.QuoteToASCII(t)
		case p.quote || !plain(t):
			t = strconv.Quote(t)
		}
		b.WriteString(t)
	}
	return b.String()
}

// cut keeps the first n characters of s, and says "…" when it cut; it
// never parts a letter from the marks that follow it.
func cut(s string, n int) string {
	r := []rune(s)
	if n >= len(r) {
		return s
	}
	for n > 0 && unicode.In(r[n], unicode.Mn, unicode.Me) {
		n--
	}
	return strings.TrimRightFunc(string(r[:n]), unicode.IsSpace) + "…"
}

// plain reports whether a name reads as one word: no space, quote or
// backslash, and shown text.
func plain(s string) bool {
	return !strings.ContainsAny(s, " \"\\") && countersign.ValidateSummary(s) == nil
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// few lists at most three items, then how many more.
func few(l line, items []line) line {
	for i, it := range items {
		if i == 3 {
			return append(l, words(fmt.Sprintf(" and %d more", len(items)-3)))
		}
		if i > 0 {
			l = append(l, words(", "))
		}
		l = append(l, it...)
	}
	return l
}

// each makes each value an item of its own.
func each(values []string, piece func(string) piece) []line {
	out := make([]line, len(values))
	for i, v := range values {
		out[i] = line{piece(v)}
	}
	return out
}

// plural is "1 file", "2 files".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// Why a write can or cannot be undone, as its summary ends.
const (
	undoCommit  = "; only a later commit can undo it"
	undoNotify  = ", but watchers are notified at once"
	undoReview  = "; a review can be dismissed, not deleted"
	undoMerge   = "; it cannot be undone, only reverted"
	undoRestore = "; it can be changed back"
)

// A write's summary (write.summary) is the one line a task of it shows
// above its fields, and a write carried out at once tells the owner's
// history: what approving does, with the values the owner must check, and
// whether it can be undone. old holds the files it replaces, as read when
// it was prepared (nil: a new file).

// onBranch is "branch of repo".
func onBranch(branch, repo string) line { return line{name(branch), words(" of "), name(repo)} }

// of is " of repo".
func of(repo string) line { return line{words(" of "), name(repo)} }

// answered is what a write answered, as execute returns it.
type answered map[string]any

func (r answered) str(k string) string { s, _ := r[k].(string); return s }
func (r answered) num(k string) int    { n, _ := r[k].(int); return n }

// outcome tells the owner's history what w did (write.outcome), from what
// GitHub answered, and where to see it: the html_url GitHub answered,
// unless w links elsewhere.
func (g *GitHub) outcome(w write, res map[string]any) connectors.Outcome {
	link := answered(res).str("html_url")
	if l, ok := w.(linked); ok {
		link = l.link(res)
	}
	return connectors.Outcome{Text: w.outcome(res).String(), URL: g.page(link)}
}

// page keeps a URL GitHub answered for the owner to open: https (or http
// where wiring allows private hosts, as serve --dev does), with a host.
func (g *GitHub) page(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || !(u.Scheme == "https" || u.Scheme == "http" && g.opts.Egress.AllowPrivate) {
		return ""
	}
	return raw
}

// treeURL is the page of a branch of the repository whose page is repo.
func treeURL(repo, branch string) string {
	p, err := egress.Path(append([]string{"tree"}, parts(branch)...)...)
	if repo == "" || err != nil {
		return ""
	}
	return repo + p
}
