package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"countersign"
)

// callBody is the most an agent's call may hold.
const callBody = 64 << 10

func (s *Server) routeCalls(r *mux.Router) {
	r.HandleFunc("/call/{owner}/{project}", s.call).Methods(http.MethodPost)
}

// call serves POST /call/{owner}/{project}. Refusals by a connector or the
// task layer are HTTP 200 with {"success": false, …}; only transport-level
// problems (no or bad key, a body that is not a JSON object, the store down)
// have another status, with the same body.
func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeAgentError(w, s.opts.Logger, countersign.Errorf(countersign.Unauthorized, "a valid agent key is needed (Authorization: Bearer ak_…)"))
		return
	}
	if err := s.limitCalls(strings.TrimSpace(key)); err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, callBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeAgentError(w, s.opts.Logger, countersign.Errorf(countersign.InvalidRequest, "the call is larger than %d bytes", callBody))
			return
		}
		writeAgentError(w, s.opts.Logger, countersign.Errorf(countersign.InvalidRequest, "the call could not be read"))
		return
	}
	var object map[string]json.RawMessage
	if err := json.Unmarshal(body, &object); err != nil || !utf8.Valid(body) || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		writeAgentError(w, s.opts.Logger, countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object"))
		return
	}
	vars := mux.Vars(r)
	answer, err := s.opts.Agents.Call(r.Context(), strings.TrimSpace(key), vars["owner"], vars["project"], r.Header.Get("Idempotency-Key"), body)
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
}

// agentStatus is the status of a transport-level refusal to an agent.
var agentStatus = map[countersign.Code]int{
	countersign.Unauthorized:         http.StatusUnauthorized,
	countersign.InvalidRequest:       http.StatusBadRequest,
	countersign.TaskStoreUnavailable: http.StatusServiceUnavailable,
	countersign.RateLimited:          http.StatusTooManyRequests,
}

func writeAgentError(w http.ResponseWriter, log interface{ Error(string, ...any) }, err error) {
	var e *countersign.Error
	if !errors.As(err, &e) {
		log.Error("internal error", "err", err)
		e = countersign.Errorf(countersign.Internal, "internal error")
	}
	status, ok := agentStatus[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	setRetryAfter(w, e.RetryAfter)
	writeJSON(w, status, map[string]any{"success": false, "error": string(e.Code) + ": " + e.Message})
}
