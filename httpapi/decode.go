package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"countersign"
)

// Body limits.
const (
	smallBody = 64 << 10 // sign-ins, confirmations, agent calls
	ownerBody = 1 << 20  // anything else an owner sends
)

// decode reads exactly one JSON object of at most limit bytes into v,
// refusing unknown members: a malformed body is invalid_request.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return countersign.Errorf(countersign.InvalidRequest, "the body must be application/json")
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return countersign.Errorf(countersign.InvalidRequest, "the body is larger than %d bytes", limit)
		case errors.Is(err, io.EOF):
			return countersign.Errorf(countersign.InvalidRequest, "the body is empty; a JSON object is expected")
		}
		return countersign.Errorf(countersign.InvalidRequest, "the body is not the JSON this request takes: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return countersign.Errorf(countersign.InvalidRequest, "the body holds more than one JSON value")
	}
	return nil
}

// jsonProblem says what is wrong with a body without quoting it.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return "malformed JSON"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return typ.Field + " has the wrong type"
		}
		return "wrong type"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown member " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "malformed JSON"
}

// decodeOptional is decode for a body that may be empty.
func decodeOptional(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	err := decode(w, r, limit, v)
	var e *countersign.Error
	if errors.As(err, &e) && e.Message == "the body is empty; a JSON object is expected" {
		return nil
	}
	return err
}
