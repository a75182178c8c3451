package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"countersign"
)

// Nothing malformed reaches the store: every path segment, query value and
// header that names something is checked here by the domain's rule for it,
// and refused invalid_request (400) when it breaks it. A database would
// refuse some of these bytes (NUL, invalid UTF-8) with an error that is not
// the client's to see.

func invalid(msg string) error { return countersign.Errorf(countersign.InvalidRequest, "%s", msg) }

// checkPath checks the variables of the route the request matched. A
// variable this function does not know is refused, so a new route cannot
// carry one unchecked.
func checkPath(r *http.Request) error {
	tpl := ""
	if route := mux.CurrentRoute(r); route != nil {
		tpl, _ = route.GetPathTemplate()
	}
	for name, v := range mux.Vars(r) {
		if err := checkVar(tpl, name, v); err != nil {
			return err
		}
	}
	return nil
}

func checkVar(tpl, name, v string) error {
	switch {
	case name == "owner":
		if !countersign.ValidAccountID(v) {
			return invalid("the owner in the path is not a NEAR account id")
		}
	case name == "project" || name == "name":
		if !countersign.ValidProjectName(v) {
			return invalid("the project in the path is not a project name (1–64 of a-z 0-9 . _ -, beginning with a letter or digit)")
		}
	case name == "id" && strings.HasPrefix(tpl, "/inbox/devices/"):
		if !countersign.ValidDeviceID(v) {
			return invalid("the device in the path is not a device id")
		}
	case name == "id":
		if !countersign.ValidTaskID(v) {
			return invalid("the task in the path is not a task id (1–80 of a-z 0-9 -)")
		}
	case name == "n":
		if len(v) == 0 || len(v) > 2 || strings.Trim(v, "0123456789") != "" {
			return invalid("no such file")
		}
	default:
		return invalid("the path holds a part this service does not read")
	}
	return nil
}

// checkQuery checks the query values a handler reads: each at most once,
// empty or valid by its rule.
func checkQuery(r *http.Request, rules map[string]func(string) bool) error {
	q := r.URL.Query()
	for name, valid := range rules {
		vs := q[name]
		if len(vs) > 1 {
			return invalid(name + " is given more than once")
		}
		if len(vs) == 1 && vs[0] != "" && !valid(vs[0]) {
			return invalid(name + " is malformed")
		}
	}
	return nil
}

// idempotencyKey is the call's Idempotency-Key: absent or empty for none,
// else as countersign.CheckIdempotencyKey says, given once.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", invalid("the call carries more than one Idempotency-Key")
	}
	k := vs[0]
	if err := countersign.CheckIdempotencyKey(k); err != nil {
		return "", invalid(err.Error())
	}
	return k, nil
}

// bearer is the token of an "Authorization: Bearer …" header, or "".
func bearer(r *http.Request) string {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(token)
}
