package approval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"countersign/approval"
)

// twoLines are two tasks whose lines hash was computed apart from this
// package, with the shell:
//
//	printf 'run1-1 0556…76a1 9312…5799\nrun1-2 9312…5799 9312…5799\n' | sha256sum
var twoLines = []approval.BatchLine{
	{ID: "run1-1", TaskHash: hashA, SupplyHash: hashB},
	{ID: "run1-2", TaskHash: hashB, SupplyHash: hashB},
}

const twoLinesHash = "d988b16f32cf0c388d94dc309ef04971cff1157f75caf16f48b96aba4772f2e7"

func TestBatchLinesHash(t *testing.T) {
	t.Parallel()
	if got := approval.LinesHash(twoLines); got != twoLinesHash {
		t.Fatalf("the lines hash is %s, want %s", got, twoLinesHash)
	}
	// The order is the order given.
	if approval.LinesHash([]approval.BatchLine{twoLines[1], twoLines[0]}) == twoLinesHash {
		t.Fatal("the lines hash does not depend on the order")
	}
	// Recomputed here by another route: the lines built by hand.
	var b strings.Builder
	for _, l := range twoLines {
		fmt.Fprintf(&b, "%s %s %s\n", l.ID, l.TaskHash, l.SupplyHash)
	}
	sum := sha256.Sum256([]byte(b.String()))
	if hex.EncodeToString(sum[:]) != twoLinesHash {
		t.Fatal("the vector does not hash the lines")
	}
}

func TestBatchSentence(t *testing.T) {
	t.Parallel()
	b := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: twoLines,
		Summaries: []string{"pay $120.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone", "cancel invoice INV-7 of $99.00, due 2026-12-31; it cannot be undone"},
		At:        t0}
	want := "Approve in Countersign as alice.near: 2 tasks of bank: pay $120.00 to Acme Corp from Checking ••1234 by ACH; it cannot be undone; " +
		"cancel invoice INV-7 of $99.00, due 2026-12-31; it cannot be undone. Tasks " + twoLinesHash + ". At 2026-11-29T12:00:00Z."
	got, err := b.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	p, err := approval.ParseBatchApproval(got)
	if err != nil {
		t.Fatal(err)
	}
	if p.Account != "alice.near" || p.Count != 2 || p.Project != "bank" || p.LinesHash != twoLinesHash || !p.At.Equal(t0) ||
		p.Listed != strings.Join(b.Summaries, "; ") {
		t.Fatalf("parsed %+v", p)
	}
	if !p.Matches(b) {
		t.Fatal("the parsed sentence does not match the batch it was built from")
	}
	// The summaries' "; " makes the list ambiguous on its own: another
	// split of the same text is another batch, which does not match.
	other := b
	other.Summaries = []string{"pay $120.00 to Acme Corp from Checking ••1234 by ACH", "it cannot be undone; cancel invoice INV-7 of $99.00, due 2026-12-31; it cannot be undone"}
	if s, _ := other.Sentence(); s != got {
		t.Fatalf("the other split reads %q", s)
	}
	reordered := b
	reordered.Tasks = []approval.BatchLine{twoLines[1], twoLines[0]}
	if p.Matches(reordered) {
		t.Fatal("a batch of the tasks in another order matches")
	}
	// Not a single approval, and a single approval is not a batch.
	if _, err := approval.ParseApproval(got); err == nil {
		t.Fatal("a batch sentence parses as a single approval")
	}
	single, _ := approval.Approval{Account: "alice.near", Summary: "pay $1", TaskID: "run1-1", TaskHash: hashA, SupplyHash: hashB, At: t0}.Sentence()
	if _, err := approval.ParseBatchApproval(single); err == nil {
		t.Fatal("a single approval parses as a batch")
	}
}

// TestBatchSentenceRefusals: every part is checked before anything is
// signed.
func TestBatchSentenceRefusals(t *testing.T) {
	t.Parallel()
	good := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: twoLines, Summaries: []string{"pay $1", "pay $2"}, At: t0}
	ten := make([]approval.BatchLine, 11)
	tenSummaries := make([]string, 11)
	for i := range ten {
		ten[i] = approval.BatchLine{ID: fmt.Sprintf("run1-%d", i+1), TaskHash: hashA, SupplyHash: hashB}
		tenSummaries[i] = "pay"
	}
	cases := []struct {
		name   string
		change func(b *approval.BatchApproval)
	}{
		{"one task", func(b *approval.BatchApproval) { b.Tasks, b.Summaries = b.Tasks[:1], b.Summaries[:1] }},
		{"eleven tasks", func(b *approval.BatchApproval) { b.Tasks, b.Summaries = ten, tenSummaries }},
		{"a summary short", func(b *approval.BatchApproval) { b.Summaries = b.Summaries[:1] }},
		{"an empty summary", func(b *approval.BatchApproval) { b.Summaries = []string{"pay $1", ""} }},
		{"a summary with a line break", func(b *approval.BatchApproval) { b.Summaries = []string{"pay $1", "pay\n$2"} }},
		{"a summary over 200 characters", func(b *approval.BatchApproval) { b.Summaries = []string{"pay $1", strings.Repeat("x", 201)} }},
		{"a task twice", func(b *approval.BatchApproval) { b.Tasks = []approval.BatchLine{twoLines[0], twoLines[0]} }},
		{"a bad task id", func(b *approval.BatchApproval) {
			b.Tasks = []approval.BatchLine{twoLines[0], {ID: "Run-1", TaskHash: hashA, SupplyHash: hashB}}
		}},
		{"a bad hash", func(b *approval.BatchApproval) {
			b.Tasks = []approval.BatchLine{twoLines[0], {ID: "run1-3", TaskHash: strings.ToUpper(hashA), SupplyHash: hashB}}
		}},
		{"a bad project", func(b *approval.BatchApproval) { b.Project = "my: bank" }},
		{"a bad account", func(b *approval.BatchApproval) { b.Account = "Alice" }},
		{"a fraction of a second", func(b *approval.BatchApproval) { b.At = t0.Add(time.Millisecond) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := good
			c.change(&b)
			if s, err := b.Sentence(); err == nil || approval.KindOf(err) != approval.Malformed {
				t.Fatalf("built %q, %v", s, err)
			}
		})
	}
}

// TestBatchSentenceLimit: a batch sentence is at most 1,000 bytes; one
// byte more is refused with ErrBatchTooLong, which BatchPlan splits on.
func TestBatchSentenceLimit(t *testing.T) {
	t.Parallel()
	b := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: twoLines, Summaries: []string{"x", "y"}, At: t0}
	base, err := b.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	// Fill the second summary (1 byte each: ASCII) to exactly 1,000 bytes,
	// with two more tasks so that the summaries' room is above 200 each.
	lines := append(append([]approval.BatchLine{}, twoLines...),
		approval.BatchLine{ID: "run1-3", TaskHash: hashA, SupplyHash: hashB}, approval.BatchLine{ID: "run1-4", TaskHash: hashA, SupplyHash: hashB},
		approval.BatchLine{ID: "run1-5", TaskHash: hashA, SupplyHash: hashB}, approval.BatchLine{ID: "run1-6", TaskHash: hashA, SupplyHash: hashB})
	b.Tasks = lines
	b.Summaries = []string{"x", "x", "x", "x", "x", "x"}
	base, _ = b.Sentence()
	room := approval.MaxBatchSentenceBytes - len(base)
	for i := range b.Summaries {
		add := min(room, 199)
		b.Summaries[i] += strings.Repeat("y", add)
		room -= add
	}
	if room != 0 {
		t.Fatalf("%d bytes left to fill", room)
	}
	full, err := b.Sentence()
	if err != nil || len(full) != approval.MaxBatchSentenceBytes {
		t.Fatalf("a sentence of exactly 1,000 bytes: %d, %v", len(full), err)
	}
	if p, err := approval.ParseBatchApproval(full); err != nil || !p.Matches(b) {
		t.Fatalf("the 1,000-byte sentence does not parse: %v", err)
	}
	for i, s := range b.Summaries {
		if len(s) < 200 {
			b.Summaries[i] += "z"
			break
		}
	}
	s, err := b.Sentence()
	if !errors.Is(err, approval.ErrBatchTooLong) || approval.KindOf(err) != approval.Malformed || s != "" {
		t.Fatalf("a 1,001-byte sentence: %q, %v", s, err)
	}
	if _, err := approval.ParseBatchApproval(full[:len("Approve in Countersign as alice.near: 6")] + "z" + full[len("Approve in Countersign as alice.near: 6"):]); err == nil {
		t.Fatal("a 1,001-byte text parses")
	}
	// Multi-byte characters count in bytes: 200 "é" are 400 bytes.
	e := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: lines[:3], At: t0,
		Summaries: []string{strings.Repeat("é", 200), strings.Repeat("é", 200), strings.Repeat("é", 200)}}
	if _, err := e.Sentence(); !errors.Is(err, approval.ErrBatchTooLong) {
		t.Fatalf("600 characters of 1,200 bytes: %v", err)
	}
}

// TestBatchPlan: a client's tasks are split into batches of at most ten
// whose sentence fits; a task left alone is approved alone.
func TestBatchPlan(t *testing.T) {
	t.Parallel()
	line := func(i int) approval.BatchLine {
		return approval.BatchLine{ID: fmt.Sprintf("run1-%d", i), TaskHash: hashA, SupplyHash: hashB}
	}
	var lines []approval.BatchLine
	var short, long []string
	for i := 1; i <= 23; i++ {
		lines = append(lines, line(i))
		short = append(short, "pay $1")
		long = append(long, strings.Repeat("p", 190))
	}
	plan, err := approval.BatchPlan("alice.near", "bank", lines, short, t0)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(plan) != "[[0 10] [10 20] [20 23]]" {
		t.Fatalf("23 short summaries: %v", plan)
	}
	plan, err = approval.BatchPlan("alice.near", "bank", lines[:9], long[:9], t0)
	if err != nil {
		t.Fatal(err)
	}
	// Four summaries of 190 bytes and the rest fit 1,000 bytes; five do not.
	if fmt.Sprint(plan) != "[[0 4] [4 8] [8 9]]" {
		t.Fatalf("9 long summaries: %v", plan)
	}
	for _, g := range plan {
		if g[1]-g[0] < 2 {
			continue
		}
		s, err := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: lines[g[0]:g[1]], Summaries: long[g[0]:g[1]], At: t0}.Sentence()
		if err != nil || len(s) > approval.MaxBatchSentenceBytes {
			t.Fatalf("batch %v: %d bytes, %v", g, len(s), err)
		}
	}
	if _, err := approval.BatchPlan("alice.near", "bank", lines[:2], short[:1], t0); err == nil {
		t.Fatal("a plan with a summary short")
	}
}

// FuzzParseBatchApproval: a batch sentence parses only when it is exactly
// what its parts build, within 1,000 bytes.
func FuzzParseBatchApproval(f *testing.F) {
	good, _ := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: twoLines, Summaries: []string{"pay $1; done", "pay $2"}, At: t0}.Sentence()
	f.Add(good)
	f.Add("Approve in Countersign as alice.near: 2 tasks of bank: a. Tasks " + twoLinesHash + ". At 2026-11-29T12:00:00Z.")
	f.Add("Approve in Countersign as alice.near: 02 tasks of bank: a; b. Tasks " + twoLinesHash + ". At 2026-11-29T12:00:00Z.")
	f.Add("Approve in Countersign as alice.near: 11 tasks of bank: a; b. Tasks " + twoLinesHash + ". At 2026-11-29T12:00:00Z.")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := approval.ParseBatchApproval(s)
		if err != nil {
			if approval.KindOf(err) != approval.Malformed {
				t.Fatalf("refusal of kind %v", approval.KindOf(err))
			}
			return
		}
		if len(s) > approval.MaxBatchSentenceBytes || p.Count < approval.MinBatchTasks || p.Count > approval.MaxBatchTasks {
			t.Fatalf("accepted %q as %+v", s, p)
		}
		if !strings.HasSuffix(s, ". Tasks "+p.LinesHash+". At "+p.At.Format(approval.TimeLayout)+".") ||
			!strings.HasPrefix(s, "Approve in Countersign as "+p.Account+": ") {
			t.Fatalf("parsed %q as %+v", s, p)
		}
	})
}
