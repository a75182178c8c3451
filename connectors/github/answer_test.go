package github_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
)

// Every refusal of an approved write, each saying whether it wrote.
func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	const ask = `{"actions": ` + allWrites + `, "confirm": ` + allWrites + `}`
	issue := `{"operation": "issue_create", "repo": "octocat/hello", "title": "T"}`
	merge := `{"operation": "pr_merge", "repo": "octocat/hello", "number": 1}`
	for _, tc := range []struct {
		name, body string
		between    func(h *connectortest.Harness, f *githubtest.Server)
		want       string
		moved      func(f *githubtest.Server) bool // what must not have changed
	}{
		{name: "done", body: issue, want: ""},
		{name: "actions narrowed", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			h.Policy = []byte(`{"actions": ["file_put"], "confirm": ["issue_create"]}`)
		}, want: "policy_denied: the owner's policy does not allow issue_create (it is not in `actions`). Nothing was written."},
		{name: "policy unreadable", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			h.Policy = []byte(`{"actions": ["issue_create"], "confirm": ["repo_get"]}`)
		}, want: "policy_unreadable: "},
		{name: "daily number", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			h.Policy = []byte(`{"actions": ["issue_create"], "confirm": ["issue_create"], "max_writes_per_day": 0}`)
		}, want: "policy_denied: The day's 0 confirmed writes of this agent in this project are made. Nothing was written."},
		{name: "token revoked", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			f.Token = "other"
		}, want: "policy_denied: GitHub does not accept the project's token (401: Bad credentials): the owner must give the project a new one. Nothing was written."},
		{name: "credentials removed", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			h.Credentials = nil
		}, want: "invalid_request: the project has no GitHub token: the owner must set its credentials. Nothing was written."},
		{name: "rate limited", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 403, http.Header{"Retry-After": {"30"}}, "You have exceeded a secondary rate limit.")
		}, want: "rate_limited: GitHub's rate limit stopped opening the issue (403: You have exceeded a secondary rate limit.); GitHub asks to wait 30s. Nothing was written."},
		{name: "lost answer", body: issue, between: func(h *connectortest.Harness, f *githubtest.Server) {
			f.FailNext("POST", "/repos/octocat/hello/issues", 503, nil, "Service unavailable")
		}, want: "internal_error: GitHub failed opening the issue (503: Service unavailable); the write may or may not have happened: look on GitHub before preparing it again. Whether the write happened is not known."},
		{name: "merge head moved", body: merge, between: func(h *connectortest.Harness, f *githubtest.Server) {
			f.Push("octocat/hello", "add-greeting", "More", map[string]string{"greeting.txt": "Hi\n"})
		}, want: "conflict: The pull request's head moved from ", moved: func(f *githubtest.Server) bool {
			_, ok := f.File("octocat/hello", "main", "greeting.txt")
			return ok
		}},
		{name: "merge not mergeable", body: merge, between: func(h *connectortest.Harness, f *githubtest.Server) {
			f.Push("octocat/hello", "main", "Conflicting", map[string]string{"greeting.txt": "Other\n"})
		}, want: "conflict: GitHub would not merge the pull request (GitHub: Pull Request is not mergeable). Nothing was written."},
		{name: "file moved", body: `{"operation": "file_put", "repo": "octocat/hello", "path": "README.md", "content": "x\n", "message": "m"}`,
			between: func(h *connectortest.Harness, f *githubtest.Server) {
				f.Push("octocat/hello", "main", "Theirs", map[string]string{"README.md": "theirs\n"})
			}, want: "conflict: README.md changed on main after it was shown for approval (GitHub: README.md does not match ", moved: func(f *githubtest.Server) bool {
				c, _ := f.File("octocat/hello", "main", "README.md")
				return c != "theirs\n"
			}},
		{name: "file appeared", body: `{"operation": "file_put", "repo": "octocat/hello", "path": "NEW.md", "content": "x\n", "message": "m"}`,
			between: func(h *connectortest.Harness, f *githubtest.Server) {
				f.Push("octocat/hello", "main", "Theirs", map[string]string{"NEW.md": "theirs\n"})
			}, want: "conflict: NEW.md changed on main after it was shown for approval"},
		{name: "branch moved", body: `{"operation": "commit", "repo": "octocat/hello", "message": "m", "changes": [{"path": "c.txt", "content": "c"}]}`,
			between: func(h *connectortest.Harness, f *githubtest.Server) {
				f.Push("octocat/hello", "main", "Theirs", map[string]string{"d.txt": "d"})
			}, want: "conflict: main moved on from ", moved: func(f *githubtest.Server) bool {
				_, ok := f.File("octocat/hello", "main", "c.txt")
				return ok
			}},
		{name: "approval after a push", body: `{"operation": "pr_review", "repo": "octocat/hello", "number": 1, "event": "APPROVE"}`,
			between: func(h *connectortest.Harness, f *githubtest.Server) {
				f.Push("octocat/hello", "add-greeting", "More", map[string]string{"greeting.txt": "Hi\n"})
			}, want: "conflict: the pull request's head moved from "},
		{name: "branch taken meanwhile", body: `{"operation": "branch_create", "repo": "octocat/hello", "branch": "late"}`,
			between: func(h *connectortest.Harness, f *githubtest.Server) {
				f.Push("octocat/hello", "late", "Theirs", map[string]string{"l": "l"})
			}, want: "invalid_request: GitHub refused creating the branch late (422: Reference already exists). Nothing was written."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, fake, _ := world(t, ask)
			h.NoVoid = true
			task := awaiting(t, h, tc.body)
			if bytes.Contains(task.Envelope, []byte(token)) || bytes.Contains(task.Spec.State, []byte(token)) {
				t.Fatal("the task holds the token")
			}
			if tc.between != nil {
				tc.between(h, fake)
			}
			res, _, err := h.Answer(ctx, task, nil, "")
			if tc.want == "" {
				if err != nil || bytes.Contains(res, []byte(token)) {
					t.Fatalf("%s %v", res, err)
				}
				return
			}
			got := connectortest.Text(err)
			if !strings.HasPrefix(got, tc.want) || strings.Contains(got, token) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if tc.moved != nil && tc.moved(fake) {
				t.Fatal("the write happened")
			}
		})
	}
}

// A diff reads as git writes one.
func TestUnified(t *testing.T) {
	t.Parallel()
	old, new := "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nD\ne\nf\ng\nh\ni"
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -1,8 +1,9 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n+i\n\\ No newline at end of file\n"
	if got := github.Unified("f.txt", &old, &new, 3); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	one := "x\n"
	if got := github.Unified("n", nil, &one, 3); got != "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n" {
		t.Fatalf("%q", got)
	}
	if got := github.Unified("n", &one, nil, 3); got != "--- a/n\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n" {
		t.Fatalf("%q", got)
	}
	long := strings.Repeat("l\n", 20)
	changed := "L\n" + strings.Repeat("l\n", 18) + "L\n"
	if got := github.Unified("x", &long, &changed, 1); strings.Count(got, "@@ -") != 2 {
		t.Fatalf("two hunks expected:\n%s", got)
	}
}

// Globs: * within a segment, ** across.
func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"docs/**", "docs/a/b.md", true}, {"docs/**", "docs", true}, {"docs/*", "docs/a/b.md", false}, {"**/*.md", "a/b/c.md", true},
		{"*.md", "a/b.md", false}, {"feature/*", "feature/x", true}, {"main", "main", true}, {"main", "mainly", false}, {"[", "[", false},
	} {
		if got := github.Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}
