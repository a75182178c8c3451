package github_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors/github"
	"countersign/policy"
)

// examplePolicies are the GitHub policies the README, the docs and the
// tests show.
var examplePolicies = []string{
	// README, "Use it with GitHub".
	`{"actions": ["issue_comment", "file_put", "pr_merge"], "confirm": ["file_put", "pr_merge"], "repos": ["sandbox/*"]}`,
	// The command's and the fault harness's tests.
	`{"actions": ["issue_comment", "file_put"], "confirm": ["file_put"], "repos": ["sandbox/*"]}`,
	`{"actions": ["issue_comment"], "confirm": ["issue_comment"], "repos": ["sandbox/*"], "max_writes_per_day": 100000}`,
	// The policy package's.
	`{"actions": ["pr_merge", "issue_comment", "repo_star"], "confirm": ["pr_merge"]}`,
	`{"actions": ["issue_comment", "pr_merge"], "confirm": ["pr_merge", "issue_create"]}`,
	`{"actions": ["pr_merge", "issue_comment"], "repos": ["alice/site"], "max_writes_per_day": 20}`,
	`{"actions": ["pr_merge"], "repos": ["alice/site"], "max_writes_per_day": 20, "confirm": ["pr_merge"]}`,
	`{"actions": ["pr_merge", "pr_get"]}`,
	`{"actions": ["pr_mrege"]}`,
	// This package's.
	`{}`,
	`{"actions": ` + allWrites + `}`,
	`{"actions": ` + allWrites + `, "confirm": ` + allWrites + `}`,
	`{"confirm": ["issue_create"]}`,
	`{"actions": ["issue_create"]}`,
	`{"actions": ["issue_create"], "confirm": ["issue_create"]}`,
	`{"actions": ["issue_create"], "confirm": ["issue_create"], "max_writes_per_day": 5}`,
	`{"actions": ["issue_create"], "max_writes_per_day": 0}`,
	`{"actions": ["issue_comment", "issue_create"], "confirm": ["issue_create"], "max_writes_per_day": 1}`,
	`{"actions": ["issue_create"], "repos": ["octocat/other", "someone/*"]}`,
	`{"actions": ["issue_create"], "repos": ["OCTOCAT/*"]}`,
	`{"actions": ["issue_create"], "confirm": ["pr_get"]}`,
	`{"actions": ["issue_create"], "confirm": ["issue_creat"]}`,
	`{"actions": ["issue_create"], "allow_merge": true}`,
	`{"actions": ["branch_create"], "branches": ["feature/**"]}`,
	`{"actions": ["file_put"], "paths": ["docs/**"]}`,
	`{"actions": ["file_put"], "confirm": ["issue_create"]}`,
	`{"actions": ["file_put", "commit", "branch_create"], "branches": ["topic/*"], "paths": ["docs/**"]}`,
	`{"actions": ["file_put", "commit"], "confirm": ["file_put", "commit"]}`,
	`{"actions": ["pr_merge", "pr_review"], "confirm": ["pr_merge", "pr_review"]}`,
	`{"actions": ["commit"]}`,
}

// truthCall is a write and what it touches: the repository, the branch
// it changes and the paths it writes, as the policy's keys name them.
type truthCall struct {
	op, body     string
	repo, branch string
	paths        []string
}

// For every example policy, each claim the owner is told of it holds for
// real calls: a write it says runs at once is carried out at once, one it
// says asks first opens a task, one it says is refused is refused by the
// policy. The limits it lists (repos, branches, paths, max_writes_per_day)
// only ever refuse, and refuse exactly the calls their values leave out.
func TestExplanationsHold(t *testing.T) {
	t.Parallel()
	conn := github.New(github.Options{})
	for _, raw := range examplePolicies {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			e := conn.ParsePolicy([]byte(raw)).Explain()
			claims := map[string]policy.Outcome{}
			for _, w := range e.Writes {
				if w.Always == 0 {
					t.Fatalf("%s: %s depends on what it carries, which no GitHub write does", raw, w.Op)
				}
				claims[w.Op] = w.Always
			}
			limits := map[string][]string{}
			for _, l := range e.Limits {
				k, v, _ := strings.Cut(l, ": ")
				limits[k] = strings.Split(v, ", ")
				if v == "none" {
					limits[k] = nil
				}
			}
			h, fake, repo := world(t, raw)
			fake.CreateRepo("sandbox", "hello", "main", map[string]string{"README.md": "# sandbox\n"})
			fake.Push(repo, "topic/x", "Topic", map[string]string{"docs/topic.md": "t\n"})
			fake.OpenIssue("sandbox/hello", "Sandbox", "")
			gist := fake.CreateGist(map[string]string{"a.md": "a"})
			direct := 0
			for _, c := range truthCalls(repo, gist) {
				claim := claims[c.op]
				// The listed limits the call is outside of: their refusals.
				var broken []string
				if claim != policy.Refuse {
					broken = outside(c, limits, claim, direct)
				}
				out, err := h.Call(ctx, c.body)
				var got string
				var m map[string]any
				_ = json.Unmarshal(out, &m)
				var ce *countersign.Error
				switch {
				case err == nil && m["status"] == "awaiting_owner":
					got = "asked"
				case err == nil:
					got = "done"
					direct++
				case errors.As(err, &ce) && (ce.Code == countersign.PolicyDenied || ce.Code == countersign.PolicyUnreadable):
					got = "refused: " + countersignText(err)
				default:
					t.Fatalf("%s\n%s: %v", raw, c.body, err)
				}
				want := []string{map[policy.Outcome]string{policy.Allow: "done", policy.Ask: "asked", policy.Refuse: "refused: "}[claim]}
				if len(broken) > 0 {
					want = broken
				}
				if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(got, w) }) {
					t.Errorf("%s\n%s\n  the owner is told %q (limits %q)\n  got  %q\n  want %q", raw, c.body, explainText(e, c.op), e.Limits, got, want)
				}
			}
		})
	}
}

// outside lists the refusals of the listed limits a call is outside of;
// none when it is within every one. The limits are read as the owner
// reads them: globs, repositories ignoring case.
func outside(c truthCall, limits map[string][]string, claim policy.Outcome, direct int) []string {
	var out []string
	refused := func(s string) { out = append(out, "refused: policy_denied: "+s) }
	within := func(globs []string, v string, fold bool) bool {
		for _, g := range globs {
			if fold && github.Match(strings.ToLower(g), strings.ToLower(v)) || !fold && github.Match(g, v) {
				return true
			}
		}
		return false
	}
	if globs, ok := limits["repos"]; ok && c.repo != "" && !within(globs, c.repo, true) {
		refused("the owner's policy does not allow writes to " + c.repo + " (not in `repos`)")
	}
	if globs, ok := limits["branches"]; ok && c.branch != "" && !within(globs, c.branch, false) {
		refused("the owner's policy does not allow writes to the branch " + c.branch + " (not in `branches`)")
	}
	if globs, ok := limits["paths"]; ok {
		for _, p := range c.paths {
			if !within(globs, p, false) {
				refused("the owner's policy does not allow writes to the path " + p + " (not in `paths`)")
				break
			}
		}
	}
	// The day's direct writes; a task is counted once approved.
	if n, ok := limits["max_writes_per_day"]; ok && claim == policy.Allow && direct >= atoi(n[0]) {
		refused("the day's " + n[0] + " direct writes of this agent in this project are made")
	}
	return out
}

// explainText is what the owner is told of op.
func explainText(e policy.Explanation, op string) string {
	for _, w := range e.Writes {
		if w.Op == op {
			return w.Text
		}
	}
	return ""
}

func countersignText(err error) string {
	return string(countersign.ErrorCode(err)) + ": " + countersign.ErrorMessage(err)
}

func atoi(s string) int {
	var n int
	_, _ = fmt.Sscan(s, &n)
	return n
}

// truthCalls are a call of every write, within and outside the limits
// the example policies set, in an order where each finds what it needs.
func truthCalls(repo, gist string) []truthCall {
	r := func(op, repo, branch string, paths []string, members string) truthCall {
		body := `{"operation": "` + op + `"`
		if repo != "" {
			body += `, "repo": "` + repo + `"`
		}
		return truthCall{op: op, body: body + members + `}`, repo: repo, branch: branch, paths: paths}
	}
	return []truthCall{
		r("branch_create", repo, "topic/new", nil, `, "branch": "topic/new"`),
		r("branch_create", repo, "feature/a/b", nil, `, "branch": "feature/a/b"`),
		r("branch_create", repo, "main2", nil, `, "branch": "main2"`),
		r("file_put", repo, "main", []string{"README.md"}, `, "path": "README.md", "content": "r\n", "message": "m"`),
		r("file_put", repo, "topic/x", []string{"docs/a.md"}, `, "branch": "topic/x", "path": "docs/a.md", "content": "a\n", "message": "m"`),
		r("file_put", "sandbox/hello", "main", []string{"README.md"}, `, "path": "README.md", "content": "s\n", "message": "m"`),
		r("commit", repo, "topic/x", []string{"docs/b.md", "src/c.go"}, `, "branch": "topic/x", "message": "m", "changes": [{"path": "docs/b.md", "content": "b"}, {"path": "src/c.go", "content": "c"}]`),
		r("commit", repo, "topic/x", []string{"docs/c.md"}, `, "branch": "topic/x", "message": "m", "changes": [{"path": "docs/c.md", "content": "c"}]`),
		r("commit", repo, "main", []string{"docs/d.md"}, `, "message": "m", "changes": [{"path": "docs/d.md", "content": "d"}]`),
		r("issue_create", repo, "", nil, `, "title": "T"`),
		r("issue_create", "OCTOCAT/Hello", "", nil, `, "title": "T"`),
		r("issue_create", "sandbox/hello", "", nil, `, "title": "T"`),
		r("issue_comment", repo, "", nil, `, "number": 2, "body": "b"`),
		r("issue_comment", "sandbox/hello", "", nil, fmt.Sprintf(`, "number": %d, "body": "b"`, 1)),
		r("issue_update", repo, "", nil, `, "number": 2, "title": "U"`),
		r("pr_create", repo, "", nil, `, "title": "T", "head": "add-greeting", "base": "topic/x"`),
		r("pr_review", repo, "", nil, `, "number": 1, "event": "COMMENT", "body": "b"`),
		r("gist_create", "", "", nil, `, "files": {"g.md": "g"}`),
		r("gist_update", "", "", nil, `, "gist_id": "`+gist+`", "files": {"a.md": "b"}`),
		r("repo_star", "sandbox/hello", "", nil, ``),
		r("repo_unstar", "sandbox/hello", "", nil, ``),
		r("repo_star", repo, "", nil, ``),
		r("pr_merge", repo, "main", nil, `, "number": 1`),
	}
}
