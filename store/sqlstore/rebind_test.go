package sqlstore

import "testing"

// TestRebind: each "?" becomes PostgreSQL's next numbered parameter, in
// order, and nothing else of the statement changes.
func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"SELECT 1", "SELECT 1"},
		{"?", "$1"},
		{"??", "$1$2"},
		{"SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = $2"},
		{"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"},
		{"x = ?\n\tAND y = 'é'", "x = $1\n\tAND y = 'é'"},
	} {
		// Numbered, then kept: the second answer is the kept one.
		for range 2 {
			if got := rebind(tc.in); got != tc.want {
				t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}

// BenchmarkRebind: the task's INSERT, as every task opened sends it.
func BenchmarkRebind(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = rebind(insertTask)
	}
}

// BenchmarkNumbered: the same, numbered each time, as every statement
// was before the numbered ones were kept.
func BenchmarkNumbered(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = numbered(insertTask)
	}
}
