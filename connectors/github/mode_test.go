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
		if got := textOf(err); !strings.HasPrefix(got, "invalid_request: docs/readme-link is a symbolic link on main: a write changes regular files only") {
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

// file_put goes through the contents API, which takes no mode and would
// make an executable file a plain one: it is refused, pointing to commit;
// a link is refused as by commit.
func TestFilePutRefusesExecutablesAndLinks(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["file_put"]}`)
	fake.Push(repo, "main", "Add a script", map[string]string{"run.sh": "#!/bin/sh\n"})
	fake.Chmod(repo, "main", "run.sh", githubtest.ModeExecutable)
	fake.Symlink(repo, "main", "docs/readme-link", "../README.md")
	head := fake.Head(repo, "main")
	for path, want := range map[string]string{
		"run.sh":           "invalid_request: run.sh is executable (mode 100755) on main, and file_put would make it a plain file: use commit, which keeps its mode",
		"docs/readme-link": "invalid_request: docs/readme-link is a symbolic link on main: a write changes regular files only",
	} {
		_, err := h.Call(ctx, `{"operation": "file_put", "repo": "`+repo+`", "path": "`+path+`", "content": "x", "message": "m"}`)
		if got := textOf(err); got != want {
			t.Errorf("%s: %q", path, got)
		}
	}
	if fake.Head(repo, "main") != head || fake.Mode(repo, "main", "run.sh") != githubtest.ModeExecutable {
		t.Fatal("a refused write changed the branch")
	}
	// A plain file is written as before.
	call(t, h, `{"operation": "file_put", "repo": "`+repo+`", "path": "README.md", "content": "x", "message": "m"}`)
	if m := fake.Mode(repo, "main", "README.md"); m != githubtest.ModeFile {
		t.Fatalf("README.md has mode %q", m)
	}
}
