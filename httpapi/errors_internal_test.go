package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEndedRequestIsNoInternalError: a request whose context ended (its
// client hung up, the server stopping) before the store answered is not an
// internal error: nothing is logged at error level and the answer, if
// anyone still reads it, says to try again; any other unknown error is.
func TestEndedRequestIsNoInternalError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		write  func(http.ResponseWriter, *slog.Logger, error)
		err    error
		status int
		logged bool
	}{
		{"owner, ended", writeOwnerError, fmt.Errorf("store: %w", context.Canceled), http.StatusServiceUnavailable, false},
		{"agent, ended", func(w http.ResponseWriter, l *slog.Logger, err error) { writeAgentError(w, l, err) }, fmt.Errorf("store: %w", context.Canceled), http.StatusServiceUnavailable, false},
		{"owner, a bug", writeOwnerError, errors.New("boom"), http.StatusInternalServerError, true},
		{"agent, a bug", func(w http.ResponseWriter, l *slog.Logger, err error) { writeAgentError(w, l, err) }, errors.New("boom"), http.StatusInternalServerError, true},
	} {
		var logs bytes.Buffer
		rec := httptest.NewRecorder()
		c.write(rec, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError})), c.err)
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, rec.Code, c.status, rec.Body)
		}
		if got := strings.Contains(logs.String(), "internal error"); got != c.logged {
			t.Errorf("%s: logged an internal error: %v, want %v (%q)", c.name, got, c.logged, logs.String())
		}
		if c.status == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", c.name)
		}
	}
}
