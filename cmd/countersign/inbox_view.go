package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"countersign"
	"countersign/client"
)

// agentMark marks the fields whose words the agent wrote, not the
// project's connector.
const agentMark = "🤖"

// clean makes text from the service or a task safe to print on one line:
// control characters (line breaks and tabs too), format characters (bidi
// controls, zero-width characters), line and paragraph separators and
// invalid UTF-8 are written as \u (or \x) escapes. Anything else is printed
// as it is.
func clean(s string) string { return escapeInvisible(s, false) }

// cleanLine is clean for one line of a long text, where a tab is kept.
func cleanLine(s string) string { return escapeInvisible(s, true) }

func escapeInvisible(s string, keepTab bool) string {
	if !needsEscape(s, keepTab) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case invisible(r, keepTab):
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, keepTab bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || invisible(r, keepTab) {
			return true
		}
		i += size
	}
	return false
}

// invisible reports whether r could move the cursor, drive the terminal,
// reorder or hide text.
func invisible(r rune, keepTab bool) bool {
	if r == '\t' && keepTab {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' ||
		unicode.Is(unicode.Variation_Selector, r) && r != '\ufe0e' && r != '\ufe0f'
}

// preview is what `show` prints of an opened task.
type preview struct {
	Envelope countersign.Envelope
	TaskHash string
	State    string
	Receipt  string // "verified (run …)" or "NOT VERIFIED: …"
	// Expected says what text the answer operation expects, when it
	// declares the shape of supplied text.
	Expected string
	Now      time.Time
	// Role is this terminal's part in the task (client.RoleApprover for a
	// task of another owner it approves), Approvals a shared task's
	// approvals, Me this terminal's account.
	Role      string
	Approvals *client.Approvals
	Me        string
}

// write prints the preview: first what approving does (the summary, SPEC
// §8), then the title, who prepared it and the receipt, its owner when it
// is another account's and its approvals when several accounts approve
// it, each field (the
// agent's marked), the files, the expiry, what an answer needs, and the
// task hash (with the text it expects, when its answer operation says).
func (p preview) write(w io.Writer) {
	e := p.Envelope
	if s := e.Display.Summary; s != "" {
		if e.AnswerBy != nil {
			fmt.Fprintf(w, "If you approve: %s\n", clean(s))
		} else {
			fmt.Fprintf(w, "%s\n", clean(s))
		}
	}
	fmt.Fprintf(w, "%s\n", clean(e.Display.Title))
	fmt.Fprintf(w, "task: %s (%s, %s)\n", clean(e.ID), clean(string(e.Kind)), clean(p.State))
	fmt.Fprintf(w, "from: %s in project %s (%s)\n", clean(e.Preparer), clean(e.Project), clean(e.Build))
	fmt.Fprintf(w, "receipt: %s\n", p.Receipt)
	writeShared(w, e.Owner, p.Role, p.Approvals, p.Me, p.State == string(countersign.StateOpen))
	agentWrote := false
	for _, f := range e.Display.Fields {
		mark := "  "
		if f.WrittenBy == countersign.WrittenByAgent {
			mark, agentWrote = "  "+agentMark+" ", true
		}
		writeField(w, mark, f)
	}
	if agentWrote {
		fmt.Fprintf(w, "  (%s: the agent's own words, not the connector's)\n", agentMark)
	}
	if len(e.Files) == 0 {
		fmt.Fprintln(w, "files: none")
	} else {
		fmt.Fprintln(w, "files:")
		for i, f := range e.Files {
			fmt.Fprintf(w, "  %d. %s (%s, %s)\n", i+1, clean(f.Name), clean(f.ContentType), byteCount(f.Size))
		}
	}
	fmt.Fprintf(w, "expires: %s (%s)\n", e.ExpiresAt.UTC().Format(countersign.TimeFormat), until(p.Now, e.ExpiresAt))
	switch {
	case e.AnswerBy == nil:
		fmt.Fprintf(w, "answer: nothing, it is a notice (countersign inbox ack %s)\n", clean(e.ID))
	case e.AnswerBy.Supplies == countersign.SuppliesNone:
		fmt.Fprintf(w, "answer: none, approve or reject (%s)\n", clean(e.AnswerBy.Operation))
	default:
		fmt.Fprintf(w, "answer: %s (%s): approve with --%s\n", clean(string(e.AnswerBy.Supplies)), clean(e.AnswerBy.Operation), clean(string(e.AnswerBy.Supplies)))
		if p.Expected != "" {
			fmt.Fprintf(w, "expected: %s\n", clean(p.Expected))
		}
	}
	fmt.Fprintf(w, "hash: %s\n", p.TaskHash)
}

// writeField prints one field: `label: value`, a list one value a line, a
// long text with its lines indented.
func writeField(w io.Writer, mark string, f countersign.Field) {
	label := clean(f.Label)
	switch {
	case f.Kind == countersign.FieldList || len(f.Values) != 1:
		fmt.Fprintf(w, "%s%s:\n", mark, label)
		for _, v := range f.Values {
			fmt.Fprintf(w, "      - %s\n", clean(v))
		}
	case f.Kind == countersign.FieldLongText:
		lines := strings.Split(f.Values[0], "\n")
		fmt.Fprintf(w, "%s%s: %s\n", mark, label, cleanLine(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "      %s\n", cleanLine(l))
		}
	default:
		fmt.Fprintf(w, "%s%s: %s\n", mark, label, clean(f.Values[0]))
	}
}

// byteCount writes a size in bytes with its unit.
func byteCount(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 10_000:
		return fmt.Sprintf("%d bytes", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1_000_000)
}

// until says how long is left before t, in whole minutes.
func until(now, t time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		return "expired by this machine's clock"
	}
	d = d.Truncate(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return fmt.Sprintf("in %dm", m)
	}
	return fmt.Sprintf("in %dh%02dm", h, m)
}
