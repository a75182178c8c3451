package github_test

import (
	"strings"
	"testing"

	"countersign/connectors/connectortest"
	"countersign/connectors/github/githubtest"
)

// A commit keeps the mode of every file it replaces: an executable file
// stays executable after the approved commit, and the task says so.
func TestCommitKeepsModes(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["commit"], "confirm": ["commit"]}`)
	fake.Push(repo, "main", "Add the scripts", map[string]string{"bin/run.sh": "#!/bin/sh\necho hi\n", "bin/plain.txt": "x\n"})
	fake.Chmod(repo, "main", "bin/run.sh", githubtest.ModeExecutable)
	if m := fake.Mode(repo, "main", "bin/run.sh"); m != githubtest.ModeExecutable {
		t.Fatalf("the fake made mode %q", m)
	}
	task := awaiting(t, h, `{"operation": "commit", "repo": "`+repo+`", "message": "Say hello", "changes": [`+
		`{"path": "bin/run.sh", "content": "#!/bin/sh\necho hello\n"}, {"path": "bin/plain.txt", "content": "y\n"}, {"path": "bin/new.txt", "content": "n\n"}]}`)
	list, _ := field(task, "Changes")
	if len(list.Values) != 3 || list.Values[0] != "1. bin/run.sh: replaced, 21 bytes, stays executable (mode 100755)" || list.Values[1] != "2. bin/plain.txt: replaced, 2 bytes" {
		t.Fatalf("changes: %q", list.Values)
	}
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.File(repo, "main", "bin/run.sh"); got != "#!/bin/sh\necho hello\n" {
		t.Fatalf("run.sh is %q", got)
	}
	for path, want := range map[string]string{"bin/run.sh": githubtest.ModeExecutable, "bin/plain.txt": githubtest.ModeFile, "bin/new.txt": githubtest.ModeFile} {
		if m := fake.Mode(repo, "main", path); m != want {
			t.Errorf("after the commit %s has mode %q, want %q", path, m, want)
		}
	}
}

// A commit does not change a symbolic link: what the task would show of it
// is its target's content, not the link.
func TestCommitRefusesSymlinks(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["commit"]}`)
	fake.Symlink(repo, "main", "docs/readme-link", "../README.md")
	head := fake.Head(repo, "main")
	for _, change := range []string{`{"path": "docs/readme-link", "content": "x"}`, `{"path": "docs/readme-link", "delete": true}`} {
		_, err := h.Call(ctx, `{"operation": "commit", "repo": "`+repo+`", "message": "m", "changes": [`+change+`]}`)
		if got := textOf(err); !strings.HasPrefix(got, "invalid_request: docs/readme-link is a symbolic link on main") {
			t.Fatalf("%s: %q", change, got)
		}
	}
	if fake.Head(repo, "main") != head || fake.Mode(repo, "main", "docs/readme-link") != githubtest.ModeSymlink {
		t.Fatal("the link changed")
	}
}

func textOf(err error) string {
	if err == nil {
		return ""
	}
	return connectortest.Text(err)
}
