package github_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
)

// exchange is one request the connector sent and the fake's answer.
type exchange struct {
	method, url string
	header      http.Header
	body        []byte
	status      int
	respHeader  http.Header
	respBody    []byte
}

// recorder keeps every exchange that goes through it.
type recorder struct {
	mu    sync.Mutex
	log   []exchange
	inner http.RoundTripper
}

// wrap records what goes through rt (egress.Options.Wrap).
func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	r.inner = rt
	return r
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) == 0 {
			req.Body = http.NoBody
		}
	}
	resp, err := r.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(rb))
	r.mu.Lock()
	r.log = append(r.log, exchange{req.Method, req.URL.String(), req.Header.Clone(), body, resp.StatusCode, resp.Header.Clone(), rb})
	r.mu.Unlock()
	return resp, nil
}

// route finds the operation of GitHub's description a request is for; a
// last parameter ({ref}, {path}) takes the rest of the path, slashes too.
func route(doc *openapi3.T, method, path string) (*routers.Route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for tmpl, item := range doc.Paths.Map() {
		op := item.GetOperation(strings.ToUpper(method))
		if op == nil {
			continue
		}
		ts := strings.Split(strings.Trim(tmpl, "/"), "/")
		params := map[string]string{}
		ok := len(ts) <= len(segs)
		for i := 0; ok && i < len(ts); i++ {
			t := ts[i]
			switch {
			case strings.HasPrefix(t, "{") && i == len(ts)-1 && (t == "{ref}" || t == "{path}"):
				params[strings.Trim(t, "{}")] = strings.Join(segs[i:], "/")
			case strings.HasPrefix(t, "{"):
				params[strings.Trim(t, "{}")] = segs[i]
			default:
				ok = t == segs[i]
			}
		}
		if ok && (len(ts) == len(segs) || params["ref"] != "" || params["path"] != "") {
			// A longer template with a greedy last parameter must not
			// swallow a fixed one ("/git/ref/heads/x" is not "/git/refs").
			return &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: strings.ToUpper(method), Operation: op}, params
		}
	}
	return nil, nil
}

// Every request the connector sends and every answer the fake gives, in
// the writes, reads and failures below, holds to GitHub's published
// OpenAPI description (testdata/github-openapi.json, extracted by
// testdata/extract-openapi.mjs).
func TestAgainstGitHubsOpenAPI(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/github-openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	fake := githubtest.New(token, "octocat").Start()
	t.Cleanup(fake.Close)
	repo := fake.Seed()
	h := connectortest.New(t, github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true, Wrap: rec.wrap}}))
	h.Credentials = []byte(`{"token": "` + token + `"}`)
	h.Policy = []byte(`{"actions": ` + allWrites + `}`)
	fake.Push(repo, "main", "Add a script", map[string]string{"bin/run.sh": "#!/bin/sh\n"})
	fake.Chmod(repo, "main", "bin/run.sh", githubtest.ModeExecutable)
	fake.Symlink(repo, "main", "docs/away", "../../outside")
	calls := []string{
		`{"operation": "repo_get", "repo": "` + repo + `"}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": "README.md", "ref": "add-greeting"}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": "docs/away"}`,
		`{"operation": "commit", "repo": "` + repo + `", "message": "Script", "changes": [{"path": "bin/run.sh", "content": "#!/bin/sh\necho\n"}]}`,
		`{"operation": "file_get", "repo": "` + repo + `", "path": "docs/usage.md"}`,
		`{"operation": "pr_get", "repo": "` + repo + `", "number": 1}`,
		`{"operation": "issue_get", "repo": "` + repo + `", "number": 2}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": "README.md", "content": "# hello\n", "message": "Shorten"}`,
		`{"operation": "file_put", "repo": "` + repo + `", "path": "new/file.md", "content": "new\n", "message": "Add", "branch": "add-greeting"}`,
		`{"operation": "commit", "repo": "` + repo + `", "message": "Two", "changes": [{"path": "a/b.txt", "content": "b\n"}, {"path": "docs/usage.md", "delete": true}]}`,
		`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic", "from": "main"}`,
		`{"operation": "issue_create", "repo": "` + repo + `", "title": "Bug", "body": "It breaks", "labels": ["bug"], "assignees": ["octocat"]}`,
		`{"operation": "issue_comment", "repo": "` + repo + `", "number": 2, "body": "Me too"}`,
		`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "closed", "state_reason": "completed", "labels": []}`,
		`{"operation": "pr_create", "repo": "` + repo + `", "title": "Topic", "head": "add-greeting", "base": "topic", "draft": true}`,
		`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "APPROVE"}`,
		`{"operation": "pr_merge", "repo": "` + repo + `", "number": 1, "method": "squash", "title": "Greeting"}`,
		`{"operation": "gist_create", "description": "d", "public": true, "files": {"a.md": "a"}}`,
		`{"operation": "repo_star", "repo": "` + repo + `"}`,
		`{"operation": "repo_unstar", "repo": "` + repo + `"}`,
		// Refusals: 404, 422.
		`{"operation": "issue_get", "repo": "` + repo + `", "number": 99}`,
		`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic"}`,
	}
	for _, body := range calls {
		_, _ = h.Call(ctx, body)
	}
	// 409 of a file that moved, 409 and 405 of merges, 422 of a commit
	// that is not a fast forward: through approvals.
	h.Policy = []byte(`{"actions": ` + allWrites + `, "confirm": ` + allWrites + `}`)
	put := awaiting(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "README.md", "content": "mine\n", "message": "Mine"}`)
	commit := awaiting(t, h, `{"operation": "commit", "repo": "`+repo+`", "message": "Mine", "changes": [{"path": "x", "content": "x"}]}`)
	fake.Push(repo, "main", "Theirs", map[string]string{"README.md": "theirs\n"})
	pr := fake.OpenPull(repo, "topic2", "main", "T", "")
	fake.Push(repo, "topic2", "One", map[string]string{"t.txt": "1\n"})
	merge := awaiting(t, h, fmt.Sprintf(`{"operation": "pr_merge", "repo": "%s", "number": %d}`, repo, pr))
	fake.Push(repo, "topic2", "Two", map[string]string{"t.txt": "2\n"})
	for _, task := range []connectortest.Opened{put, commit, merge} {
		_, _, _ = h.Answer(ctx, task, nil, "")
	}
	gist := call(t, h, `{"operation": "gist_create", "files": {"b.md": "b"}}`)
	_ = gist

	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[string]bool{}
	for _, x := range rec.log {
		req, _ := http.NewRequest(x.method, x.url, bytes.NewReader(x.body))
		req.Header = x.header
		rt, params := route(doc, x.method, req.URL.Path)
		if rt == nil {
			t.Errorf("%s %s is in no operation of GitHub's description", x.method, req.URL.Path)
			continue
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: rt,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("request %s %s: %v", x.method, req.URL.Path, short(err))
		}
		err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{RequestValidationInput: in,
			Status: x.status, Header: x.respHeader, Body: io.NopCloser(bytes.NewReader(x.respBody)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: false}})
		// GitHub's 409 and 422 bodies fit both basic-error and
		// repository-rule-violation-error, which the description offers as
		// a oneOf: matching more than one is not a misfit.
		if err != nil && !strings.Contains(err.Error(), "input matches more than one oneOf schemas") {
			t.Errorf("answer %d to %s %s: %v", x.status, x.method, req.URL.Path, short(err))
		}
		seen[fmt.Sprintf("%s %s %d", x.method, rt.Path, x.status)] = true
	}
	for _, want := range []string{"PUT /repos/{owner}/{repo}/contents/{path} 409", "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge 409",
		"PATCH /repos/{owner}/{repo}/git/refs/{ref} 422", "GET /repos/{owner}/{repo}/issues/{issue_number} 404", "POST /repos/{owner}/{repo}/git/refs 422"} {
		if !seen[want] {
			t.Errorf("not exercised: %s", want)
		}
	}
	t.Logf("%d exchanges over %d operation and status pairs", len(rec.log), len(seen))
}

func short(err error) string {
	s := err.Error()
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}
