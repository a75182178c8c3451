package httpapi

import (
	"bytes"
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

// decode reads exactly one JSON object of at most limit bytes into v by
// the service's one rule for JSON bodies (countersign.DecodeStrict):
// unknown members, members repeated ignoring case at any depth and members
// written in another case than v's are refused. A malformed body is
// invalid_request with a sentence naming the member, never quoting a value.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return countersign.Errorf(countersign.InvalidRequest, "the body is empty; a JSON object is expected")
	}
	return decodeBody(body, v)
}

// decodeOptional is decode for a body that may be empty (or white space
// alone).
func decodeOptional(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	body, err := readBody(w, r, limit)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads a JSON body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the body must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, countersign.Errorf(countersign.InvalidRequest, "the body is larger than %d bytes", limit)
		}
		return nil, countersign.Errorf(countersign.InvalidRequest, "the body could not be read")
	}
	return body, nil
}

// decodeBody decodes a body that is not empty into v.
func decodeBody(body []byte, v any) error {
	if err := countersign.DecodeStrict(body, v); err != nil {
		var je *countersign.JSONError
		if !errors.As(err, &je) {
			return err
		}
		switch je.Problem {
		case countersign.JSONMalformed:
			return countersign.Errorf(countersign.InvalidRequest, "the body is not the JSON this request takes: malformed JSON")
		case countersign.JSONUnknown:
			return countersign.Errorf(countersign.InvalidRequest, "the body is not the JSON this request takes: unknown member %s", je.Member)
		case countersign.JSONWrongType:
			return countersign.Errorf(countersign.InvalidRequest, "the body is not the JSON this request takes: %s", je.Sentence("the body"))
		}
		return countersign.Errorf(countersign.InvalidRequest, "%s", je.Sentence("the body"))
	}
	return nil
}
