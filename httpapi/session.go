package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"countersign"
	"countersign/inbox"
)

// ownerHandler is a handler for a signed-in owner.
type ownerHandler func(w http.ResponseWriter, r *http.Request, sess inbox.Session)

// owner authenticates the request's session, then checks the ids in its
// path, before h runs. A request without a session that authenticates is
// refused 401 and spends no address's budget of failed attempts: session
// tokens carry a tag the inbox checks before the store is asked, so a
// guessed or forged one costs a hash, and a client behind a shared
// address cannot lock out the owners there (SPEC §6).
func (s *Server) owner(h ownerHandler) http.HandlerFunc {
	return s.ownerReading(h, false)
}

// ownerTask is owner for a route on the task in its path whose handler
// reads that task first: the task is read with the session, in the same
// round trip (inbox.AuthenticateTask), and the handler's own read of it
// asks the store nothing more.
func (s *Server) ownerTask(h ownerHandler) http.HandlerFunc {
	return s.ownerReading(h, true)
}

func (s *Server) ownerReading(h ownerHandler, task bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, sess, err := s.authenticateOwner(r, task)
		if err != nil {
			writeOwnerError(w, s.opts.Logger, err)
			return
		}
		if err := checkPath(r); err != nil {
			writeOwnerError(w, s.opts.Logger, err)
			return
		}
		s.limitWrites(h)(w, r, sess)
	}
}

// authenticateOwner authenticates r's session, with the task in its path
// if task: r is then returned with a context that holds the task read.
func (s *Server) authenticateOwner(r *http.Request, task bool) (*http.Request, inbox.Session, error) {
	token, _, err := s.sessionToken(r)
	if err != nil {
		return r, inbox.Session{}, err
	}
	if !task {
		sess, err := s.opts.Inbox.Authenticate(r.Context(), token)
		return r, sess, err
	}
	ctx, sess, err := s.opts.Inbox.AuthenticateTask(r.Context(), token, mux.Vars(r)["id"])
	return r.WithContext(ctx), sess, err
}

func (s *Server) routeSessions(r *mux.Router) {
	r.HandleFunc("/inbox/session", s.limitSignIns(s.signIn)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/session", s.owner(s.signOut)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/devices", s.owner(s.devices)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/devices/{id}", s.owner(s.withdrawDevice)).Methods(http.MethodDelete)
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	var req inbox.SignInRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	sess, err := s.opts.Inbox.SignIn(r.Context(), req)
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	if s.browser.fromPage(r) {
		for _, c := range s.browser.cookies(sess.Token, sess.ValidUntil) {
			http.SetCookie(w, c)
		}
	}
	writeJSON(w, http.StatusOK, signedIn{Token: sess.Token, DeviceID: sess.DeviceID, AccountID: sess.AccountID,
		ValidUntil: sess.ValidUntil.Format(countersign.TimeFormat)})
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	if err := s.opts.Inbox.SignOut(r.Context(), sess); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	if s.browser.origin != "" {
		for _, c := range s.browser.cookies("", time.Time{}) {
			http.SetCookie(w, c)
		}
	}
	writeJSON(w, http.StatusOK, revokedAnswer{Revoked: true})
}

func (s *Server) devices(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	devices, err := s.opts.Inbox.Devices(r.Context(), sess)
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	writeJSON(w, http.StatusOK, devicesAnswer{Devices: nonNil(devices)})
}

func (s *Server) withdrawDevice(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req confirmationRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	if err := s.opts.Inbox.WithdrawDevice(r.Context(), sess, mux.Vars(r)["id"], req.Confirmation); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	writeJSON(w, http.StatusOK, revokedAnswer{Revoked: true})
}
