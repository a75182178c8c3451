package github

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the work of the line diff: beyond it the old text is
// shown removed whole and the new one added whole.
const maxDiffCells = 4_000_000

// Whole is a context that shows every line of both texts.
const Whole = 1 << 30

// splitLines cuts s into lines, each keeping its "\n" (the last may lack
// it).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type op struct {
	kind byte // ' ', '-', '+'
	line string
}

// diffLines is a shortest edit script from a to b (LCS), or a replacement
// of everything when the texts are too large to compare.
func diffLines(a, b []string) []op {
	// Common prefix and suffix first: most edits are small.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []op
	for _, l := range a[:pre] {
		out = append(out, op{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if n*m > maxDiffCells {
		for _, l := range ma {
			out = append(out, op{'-', l})
		}
		for _, l := range mb {
			out = append(out, op{'+', l})
		}
	} else {
		// lcs[i][j]: the longest common subsequence of ma[i:] and mb[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				out = append(out, op{' ', ma[i]})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				out = append(out, op{'-', ma[i]})
				i++
			default:
				out = append(out, op{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, op{' ', l})
	}
	return out
}

// Unified writes a unified diff of one file from old to new with context
// lines around each change (Whole: every line). old nil is a new file,
// new nil a deleted one. Equal texts give "".
func Unified(path string, old, new *string, context int) string {
	var a, b []string
	from, to := "a/"+path, "b/"+path
	if old == nil {
		from = "/dev/null"
	} else {
		a = splitLines(*old)
	}
	if new == nil {
		to = "/dev/null"
	} else {
		b = splitLines(*new)
	}
	if old != nil && new != nil && *old == *new {
		return ""
	}
	ops := diffLines(a, b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	// Group the changes into hunks with context around them. la and lb
	// are the old and new line numbers at ops[at], carried from hunk to
	// hunk.
	la, lb, at := 1, 1, 0
	for start := 0; start < len(ops); {
		first := -1
		for k := start; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				first = k
				break
			}
		}
		if first < 0 {
			break
		}
		lo := max(first-context, start)
		hi := first
		for k := first; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				hi = k
			} else if k-hi > 2*context {
				break
			}
		}
		hi = min(hi+context, len(ops)-1)
		for ; at < lo; at++ {
			if ops[at].kind != '+' {
				la++
			}
			if ops[at].kind != '-' {
				lb++
			}
		}
		na, nb := 0, 0
		for k := lo; k <= hi; k++ {
			if ops[k].kind != '+' {
				na++
			}
			if ops[k].kind != '-' {
				nb++
			}
		}
		fromLine, toLine := la, lb
		if na == 0 {
			fromLine--
		}
		if nb == 0 {
			toLine--
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(fromLine, na), span(toLine, nb))
		for k := lo; k <= hi; k++ {
			sb.WriteByte(ops[k].kind)
			l := ops[k].line
			if strings.HasSuffix(l, "\n") {
				sb.WriteString(l)
			} else {
				sb.WriteString(l + "\n\\ No newline at end of file\n")
			}
		}
		start = hi + 1
	}
	return sb.String()
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
