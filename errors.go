package countersign

import (
	"errors"
	"fmt"
	"time"
)

// Code is a refusal code of the contract (docs/contract.md §4). Agent-facing refusals read
// "<code>: <sentence>"; owner-facing ones carry the code as "reason".
type Code string

// Codes an agent may be answered with.
const (
	TasksNotDeclared     Code = "tasks_not_declared"
	NotGranted           Code = "not_granted"
	Muted                Code = "muted"
	InboxFull            Code = "inbox_full"
	TaskRunLimit         Code = "task_run_limit"
	DisplayInvalid       Code = "display_invalid"
	TaskTooLarge         Code = "task_too_large"
	TaskLifeTooLong      Code = "task_life_too_long"
	PaymentRequired      Code = "payment_required"
	TaskNotFound         Code = "task_not_found"
	NotThePreparer       Code = "not_the_preparer"
	TaskClosed           Code = "task_closed"
	TaskVoid             Code = "task_void"
	TaskUnreadable       Code = "task_unreadable"
	TaskStoreUnavailable Code = "task_store_unavailable"
	PolicyUnreadable     Code = "policy_unreadable"
	PolicyDenied         Code = "policy_denied"
	InvalidRequest       Code = "invalid_request"
	Conflict             Code = "conflict"
	Internal             Code = "internal_error"
	Unauthorized         Code = "unauthorized"
)

// Codes an owner may be answered with (besides InvalidRequest, TaskNotFound
// and TaskClosed above).
const (
	InvalidStatement     Code = "invalid_statement"
	SessionRequired      Code = "session_required"
	SessionReplaced      Code = "session_replaced"
	ConfirmationRequired Code = "confirmation_required"
	OriginRefused        Code = "origin_refused"
	TaskExpired          Code = "task_expired"
	RateLimited          Code = "rate_limited"
	UpstreamUnavailable  Code = "upstream_unavailable"
)

// Codes lists every refusal code, agents' and owners'.
func Codes() []Code {
	return []Code{TasksNotDeclared, NotGranted, Muted, InboxFull, TaskRunLimit, DisplayInvalid, TaskTooLarge,
		TaskLifeTooLong, PaymentRequired, TaskNotFound, NotThePreparer, TaskClosed, TaskVoid, TaskUnreadable,
		TaskStoreUnavailable, PolicyUnreadable, PolicyDenied, InvalidRequest, Conflict, Internal, Unauthorized,
		InvalidStatement, SessionRequired, SessionReplaced, ConfirmationRequired, OriginRefused, TaskExpired,
		RateLimited, UpstreamUnavailable}
}

// Error is a refusal with a code and a sentence that is safe to show the
// caller: it never holds task content, keys, tokens or credentials.
type Error struct {
	Code    Code
	Message string
	// State is the task's state, for TaskClosed and TaskExpired.
	State State
	// Task names the task a refusal is about when a request names several
	// (a batch approval).
	Task string
	// RetryAfter, when set, tells a client when to try again.
	RetryAfter time.Duration
}

// RetryShortly is the wait a refusal names when the service, not the
// request, stopped it (the store unavailable, the request ended before its
// answer): it is expected to answer again soon.
const RetryShortly = 5 * time.Second

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Errorf builds an *Error with a formatted sentence.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or Internal
// for any other error. A nil error has no code.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the sentence of the first *Error in err's chain. Any
// other error is not shown to callers: its message may hold details that are
// only for the operator's log.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
