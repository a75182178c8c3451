package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
)

// TestKeysRotate: add a key, install it, rewrap: the credentials move to the
// new key and open without the old one.
func TestKeysRotate(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.agent("bot.near", 0)
	creds := filepath.Join(t.TempDir(), "creds.json")
	_ = os.WriteFile(creds, []byte(`{"token":"canary-rotate-secret"}`), 0o600)
	policy := filepath.Join(t.TempDir(), "policy.json")
	_ = os.WriteFile(policy, []byte(`{}`), 0o600)
	s.run("project", "put", "--owner", "alice.near", "--name", "probe", "--connector", "probe", "--policy", policy,
		"--agent", "bot.near", "--credentials", creds)

	r := run(t, context.Background(), s.env, "keys", "rotate", "--add")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "1:") || !strings.Contains(r.stdout, ",2:") || !strings.Contains(r.stderr, "key 2 added") {
		t.Fatalf("keys rotate --add: %+v", r)
	}
	rotated := strings.TrimSpace(r.stdout)
	s.env["COUNTERSIGN_MASTER_KEY"] = rotated
	if out := s.run("keys", "rotate"); !strings.HasPrefix(out, "1 secret(s) sealed again under key 2") {
		t.Fatalf("keys rotate: %s", out)
	}
	if out := s.run("keys", "rotate"); !strings.HasPrefix(out, "0 secret(s)") {
		t.Fatalf("a second rotate: %s", out)
	}
	// Only key 2 is needed to open the credentials now.
	k2 := rotated[strings.Index(rotated, ",2:")+1:]
	only2, err := sealing.ParseKeyring(k2)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.OpenPostgres(context.Background(), s.env["COUNTERSIGN_DATABASE_URL"], "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var p store.Project
	_ = db.Tx(context.Background(), func(tx store.Tx) (err error) {
		p, err = tx.Project(context.Background(), "alice.near", "probe")
		return err
	})
	plain, err := only2.Open(p.CredsKeyID, sealing.ProjectCredentials, p.UUID, p.Creds)
	if err != nil || p.CredsKeyID != 2 || string(plain) != `{"token":"canary-rotate-secret"}` {
		t.Fatalf("credentials after rotation: key %d, %q, %v", p.CredsKeyID, plain, err)
	}
}
