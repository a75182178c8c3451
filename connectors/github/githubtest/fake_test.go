package githubtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The sandbox serves whoever reaches it: no request makes it fail, and
// every answer is JSON with a message when it is an error.
func FuzzServe(f *testing.F) {
	f.Add("POST", "/repos/sandbox/hello/git/trees", `{"base_tree":"x","tree":[{"path":"a","mode":"100644","type":"blob","content":"x"}]}`)
	f.Add("PUT", "/repos/sandbox/hello/contents/a/b.md", `{"message":"m","content":"eA==","sha":null}`)
	f.Add("PUT", "/repos/sandbox/hello/pulls/1/merge", `{"sha":"0000"}`)
	f.Add("PATCH", "/repos/sandbox/hello/git/refs/heads/main", `{"sha":"abc","force":"yes"}`)
	f.Add("POST", "/repos/sandbox/hello/pulls/1/reviews", `{"event":"APPROVE","commit_id":"zz"}`)
	f.Add("PATCH", "/gists/1", `{"files":{"a":null}}`)
	f.Add("GET", "/repos/sandbox/hello/contents/%2e%2e/x", ``)
	f.Fuzz(func(t *testing.T, method, path, body string) {
		s := New("tok", "sandbox")
		s.URL = "http://sandbox.test"
		s.Seed()
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://sandbox.test"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code >= 400 {
			var e struct{ Message string }
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Message == "" {
				t.Fatalf("%d %q", rec.Code, rec.Body.String())
			}
		}
	})
}

// A moved head is a real new commit: its id is git's.
func TestGitIDs(t *testing.T) {
	t.Parallel()
	if got := gitSHA("blob", []byte("hello\n")); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("blob id %s", got)
	}
	if got := treeSHA(map[string]entry{}); got != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("empty tree id %s", got)
	}
	s := New("tok", "me")
	s.CreateRepo("me", "r", "main", map[string]string{"a": "1"})
	before := s.Head("me/r", "main")
	after := s.Push("me/r", "main", "two", map[string]string{"a": "2"})
	if before == after || len(after) != 40 {
		t.Fatal(before, after)
	}
}
