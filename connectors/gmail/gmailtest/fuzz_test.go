package gmailtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzSend: whatever a send carries, the fake answers JSON in Google's
// shapes and keeps only messages it could read.
func FuzzSend(f *testing.F) {
	f.Add([]byte(`{"raw":"VG86IGFAYi5jDQpTdWJqZWN0OiBoaQ0KDQpoZWxsbw=="}`))
	f.Add([]byte(`{"raw":"not base64"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fk := New()
		fk.access["tok"] = true
		req, _ := http.NewRequest(http.MethodPost, "http://fake/gmail/v1/users/me/messages/send", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		fk.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%d %q", rec.Code, rec.Body.String())
		}
		if (rec.Code == 200) != (len(fk.Sent()) == 1) {
			t.Fatalf("%d with %d sent", rec.Code, len(fk.Sent()))
		}
	})
}
