package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"countersign/client"
)

// serve --dev runs a seeded sandbox GitHub and points the github
// connector at it: a project with the sandbox token reads and writes it.
func TestDevSandboxGitHub(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"COUNTERSIGN_DATA_DIR": dir}
	_, stop := serve(t, env, "--dev")
	r := stop()
	m := regexp.MustCompile(`its key \(shown once\): (ak_\S+)`).FindStringSubmatch(r.stderr)
	if m == nil || !strings.Contains(r.stderr, `dev: github: a sandbox GitHub at http://127.0.0.1:`) || !strings.Contains(r.stderr, `{"token": "sandbox-token"}`) {
		t.Fatalf("serve --dev said:\n%s", r.stderr)
	}
	policy := filepath.Join(t.TempDir(), "policy.json")
	creds := filepath.Join(t.TempDir(), "creds.json")
	_ = os.WriteFile(policy, []byte(`{"actions": ["issue_comment", "file_put"], "confirm": ["file_put"], "repos": ["sandbox/*"]}`), 0o600)
	_ = os.WriteFile(creds, []byte(`{"token": "sandbox-token"}`), 0o600)
	env["COUNTERSIGN_MASTER_KEY_FILE"] = filepath.Join(dir, "master.key")
	if r := run(t, context.Background(), env, "project", "put", "--owner", "alice.near", "--name", "gh", "--connector", "github",
		"--policy", policy, "--credentials", creds, "--agent", DemoAgent); r.code != 0 {
		t.Fatalf("project put: %+v", r)
	}
	delete(env, "COUNTERSIGN_MASTER_KEY_FILE")
	srv := startServe(t, env, "--dev")
	defer srv.stop()
	bot := &client.Client{BaseURL: srv.base, AgentKey: m[1]}
	ctx := context.Background()
	raw, err := bot.Call(ctx, "alice.near", "gh", "repo_get", map[string]any{"repo": "sandbox/hello"}, nil)
	if err != nil || !strings.Contains(string(raw), `"default_branch":"main"`) {
		t.Fatalf("repo_get: %s %v", raw, err)
	}
	raw, err = bot.Call(ctx, "alice.near", "gh", "issue_comment", map[string]any{"repo": "sandbox/hello", "number": 2, "body": "Hello"}, nil)
	if err != nil || !strings.Contains(string(raw), `"html_url"`) {
		t.Fatalf("issue_comment: %s %v", raw, err)
	}
	raw, err = bot.Call(ctx, "alice.near", "gh", "file_put", map[string]any{"repo": "sandbox/hello", "path": "README.md", "content": "# hi\n", "message": "m"}, nil)
	if err != nil || !strings.Contains(string(raw), `"status":"awaiting_owner"`) {
		t.Fatalf("file_put: %s %v", raw, err)
	}
}
