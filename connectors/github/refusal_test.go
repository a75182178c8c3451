package github_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/connectors/connectortest"
	"countersign/connectors/github/githubtest"
)

// Every refusal of a call, with its code and sentence.
func TestRefusals(t *testing.T) {
	t.Parallel()
	const all = `{"actions": ` + allWrites + `}`
	readme := `{"operation": "file_put", "repo": "octocat/hello", "path": "README.md", "content": "x", "message": "m"}`
	issue := `{"operation": "issue_create", "repo": "octocat/hello", "title": "T"}`
	for _, tc := range []struct {
		name, policy, creds, body string
		fail                      func(*githubtest.Server)
		want                      string
	}{
		{name: "no actions", policy: `{}`, body: issue, want: "policy_denied: the owner's policy does not allow issue_create (it is not in `actions`)"},
		{name: "asking allows nothing", policy: `{"confirm": ["issue_create"]}`, body: issue, want: "policy_denied: the owner's policy does not allow issue_create"},
		{name: "repo outside", policy: `{"actions": ["issue_create"], "repos": ["octocat/other", "someone/*"]}`, body: issue, want: "policy_denied: the owner's policy does not allow writes to octocat/hello (not in `repos`)"},
		{name: "repo glob, any case", policy: `{"actions": ["issue_create"], "repos": ["OCTOCAT/*"]}`, body: issue, want: ""},
		{name: "branch outside", policy: `{"actions": ["branch_create"], "branches": ["feature/**"]}`, body: `{"operation": "branch_create", "repo": "octocat/hello", "branch": "main2"}`, want: "policy_denied: the owner's policy does not allow writes to the branch main2 (not in `branches`)"},
		{name: "path outside", policy: `{"actions": ["file_put"], "paths": ["docs/**"]}`, body: readme, want: "policy_denied: the owner's policy does not allow writes to the path README.md (not in `paths`)"},
		{name: "confirm names a read", policy: `{"actions": ["issue_create"], "confirm": ["pr_get"]}`, body: issue, want: "policy_unreadable: "},
		{name: "confirm misspelt", policy: `{"actions": ["issue_create"], "confirm": ["issue_creat"]}`, body: issue, want: "policy_unreadable: "},
		{name: "unknown member", policy: `{"actions": ["issue_create"], "allow_merge": true}`, body: issue, want: "policy_unreadable: "},
		{name: "daily number", policy: `{"actions": ["issue_create"], "max_writes_per_day": 0}`, body: issue, want: "policy_denied: the day's 0 direct writes of this agent in this project are made"},
		{name: "dot dot", policy: all, body: `{"operation": "file_put", "repo": "octocat/hello", "path": "../x", "content": "x", "message": "m"}`, want: "invalid_request: a path is a relative file path without empty, . or .. segments"},
		{name: "both content and delete", policy: all, body: `{"operation": "commit", "repo": "octocat/hello", "message": "m", "changes": [{"path": "a", "content": "x", "delete": true}]}`, want: "invalid_request: each change has either content"},
		{name: "one path twice", policy: all, body: `{"operation": "commit", "repo": "octocat/hello", "message": "m", "changes": [{"path": "a", "content": "x"}, {"path": "a", "content": "y"}]}`, want: "invalid_request: the path a is changed twice"},
		{name: "delete what is not there", policy: all, body: `{"operation": "commit", "repo": "octocat/hello", "message": "m", "changes": [{"path": "nope", "delete": true}]}`, want: "invalid_request: nope is not on main"},
		{name: "no credentials", policy: all, creds: "-", body: issue, want: "invalid_request: the project has no GitHub token"},
		{name: "bad credentials shape", policy: all, creds: `{"token": "a", "password": "b"}`, body: issue, want: "invalid_request: the project's credentials are not"},
		{name: "base url not http", policy: all, creds: `{"token": "a", "base_url": "ftp://example.com"}`, body: issue, want: "invalid_request: the project's base_url must use https: the owner must correct the project's credentials"},
		{name: "wrong token", policy: all, creds: `{"token": "wrong"}`, body: issue, want: "policy_denied: GitHub does not accept the project's token (401: Bad credentials)"},
		{name: "403", policy: all, body: issue, fail: func(f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 403, nil, "Resource not accessible by personal access token")
		}, want: "policy_denied: GitHub refused opening the issue to the project's token (403: Resource not accessible by personal access token)"},
		{name: "secondary rate limit", policy: all, body: issue, fail: func(f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 403, http.Header{"Retry-After": {"60"}}, "You have exceeded a secondary rate limit.")
		}, want: "rate_limited: GitHub's rate limit stopped opening the issue (403: You have exceeded a secondary rate limit.); GitHub asks to wait 1m0s"},
		{name: "primary rate limit", policy: all, body: issue, fail: func(f *githubtest.Server) {
			reset := strconv.FormatInt(time.Now().Add(2*time.Minute).Unix(), 10)
			f.FailNext("POST", "/repos/octocat/hello/issues", 403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}}, "API rate limit exceeded for user ID 1.")
		}, want: "rate_limited: GitHub's rate limit stopped opening the issue (403: API rate limit exceeded for user ID 1.); GitHub asks to wait "},
		{name: "429", policy: all, body: issue, fail: func(f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 429, http.Header{"Retry-After": {"5"}}, "Too many requests")
		}, want: "rate_limited: GitHub's rate limit stopped opening the issue (429: Too many requests); GitHub asks to wait 5s"},
		{name: "404 repo", policy: all, body: `{"operation": "issue_create", "repo": "octocat/nothing", "title": "T"}`, want: "invalid_request: GitHub found nothing for opening the issue (404: Not Found), or the token does not reach it"},
		{name: "422", policy: all, body: `{"operation": "pr_create", "repo": "octocat/hello", "title": "T", "head": "main"}`, want: "invalid_request: GitHub refused opening the pull request (422: Validation Failed (No commits between main and main))"},
		{name: "branch exists", policy: all, body: `{"operation": "branch_create", "repo": "octocat/hello", "branch": "add-greeting"}`, want: "invalid_request: GitHub refused creating the branch add-greeting (422: Reference already exists)"},
		{name: "500 may have written", policy: all, body: issue, fail: func(f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 502, nil, "Server Error")
		}, want: "internal_error: GitHub failed opening the issue (502: Server Error); the write may or may not have happened"},
		{name: "no redirect to another host", policy: all, body: `{"operation": "repo_get", "repo": "octocat/hello"}`, fail: func(f *githubtest.Server) {
			f.FailNext("GET", "/repos/octocat/hello", 302, http.Header{"Location": {"http://other.invalid/steal"}}, "Found")
		}, want: "internal_error: GitHub failed reading octocat/hello (302: Found)"},
		{name: "issue_update of nothing", policy: all, body: `{"operation": "issue_update", "repo": "octocat/hello", "number": 2}`, want: "invalid_request: issue_update changes at least one of title, body, state, labels, assignees"},
		{name: "gist_update of nothing", policy: all, body: `{"operation": "gist_update", "gist_id": "aa5a315d61ae9438b18d"}`, want: "invalid_request: gist_update changes the description or files"},
		{name: "no such file", policy: all, body: `{"operation": "file_get", "repo": "octocat/hello", "path": "nope.md"}`, want: "invalid_request: there is no file nope.md"},
		{name: "a directory", policy: all, body: `{"operation": "file_get", "repo": "octocat/hello", "path": "docs"}`, want: "invalid_request: docs is not a file"},
		{name: "21 files", policy: all, body: `{"operation": "gist_create", "files": {` + gistFiles(21) + `}}`, want: "task_too_large: this write changes 21 files; a task covers at most 20: split it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, fake, _ := world(t, tc.policy)
			switch tc.creds {
			case "":
			case "-":
				h.Credentials = nil
			default:
				h.Credentials = []byte(tc.creds)
			}
			if tc.fail != nil {
				tc.fail(fake)
			}
			_, err := h.Call(ctx, tc.body)
			got := connectortest.Text(err)
			if err == nil {
				got = ""
			}
			if tc.want == "" && err != nil || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(got, token) {
				t.Fatal("the refusal holds the token")
			}
		})
	}
}

func gistFiles(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, `"f`+strings.Repeat("x", i+1)+`.txt": "x"`)
	}
	return strings.Join(parts, ", ")
}
