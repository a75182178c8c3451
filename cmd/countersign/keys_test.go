package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestServeRefusesAKeyringThatOpensNoneOfTheData: SPEC §15. Once
// an agent's call has sealed a task and its run under key 1, serve with a
// well-formed but wrong key under id 1, or with a keyring lacking id 1,
// refuses to start in one line naming the key id the data needs, and
// doctor says the same; the right key starts.
func TestServeRefusesAKeyringThatOpensNoneOfTheData(t *testing.T) {
	t.Parallel()
	s := newService(t)
	right := s.env["COUNTERSIGN_MASTER_KEY"]
	srv := startServe(t, s.env)
	s.base = srv.base
	agent := s.agent("bot.near", 1_000_000)
	s.project("alice.near", "probe", "{}", "bot.near")
	if _, err := agent.Call(context.Background(), "alice.near", "probe", "guess_start", map[string]any{"max": 2}, nil); err != nil {
		t.Fatal(err)
	}
	if r := srv.stop(); r.code != 0 {
		t.Fatalf("serve: %+v", r)
	}
	other, err := sealing.ParseKeyring(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	twoOnly, err := other.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, key, serve, doctor string }{
		{"another key under id 1", newKey(t),
			"the master keyring opens none of the data sealed under key 1 (tasks, run receipts, history entries): it holds another key under that id; set COUNTERSIGN_MASTER_KEY (or its _FILE) to the keyring the data was sealed with",
			"FAIL the master key against the data: the master keyring opens none of the data sealed under key 1 (tasks, run receipts, history entries)"},
		{"a keyring without id 1", strings.SplitN(twoOnly.Export(), ",", 2)[1],
			"the master keyring opens none of the data already stored: the data needs key 1 (tasks, run receipts, history entries), which it lacks; set COUNTERSIGN_MASTER_KEY",
			"FAIL the master key against the data: the master keyring opens none of the data already stored: the data needs key 1 (tasks, run receipts, history entries)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"COUNTERSIGN_MASTER_KEY": tc.key, "COUNTERSIGN_LISTEN": "127.0.0.1:0", "COUNTERSIGN_METRICS_LISTEN": "off",
				"COUNTERSIGN_NEAR_RPC": "off", "COUNTERSIGN_DATABASE_URL": s.env["COUNTERSIGN_DATABASE_URL"]}
			// A serve that starts would run until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := run(t, ctx, env, "serve")
			if r.code == 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.serve) {
				t.Errorf("serve with %s: %+v, want one line saying %q", tc.name, r, tc.serve)
			}
			if r := run(t, context.Background(), env, "doctor"); r.code != 1 || !strings.Contains(r.stdout, tc.doctor) {
				t.Errorf("doctor with %s: %+v, want %q", tc.name, r, tc.doctor)
			}
		})
	}
	env := map[string]string{"COUNTERSIGN_MASTER_KEY": right, "COUNTERSIGN_NEAR_RPC": "off", "COUNTERSIGN_DATABASE_URL": s.env["COUNTERSIGN_DATABASE_URL"]}
	if r := run(t, context.Background(), env, "doctor"); r.code != 0 || !strings.Contains(r.stdout, "ok   the master key opens the data (key ids in use: 1;") {
		t.Errorf("doctor with the right key: %+v", r)
	}
	srv = startServe(t, env)
	if r := srv.stop(); r.code != 0 {
		t.Errorf("serve with the right key: %+v", r)
	}
}
