package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign"
	"countersign/inbox"
)

// TestOwnerBodiesStrict: an owner's body whose members repeat (ignoring
// case, at any depth) or are written in another case is 400
// invalid_request with a sentence naming the member.
func TestOwnerBodiesStrict(t *testing.T) {
	t.Parallel()
	const approval = `"approval":{"at":1,"public_key":"ed25519:x","signature":"s","nonce":"n"}`
	cases := []struct {
		name, body string
		v          func() any
		want       string // "" means accepted
	}{
		{"an approval", `{"task_hash":"h",` + approval + `}`, func() any { return &inbox.ApproveRequest{} }, ""},
		{"task_hash twice", `{"task_hash":"h","task_hash":"g",` + approval + `}`, func() any { return &inbox.ApproveRequest{} },
			"the body names `task_hash` twice (member names are compared ignoring case)"},
		{"task_hash twice in two cases", `{"task_hash":"h","Task_Hash":"g",` + approval + `}`, func() any { return &inbox.ApproveRequest{} },
			"the body names `task_hash` twice (member names are compared ignoring case)"},
		{"task_hash in capitals", `{"TASK_HASH":"h",` + approval + `}`, func() any { return &inbox.ApproveRequest{} },
			"the body writes `task_hash` in another case"},
		{"the nonce twice inside the approval", `{"task_hash":"h","approval":{"at":1,"nonce":"n","nonce":"m"}}`, func() any { return &inbox.ApproveRequest{} },
			"the body names `nonce` twice (member names are compared ignoring case)"},
		{"the approval's at in capitals", `{"task_hash":"h","approval":{"AT":1}}`, func() any { return &inbox.ApproveRequest{} },
			"the body writes `at` in another case"},
		{"a sign-in's account in another case", `{"Account_Id":"alice.near"}`, func() any { return &inbox.SignInRequest{} },
			"the body writes `account_id` in another case"},
		{"a mute's subject twice", `{"subject_is":"agent","subject":"a.near","SUBJECT":"b.near"}`, func() any { return &muteRequest{} },
			"the body names `subject` twice (member names are compared ignoring case)"},
		{"an unknown member", `{"task_hash":"h","extra":1}`, func() any { return &inbox.ApproveRequest{} },
			"the body is not the JSON this request takes: unknown member `extra`"},
		{"a wrong type", `{"task_hash":1}`, func() any { return &inbox.ApproveRequest{} },
			"the body is not the JSON this request takes: `task_hash` has the wrong type"},
		{"two values", `{} {}`, func() any { return &inbox.ApproveRequest{} }, "the body holds more than one JSON value"},
		{"not an object", `[]`, func() any { return &inbox.ApproveRequest{} }, "the body is not a JSON object"},
		{"malformed", `{`, func() any { return &inbox.ApproveRequest{} }, "the body is not the JSON this request takes: malformed JSON"},
		{"empty", ` `, func() any { return &inbox.ApproveRequest{} }, "the body is empty; a JSON object is expected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/inbox/x", strings.NewReader(c.body))
			r.Header.Set("Content-Type", "application/json")
			err := decode(httptest.NewRecorder(), r, smallBody, c.v())
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			w := httptest.NewRecorder()
			writeOwnerError(w, slog.New(slog.DiscardHandler), err)
			var got ownerError
			if jerr := json.Unmarshal(w.Body.Bytes(), &got); jerr != nil || w.Code != 400 || got.Reason != string(countersign.InvalidRequest) || got.Error != c.want {
				t.Fatalf("answered %d %s, want 400 invalid_request: %s", w.Code, w.Body, c.want)
			}
		})
	}
}
