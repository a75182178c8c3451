package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"countersign"
	"countersign/inbox"
)

func (s *Server) routeInbox(r *mux.Router) {
	r.HandleFunc("/inbox/tasks", s.owner(s.tasks)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/tasks", s.owner(s.cancelMatching)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/tasks/approve", s.owner(s.batchApprove)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/tasks/{id}", s.owner(s.task)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/tasks/{id}", s.owner(s.cancel)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/tasks/{id}/files/{n:[0-9]+}", s.owner(s.file)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/tasks/{id}/origin", s.owner(s.origin)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/tasks/{id}/events", s.owner(s.history)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/tasks/{id}/approve", s.ownerTask(s.approve)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/tasks/{id}/reject", s.owner(s.reject)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/tasks/{id}/acknowledge", s.owner(s.acknowledge)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/unlock", s.owner(s.unlock)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/activity", s.owner(s.activity)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/mutes", s.owner(s.mute)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/mutes", s.owner(s.mutes)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/mutes", s.owner(s.unmute)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/projects", s.owner(s.projects)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/projects/{name}", s.owner(s.putProject)).Methods(http.MethodPut)
	r.HandleFunc("/inbox/projects/{name}", s.owner(s.deleteProject)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/projects/{name}/allow", s.owner(s.proposeAllow)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/events", s.owner(s.events)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/webhook", s.owner(s.putWebhook)).Methods(http.MethodPut)
	r.HandleFunc("/inbox/webhook", s.owner(s.webhook)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/webhook", s.owner(s.deleteWebhook)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/webhook/deliveries", s.owner(s.deliveries)).Methods(http.MethodGet)
	r.HandleFunc("/inbox/webhook/test", s.owner(s.testWebhook)).Methods(http.MethodPost)
	r.HandleFunc("/inbox/push", s.owner(s.putPush)).Methods(http.MethodPut)
	r.HandleFunc("/inbox/push", s.owner(s.deletePush)).Methods(http.MethodDelete)
	r.HandleFunc("/inbox/push/key", s.owner(s.pushKey)).Methods(http.MethodGet)
}

func (s *Server) putPush(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req inbox.PushRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	v, err := s.opts.Inbox.PutPush(r.Context(), sess, req)
	s.answer(w, v, err)
}

func (s *Server) deletePush(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	v, err := s.opts.Inbox.DeletePush(r.Context(), sess)
	s.answer(w, v, err)
}

func (s *Server) pushKey(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	v, err := s.opts.Inbox.PushKey(r.Context(), sess)
	s.answer(w, v, err)
}

func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req webhookRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	v, err := s.opts.Inbox.PutWebhook(r.Context(), sess, req.URL, req.Confirmation)
	s.answer(w, v, err)
}

func (s *Server) webhook(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	v, err := s.opts.Inbox.Webhook(r.Context(), sess)
	s.answer(w, v, err)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req confirmationRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	err := s.opts.Inbox.DeleteWebhook(r.Context(), sess, req.Confirmation)
	s.answer(w, removedAnswer{Removed: true}, err)
}

func (s *Server) deliveries(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	d, err := s.opts.Inbox.Deliveries(r.Context(), sess)
	s.answer(w, deliveriesAnswer{Deliveries: nonNil(d)}, err)
}

func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	a, err := s.opts.Inbox.TestWebhook(r.Context(), sess)
	s.answer(w, a, err)
}

// answer renders a service's answer or its refusal to an owner.
func (s *Server) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) tasks(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	if err := checkQuery(r, map[string]func(string) bool{"before": countersign.ValidTaskID}); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	q := r.URL.Query()
	limit := 0
	if l := q.Get("limit"); l != "" {
		var err error
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 {
			writeOwnerError(w, s.opts.Logger, countersign.Errorf(countersign.InvalidRequest, "limit is a number from 1 to %d", inbox.MaxListLimit))
			return
		}
	}
	tasks, more, err := s.opts.Inbox.Tasks(r.Context(), sess, q.Get("show"), q.Get("before"), limit)
	s.answer(w, taskPage{Tasks: nonNil(tasks), More: more}, err)
}

func (s *Server) task(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	t, err := s.opts.Inbox.Task(r.Context(), sess, mux.Vars(r)["id"])
	s.answer(w, t, err)
}

func (s *Server) file(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	n, err := strconv.Atoi(mux.Vars(r)["n"])
	if err != nil || n >= countersign.MaxFiles {
		writeOwnerError(w, s.opts.Logger, countersign.Errorf(countersign.InvalidRequest, "no such file"))
		return
	}
	blob, err := s.opts.Inbox.File(r.Context(), sess, mux.Vars(r)["id"], n)
	s.answer(w, fileAnswer{Ciphertext: blob}, err)
}

func (s *Server) origin(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	o, err := s.opts.Inbox.Origin(r.Context(), sess, mux.Vars(r)["id"])
	s.answer(w, o, err)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	h, err := s.opts.Inbox.History(r.Context(), sess, mux.Vars(r)["id"])
	s.answer(w, historyAnswer{Events: nonNil(h)}, err)
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req inbox.ApproveRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	a, err := s.opts.Inbox.Approve(r.Context(), sess, mux.Vars(r)["id"], req)
	s.answer(w, a, err)
}

func (s *Server) batchApprove(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req inbox.BatchApproveRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	a, err := s.opts.Inbox.BatchApprove(r.Context(), sess, req)
	s.answer(w, a, err)
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req rejectRequest
	if err := decodeOptional(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	m, err := s.opts.Inbox.Reject(r.Context(), sess, mux.Vars(r)["id"], req.Reason)
	s.answer(w, m, err)
}

func (s *Server) acknowledge(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	m, err := s.opts.Inbox.Acknowledge(r.Context(), sess, mux.Vars(r)["id"])
	s.answer(w, m, err)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	m, err := s.opts.Inbox.Cancel(r.Context(), sess, mux.Vars(r)["id"])
	s.answer(w, m, err)
}

func (s *Server) cancelMatching(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	err := checkQuery(r, map[string]func(string) bool{"preparer": countersign.ValidAccountID, "project": countersign.ValidProjectName})
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	q := r.URL.Query()
	n, err := s.opts.Inbox.CancelMatching(r.Context(), sess, q.Get("preparer"), q.Get("project"))
	s.answer(w, countAnswer{Deleted: n}, err)
}

func (s *Server) unlock(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	n, err := s.opts.Inbox.Unlock(r.Context(), sess)
	s.answer(w, waitingAnswer{Waiting: n}, err)
}

func (s *Server) mute(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req muteRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	n, err := s.opts.Inbox.Mute(r.Context(), sess, req.SubjectIs, req.Subject, req.DeleteWaiting)
	s.answer(w, countAnswer{Deleted: n}, err)
}

func (s *Server) mutes(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	ms, err := s.opts.Inbox.Mutes(r.Context(), sess)
	s.answer(w, mutesAnswer{Mutes: nonNil(ms)}, err)
}

func (s *Server) unmute(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req unmuteRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	n, err := s.opts.Inbox.Unmute(r.Context(), sess, req.SubjectIs, req.Subject)
	s.answer(w, countAnswer{Deleted: n}, err)
}

func (s *Server) projects(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	ps, err := s.opts.Inbox.Projects(r.Context(), sess)
	s.answer(w, projectsAnswer{Projects: nonNil(ps)}, err)
}

func (s *Server) putProject(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req projectRequest
	if err := decode(w, r, ownerBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	p, err := s.opts.Inbox.PutProject(r.Context(), sess, mux.Vars(r)["name"], req.Project, req.Confirmation)
	s.answer(w, p, err)
}

func (s *Server) proposeAllow(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req inbox.AllowRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	p, err := s.opts.Inbox.ProposeAllow(r.Context(), sess, mux.Vars(r)["name"], req)
	s.answer(w, p, err)
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	var req confirmationRequest
	if err := decode(w, r, smallBody, &req); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	err := s.opts.Inbox.DeleteProject(r.Context(), sess, mux.Vars(r)["name"], req.Confirmation)
	s.answer(w, deletedAnswer{Deleted: true}, err)
}

// DefaultHeartbeat is how often an idle event stream says it is alive.
const DefaultHeartbeat = 15 * time.Second

// events streams the owner's task events (id and state only) as
// Server-Sent Events. A client that does not keep up is dropped; so is one
// whose writes stall. The stream ends the moment its session does (signed
// out, withdrawn, retired: on whichever process), and when a newer stream
// takes its place past the limits (4 per session, 16 per owner).
func (s *Server) events(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	token, _, _ := s.sessionToken(r) // it authenticated this request
	st := s.streams.register(sess)
	// The session is looked at again now that the stream listens for its
	// end: an end that committed before is seen here, one after ends it.
	if _, err := s.opts.Inbox.Authenticate(r.Context(), token); err != nil {
		s.streams.close(st)
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	if s.fan != nil && canHandOff(w, r) {
		s.handOff(w, r, sess, st, token)
		return
	}
	defer s.streams.close(st)
	ch, stop, err := s.opts.Inbox.Events(sess)
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	defer stop()
	if err := s.streams.announce(r.Context(), st, sess.ValidUntil); err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(frame string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.opts.Heartbeat))
		if _, err := fmt.Fprint(w, frame); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(": connected\n\n") {
		return
	}
	tick := time.NewTicker(s.opts.Heartbeat)
	defer tick.Stop()
	ends := time.NewTimer(time.Until(sess.ValidUntil))
	defer ends.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ends.C:
			return // the session's deadline
		case <-st.done:
			return // the session ended, or a newer stream took this one's place
		case <-tick.C:
			// The session is looked at again at every heartbeat, as a
			// backstop for an end whose signal was lost.
			if _, err := s.opts.Inbox.Authenticate(r.Context(), token); err != nil {
				return
			}
			if !write(": heartbeat\n\n") {
				return
			}
		case ev, ok := <-ch:
			if !ok {
				return // dropped: the client was not keeping up
			}
			data, _ := json.Marshal(ev)
			if !write("event: task\ndata: " + string(data) + "\n\n") {
				return
			}
		}
	}
}

// handOff serves an event stream as events does, but gives its connection
// to the fan-out once the header is sent (see fanout.go).
func (s *Server) handOff(w http.ResponseWriter, r *http.Request, sess inbox.Session, st *stream, token string) {
	c := s.fan.open(st, token)
	s.streams.whenEnded(st, func() { s.fan.end(c) })
	if err := s.streams.announce(r.Context(), st, sess.ValidUntil); err != nil {
		s.fan.abandon(c)
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// No chunks: the stream's body ends when its connection closes.
	h.Set("Transfer-Encoding", "identity")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.opts.Heartbeat))
	_, err := io.WriteString(w, ": connected\n\n")
	if err == nil {
		err = rc.Flush()
	}
	var conn net.Conn
	if err == nil {
		conn, _, err = rc.Hijack()
	}
	if err != nil {
		s.fan.abandon(c)
		return
	}
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	s.fan.attach(c, conn, srv, sess.ValidUntil)
}

// nonNil is a list as JSON shows an empty one: [], never null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
