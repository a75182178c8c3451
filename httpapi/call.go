package httpapi

import (
	"bytes"
	"context"
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
	r.HandleFunc("/agent/projects", s.agentProjects).Methods(http.MethodGet)
	s.routeMCP(r)
}

// agentProjects serves GET /agent/projects: the projects granted to the
// key, {projects: [{owner, project, connector}]}.
func (s *Server) agentProjects(w http.ResponseWriter, r *http.Request) {
	r, key, err := s.admitAgent(r, nil)
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	grants, err := s.opts.Agents.Grants(r.Context(), key)
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	writeJSON(w, http.StatusOK, grantsAnswer{Projects: grants})
}

// call serves POST /call/{owner}/{project}. Refusals by a connector or the
// task layer are HTTP 200 with {"success": false, …}; only transport-level
// problems (no or bad key, a malformed path, Idempotency-Key or body, the
// store down) have another status, with the same body.
//
// The key is checked before anything else: a request without a good one
// counts against its client's address (Limits.FailedAuthPerMinute) and is
// never limited, or remembered, by the key it carries.
func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	// The project is read with the key when the path names one; a path
	// that does not is refused below, after the key.
	var c *called
	if checkPath(r) == nil {
		vars := mux.Vars(r)
		c = &called{owner: vars["owner"], project: vars["project"]}
	}
	r, key, err := s.admitAgent(r, c)
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	if err := checkPath(r); err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	idem, err := idempotencyKey(r)
	if err != nil {
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
	if err := checkCallBody(body); err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	vars := mux.Vars(r)
	answer, err := s.opts.Agents.Call(r.Context(), key, vars["owner"], vars["project"], idem, body)
	if err != nil {
		writeAgentError(w, s.opts.Logger, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
}

// checkCallBody refuses a call body that is not one JSON object in UTF-8.
func checkCallBody(body []byte) error {
	var object map[string]json.RawMessage
	if err := json.Unmarshal(body, &object); err != nil || !utf8.Valid(body) || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	}
	return nil
}

// called is the owner's project a call names, read with the key that
// calls it.
type called struct{ owner, project string }

// admitAgent lets an agent's request in: its bearer key checked (with the
// project it calls, if c is not nil), then counted against the key's
// calls. It returns the request to serve the rest with, and the key.
func (s *Server) admitAgent(r *http.Request, c *called) (*http.Request, string, error) {
	key := bearer(r)
	r, err := s.authenticateAgent(r, key, c)
	if err != nil {
		return r, key, err
	}
	return r, key, s.limitCalls(key)
}

// authenticateAgent checks an agent key, within its client's budget of
// failed attempts, and returns the request to serve the rest with.
func (s *Server) authenticateAgent(r *http.Request, key string, c *called) (*http.Request, error) {
	unauthorized := countersign.Errorf(countersign.Unauthorized, "a valid agent key is needed (Authorization: Bearer ak_…)")
	if !plausibleKey(key) {
		return r, s.failedAttempt(r, unauthorized)
	}
	if err := s.mayLookUp(r, key); err != nil {
		return r, err
	}
	var ctx context.Context
	var err error
	if c != nil {
		ctx, err = s.opts.Agents.AuthenticateCall(r.Context(), key, c.owner, c.project)
	} else {
		ctx, err = s.opts.Agents.Authenticate(r.Context(), key)
	}
	if countersign.ErrorCode(err) == countersign.Unauthorized {
		return r, s.failedAttempt(r, err)
	} else if err != nil {
		return r, err
	}
	s.goodCredentials.add(key)
	return r.WithContext(ctx), nil
}

// plausibleKey is what an agent key can look like: ak_ and at most 128
// visible ASCII characters. Anything else is refused without a look-up.
func plausibleKey(key string) bool {
	if !strings.HasPrefix(key, "ak_") || len(key) > 128 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return false
		}
	}
	return true
}
