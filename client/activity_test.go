package client

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

const entryJSON = `{"id":"r7k2m9q4x1z8c3v6b5n0p2w4s6-1","at":"2026-11-29T12:00:00Z","project":"ledger","connector":"ledger","operation":"pay","preparer":"bot.near","via":"task","task_id":"r7k2m9q4x1z8c3v6b5n0p2w4s6-1","state":"failed","failure_reason":"run_refused:conflict","sealed":"AQID","device_copy":null}`

var entry = ActivityEntry{ID: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1", At: "2026-11-29T12:00:00Z", Project: "ledger", Connector: "ledger",
	Operation: "pay", Preparer: "bot.near", Via: ViaTask, TaskID: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1", State: "failed",
	FailureReason: "run_refused:conflict", Sealed: []byte{1, 2, 3}}

// TestActivity: the query names what was asked and nothing else, with the
// session; the page reads back; a refusal is the service's.
func TestActivity(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		q     ActivityQuery
		query string
	}{
		{"the defaults", ActivityQuery{}, ""},
		{"every parameter", ActivityQuery{Before: "abc-1", Project: "my project", Preparer: "bot.near", Limit: 20},
			"before=abc-1&limit=20&preparer=bot.near&project=my+project"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c := newFake(t)
			f.body = `{"entries":[` + entryJSON + `],"more":true}`
			page, err := c.Activity(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if want := (ActivityPage{Entries: []ActivityEntry{entry}, More: true}); !reflect.DeepEqual(page, want) {
				t.Errorf("page %+v, want %+v", page, want)
			}
			got := f.requests()
			if len(got) != 1 || got[0].Method != http.MethodGet || got[0].Path != "/inbox/activity" || got[0].RawQuery != tt.query ||
				got[0].Header.Get("Authorization") != "Bearer "+testToken || len(got[0].Body) != 0 {
				t.Errorf("sent %+v", got)
			}
		})
	}
	f, c := newFake(t)
	f.status, f.body = http.StatusBadRequest, `{"error":"before names no entry of yours","reason":"invalid_request","terminal":true}`
	_, err := c.Activity(context.Background(), ActivityQuery{Before: "abc-1"})
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Reason != "invalid_request" {
		t.Errorf("a refusal: %v", err)
	}
}
