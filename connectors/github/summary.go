package github

import (
	"fmt"
	"net/url"
	"sort"
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

// summary is the one line a task of w shows above its fields, and a write
// carried out at once tells the owner's history: what approving does,
// with the values the owner must check, and whether it can be undone.
// old holds the files w replaces, as read when it was prepared (nil: a
// new file).
func summary(w *write, old map[string]*string) string {
	var l line
	at := func(branch string) line { return line{name(branch), words(" of "), name(w.Repo)} }
	switch w.Op {
	case "branch_create":
		l = line{words("create the branch "), name(w.Branch), words(" in "), name(w.Repo), words(" at " + short(w.SHA))}
		if !isSHA(w.From) {
			l = append(l, words(", the head of "), name(w.From))
		}
		l = append(l, words("; it can be deleted"))
	case "file_put":
		verb, prep := "replace ", " on "
		if w.SHA == "" {
			verb, prep = "add ", " to "
		}
		l = append(append(line{words(verb), quoted(w.Path), words(prep)}, at(w.Branch)...), words(" in one commit"+undoCommit))
	case "commit":
		var add, rep, del int
		for _, ch := range w.Changes {
			switch {
			case ch.Delete:
				del++
			case old[ch.Path] == nil:
				add++
			default:
				rep++
			}
		}
		if len(w.Changes) == 1 {
			what := map[bool]string{true: "replaced", false: "new"}[old[w.Changes[0].Path] != nil]
			if w.Changes[0].Delete {
				what = "deleted"
			}
			l = line{words("commit "), quoted(w.Changes[0].Path), words(" (" + what + ") to ")}
		} else {
			var kinds []string
			for _, k := range []struct {
				n    int
				what string
			}{{add, "new"}, {rep, "replaced"}, {del, "deleted"}} {
				if k.n > 0 {
					kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.what))
				}
			}
			l = line{words(fmt.Sprintf("commit %d files (%s) to ", len(w.Changes), strings.Join(kinds, ", ")))}
		}
		l = append(append(l, at(w.Branch)...), words(" after "+short(w.SHA)+undoCommit))
	case "issue_create":
		l = line{words("open an issue "), quoted(opt(w.Title)), words(" in "), name(w.Repo), words("; it can be closed later" + undoNotify)}
	case "issue_comment":
		l = line{words(fmt.Sprintf("comment on #%d of ", w.Number)), name(w.Repo), words("; it can be deleted later" + undoNotify)}
	case "issue_update":
		l = line{words(fmt.Sprintf("change issue #%d of ", w.Number)), name(w.Repo), words(": ")}
		var parts []line
		if w.State != nil {
			s := map[string]string{"open": "reopen it", "closed": "close it"}[*w.State]
			if w.StateReason != nil {
				s += " (" + strings.ReplaceAll(*w.StateReason, "_", " ") + ")"
			}
			parts = append(parts, line{words(s)})
		}
		if w.Title != nil {
			parts = append(parts, line{words("retitle it "), quoted(*w.Title)})
		}
		if w.Body != nil {
			parts = append(parts, line{words("replace its body")})
		}
		for _, set := range []struct {
			what string
			v    *[]string
		}{{"labels", w.Labels}, {"assignees", w.Assignees}} {
			switch {
			case set.v == nil:
			case len(*set.v) == 0:
				parts = append(parts, line{words("remove its " + set.what)})
			default:
				parts = append(parts, few(line{words("set its " + set.what + " to ")}, each(*set.v, quoted)))
			}
		}
		for i, p := range parts {
			if i > 0 {
				l = append(l, words(", "))
			}
			l = append(l, p...)
		}
		l = append(l, words(undoRestore))
	case "pr_create":
		what := "open a pull request "
		if w.Draft {
			what = "open a draft pull request "
		}
		l = append(line{words(what), quoted(opt(w.Title)), words(" to merge "), name(w.Head), words(" into ")}, at(w.Base)...)
		l = append(l, words("; it can be closed later"+undoNotify))
	case "pr_review":
		verb := map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes on", "COMMENT": "comment on"}[w.Event]
		l = line{words(fmt.Sprintf("%s pull request #%d of ", verb, w.Number)), name(w.Repo), words(" at " + short(w.SHA) + undoReview)}
	case "pr_merge":
		how := map[string]string{"merge": " by a merge commit", "squash": " squashed into one commit", "rebase": " rebased"}[method(w)]
		l = line{words(fmt.Sprintf("merge pull request #%d of ", w.Number)), name(w.Repo), words(" into "), name(w.Base), words(" at " + short(w.SHA) + how + undoMerge)}
	case "gist_create":
		names := sortedFiles(w.Files)
		seen := map[bool]string{true: "a public gist", false: "a secret gist"}[w.Public]
		l = few(line{words("create " + seen + " of " + plural(len(names), "file") + ": ")}, each(names, quoted))
		l = append(l, words(map[bool]string{true: "; anyone can find it", false: "; anyone with its link can read it"}[w.Public]+", and it can be deleted"))
	case "gist_update":
		l = line{words("change the gist "), name(w.GistID), words(": ")}
		var acts []line
		for _, n := range sortedFiles(w.Files) {
			verb := "replace "
			switch {
			case w.Files[n] == nil:
				verb = "delete "
			case old[n] == nil:
				verb = "add "
			}
			acts = append(acts, line{words(verb), quoted(n)})
		}
		if w.Description != nil {
			acts = append(acts, line{words("set its description")})
		}
		l = few(l, acts)
		l = append(l, words("; its earlier versions stay in its history"))
	case "repo_star":
		l = line{words("star "), name(w.Repo), words(" as the token's user; it can be unstarred")}
	case "repo_unstar":
		l = line{words("unstar "), name(w.Repo), words(" as the token's user; it can be starred again")}
	}
	return l.String()
}

func sortedFiles(files map[string]*string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// outcome tells the owner's history what w did, from what GitHub
// answered (res, as execute returns it), and where to see it.
func (g *GitHub) outcome(w *write, res map[string]any) connectors.Outcome {
	str := func(k string) string { s, _ := res[k].(string); return s }
	num := func(k string) int { n, _ := res[k].(int); return n }
	var l line
	at := line{words(" of "), name(w.Repo)}
	link := str("html_url")
	switch w.Op {
	case "branch_create":
		l = line{words("Created the branch "), name(w.Branch), words(" in "), name(w.Repo), words(" at " + short(str("sha")))}
	case "file_put":
		verb := ": replaced "
		if w.SHA == "" {
			verb = ": added "
		}
		l = append(append(line{words("Committed " + short(str("sha")) + " to "), name(w.Branch)}, at...), words(verb), quoted(w.Path))
		link = str("commit_url")
	case "commit":
		l = append(line{words("Committed " + short(str("sha")) + " to "), name(w.Branch)}, at...)
		if len(w.Changes) == 1 {
			l = append(l, words(", changing "), quoted(w.Changes[0].Path))
		} else {
			l = append(l, words(fmt.Sprintf(", changing %d files", len(w.Changes))))
		}
	case "issue_create":
		l = line{words(fmt.Sprintf("Opened issue #%d ", num("number"))), quoted(opt(w.Title)), words(" in "), name(w.Repo)}
	case "issue_comment":
		l = append(line{words(fmt.Sprintf("Commented on #%d", w.Number))}, at...)
	case "issue_update":
		l = append(line{words(fmt.Sprintf("Changed issue #%d", w.Number))}, at...)
		l = append(l, words("; it is "+str("state")))
	case "pr_create":
		l = line{words(fmt.Sprintf("Opened pull request #%d ", num("number"))), quoted(opt(w.Title)), words(" to merge "), name(w.Head), words(" into "), name(w.Base)}
		l = append(l, at...)
	case "pr_review":
		verb := map[string]string{"APPROVE": "Approved", "REQUEST_CHANGES": "Requested changes on", "COMMENT": "Commented on"}[w.Event]
		l = append(line{words(fmt.Sprintf("%s pull request #%d", verb, w.Number))}, at...)
		l = append(l, words(" at "+short(str("commit_id"))))
	case "pr_merge":
		l = append(line{words(fmt.Sprintf("Merged pull request #%d", w.Number))}, at...)
		l = append(l, words(" into "), name(w.Base), words(" as "+short(str("sha"))))
	case "gist_create":
		l = line{words(fmt.Sprintf("Created %s of %s", map[bool]string{true: "a public gist", false: "a secret gist"}[w.Public], plural(len(w.Files), "file")))}
	case "gist_update":
		l = line{words("Changed the gist "), name(w.GistID)}
	case "repo_star":
		l = line{words("Starred "), name(w.Repo)}
	case "repo_unstar":
		l = line{words("Unstarred "), name(w.Repo)}
	}
	return connectors.Outcome{Text: l.String(), URL: g.page(link)}
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
