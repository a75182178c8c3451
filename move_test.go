package countersign

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// movers is SPEC §3 written out edge by edge with who makes each move,
// independently of the table in move.go. Every other (kind, from, to) and
// every other actor must be refused.
var movers = map[string]string{
	"confirm open approved":      "owner approver",
	"confirm open rejected":      "owner approver",
	"confirm open cancelled":     "owner agent",
	"confirm open expired":       "platform",
	"confirm open void":          "platform",
	"confirm approved answering": "platform",
	"confirm approved failed":    "platform",
	"confirm approved void":      "platform",
	"confirm answering done":     "platform",
	"confirm answering failed":   "platform",
	"input open approved":        "owner approver",
	"input open rejected":        "owner approver",
	"input open cancelled":       "owner agent",
	"input open expired":         "platform",
	"input open void":            "platform",
	"input approved answering":   "platform",
	"input approved failed":      "platform",
	"input approved void":        "platform",
	"input answering done":       "platform",
	"input answering failed":     "platform",
	"notice open done":           "owner",
	"notice open cancelled":      "owner agent",
	"notice open expired":        "platform",
}

// failingFrom is, per state a task fails from, the reasons it may fail for.
var failingFrom = map[State]string{
	StateApproved: "preparer_key_unavailable operation_priced operation_unknown operation_limit_reached " +
		"queue_unavailable run_not_started run_refused:task_unreadable run_refused:conflict",
	StateAnswering: "run_unfinished run_refused:task_unreadable run_refused:conflict",
}

// dropsOf is what each (from, to) deletes: c content, d device copies, f
// files, s the sealed copy and the approvals.
var dropsOf = map[string]string{
	"open approved":      "c d",
	"open rejected":      "c d f s",
	"open cancelled":     "c d f s",
	"open expired":       "c d f s",
	"open void":          "c d f s",
	"open done":          "c d f s",
	"approved answering": "",
	"approved failed":    "d f s",
	"approved void":      "d f s",
	"answering done":     "d f s",
	"answering failed":   "d f s",
}

var reasons = []FailureReason{"", "preparer_key_unavailable", "operation_priced", "operation_unknown",
	"operation_limit_reached", "queue_unavailable", "run_not_started", "run_unfinished",
	"run_refused:task_unreadable", "run_refused:conflict"}

// TestTransitionEveryMove asks Transition for every kind, pair of states,
// actor and failure reason: 3 × 9 × 9 × 4 × 10 requests. Each allowed one
// is checked whole (states, actor, reason, outcome class, drops, event);
// each refused one for its code.
func TestTransitionEveryMove(t *testing.T) {
	t.Parallel()
	if got := States(); fmt.Sprint(got) != fmt.Sprint(allStates) {
		t.Fatalf("States() = %v, want %v", got, allStates)
	}
	asked, made := 0, map[string]bool{}
	for _, k := range []Kind{"confirm", "input", "notice"} {
		for _, from := range allStates {
			for _, to := range allStates {
				edge := string(k) + " " + string(from) + " " + string(to)
				who, allowed := movers[edge]
				if CanMove(k, from, to) != allowed {
					t.Errorf("CanMove(%s) = %v", edge, !allowed)
				}
				for _, by := range Actors() {
					for _, r := range reasons {
						asked++
						m, err := Transition(k, from, to, by, r)
						name := fmt.Sprintf("%s by %s (%q)", edge, by, r)
						var want Code
						switch {
						case !allowed && from == StateOpen:
							want = InvalidRequest
						case !allowed:
							want = TaskClosed
						case !strings.Contains(" "+who+" ", " "+string(by)+" "):
							want = Internal
						case to == StateFailed && !strings.Contains(" "+failingFrom[from]+" ", " "+string(r)+" "):
							want = Internal
						case to != StateFailed && r != "":
							want = Internal
						}
						if want != "" {
							var ce *Error
							if !errors.As(err, &ce) || ce.Code != want {
								t.Errorf("%s: %v, want %s", name, err, want)
							} else if want == TaskClosed && ce.State != from {
								t.Errorf("%s: task_closed names state %q", name, ce.State)
							}
							if !m.IsZero() {
								t.Errorf("%s: refused, and still a move %v", name, m)
							}
							continue
						}
						if err != nil {
							t.Errorf("%s: refused: %v", name, err)
							continue
						}
						made[name] = true
						checkMove(t, name, m, k, from, to, by, r)
					}
				}
			}
		}
	}
	// 13 moves by someone of each asking kind, 4 of a notice; approved →
	// failed for 8 of the reasons tried, answering → failed for 3.
	if asked != 3*9*9*4*10 || len(made) != 2*(13-2+8+3)+4 {
		t.Fatalf("asked %d, made %d moves", asked, len(made))
	}
}

func checkMove(t *testing.T, name string, m Move, k Kind, from, to State, by Actor, r FailureReason) {
	t.Helper()
	if m.IsZero() || m.Kind() != k || m.From() != from || m.To() != to || m.By() != by || m.Reason() != r || m.Ends() != to.Terminal() {
		t.Errorf("%s: made %v", name, m)
	}
	// Claimed only when the connector's run reported: done after a run,
	// or a refusal once it began.
	var class OutcomeClass
	switch {
	case !to.Terminal():
	case from == StateAnswering && (to == StateDone || strings.HasPrefix(string(r), "run_refused:")):
		class = OutcomeClaimed
	default:
		class = OutcomeObserved
	}
	if m.Outcome() != class {
		t.Errorf("%s: outcome class %q, want %q", name, m.Outcome(), class)
	}
	d := m.Drops()
	var got []string
	for _, x := range []struct {
		on   bool
		name string
	}{{d.Content, "c"}, {d.DeviceCopies, "d"}, {d.Files, "f"}, {d.Sealed, "s"}} {
		if x.on {
			got = append(got, x.name)
		}
	}
	if want := dropsOf[string(from)+" "+string(to)]; strings.Join(got, " ") != want {
		t.Errorf("%s: drops %q, want %q", name, strings.Join(got, " "), want)
	}
	var event EventType
	switch {
	case to == StateApproved:
		event = EventTaskApproved
	case to == StateDone && k != KindNotice:
		event = EventTaskAnswered
	case to == StateFailed:
		event = EventTaskFailed
	case to == StateExpired:
		event = EventTaskExpired
	}
	if m.Event() != event {
		t.Errorf("%s: event %q, want %q", name, m.Event(), event)
	}
}

func TestTransitionRefusesUnknownValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		k        Kind
		from, to State
		by       Actor
	}{
		{"unknown kind", "approval", StateOpen, StateApproved, ActorOwner},
		{"empty kind", "", StateOpen, StateApproved, ActorOwner},
		{"kind in another case", "Confirm", StateOpen, StateApproved, ActorOwner},
		{"unknown from", KindConfirm, "waiting", StateApproved, ActorOwner},
		{"unknown to", KindConfirm, StateOpen, "accepted", ActorOwner},
		{"empty to", KindNotice, StateOpen, "", ActorOwner},
		{"unknown actor", KindConfirm, StateOpen, StateApproved, "admin"},
		{"empty actor", KindConfirm, StateOpen, StateApproved, ""},
		{"actor in another case", KindConfirm, StateOpen, StateApproved, "Owner"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.name, "actor") && c.by.Valid() {
				t.Fatalf("%q is a valid actor", c.by)
			}
			m, err := Transition(c.k, c.from, c.to, c.by, "")
			if code := ErrorCode(err); code != Internal || !m.IsZero() {
				t.Fatalf("code = %q (%v), want internal_error", code, m)
			}
		})
	}
}

func TestTransitionSentences(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k        Kind
		from, to State
		by       Actor
		r        FailureReason
		want     string
	}{
		{KindNotice, StateOpen, StateApproved, ActorOwner, "", "invalid_request: a notice task cannot move from open to approved"},
		{KindConfirm, StateExpired, StateApproved, ActorOwner, "", "task_closed: the task is expired"},
		{KindConfirm, StateOpen, StateApproved, ActorAgent, "", "internal_error: the agent does not move a confirm task from open to approved"},
		{KindInput, StateApproved, StateFailed, ActorPlatform, FailRunUnfinished, "internal_error: a task that is approved cannot fail for that reason"},
		{KindInput, StateAnswering, StateFailed, ActorPlatform, "", "internal_error: a failed task needs a known failure reason"},
		{KindInput, StateAnswering, StateDone, ActorPlatform, FailRunUnfinished, "internal_error: only a failed task has a failure reason"},
	} {
		if _, err := Transition(c.k, c.from, c.to, c.by, c.r); err == nil || err.Error() != c.want {
			t.Errorf("Transition(%s, %s, %s, %s, %q) = %v, want %q", c.k, c.from, c.to, c.by, c.r, err, c.want)
		}
	}
}

func TestZeroMove(t *testing.T) {
	t.Parallel()
	var m Move
	if !m.IsZero() || m.String() != "no move" || m.Event() != "" || m.Outcome() != "" || m.By() != "" {
		t.Fatalf("the zero Move reads as a move: %v", m)
	}
	m, err := Transition(KindInput, StateApproved, StateFailed, ActorPlatform, FailRunNotStarted)
	if err != nil || m.IsZero() || m.String() != "input approved → failed (run_not_started) by platform" {
		t.Fatalf("Transition = %v, %v", m, err)
	}
}
