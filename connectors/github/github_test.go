package github_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"countersign"
	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
)

var ctx = context.Background()

const token = "ghp_sandboxtoken0123456789"

const allWrites = `["branch_create","file_put","commit","issue_create","issue_comment","issue_update","pr_create","pr_review","pr_merge","gist_create","gist_update","repo_star","repo_unstar"]`

// world is a harness on a seeded fake.
func world(t *testing.T, policy string) (*connectortest.Harness, *githubtest.Server, string) {
	t.Helper()
	fake := githubtest.New(token, "octocat").Start()
	t.Cleanup(fake.Close)
	recorded(t, fake)
	repo := fake.Seed()
	conn := github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true}})
	hist := checked(t, conn)
	h := connectortest.New(t, conn)
	histories.Store(h, hist)
	t.Cleanup(func() {
		for _, task := range h.Tasks() {
			checkLine(t, task.Operation+"'s summary", task.Spec.Display.Summary)
		}
	})
	h.Credentials = []byte(`{"token": "` + token + `"}`)
	h.Policy = []byte(policy)
	return h, fake, repo
}

// histories holds the history of each harness world made.
var histories sync.Map

func historyOf(h *connectortest.Harness) *history {
	v, _ := histories.Load(h)
	return v.(*history)
}

func call(t *testing.T, h *connectortest.Harness, body string) map[string]any {
	t.Helper()
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func awaiting(t *testing.T, h *connectortest.Harness, body string) connectortest.Opened {
	t.Helper()
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	task, err := h.Awaiting(out)
	if err != nil {
		t.Fatalf("%s: %s: %v", body, out, err)
	}
	return task
}

func field(task connectortest.Opened, label string) (countersign.Field, bool) {
	for _, f := range task.Spec.Display.Fields {
		if f.Label == label {
			return f, true
		}
	}
	return countersign.Field{}, false
}

func TestDirectWrites(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": `+allWrites+`}`)
	r := call(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "README.md", "content": "# hello\n\nShorter.\n", "message": "Shorten"}`)
	if got, _ := fake.File(repo, "main", "README.md"); got != "# hello\n\nShorter.\n" || r["sha"] != fake.Head(repo, "main") {
		t.Fatalf("file_put: %v, README %q", r, got)
	}
	r = call(t, h, `{"operation": "commit", "repo": "`+repo+`", "message": "Two", "changes": [{"path": "a/b.txt", "content": "b\n"}, {"path": "docs/usage.md", "delete": true}]}`)
	if got, _ := fake.File(repo, "main", "a/b.txt"); got != "b\n" || r["sha"] != fake.Head(repo, "main") {
		t.Fatalf("commit: %v", r)
	}
	if _, ok := fake.File(repo, "main", "docs/usage.md"); ok {
		t.Fatal("commit did not delete")
	}
	call(t, h, `{"operation": "branch_create", "repo": "`+repo+`", "branch": "topic"}`)
	if fake.Head(repo, "topic") != fake.Head(repo, "main") {
		t.Fatal("branch_create")
	}
	r = call(t, h, `{"operation": "issue_create", "repo": "`+repo+`", "title": "Bug", "body": "It breaks", "labels": ["bug"]}`)
	n := int(r["number"].(float64))
	call(t, h, `{"operation": "issue_comment", "repo": "`+repo+`", "number": 3, "body": "Me too"}`)
	call(t, h, `{"operation": "issue_update", "repo": "`+repo+`", "number": 3, "state": "closed"}`)
	if n != 3 {
		t.Fatal(n)
	}
	call(t, h, `{"operation": "pr_review", "repo": "`+repo+`", "number": 1, "event": "COMMENT", "body": "Looks fine"}`)
	r = call(t, h, `{"operation": "pr_merge", "repo": "`+repo+`", "number": 1}`)
	if r["merged"] != true || fake.Head(repo, "main") != r["sha"] {
		t.Fatalf("merge: %v", r)
	}
	r = call(t, h, `{"operation": "gist_create", "files": {"a.md": "a"}}`)
	id := r["id"].(string)
	call(t, h, `{"operation": "gist_update", "gist_id": "`+id+`", "files": {"a.md": "b"}}`)
	if g, _ := fake.Gist(id); g["a.md"] != "b" {
		t.Fatal(g)
	}
	call(t, h, `{"operation": "repo_star", "repo": "`+repo+`"}`)
	if !fake.Starred(repo) {
		t.Fatal("star")
	}
	call(t, h, `{"operation": "repo_unstar", "repo": "`+repo+`"}`)
	if fake.Starred(repo) {
		t.Fatal("unstar")
	}
	for _, read := range []string{`{"operation": "pr_get", "repo": "` + repo + `", "number": 1}`, `{"operation": "issue_get", "repo": "` + repo + `", "number": 2}`,
		`{"operation": "repo_get", "repo": "` + repo + `"}`, `{"operation": "file_get", "repo": "` + repo + `", "path": "README.md"}`} {
		call(t, h, read)
	}
}

func TestApprovedFilePutShowsTheDiff(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["file_put"], "confirm": ["file_put"]}`)
	task := awaiting(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "README.md", "content": "# hello\n\nShorter.\n", "message": "Shorten"}`)
	diff, _ := field(task, "Diff")
	if diff.Kind != countersign.FieldLongText || !strings.Contains(diff.Values[0], "-A sample repository") || !strings.Contains(diff.Values[0], "+Shorter.") {
		t.Fatalf("diff: %+v", diff)
	}
	if _, ok := fake.File(repo, "main", "README.md"); !ok {
		t.Fatal("no README")
	}
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.File(repo, "main", "README.md"); got != "# hello\n\nShorter.\n" {
		t.Fatalf("%s: %q", res, got)
	}
}

// A commit of 20 files shows each change and one diff of the whole files,
// and makes exactly those files; text a field may not show goes as a file.
func TestCommitShowsEveryChange(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["commit", "file_put"], "confirm": ["commit", "file_put"]}`)
	var changes []string
	for i := range 20 {
		changes = append(changes, `{"path": "dir/f`+strings.Repeat("x", i)+`.txt", "content": "line `+strings.Repeat("y", i)+`\n"}`)
	}
	changes[0] = `{"path": "README.md", "content": "# hello\n"}`
	task := awaiting(t, h, `{"operation": "commit", "repo": "`+repo+`", "message": "Twenty", "changes": [`+strings.Join(changes, ", ")+`]}`)
	list, _ := field(task, "Changes")
	diff, _ := field(task, "Diff, whole files")
	if len(list.Values) != 20 || list.Values[0] != "1. README.md: replaced, 8 bytes" || list.WrittenBy != countersign.WrittenByAgent {
		t.Fatalf("changes: %+v", list)
	}
	if diff.WrittenBy != countersign.WrittenByProject || !strings.Contains(diff.Values[0], " A sample repository") && !strings.Contains(diff.Values[0], "-A sample repository") {
		t.Fatalf("diff: %+v", diff)
	}
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.File(repo, "main", "dir/f"+strings.Repeat("x", 19)+".txt"); got != "line "+strings.Repeat("y", 19)+"\n" {
		t.Fatalf("%q", got)
	}
	// A carriage return may not be shown in a field: the content goes as a file.
	task = awaiting(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "crlf.txt", "content": "a\r\nb\r\n", "message": "m"}`)
	if len(task.Spec.Files) == 0 {
		t.Fatalf("no file: %+v", task.Spec.Display)
	}
	if c, _ := field(task, "New content"); !strings.HasPrefix(c.Values[0], "in the file ") {
		t.Fatalf("%+v", c)
	}
}
