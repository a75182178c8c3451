package github_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
)

// Names with every character a URL treats apart: a space, +, &, #, % and
// non-ASCII letters (git takes all but the space in a branch name).
const (
	oddBranch = "topic/a+b&c#d%e=é"
	oddPath   = "docs/a b+c&d#e%f=é.md"
	oddDir    = "x y/1+1=2 & #3 %ü"
)

// Every request the connector sends and every answer the fake gives, in
// the writes, reads and failures below (as in every other test of this
// package: see recorded), holds to GitHub's published OpenAPI description,
// the whole of it, names with reserved characters included.
func TestAgainstGitHubsOpenAPI(t *testing.T) {
	t.Parallel()
	d := githubDescription(t)
	t.Logf("GitHub's description: %s", d.from)
	if !slices.Contains(publishedVersions, github.APIVersion) {
		t.Fatalf("the connector sends X-GitHub-Api-Version %s, which GitHub does not publish", github.APIVersion)
	}
	h, fake, repo := world(t, `{"actions": `+allWrites+`}`)
	fake.Push(repo, "main", "Add a script", map[string]string{"bin/run.sh": "#!/bin/sh\n", oddDir + "/old.txt": "old\n"})
	fake.Chmod(repo, "main", "bin/run.sh", githubtest.ModeExecutable)
	fake.Symlink(repo, "main", "docs/away", "../../outside")
	gistID := fake.CreateGist(map[string]string{"a b+c&d#e%f=é.md": "odd\n"})
	j := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	calls := []string{
		`{"operation": "repo_get", "repo": "` + repo + `"}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": "README.md", "ref": "add-greeting"}`,
		`{"operation": "commit", "repo": "` + repo + `", "message": "Script", "changes": [{"path": "bin/run.sh", "content": "#!/bin/sh\necho\n"}]}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": "docs/usage.md"}`,
		`{"operation": "pr_get", "repo": "` + repo + `", "number": 1}`,
		`{"operation": "issue_get", "repo": "` + repo + `", "number": 2}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": "README.md", "content": "# hello\n", "message": "Shorten"}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": "new/file.md", "content": "new\n", "message": "Add", "branch": "add-greeting"}`,
		`{"operation": "commit", "repo": "` + repo + `", "message": "Two", "changes": [{"path": "a/b.txt", "content": "b\n"}, {"path": "docs/usage.md", "delete": true}]}`,
		`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic", "from": "main"}`,
		// Reserved characters in a branch, a path, a ref and a file name.
		`{"operation": "branch_create", "repo": "` + repo + `", "branch": ` + j(oddBranch) + `}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": ` + j(oddPath) + `, "content": "odd\n", "message": "Odd", "branch": ` + j(oddBranch) + `}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": ` + j(oddPath) + `, "content": "odder\n", "message": "Odder", "branch": ` + j(oddBranch) + `}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": ` + j(oddPath) + `, "ref": ` + j(oddBranch) + `}`,
		`{"operation": "commit", "repo": "` + repo + `", "message": "Odd", "branch": ` + j(oddBranch) + `, "changes": [{"path": ` + j(oddDir+"/new.txt") + `, "content": "n\n"}, {"path": ` + j(oddDir+"/old.txt") + `, "delete": true}]}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": ` + j(oddDir+"/new.txt") + `, "ref": ` + j(oddBranch) + `}`,
		`{"operation": "pr_create", "repo": "` + repo + `", "title": "Odd & #1", "head": ` + j(oddBranch) + `}`,
		`{"operation": "gist_update", "gist_id": "` + gistID + `", "files": {"a b+c&d#e%f=é.md": "odder\n"}}`,
		`{"operation": "issue_create", "repo": "` + repo + `", "title": "Bug", "body": "It breaks", "labels": ["bug"], "assignees": ["octocat"]}`,
		`{"operation": "issue_comment", "repo": "` + repo + `", "number": 2, "body": "Me too"}`,
		`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "closed", "state_reason": "completed", "labels": []}`,
		`{"operation": "pr_create", "repo": "` + repo + `", "title": "Topic", "head": "add-greeting", "base": "topic", "draft": true}`,
		`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "APPROVE"}`,
		`{"operation": "pr_merge", "repo": "` + repo + `", "number": 1, "method": "squash", "title": "Greeting"}`,
		`{"operation": "gist_create", "description": "d", "public": true, "files": {"a.md": "a"}}`,
		`{"operation": "repo_star", "repo": "` + repo + `"}`,
		`{"operation": "repo_unstar", "repo": "` + repo + `"}`,
	}
	for _, body := range calls {
		if _, err := h.Call(ctx, body); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if got, _ := fake.File(repo, oddBranch, oddPath); got != "odder\n" {
		t.Errorf("%s on %s: %q", oddPath, oddBranch, got)
	}
	if got, _ := fake.File(repo, oddBranch, oddDir+"/new.txt"); got != "n\n" {
		t.Errorf("%s/new.txt on %s: %q", oddDir, oddBranch, got)
	}
	// Refusals: 404, 422, and a symbolic link that leads outside.
	for _, body := range []string{
		`{"operation": "file_get", "repo": "` + repo + `", "path": "docs/away"}`,
		`{"operation": "issue_get", "repo": "` + repo + `", "number": 99}`,
		`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic"}`,
	} {
		if _, err := h.Call(ctx, body); err == nil {
			t.Errorf("%s: not refused", body)
		}
	}
	// 409 of a file that moved, 409 of a merge, 422 of a commit that is
	// not a fast forward: through approvals.
	h.Policy = []byte(`{"actions": ` + allWrites + `, "confirm": ` + allWrites + `}`)
	put := awaiting(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "README.md", "content": "mine\n", "message": "Mine"}`)
	commit := awaiting(t, h, `{"operation": "commit", "repo": "`+repo+`", "message": "Mine", "changes": [{"path": "x", "content": "x"}]}`)
	fake.Push(repo, "main", "Theirs", map[string]string{"README.md": "theirs\n"})
	pr := fake.OpenPull(repo, "topic2", "main", "T", "")
	fake.Push(repo, "topic2", "One", map[string]string{"t.txt": "1\n"})
	merge := awaiting(t, h, fmt.Sprintf(`{"operation": "pr_merge", "repo": "%s", "number": %d}`, repo, pr))
	fake.Push(repo, "topic2", "Two", map[string]string{"t.txt": "2\n"})
	for _, task := range []connectortest.Opened{put, commit, merge} {
		if _, _, err := h.Answer(ctx, task, nil, ""); err == nil {
			t.Errorf("%s: not refused", task.Operation)
		}
	}

	seen := map[string]bool{}
	odd := map[string]bool{}
	for _, x := range fake.Exchanges() {
		key, _ := d.check(x) // recorded reports what does not hold
		seen[key] = true
		if strings.Contains(x.RequestURI, "%23") { // every odd name holds a "#"
			odd[x.Method+" "+strings.SplitN(key, " ", 3)[1]] = true
		}
	}
	for _, want := range []string{"PUT /repos/{owner}/{repo}/contents/{path} 409", "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge 409",
		"PATCH /repos/{owner}/{repo}/git/refs/{ref} 422", "GET /repos/{owner}/{repo}/issues/{issue_number} 404", "POST /repos/{owner}/{repo}/git/refs 422",
		"PUT /repos/{owner}/{repo}/contents/{path} 201", "PUT /repos/{owner}/{repo}/contents/{path} 200", "GET /repos/{owner}/{repo}/contents/{path} 404"} {
		if !seen[want] {
			t.Errorf("not exercised: %s", want)
		}
	}
	for _, want := range []string{"GET /repos/{owner}/{repo}/git/ref/{ref}", "GET /repos/{owner}/{repo}/contents/{path}", "PUT /repos/{owner}/{repo}/contents/{path}",
		"PATCH /repos/{owner}/{repo}/git/refs/{ref}"} {
		if !odd[want] {
			t.Errorf("no name with reserved characters went to %s", want)
		}
	}
	t.Logf("%d exchanges over %d operation and status pairs", len(fake.Exchanges()), len(seen))
}

// The check refuses what GitHub's description does not allow: each row is
// an exchange the connector must never make, or an answer the fake must
// never give.
func TestTheDescriptionCheckRefuses(t *testing.T) {
	t.Parallel()
	d := githubDescription(t)
	header := func(edit func(http.Header)) http.Header {
		h := http.Header{"Accept": {"application/vnd.github+json"}, "X-Github-Api-Version": {"2022-11-28"}, "User-Agent": {"t"}, "Authorization": {"Bearer x"}}
		if edit != nil {
			edit(h)
		}
		return h
	}
	file := func(htmlURL string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "file", "encoding": "base64", "size": 1, "name": "a b.md", "path": "a b.md", "content": "eA==",
			"sha": "ce013625030ba8dba906f756967f9e9ca394464a", "url": "http://github.test/repos/o/r/contents/a%20b.md?ref=main",
			"git_url": "http://github.test/repos/o/r/git/blobs/ce013625030ba8dba906f756967f9e9ca394464a", "html_url": htmlURL,
			"download_url": "http://github.test/raw/o/r/main/a%20b.md",
			"_links":       map[string]any{"self": "http://github.test/repos/o/r/contents/a%20b.md", "git": "http://github.test/repos/o/r/git/blobs/ce01", "html": htmlURL}})
		return b
	}
	ok := githubtest.Exchange{Method: "GET", RequestURI: "/repos/o/r/contents/a%20b.md?ref=main", Header: header(nil), Status: 200,
		RespHeader: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, RespBody: file("http://github.test/o/r/blob/main/a%20b.md")}
	if _, problems := d.check(ok); len(problems) > 0 {
		t.Fatalf("a good exchange: %q", problems)
	}
	for _, tt := range []struct {
		name string
		edit func(x *githubtest.Exchange)
		want string
	}{
		{"a space in html_url", func(x *githubtest.Exchange) { x.RespBody = file("http://github.test/o/r/blob/main/a b.md") }, "not a URI by RFC 3986"},
		{"a # in html_url", func(x *githubtest.Exchange) { x.RespBody = file("http://github.test/o/r/blob/main/a#b#c.md") }, "not a URI by RFC 3986"},
		{"non-ASCII in html_url", func(x *githubtest.Exchange) { x.RespBody = file("http://github.test/o/r/blob/main/é.md") }, "not a URI by RFC 3986"},
		{"a bare % in html_url", func(x *githubtest.Exchange) { x.RespBody = file("http://github.test/o/r/blob/main/100%.md") }, "not a URI by RFC 3986"},
		{"lower-case hex in html_url", func(x *githubtest.Exchange) { x.RespBody = file("http://github.test/o/r/blob/main/%c3%a9.md") }, "not a normal percent-encoding"},
		{"a relative html_url", func(x *githubtest.Exchange) { x.RespBody = file("/o/r/blob/main/a.md") }, "not a URI by RFC 3986"},
		{"a + in the query", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/a.md?ref=docs+notes" }, "every reserved character percent-encoded"},
		{"a space as + in the query", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/a.md?ref=a+b" }, "every reserved character percent-encoded"},
		{"a / in the query", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/a.md?ref=feature/x" }, "every reserved character percent-encoded"},
		{"an unknown query", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/a.md?reff=main" }, "does not take"},
		{"a raw space in the path", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/a b.md" }, "not RFC 3986 path characters"},
		{"non-ASCII raw in the path", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/é.md" }, "not RFC 3986 path characters"},
		{"a dot segment", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/docs/%2E%2E/a.md" }, "not a normal percent-encoding"},
		{"a dot dot segment", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r/contents/docs/../a.md" }, "an empty, . or .. segment"},
		{"an escaped / in a one-segment parameter", func(x *githubtest.Exchange) { x.RequestURI = "/repos/o/r%2Fx/contents/a.md" }, "holds a /"},
		{"no such operation", func(x *githubtest.Exchange) { x.Method, x.RequestURI = "PATCH", "/repos/o/r/contents/a.md" }, "in no operation"},
		{"no Accept", func(x *githubtest.Exchange) { x.Header = header(func(h http.Header) { h.Del("Accept") }) }, "Accept is"},
		{"no API version", func(x *githubtest.Exchange) { x.Header = header(func(h http.Header) { h.Del("X-Github-Api-Version") }) }, "X-GitHub-Api-Version"},
		{"an API version not published", func(x *githubtest.Exchange) {
			x.Header = header(func(h http.Header) { h.Set("X-Github-Api-Version", "2023-01-01") })
		}, "not a version GitHub publishes"},
		{"no User-Agent", func(x *githubtest.Exchange) { x.Header = header(func(h http.Header) { h.Del("User-Agent") }) }, "no User-Agent"},
		{"an undocumented status", func(x *githubtest.Exchange) { x.Status = 418 }, "the answer 418"},
		{"an answer missing a member", func(x *githubtest.Exchange) { x.RespBody = []byte(`{"type": "file"}`) }, "the answer 200"},
		{"a body GitHub does not take", func(x *githubtest.Exchange) {
			x.Method, x.RequestURI, x.Status = "PUT", "/repos/o/r/contents/a.md", 201
			x.Header = header(func(h http.Header) { h.Set("Content-Type", "application/json") })
			x.Body = []byte(`{"message": "m"}`)
		}, "the request"},
		{"a PUT without Content-Length: 0", func(x *githubtest.Exchange) {
			x.Method, x.RequestURI, x.Status, x.ContentLength, x.RespBody = "PUT", "/user/starred/o/r", 204, -1, nil
		}, "Content-Length: 0"},
	} {
		x := ok
		x.Header = ok.Header.Clone()
		tt.edit(&x)
		_, problems := d.check(x)
		if !strings.Contains(strings.Join(problems, "\n"), tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, problems, tt.want)
		}
	}
	for _, s := range []string{"https://github.com/o/r/blob/main/a%20b.md", "http://127.0.0.1:8080/o/r/pull/1#issuecomment-2", "https://[::1]:443/x?a=b&c=%2B", "mailto:a@b.c"} {
		if err := checkURI(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}
