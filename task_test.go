package countersign

import (
	"strings"
	"testing"
	"time"
)

var allStates = []State{"open", "approved", "answering", "done", "failed", "rejected", "cancelled", "expired", "void"}

func TestStatePredicates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s                        State
		open, inFlight, terminal bool
	}{
		{StateOpen, true, false, false},
		{StateApproved, false, true, false},
		{StateAnswering, false, true, false},
		{StateDone, false, false, true},
		{StateFailed, false, false, true},
		{StateRejected, false, false, true},
		{StateCancelled, false, false, true},
		{StateExpired, false, false, true},
		{StateVoid, false, false, true},
	}
	for _, c := range cases {
		if !c.s.Valid() || c.s.Open() != c.open || c.s.InFlight() != c.inFlight || c.s.Terminal() != c.terminal {
			t.Errorf("%s: valid %v open %v inFlight %v terminal %v", c.s, c.s.Valid(), c.s.Open(), c.s.InFlight(), c.s.Terminal())
		}
		// A terminal state has no way out, for any kind.
		for _, k := range []Kind{KindConfirm, KindInput, KindNotice} {
			for _, to := range allStates {
				if c.terminal && CanMove(k, c.s, to) {
					t.Errorf("%s: terminal state moves to %s", c.s, to)
				}
			}
		}
	}
	for _, s := range []State{"", "Open", "closed", "open "} {
		if s.Valid() || s.Open() || s.InFlight() || s.Terminal() {
			t.Errorf("%q counted as a state", s)
		}
	}
}

func TestKindsAndSupplies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k           Kind
		valid, asks bool
	}{
		{KindConfirm, true, true}, {KindInput, true, true}, {KindNotice, true, false},
		{"", false, false}, {"Notice", false, false}, {"question", false, false},
	} {
		if c.k.Valid() != c.valid || c.k.Asks() != c.asks {
			t.Errorf("%q: valid %v asks %v", c.k, c.k.Valid(), c.k.Asks())
		}
	}
	fits := map[string]bool{"confirm none": true, "input text": true, "input file": true}
	for _, k := range []Kind{KindConfirm, KindInput, KindNotice, "other"} {
		for _, s := range []Supplies{SuppliesNone, SuppliesText, SuppliesFile, "", "image"} {
			if got := s.fits(k); got != fits[string(k)+" "+string(s)] {
				t.Errorf("%s supplies %q: fits = %v", k, s, got)
			}
		}
	}
	for _, s := range []Supplies{"", "None", "image", "text "} {
		if s.Valid() {
			t.Errorf("%q is a valid Supplies", s)
		}
	}
}

func TestFailureReasons(t *testing.T) {
	t.Parallel()
	for _, r := range []FailureReason{
		"preparer_key_unavailable", "operation_priced", "operation_unknown", "operation_limit_reached",
		"queue_unavailable", "run_not_started", "run_unfinished", "run_refused:policy_denied",
		"run_refused:conflict", "run_refused:a", "run_refused:" + FailureReason(strings.Repeat("x", 64)),
	} {
		got, err := ParseFailureReason(string(r))
		if err != nil || got != r {
			t.Errorf("ParseFailureReason(%q) = %q, %v", r, got, err)
		}
	}
	for _, s := range []string{
		"", "run_refused", "run_refused:", "run_refused:Policy", "run_refused:policy denied",
		"run_refused:" + strings.Repeat("x", 65), "run_refused:a:b", "RUN_UNFINISHED",
		"run_unfinished ", "timeout", "run_refused:é",
	} {
		if _, err := ParseFailureReason(s); ErrorCode(err) != InvalidRequest {
			t.Errorf("ParseFailureReason(%q) = %v, want invalid_request", s, err)
		}
	}
}

func TestRunRefused(t *testing.T) {
	t.Parallel()
	r, err := RunRefused(Conflict)
	if err != nil || r != "run_refused:conflict" {
		t.Fatalf("RunRefused(conflict) = %q, %v", r, err)
	}
	if code, ok := r.RefusalCode(); !ok || code != Conflict {
		t.Fatalf("RefusalCode = %q, %v", code, ok)
	}
	if _, ok := FailRunUnfinished.RefusalCode(); ok {
		t.Fatal("run_unfinished has a refusal code")
	}
	for _, code := range []Code{"", "Conflict", "two words", "a-b", "x:y", Code(strings.Repeat("a", 65))} {
		if r, err := RunRefused(code); err == nil {
			t.Errorf("RunRefused(%q) = %q, want a refusal", code, r)
		}
	}
}

func TestValidTaskID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id   string
		want bool
	}{
		{"r7k2m9q4x1z8c3v6b5n0p2w4s6-1", true},
		{"a", true},
		{"-", true},
		{"0-0", true},
		{strings.Repeat("a", 80), true},
		{strings.Repeat("a", 81), false},
		{"", false},
		{"A", false},
		{"task_1", false},
		{"task 1", false},
		{"task.1", false},
		{"tâche", false},
		{"a/b", false},
		{"a\n", false},
	}
	for _, c := range cases {
		if got := ValidTaskID(c.id); got != c.want {
			t.Errorf("ValidTaskID(%q) = %v", c.id, got)
		}
	}
}

func TestRunIDs(t *testing.T) {
	t.Parallel()
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	seen := make(map[string]bool)
	for range 1000 {
		id := NewRunID()
		if len(id) != 26 || !ValidRunID(id) {
			t.Fatalf("NewRunID() = %q", id)
		}
		// 128 bits in 26 characters: the last one carries 3 bits and two
		// zero bits.
		if strings.IndexByte(alphabet, id[25])%4 != 0 {
			t.Fatalf("NewRunID() = %q has nonzero padding bits", id)
		}
		if seen[id] {
			t.Fatalf("NewRunID() repeated %q", id)
		}
		seen[id] = true
		tid, err := TaskID(id, MaxTasksPerRun)
		if err != nil || !ValidTaskID(tid) || tid != id+"-5" {
			t.Fatalf("TaskID(%q, 5) = %q, %v", id, tid, err)
		}
	}
	// The contract vectors' task id is <run id>-<n>.
	if !ValidRunID("r7k2m9q4x1z8c3v6b5n0p2w4s6") {
		t.Fatal("the vectors' run id is refused")
	}
	for _, s := range []string{"", "r7k2m9q4x1z8c3v6b5n0p2w4s", "r7k2m9q4x1z8c3v6b5n0p2w4s6a",
		"r7k2m9q4x1z8c3v6b5n0p2w4si", "R7K2M9Q4X1Z8C3V6B5N0P2W4S6", "r7k2m9q4x1z8c3v6b5n0p2w4s-"} {
		if ValidRunID(s) {
			t.Errorf("ValidRunID(%q) = true", s)
		}
	}
	long, err := TaskID("zzzzzzzzzzzzzzzzzzzzzzzzzz", int(^uint(0)>>1))
	if err != nil || !ValidTaskID(long) {
		t.Fatalf("TaskID with the largest n = %q, %v", long, err)
	}
	for _, c := range []struct {
		run string
		n   int
	}{{"r7k2m9q4x1z8c3v6b5n0p2w4s6", 0}, {"r7k2m9q4x1z8c3v6b5n0p2w4s6", -1}, {"short", 1}, {"", 1}} {
		if id, err := TaskID(c.run, c.n); err == nil {
			t.Errorf("TaskID(%q, %d) = %q", c.run, c.n, id)
		}
	}
}

func TestLimitsMatchTheContract(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"files bytes", MaxFilesBytes, 6_291_456},
		{"envelope", MaxEnvelopeBytes, 262_144},
		{"sealed state", MaxSealedStateBytes, 262_144},
		{"policy", MaxPolicyBytes, 65_536},
		{"supplied", MaxSuppliedBytes, 8192},
		{"note", MaxNoteBytes, 8192},
		{"reason", MaxReasonBytes, 8192},
		{"result", MaxResultBytes, 16_384},
		{"waiting content", MaxWaitingContentBytes, 67_108_864},
		{"task life hours", int(MaxTaskLife.Hours()), 24},
		{"default life hours", int(DefaultTaskLife.Hours()), 24},
		{"answer run minutes", int(AnswerRunDeadline.Minutes()), 30},
		{"outcome days", int(OutcomeKept.Hours() / 24), 30},
		{"session days", int(MaxSessionLife.Hours() / 24), 30},
		{"approval minutes", int(ApprovalValidity.Minutes()), 10},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestStateAt(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		s    State
		now  time.Time
		want State
	}{
		{StateOpen, exp.Add(-time.Second), StateOpen},
		{StateOpen, exp, StateExpired},
		{StateOpen, exp.Add(time.Hour), StateExpired},
		{StateApproved, exp.Add(time.Hour), StateApproved}, // an approval in time is carried out
		{StateAnswering, exp.Add(time.Hour), StateAnswering},
		{StateDone, exp.Add(time.Hour), StateDone},
	} {
		if got := StateAt(tc.s, exp, tc.now); got != tc.want {
			t.Errorf("StateAt(%s, %s) = %s, want %s", tc.s, tc.now.Sub(exp), got, tc.want)
		}
	}
}
