package httpapi

import (
	"net/http"
	"strconv"

	"countersign"
	"countersign/inbox"
)

// The owner's history (SPEC §6): GET /inbox/activity.

func init() {
	routeDocs["GET /inbox/activity"] = routeDoc{summary: "One page of the owner's history: an entry per write carried out, asked or not, and per task that ended (sealed to the devices)",
		auth: "owner", response: typ[activityPage](),
		query: []queryParam{{"before", "the id of the last entry of the previous page"}, {"limit", "1 to 100"},
			{"project", "a project name: its entries only"}, {"preparer", "an agent account: its entries only"}}}
}

func (s *Server) activity(w http.ResponseWriter, r *http.Request, sess inbox.Session) {
	err := checkQuery(r, map[string]func(string) bool{"before": countersign.ValidTaskID,
		"project": countersign.ValidProjectName, "preparer": countersign.ValidAccountID})
	if err == nil && checkQuery(r, map[string]func(string) bool{"limit": validLimit}) != nil {
		err = countersign.Errorf(countersign.InvalidRequest, "limit is a number from 1 to %d", inbox.MaxListLimit)
	}
	if err != nil {
		writeOwnerError(w, s.opts.Logger, err)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	entries, more, err := s.opts.Inbox.Activity(r.Context(), sess, inbox.ActivityQuery{Before: q.Get("before"),
		Project: q.Get("project"), Preparer: q.Get("preparer"), Limit: limit})
	s.answer(w, activityPage{Entries: nonNil(entries), More: more}, err)
}

// validLimit is a page's limit as written: 1 to MaxListLimit, in digits.
func validLimit(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= inbox.MaxListLimit && strconv.Itoa(n) == s
}
