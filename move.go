package countersign

// Dropped is what a task loses when it moves from one state to another
// (SPEC §3): leaving open drops the content and the device copies; the files
// go too unless the task is approved, whose answer run still needs them;
// reaching an end drops the sealed copy, the approval, every file and every
// device copy (even one an unlock wrote while the task was leaving open).
type Dropped struct {
	Content      bool
	DeviceCopies bool
	Files        bool
	Sealed       bool // the sealed copy and the approvals
}

// rule is one move the contract allows and who makes it.
type rule struct {
	from, to State
	by       []Actor
}

var (
	signers   = []Actor{ActorOwner, ActorApprover} // the owner, or an approver of a shared task
	cancelers = []Actor{ActorOwner, ActorAgent}
	platform  = []Actor{ActorPlatform}
)

// rules holds every allowed move per kind; anything absent is refused.
var rules = map[Kind][]rule{
	KindConfirm: askingRules,
	KindInput:   askingRules,
	KindNotice: {
		// The owner's Got it; the preparer or the owner cancels; the
		// platform expires it.
		{StateOpen, StateDone, []Actor{ActorOwner}},
		{StateOpen, StateCancelled, cancelers},
		{StateOpen, StateExpired, platform},
	},
}

var askingRules = []rule{
	// The owner (or an approver of a shared task) approves or rejects; the
	// preparer or the owner cancels; the platform expires it, or voids it
	// when the policy or build changed.
	{StateOpen, StateApproved, signers},
	{StateOpen, StateRejected, signers},
	{StateOpen, StateCancelled, cancelers},
	{StateOpen, StateExpired, platform},
	{StateOpen, StateVoid, platform},
	// The platform starts the run (answering), or cannot (failed with an
	// admission reason, or refused by its own checks), or finds the policy
	// or build changed before the run begins (void). No write has been
	// attempted yet.
	{StateApproved, StateAnswering, platform},
	{StateApproved, StateFailed, platform},
	{StateApproved, StateVoid, platform},
	// The run reports done or failed, or the platform ends it failed with
	// run_unfinished. A begun run may have acted, so it is never void.
	{StateAnswering, StateDone, platform},
	{StateAnswering, StateFailed, platform},
}

func ruleOf(k Kind, from, to State) (rule, bool) {
	for _, r := range rules[k] {
		if r.from == from && r.to == to {
			return r, true
		}
	}
	return rule{}, false
}

// CanMove reports whether a task of kind k may move from one state to
// another, by someone. It allows exactly the transitions of SPEC §3 (see the
// package documentation for approved → failed and approved → void).
func CanMove(k Kind, from, to State) bool {
	_, ok := ruleOf(k, from, to)
	return ok
}

// Move is one move of a task that the contract allows: the task's kind, the
// state it leaves and the one it reaches, who makes it and, on a move to
// failed, why; and what goes with it — the outcome class of an end, what
// the move drops, the event it sends. Transition makes one, and nothing
// else can: the zero Move is no move, and the store refuses it. A task
// changes state only by a Move.
type Move struct {
	kind     Kind
	from, to State
	by       Actor
	reason   FailureReason
	outcome  OutcomeClass
}

// Transition checks a move of a task of kind k from one state to another,
// made by by, and returns it. r is the failure reason of a move to failed
// and empty for any other. It refuses:
//
//   - an unknown kind, state or actor: internal_error;
//   - a move the kind does not make: task_closed (with State set to from)
//     when the task has left open, invalid_request for a move from open
//     (approving a notice, acknowledging a confirm task);
//   - an allowed move by someone who does not make it (an agent approving,
//     an owner expiring): internal_error;
//   - a failure reason that does not fit: internal_error. A task that is
//     approved fails for any reason but run_unfinished (its run has not
//     begun), one that is answering for run_unfinished or
//     run_refused:<code> only; no other move has one.
func Transition(k Kind, from, to State, by Actor, r FailureReason) (Move, error) {
	switch {
	case !k.Valid():
		return Move{}, Errorf(Internal, "unknown task kind")
	case !from.Valid() || !to.Valid():
		return Move{}, Errorf(Internal, "unknown task state")
	case !by.Valid():
		return Move{}, Errorf(Internal, "unknown actor")
	}
	ru, ok := ruleOf(k, from, to)
	if !ok {
		if from != StateOpen {
			return Move{}, &Error{Code: TaskClosed, Message: "the task is " + string(from), State: from}
		}
		return Move{}, Errorf(InvalidRequest, "a %s task cannot move from open to %s", k, to)
	}
	if !contains(ru.by, by) {
		return Move{}, Errorf(Internal, "the %s does not move a %s task from %s to %s", by, k, from, to)
	}
	if to != StateFailed {
		if r != "" {
			return Move{}, Errorf(Internal, "only a failed task has a failure reason")
		}
	} else if !r.Valid() {
		return Move{}, Errorf(Internal, "a failed task needs a known failure reason")
	} else if !r.fits(from) {
		return Move{}, Errorf(Internal, "a task that is %s cannot fail for that reason", from)
	}
	return Move{kind: k, from: from, to: to, by: by, reason: r, outcome: outcome(k, from, to, r)}, nil
}

func contains(as []Actor, a Actor) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// fits reports whether r may end failed a task in state from: one whose run
// began (answering) ends run_unfinished when the run does not report, or
// run_refused:<code> when it refuses; one whose run has not begun
// (approved) for any reason but run_unfinished, run_refused:<code> when the
// platform's own checks refuse it (task_unreadable, confirmation_required).
func (r FailureReason) fits(from State) bool {
	_, refused := r.RefusalCode()
	switch from {
	case StateApproved:
		return r.Valid() && r != FailRunUnfinished
	case StateAnswering:
		return r == FailRunUnfinished || refused
	}
	return false
}

// outcome is the outcome class of an allowed move: claimed when the
// connector's run reported it (done for confirm and input, failed with
// run_refused:<code> from answering), observed for every other end, none
// ("") for a move that does not end the task.
func outcome(k Kind, from, to State, r FailureReason) OutcomeClass {
	_, refused := r.RefusalCode()
	switch {
	case !to.Terminal():
		return ""
	case to == StateDone && k.Asks(), to == StateFailed && from == StateAnswering && refused:
		return OutcomeClaimed
	}
	return OutcomeObserved
}

// IsZero reports whether m is the zero Move, which Transition never
// returns.
func (m Move) IsZero() bool { return m.kind == "" }

// Kind is the kind of the task moved.
func (m Move) Kind() Kind { return m.kind }

// From is the state the task leaves.
func (m Move) From() State { return m.from }

// To is the state the task reaches.
func (m Move) To() State { return m.to }

// By is who makes the move, as the task's history records it.
func (m Move) By() Actor { return m.by }

// Reason is why the task fails: set on a move to failed, empty otherwise.
func (m Move) Reason() FailureReason { return m.reason }

// Ends reports whether the move ends the task (its state is terminal).
func (m Move) Ends() bool { return m.to.Terminal() }

// Outcome is the outcome class of a move that ends the task, "" for one
// that does not.
func (m Move) Outcome() OutcomeClass { return m.outcome }

// Drops is what the move deletes.
func (m Move) Drops() Dropped {
	ends := m.to.Terminal()
	return Dropped{
		Content:      m.from == StateOpen,
		DeviceCopies: m.from == StateOpen || ends,
		Files:        ends || m.from == StateOpen && m.to != StateApproved,
		Sealed:       ends,
	}
}

// Event is the task event the move sends ("" for none; see EventFor).
func (m Move) Event() EventType {
	if m.IsZero() {
		return ""
	}
	return EventFor(m.kind, m.to)
}

// String names the move for logs and test failures, without task content:
// "input approved → failed (run_not_started) by platform".
func (m Move) String() string {
	if m.IsZero() {
		return "no move"
	}
	s := string(m.kind) + " " + string(m.from) + " → " + string(m.to)
	if m.reason != "" {
		s += " (" + string(m.reason) + ")"
	}
	return s + " by " + string(m.by)
}
