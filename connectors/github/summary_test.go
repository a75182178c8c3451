package github_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"countersign"
)

const ask = `{"actions": ` + allWrites + `, "confirm": ` + allWrites + `}`

// short is a commit's first seven hex digits.
func short(sha string) string { return sha[:7] }

// Each write's task carries the one line of what approving does, exactly:
// the consequence, the values to check, and whether it can be undone;
// values from the agent are quoted, and cut with "…" to keep the line to
// 200 characters.
func TestSummaries(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, ask)
	fake.Push(repo, "main", "Add a file", map[string]string{"old.txt": "old\n"})
	main, head := short(fake.Head(repo, "main")), short(fake.Head(repo, "add-greeting"))
	gist := fake.CreateGist(map[string]string{"a.md": "a", "old.md": "o"})
	long := strings.Repeat("x", 256)
	longBranch := "topic/" + strings.Repeat("b", 200)
	endIssue := `" in octocat/hello; it can be closed later, but watchers are notified at once`
	for _, tt := range []struct{ body, want string }{
		{`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic"}`,
			"create the branch topic in octocat/hello at " + main + ", the head of main; it can be deleted"},
		{`{"operation": "branch_create", "repo": "` + repo + `", "branch": "topic", "from": "` + fake.Head(repo, "add-greeting") + `"}`,
			"create the branch topic in octocat/hello at " + head + "; it can be deleted"},
		{`{"operation": "file_put", "repo": "` + repo + `", "path": "README.md", "content": "x\n", "message": "m"}`,
			`replace "README.md" on main of octocat/hello in one commit; only a later commit can undo it`},
		{`{"operation": "file_put", "repo": "` + repo + `", "path": "docs/new file.md", "content": "x\n", "message": "m", "branch": "add-greeting"}`,
			`add "docs/new file.md" to add-greeting of octocat/hello in one commit; only a later commit can undo it`},
		{`{"operation": "commit", "repo": "` + repo + `", "message": "m", "changes": [{"path": "a.txt", "content": "a"}]}`,
			`commit "a.txt" (new) to main of octocat/hello after ` + main + `; only a later commit can undo it`},
		{`{"operation": "commit", "repo": "` + repo + `", "message": "m", "changes": [{"path": "old.txt", "delete": true}]}`,
			`commit "old.txt" (deleted) to main of octocat/hello after ` + main + `; only a later commit can undo it`},
		{`{"operation": "commit", "repo": "` + repo + `", "message": "m", "changes": [{"path": "a.txt", "content": "a"}, {"path": "README.md", "content": "r"}, {"path": "old.txt", "delete": true}]}`,
			`commit 3 files (1 new, 1 replaced, 1 deleted) to main of octocat/hello after ` + main + `; only a later commit can undo it`},
		{`{"operation": "issue_create", "repo": "` + repo + `", "title": "It breaks"}`, `open an issue "It breaks` + endIssue},
		{`{"operation": "issue_create", "repo": "` + repo + `", "title": "Fix \"this\"; it can be undone"}`, `open an issue "Fix \"this\"; it can be undone` + endIssue},
		{`{"operation": "issue_create", "repo": "` + repo + `", "title": "Grüße, 世界"}`, `open an issue "Grüße, 世界` + endIssue},
		{`{"operation": "issue_create", "repo": "` + repo + `", "title": "` + long + `"}`,
			`open an issue "` + strings.Repeat("x", 200-utf8.RuneCountInString(`open an issue "…`+endIssue)) + `…` + endIssue},
		{`{"operation": "issue_comment", "repo": "` + repo + `", "number": 2, "body": "b"}`,
			`comment on #2 of octocat/hello; it can be deleted later, but watchers are notified at once`},
		{`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "closed", "state_reason": "not_planned", "title": "New", "body": "b", "labels": ["bug", "good first issue"], "assignees": []}`,
			`change issue #2 of octocat/hello: close it (not planned), retitle it "New", replace its body, set its labels to "bug", "good first issue", remove its assignees; it can be changed back`},
		{`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "open"}`, `change issue #2 of octocat/hello: reopen it; it can be changed back`},
		{`{"operation": "pr_create", "repo": "` + repo + `", "title": "Greet", "head": "add-greeting", "draft": true}`,
			`open a draft pull request "Greet" to merge add-greeting into main of octocat/hello; it can be closed later, but watchers are notified at once`},
		{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "APPROVE"}`,
			"approve pull request #1 of octocat/hello at " + head + "; a review can be dismissed, not deleted"},
		{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "REQUEST_CHANGES", "body": "b"}`,
			"request changes on pull request #1 of octocat/hello at " + head + "; a review can be dismissed, not deleted"},
		{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "COMMENT", "body": "b"}`,
			"comment on pull request #1 of octocat/hello at " + head + "; a review can be dismissed, not deleted"},
		{`{"operation": "pr_merge", "repo": "` + repo + `", "number": 1}`,
			"merge pull request #1 of octocat/hello into main at " + head + " by a merge commit; it cannot be undone, only reverted"},
		{`{"operation": "pr_merge", "repo": "` + repo + `", "number": 1, "method": "squash"}`,
			"merge pull request #1 of octocat/hello into main at " + head + " squashed into one commit; it cannot be undone, only reverted"},
		{`{"operation": "gist_create", "files": {"b c.md": "b", "a.md": "a"}}`,
			`create a secret gist of 2 files: "a.md", "b c.md"; anyone with its link can read it, and it can be deleted`},
		{`{"operation": "gist_create", "public": true, "files": {"e": "e", "d": "d", "c": "c", "b": "b", "a": "a"}}`,
			`create a public gist of 5 files: "a", "b", "c" and 2 more; anyone can find it, and it can be deleted`},
		{`{"operation": "gist_update", "gist_id": "` + gist + `", "description": "d", "files": {"a.md": "b", "old.md": null, "new.md": "n"}}`,
			`change the gist ` + gist + `: replace "a.md", add "new.md", delete "old.md" and 1 more; its earlier versions stay in its history`},
		{`{"operation": "gist_update", "gist_id": "` + gist + `", "description": "d"}`,
			`change the gist ` + gist + `: set its description; its earlier versions stay in its history`},
		{`{"operation": "repo_star", "repo": "` + repo + `"}`, "star octocat/hello as the token's user; it can be unstarred"},
		{`{"operation": "repo_unstar", "repo": "` + repo + `"}`, "unstar octocat/hello as the token's user; it can be starred again"},
	} {
		task := awaiting(t, h, tt.body)
		if got := task.Spec.Display.Summary; got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.body, got, tt.want)
		}
	}
	// A long branch and a long path are cut too, each saying so.
	fake.Push(repo, longBranch, "Long", map[string]string{"x": "x"})
	path := strings.Repeat("dir/", 60) + "file.md"
	body, _ := json.Marshal(map[string]any{"operation": "file_put", "repo": repo, "branch": longBranch, "path": path, "content": "x", "message": "m"})
	got := awaiting(t, h, string(body)).Spec.Display.Summary
	if n := utf8.RuneCountInString(got); n > countersign.MaxSummaryChars || strings.Count(got, "…") != 2 ||
		!strings.HasPrefix(got, `add "dir/dir/`) || !strings.Contains(got, `…" to topic/bbb`) || !strings.HasSuffix(got, "… of octocat/hello in one commit; only a later commit can undo it") {
		t.Errorf("%d characters: %q", n, got)
	}
}

// A write carried out at once tells the owner's history what a task of it
// would have shown (its title and summary) and what it did, with the page
// to see it; an approved write reports the same outcome.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, ask)
	hist := historyOf(h)
	gist := fake.CreateGist(map[string]string{"a.md": "a"})
	page := fake.URL + "/octocat/hello"
	j := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	type want func(res map[string]any) (string, string)
	num := func(res map[string]any, k string) int { n, _ := res[k].(float64); return int(n) }
	rows := func(round string) []struct {
		body string
		want want
	} {
		branch := "topic-" + round
		return []struct {
			body string
			want want
		}{
			{`{"operation": "branch_create", "repo": "` + repo + `", "branch": "` + branch + `"}`, func(res map[string]any) (string, string) {
				return "Created the branch " + branch + " in octocat/hello at " + short(fake.Head(repo, "main")), page + "/tree/" + branch
			}},
			{`{"operation": "branch_create", "repo": "` + repo + `", "branch": ` + j(oddBranch+"-"+round) + `}`, func(res map[string]any) (string, string) {
				return "Created the branch " + oddBranch + "-" + round + " in octocat/hello at " + short(fake.Head(repo, "main")), page + "/tree/topic/a+b&c%23d%25e=%C3%A9-" + round
			}},
			{`{"operation": "file_put", "repo": "` + repo + `", "path": "README.md", "content": "` + round + `\n", "message": "m"}`, func(res map[string]any) (string, string) {
				sha := fake.Head(repo, "main")
				return "Committed " + short(sha) + ` to main of octocat/hello: replaced "README.md"`, page + "/commit/" + sha
			}},
			{`{"operation": "file_put", "repo": "` + repo + `", "path": ` + j(oddPath+round) + `, "content": "n\n", "message": "m", "branch": "` + branch + `"}`, func(res map[string]any) (string, string) {
				sha := fake.Head(repo, branch)
				return "Committed " + short(sha) + " to " + branch + ` of octocat/hello: added "` + oddPath + round + `"`, page + "/commit/" + sha
			}},
			{`{"operation": "commit", "repo": "` + repo + `", "message": "m", "changes": [{"path": "c-` + round + `.txt", "content": "c"}]}`, func(res map[string]any) (string, string) {
				sha := fake.Head(repo, "main")
				return "Committed " + short(sha) + ` to main of octocat/hello, changing "c-` + round + `.txt"`, page + "/commit/" + sha
			}},
			{`{"operation": "commit", "repo": "` + repo + `", "message": "m", "branch": "` + branch + `", "changes": [{"path": "d.txt", "content": "` + round + `"}, {"path": "README.md", "content": "r"}]}`, func(res map[string]any) (string, string) {
				sha := fake.Head(repo, branch)
				return "Committed " + short(sha) + " to " + branch + " of octocat/hello, changing 2 files", page + "/commit/" + sha
			}},
			{`{"operation": "issue_create", "repo": "` + repo + `", "title": "Bug ` + round + `"}`, func(res map[string]any) (string, string) {
				n := num(res, "number")
				return fmt.Sprintf(`Opened issue #%d "Bug %s" in octocat/hello`, n, round), fmt.Sprintf("%s/issues/%d", page, n)
			}},
			{`{"operation": "issue_comment", "repo": "` + repo + `", "number": 2, "body": "b"}`, func(res map[string]any) (string, string) {
				return "Commented on #2 of octocat/hello", fmt.Sprintf("%s/issues/2#issuecomment-%d", page, num(res, "id"))
			}},
			{`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "closed"}`, func(res map[string]any) (string, string) {
				return "Changed issue #2 of octocat/hello; it is closed", page + "/issues/2"
			}},
			{`{"operation": "pr_create", "repo": "` + repo + `", "title": "PR ` + round + `", "head": "` + branch + `"}`, func(res map[string]any) (string, string) {
				n := num(res, "number")
				return fmt.Sprintf(`Opened pull request #%d "PR %s" to merge %s into main of octocat/hello`, n, round, branch), fmt.Sprintf("%s/pull/%d", page, n)
			}},
			{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "COMMENT", "body": "b"}`, func(res map[string]any) (string, string) {
				return "Commented on pull request #1 of octocat/hello at " + short(fake.Head(repo, "add-greeting")), fmt.Sprintf("%s/pull/1#pullrequestreview-%d", page, num(res, "id"))
			}},
			{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "APPROVE"}`, func(res map[string]any) (string, string) {
				return "Approved pull request #1 of octocat/hello at " + short(fake.Head(repo, "add-greeting")), fmt.Sprintf("%s/pull/1#pullrequestreview-%d", page, num(res, "id"))
			}},
			{`{"operation": "pr_review", "repo": "` + repo + `", "number": 1, "event": "REQUEST_CHANGES", "body": "b"}`, func(res map[string]any) (string, string) {
				return "Requested changes on pull request #1 of octocat/hello at " + short(fake.Head(repo, "add-greeting")), fmt.Sprintf("%s/pull/1#pullrequestreview-%d", page, num(res, "id"))
			}},
			{`{"operation": "issue_update", "repo": "` + repo + `", "number": 2, "state": "open", "labels": ["x"]}`, func(res map[string]any) (string, string) {
				return "Changed issue #2 of octocat/hello; it is open", page + "/issues/2"
			}},
			{`{"operation": "gist_create", "public": true, "files": {"a.md": "a"}}`, func(res map[string]any) (string, string) {
				return "Created a public gist of 1 file", fake.URL + "/gist/" + res["id"].(string)
			}},
			{`{"operation": "gist_create", "files": {"a.md": "a", "b.md": "b"}}`, func(res map[string]any) (string, string) {
				return "Created a secret gist of 2 files", fake.URL + "/gist/" + res["id"].(string)
			}},
			{`{"operation": "gist_update", "gist_id": "` + gist + `", "files": {"a.md": "` + round + `"}}`, func(res map[string]any) (string, string) {
				return "Changed the gist " + gist, fake.URL + "/gist/" + gist
			}},
			{`{"operation": "repo_star", "repo": "` + repo + `"}`, func(res map[string]any) (string, string) { return "Starred octocat/hello", page }},
			{`{"operation": "repo_unstar", "repo": "` + repo + `"}`, func(res map[string]any) (string, string) { return "Unstarred octocat/hello", page }},
		}
	}
	for _, row := range rows("direct") {
		h.Policy = []byte(ask)
		task := awaiting(t, h, row.body)
		h.Policy = []byte(`{"actions": ` + allWrites + `}`)
		res := call(t, h, row.body)
		did := hist.lastDid()
		if did.Title != task.Spec.Display.Title || did.Summary != task.Spec.Display.Summary {
			t.Errorf("%s: told %q, %q; a task of it showed %q, %q", row.body, did.Title, did.Summary, task.Spec.Display.Title, task.Spec.Display.Summary)
		}
		text, url := row.want(res)
		if did.Outcome.Text != text || did.Outcome.URL != url || res["html_url"] == nil {
			t.Errorf("%s:\n got %q %s\nwant %q %s", row.body, did.Outcome.Text, did.Outcome.URL, text, url)
		}
	}
	h.Policy = []byte(ask)
	for _, row := range rows("approved") {
		out, _, err := h.Answer(ctx, awaiting(t, h, row.body), nil, "")
		if err != nil {
			t.Fatalf("%s: %v", row.body, err)
		}
		var res map[string]any
		_ = json.Unmarshal(out, &res)
		text, url := row.want(res)
		if o := hist.lastOutcome(); o.Text != text || o.URL != url {
			t.Errorf("%s:\n got %q %s\nwant %q %s", row.body, o.Text, o.URL, text, url)
		}
	}
	// The merge, last: the pull request's page, and the merge commit.
	for _, policy := range []string{`{"actions": ["pr_merge"]}`, ask} {
		h.Policy = []byte(policy)
		fake.Push(repo, "merge-"+short(sha256Hex([]byte(policy))), "More", map[string]string{"more.txt": policy})
		pr := fake.OpenPull(repo, "merge-"+short(sha256Hex([]byte(policy))), "main", "T", "")
		body := fmt.Sprintf(`{"operation": "pr_merge", "repo": "%s", "number": %d}`, repo, pr)
		var o string
		if policy == ask {
			_, _, err := h.Answer(ctx, awaiting(t, h, body), nil, "")
			if err != nil {
				t.Fatal(err)
			}
			o = hist.lastOutcome().Text + " " + hist.lastOutcome().URL
		} else {
			call(t, h, body)
			o = hist.lastDid().Outcome.Text + " " + hist.lastDid().Outcome.URL
		}
		if want := fmt.Sprintf("Merged pull request #%d of octocat/hello into main as %s %s/pull/%d", pr, short(fake.Head(repo, "main")), page, pr); o != want {
			t.Errorf("merge:\n got %q\nwant %q", o, want)
		}
	}
}
