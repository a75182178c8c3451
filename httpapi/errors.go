package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"countersign"
	"countersign/store"
)

// The two tables by which a refusal code becomes an HTTP status, the
// owner's and the agent's, are here and nowhere else.

// ownerStatus is SPEC §4's owner-facing table.
var ownerStatus = map[countersign.Code]int{
	countersign.InvalidRequest:       http.StatusBadRequest,
	countersign.InvalidStatement:     http.StatusBadRequest,
	countersign.SessionRequired:      http.StatusUnauthorized,
	countersign.SessionReplaced:      http.StatusUnauthorized,
	countersign.ConfirmationRequired: http.StatusForbidden,
	countersign.OriginRefused:        http.StatusForbidden,
	countersign.TaskNotFound:         http.StatusNotFound,
	countersign.TaskClosed:           http.StatusConflict,
	countersign.TaskExpired:          http.StatusConflict,
	countersign.Conflict:             http.StatusConflict,
	countersign.RateLimited:          http.StatusTooManyRequests,
	countersign.UpstreamUnavailable:  http.StatusServiceUnavailable,
}

// ownerError is the owner-facing refusal body.
type ownerError struct {
	Error    string `json:"error"`
	Reason   string `json:"reason"`
	Terminal bool   `json:"terminal"`
	State    string `json:"state,omitempty"`
	// TaskID names the task a refusal of a request naming several (a
	// batch approval) is about.
	TaskID string `json:"task_id,omitempty"`
}

// writeOwnerError renders a refusal to an owner. Errors that are not
// refusals are logged and shown as an internal error, never their text.
func writeOwnerError(w http.ResponseWriter, log *slog.Logger, err error) {
	var e *countersign.Error
	if errors.Is(err, store.ErrUnavailable) {
		// The owner is told to try again; the operator, why.
		log.Warn("an owner's request was refused: the store is unavailable", "err", err)
	}
	switch {
	case errors.As(err, &e):
	case errors.Is(err, store.ErrUnavailable):
		e = &countersign.Error{Code: countersign.UpstreamUnavailable, Message: "the store is unavailable; try again shortly", RetryAfter: countersign.RetryShortly}
	case errors.Is(err, context.Canceled):
		// The request ended (its client went away, or the server is
		// stopping) before its answer: nothing failed.
		e = &countersign.Error{Code: countersign.UpstreamUnavailable, Message: "the request ended before its answer; try again", RetryAfter: countersign.RetryShortly}
	default:
		log.Error("internal error", "err", err)
		e = &countersign.Error{Code: countersign.Internal, Message: "internal error"}
	}
	status, ok := ownerStatus[e.Code]
	if !ok {
		// A code from the agent-facing list reaching an owner is a bug of
		// ours, not the owner's request.
		if e.Code != countersign.Internal {
			log.Error("refusal without an owner-facing status", "code", e.Code)
		}
		status = http.StatusInternalServerError
	}
	setRetryAfter(w, e.RetryAfter)
	writeJSON(w, status, ownerError{
		Error:    e.Message,
		Reason:   string(e.Code),
		Terminal: status < 500 && status != http.StatusTooManyRequests,
		State:    string(e.State),
		TaskID:   e.Task,
	})
}

// setRetryAfter says, in whole seconds rounded up, when to try again.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
}

// agentStatus is the agent-facing table: the status of a transport-level
// refusal to an agent (a refusal by a connector or the task layer is a 200).
var agentStatus = map[countersign.Code]int{
	countersign.Unauthorized:         http.StatusUnauthorized,
	countersign.InvalidRequest:       http.StatusBadRequest,
	countersign.TaskStoreUnavailable: http.StatusServiceUnavailable,
	countersign.RateLimited:          http.StatusTooManyRequests,
}

// writeAgentError renders a refusal to an agent. Errors that are not
// refusals are logged and shown as an internal error, never their text.
func writeAgentError(w http.ResponseWriter, log interface{ Error(string, ...any) }, err error) {
	var e *countersign.Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.Canceled):
		// The request ended (its client went away, or the server is
		// stopping) before its answer: nothing failed.
		e = &countersign.Error{Code: countersign.TaskStoreUnavailable, Message: "the request ended before its answer; try again", RetryAfter: countersign.RetryShortly}
	default:
		log.Error("internal error", "err", err)
		e = countersign.Errorf(countersign.Internal, "internal error")
	}
	status, ok := agentStatus[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	setRetryAfter(w, e.RetryAfter)
	writeJSON(w, status, agentRefusal{Success: false, Error: string(e.Code) + ": " + e.Message})
}
