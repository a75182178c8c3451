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
	f.Add("GET", "/repos/sandbox/hello/git/trees/main?recursive=1", ``)
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

// Trees are read as GitHub serves them: by id or branch, one level or
// recursive, with each file's mode; a mode survives writes of the file.
func TestTreesAndModes(t *testing.T) {
	t.Parallel()
	s := New("tok", "me")
	s.URL = "http://fake.test"
	full := s.Seed()
	s.Push(full, "main", "Add a script", map[string]string{"bin/run.sh": "#!/bin/sh\n"})
	s.Chmod(full, "main", "bin/run.sh", ModeExecutable)
	s.Symlink(full, "main", "docs/readme", "../README.md")
	s.Symlink(full, "main", "docs/away", "../../etc/passwd")
	s.Push(full, "main", "Change the script", map[string]string{"bin/run.sh": "#!/bin/sh\necho\n"})
	if m := s.Mode(full, "main", "bin/run.sh"); m != ModeExecutable {
		t.Fatalf("after a write the script's mode is %q", m)
	}
	get := func(path string) (int, map[string]any) {
		req := httptest.NewRequest("GET", "http://fake.test"+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	entries := func(out map[string]any) map[string]string {
		m := map[string]string{}
		for _, e := range out["tree"].([]any) {
			e := e.(map[string]any)
			m[e["path"].(string)] = e["mode"].(string) + " " + e["type"].(string)
		}
		return m
	}
	code, root := get("/repos/me/hello/git/trees/main")
	got := entries(root)
	if code != 200 || len(got) != 3 || got["README.md"] != "100644 blob" || got["bin"] != "040000 tree" || got["docs"] != "040000 tree" {
		t.Fatalf("%d %v", code, got)
	}
	var bin string
	for _, e := range root["tree"].([]any) {
		if e := e.(map[string]any); e["path"] == "bin" {
			bin = e["sha"].(string)
		}
	}
	if _, sub := get("/repos/me/hello/git/trees/" + bin); entries(sub)["run.sh"] != "100755 blob" {
		t.Fatalf("bin: %v", entries(sub))
	}
	if _, all := get("/repos/me/hello/git/trees/main?recursive=1"); entries(all)["docs/readme"] != "120000 blob" || entries(all)["docs"] != "040000 tree" || entries(all)["bin/run.sh"] != "100755 blob" {
		t.Fatalf("recursive: %v", entries(all))
	}
	// The contents API takes no mode: a file it writes is a plain one.
	req := httptest.NewRequest("PUT", "http://fake.test/repos/me/hello/contents/bin/run.sh",
		strings.NewReader(`{"message": "m", "content": "eA==", "sha": "`+gitSHA("blob", []byte("#!/bin/sh\necho\n"))+`"}`))
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 || s.Mode(full, "main", "bin/run.sh") != ModeFile {
		t.Fatalf("contents PUT: %d %s, mode %q", rec.Code, rec.Body, s.Mode(full, "main", "bin/run.sh"))
	}
	if code, _ := get("/repos/me/hello/git/trees/0000000000000000000000000000000000000000"); code != 404 {
		t.Fatalf("an unknown tree: %d", code)
	}
	// A link to a file of the repository reads as that file; another, as
	// the link.
	if _, f := get("/repos/me/hello/contents/docs/readme"); f["type"] != "file" || f["path"] != "README.md" {
		t.Fatalf("link to a file: %v", f)
	}
	if _, f := get("/repos/me/hello/contents/docs/away"); f["type"] != "symlink" || f["target"] != "../../etc/passwd" || f["content"] != nil {
		t.Fatalf("link outside: %v", f)
	}
}
