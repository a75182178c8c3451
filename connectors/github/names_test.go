package github

import (
	"os/exec"
	"strings"
	"testing"
)

// Branch and ref names follow git's rules; where git is installed, its own
// check-ref-format agrees with every case of the table.
func TestRefNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		branch, ref  bool
		gitDisagrees bool // git --branch reads "@" as the current branch
	}{
		{"main", true, true, false},
		{"feature/x", true, true, false},
		{"docs+notes", true, true, false},
		{"a&b=c#d%e", true, true, false},
		{"ветка/é", true, true, false},
		{"@a", true, true, false},
		{"a@b", true, true, false},
		{"v1.2.3", true, true, false},
		{"a.lockx", true, true, false},
		{"-x", false, true, false},
		{"HEAD", false, true, false},
		{"", false, false, false},
		{"@", false, false, true},
		{"feature/../main", false, false, false},
		{"..", false, false, false},
		{".", false, false, false},
		{"a..b", false, false, false},
		{".hidden", false, false, false},
		{"a/.b", false, false, false},
		{"a.lock", false, false, false},
		{"x/y.lock/z", false, false, false},
		{"a//b", false, false, false},
		{"/a", false, false, false},
		{"a/", false, false, false},
		{"a.", false, false, false},
		{"a@{1}", false, false, false},
		{"a b", false, false, false},
		{"a\tb", false, false, false},
		{"a\x7fb", false, false, false},
		{"a~1", false, false, false},
		{"a^", false, false, false},
		{"a:b", false, false, false},
		{"a?", false, false, false},
		{"a*", false, false, false},
		{"a[b", false, false, false},
		{`a\b`, false, false, false},
		{strings.Repeat("a", 251), false, false, true},
	} {
		if got := validBranch(tt.name); got != tt.branch {
			t.Errorf("validBranch(%q) = %v", tt.name, got)
		}
		if got := validRef(tt.name); got != tt.ref {
			t.Errorf("validRef(%q) = %v", tt.name, got)
		}
		if _, err := exec.LookPath("git"); err != nil || tt.gitDisagrees || tt.name == "" {
			continue
		}
		if err := exec.Command("git", "check-ref-format", "--branch", tt.name).Run(); (err == nil) != tt.branch {
			t.Errorf("git check-ref-format --branch %q: %v, the connector says %v", tt.name, err, tt.branch)
		}
		if err := exec.Command("git", "check-ref-format", "--allow-onelevel", tt.name).Run(); (err == nil) != tt.ref && !strings.HasPrefix(tt.name, "-") && tt.name != "HEAD" {
			t.Errorf("git check-ref-format --allow-onelevel %q: %v, the connector says %v", tt.name, err, tt.ref)
		}
	}
}

func TestRepoNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"octocat/hello": true, "octo-cat/hello.world_2": true, "a/.github": true, "a/...": true,
		"sandbox/..": false, "sandbox/.": false, "sandbox/": false, "/hello": false, "octocat": false,
		"-x/y": false, "a/b/c": false, "a/b c": false, "a/b%2e": false, strings.Repeat("a", 40) + "/b": false,
	} {
		if got := validRepo(name); got != want {
			t.Errorf("validRepo(%q) = %v", name, got)
		}
	}
}
