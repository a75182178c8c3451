package countersign

import (
	"strings"
	"time"
)

// Limits of the contract (SPEC §12). Character counts are Unicode code
// points; byte counts are bytes. The rest of the service takes its limits from
// here.
const (
	MaxTitleChars       = 80     // title of a task
	MaxSummaryChars     = 200    // a display's summary: one line of what approving does
	MaxFields           = 12     // fields of a display
	MaxLabelChars       = 40     // label of a field
	MaxLongTextChars    = 50_000 // each value of a long_text field
	MaxTextChars        = 500    // the value of a text field
	MaxValueChars       = 200    // each value of a money, account, address or list field
	MaxListValues       = 20     // values of a list field (at least 1)
	MaxCombiningRun     = 4      // combining marks allowed in a row in shown text
	MaxFiles            = 10     // files of a task
	MaxFilesBytes       = 6 << 20
	MaxFileNameChars    = 200
	MaxContentTypeChars = 100

	MaxSealedStateBytes = 256 << 10
	MaxEnvelopeBytes    = 256 << 10
	MaxPolicyBytes      = 64 << 10
	// MaxSuppliedBytes, MaxNoteBytes and MaxReasonBytes bound the sealed
	// bytes an owner's page sends (the part of the service that receives them
	// cannot open them, so it bounds what it can measure).
	MaxSuppliedBytes = 8 << 10
	MaxNoteBytes     = 8 << 10
	MaxReasonBytes   = 8 << 10
	MaxResultBytes   = 16 << 10

	MaxOpenTasksPerOwner      = 20 // open tasks of one owner
	MaxActiveTasksPerPreparer = 10 // open and approved tasks of one preparer for one owner
	MaxTasksPerRun            = 5  // tasks one run may open
	MaxWaitingContentBytes    = 64 << 20

	MaxDevicesPerAccount = 5
)

// Durations of the contract (SPEC §12).
const (
	MaxTaskLife       = 24 * time.Hour
	DefaultTaskLife   = 24 * time.Hour
	AnswerRunDeadline = 30 * time.Minute // approved without a finished run → failed
	OutcomeKept       = 30 * 24 * time.Hour
	MaxSessionLife    = 30 * 24 * time.Hour
	ApprovalValidity  = 10 * time.Minute // approvals and confirmations, once
)

// TimeFormat is the contract's time format: UTC, whole seconds,
// YYYY-MM-DDTHH:MM:SSZ.
const TimeFormat = "2006-01-02T15:04:05Z"

// Kind is what a task asks of its owner.
type Kind string

// The kinds of task.
const (
	KindConfirm Kind = "confirm" // yes or no
	KindInput   Kind = "input"   // the owner supplies text or a file
	KindNotice  Kind = "notice"  // tells; asks nothing, names no operation
)

// Valid reports whether k is one of the three kinds.
func (k Kind) Valid() bool {
	return k == KindConfirm || k == KindInput || k == KindNotice
}

// Asks reports whether a task of kind k asks its owner something and so names
// an answer operation and a reply key (confirm and input, not notice).
func (k Kind) Asks() bool { return k == KindConfirm || k == KindInput }

// Supplies is what the owner hands over with an approval.
type Supplies string

// What an answer supplies: nothing for a confirm task, text or a file for an
// input task.
const (
	SuppliesNone Supplies = "none"
	SuppliesText Supplies = "text"
	SuppliesFile Supplies = "file"
)

// Valid reports whether s is one of none, text and file.
func (s Supplies) Valid() bool {
	return s == SuppliesNone || s == SuppliesText || s == SuppliesFile
}

// fits reports whether a task of kind k may be answered with s: a confirm
// task supplies nothing, an input task supplies text or a file.
func (s Supplies) fits(k Kind) bool {
	switch k {
	case KindConfirm:
		return s == SuppliesNone
	case KindInput:
		return s == SuppliesText || s == SuppliesFile
	}
	return false
}

// State is where a task is in its life (SPEC §3).
type State string

// The nine states.
const (
	StateOpen      State = "open"
	StateApproved  State = "approved"
	StateAnswering State = "answering"
	StateDone      State = "done"
	StateFailed    State = "failed"
	StateRejected  State = "rejected"
	StateCancelled State = "cancelled"
	StateExpired   State = "expired"
	StateVoid      State = "void"
)

// States lists the nine states in the contract's order.
func States() []State {
	return []State{StateOpen, StateApproved, StateAnswering, StateDone, StateFailed,
		StateRejected, StateCancelled, StateExpired, StateVoid}
}

// Valid reports whether s is one of the nine states.
func (s State) Valid() bool {
	switch s {
	case StateOpen, StateApproved, StateAnswering, StateDone, StateFailed,
		StateRejected, StateCancelled, StateExpired, StateVoid:
		return true
	}
	return false
}

// Open reports whether s is open: waiting for its owner, showing its content.
func (s State) Open() bool { return s == StateOpen }

// InFlight reports whether the owner approved and the answer run has not
// ended yet (approved or answering). Such a task counts as active and is ended
// failed by the platform after AnswerRunDeadline.
func (s State) InFlight() bool { return s == StateApproved || s == StateAnswering }

// Terminal reports whether s is an end state: no move leaves it.
func (s State) Terminal() bool {
	switch s {
	case StateDone, StateFailed, StateRejected, StateCancelled, StateExpired, StateVoid:
		return true
	}
	return false
}

// StateAt is the state, at now, of a task recorded in state s that expires
// at expiresAt: an open task whose expiry has come is expired, whether or not
// the sweep has recorded it yet. Every read and move goes by it; the sweep
// only writes down what is already true.
func StateAt(s State, expiresAt, now time.Time) State {
	if s == StateOpen && !now.Before(expiresAt) {
		return StateExpired
	}
	return s
}

// OutcomeClass says who ended a task (SPEC §3).
type OutcomeClass string

// The outcome classes.
const (
	// OutcomeClaimed: the connector's run reported the outcome (done, or
	// failed with run_refused:<code> once the run began).
	OutcomeClaimed OutcomeClass = "claimed"
	// OutcomeObserved: the platform recorded the end itself (an owner's
	// reject, cancel or Got it, expiry, timeout, crash, void, a run that
	// could not start, run_refused:<code> from the platform's own checks
	// before the run).
	OutcomeObserved OutcomeClass = "observed"
)

// FailureReason says why a task ended failed (SPEC §3).
type FailureReason string

// The fixed failure reasons. RunRefused builds the remaining one.
const (
	// Reasons the platform gives while the task is approved, before the
	// answer run begins.
	FailPreparerKeyUnavailable FailureReason = "preparer_key_unavailable"
	FailOperationPriced        FailureReason = "operation_priced"
	FailOperationUnknown       FailureReason = "operation_unknown"
	FailOperationLimitReached  FailureReason = "operation_limit_reached"
	FailQueueUnavailable       FailureReason = "queue_unavailable"
	FailRunNotStarted          FailureReason = "run_not_started"
	// FailRunUnfinished: the run began and did not report (timeout or a
	// process that died); the write may or may not have happened.
	FailRunUnfinished FailureReason = "run_unfinished"
)

const runRefusedPrefix = "run_refused:"

// RunRefused returns the reason run_refused:<code> for a connector that
// refused after the approval, or for the platform's own checks of an
// approved task before its run (the sealed copy does not open, the approval
// no longer verifies). The code is 1–64 of [a-z0-9_].
func RunRefused(code Code) (FailureReason, error) {
	if !validRefusalCode(string(code)) {
		return "", Errorf(Internal, "a refusal code is 1 to 64 of a-z, 0-9 and _")
	}
	return FailureReason(runRefusedPrefix + string(code)), nil
}

// ParseFailureReason reads a stored or reported failure reason.
func ParseFailureReason(s string) (FailureReason, error) {
	r := FailureReason(s)
	if !r.Valid() {
		return "", Errorf(InvalidRequest, "unknown failure reason")
	}
	return r, nil
}

// Valid reports whether r is one of the fixed reasons or a well-formed
// run_refused:<code>.
func (r FailureReason) Valid() bool {
	switch r {
	case FailPreparerKeyUnavailable, FailOperationPriced, FailOperationUnknown,
		FailOperationLimitReached, FailQueueUnavailable, FailRunNotStarted, FailRunUnfinished:
		return true
	}
	_, ok := r.RefusalCode()
	return ok
}

// RefusalCode returns the connector's code of a run_refused:<code> reason.
func (r FailureReason) RefusalCode() (Code, bool) {
	code, ok := strings.CutPrefix(string(r), runRefusedPrefix)
	if !ok || !validRefusalCode(code) {
		return "", false
	}
	return Code(code), true
}

func validRefusalCode(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
