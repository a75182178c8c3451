package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

func TestVersionFlags(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "-v"} {
		if r := run(t, context.Background(), nil, arg); r.code != 0 || r.stdout != "countersign "+version+"\n" {
			t.Errorf("%s: %+v", arg, r)
		}
	}
}

// keys new --out writes a keyring only its owner can read, and never
// replaces a file.
func TestKeysNewOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "master.key")
	r := run(t, context.Background(), nil, "keys", "new", "--out", path)
	if r.code != 0 || !strings.Contains(r.stdout, "mode 0600") {
		t.Fatalf("keys new --out: %+v", r)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file's mode is %v", fi.Mode().Perm())
	}
	first, _ := os.ReadFile(path)
	if _, err := sealing.ParseKeyring(strings.TrimSpace(string(first))); err != nil {
		t.Fatalf("the file holds no keyring: %v", err)
	}
	if strings.Contains(r.stdout, strings.TrimSpace(string(first))) {
		t.Fatal("the key is printed too")
	}
	again := run(t, context.Background(), nil, "keys", "new", "--out", path)
	if again.code != 1 || !strings.Contains(again.stderr, "never overwritten") {
		t.Fatalf("a second keys new --out: %+v", again)
	}
	if now, _ := os.ReadFile(path); string(now) != string(first) {
		t.Fatal("the key file was replaced")
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ready := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(ready)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// A service listening on every address is asked on loopback.
	env := map[string]string{"COUNTERSIGN_LISTEN": "0.0.0.0:" + port}
	if r := run(t, context.Background(), env, "healthcheck"); r.code != 0 {
		t.Fatalf("healthcheck of a ready service: %+v", r)
	}
	ready = http.StatusServiceUnavailable
	if r := run(t, context.Background(), env, "healthcheck"); r.code != 1 || !strings.Contains(r.stderr, "not ready") {
		t.Fatalf("healthcheck of a service not ready: %+v", r)
	}
	srv.Close()
	if r := run(t, context.Background(), env, "healthcheck", "--timeout", "1s"); r.code != 1 || !strings.Contains(r.stderr, "is it running?") {
		t.Fatalf("healthcheck of no service: %+v", r)
	}
}

// migrate --wait keeps trying a database that does not answer yet, says
// so, and gives up at its deadline.
func TestMigrateWaits(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing answers there now
	env := map[string]string{"COUNTERSIGN_DATABASE_URL": "postgres://postgres@" + addr + "/postgres?sslmode=disable&connect_timeout=1"}
	start := time.Now()
	r := run(t, context.Background(), env, "migrate", "--wait", "3s")
	if r.code != 1 || strings.Count(r.stderr, "trying again") < 1 || !strings.Contains(r.stderr, "cannot reach the database") {
		t.Fatalf("migrate --wait against nothing: %+v", r)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Fatalf("migrate gave up after %s, before its 3 s", d)
	}
}

// An agent's call with the service down says where it looked and asks
// whether the service runs, not Go's dial error.
func TestCallServiceDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{"COUNTERSIGN_AGENT_KEY": "ak_test-agent-key-0123456789abcdefghijklmnop"}
	r := run(t, context.Background(), env, "call", "--server", "http://"+addr, "alice.near/game", "guess_start")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot reach the service at http://"+addr+"; is it running?") || strings.Contains(r.stderr, "Post \"") {
		t.Fatalf("call with the service down: %+v", r)
	}
}

// inbox login says which flag is missing, and a sign-in that fails leaves
// no inbox directory behind.
func TestInboxLoginMessagesAndCleanUp(t *testing.T) {
	t.Parallel()
	if r := run(t, context.Background(), nil, "inbox", "login"); r.code != 1 || !strings.Contains(r.stderr, "say how to sign") || strings.Contains(r.stderr, "not both") {
		t.Fatalf("inbox login with no flags: %+v", r)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tmp := t.TempDir()
	wallet := filepath.Join(tmp, "wallet.json")
	if r := run(t, context.Background(), nil, "wallet", "new", "--out", wallet); r.code != 0 {
		t.Fatalf("wallet new: %+v", r)
	}
	dir := filepath.Join(tmp, "inbox")
	r := run(t, context.Background(), map[string]string{"COUNTERSIGN_INBOX_DIR": dir}, "inbox", "login", "--wallet", wallet, "--server", "http://"+addr)
	if r.code != 1 || !strings.Contains(r.stderr, "cannot reach the service") {
		t.Fatalf("inbox login with the service down: %+v", r)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the failed sign-in left %s behind (%v)", dir, err)
	}
}

// doctor checks the master key against the data: a keyring whose ids the
// data does not use, or one that does not open what was sealed, fails, with
// what needs which key.
func TestDoctorChecksTheKeyringAgainstTheData(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	if r := run(t, context.Background(), map[string]string{"COUNTERSIGN_DATABASE_URL": url}, "migrate"); r.code != 0 {
		t.Fatalf("migrate: %+v", r)
	}
	right := newKey(t)
	keys, err := sealing.ParseKeyring(right)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.OpenPostgres(context.Background(), storetest.PostgresURL(), strings.SplitN(url, "search_path=", 2)[1])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	uuid := "00000000-0000-4000-8000-0000000000c1"
	id, blob, err := keys.Seal(sealing.ProjectCredentials, uuid, []byte(`"token"`))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Tx(context.Background(), func(tx store.Tx) error {
		p := storetest.NewProject("alice.near", "payments", uuid)
		p.CredsKeyID, p.Creds = id, blob
		return tx.PutProject(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := sealing.ParseKeyring(newKey(t))
	wrongID, _ := other.AddKey() // ids 1 and 2, neither the data's key
	for _, tc := range []struct {
		name, key string
		code      int
		want      string
	}{
		{"the right keyring", right, 0, "ok   the master key opens the data (key ids in use: 1; 1 sealed rows sampled)"},
		{"another key under the same id", newKey(t), 1, "FAIL the master key against the data: the master keyring opens none of the data sealed under key 1 (project credentials): it holds another key under that id"},
		{"a keyring without the data's id", strings.SplitN(wrongID.Export(), ",", 2)[1], 1, "FAIL the master key against the data: the master keyring opens none of the data already stored: the data needs key 1 (project credentials), which it lacks"},
	} {
		r := run(t, context.Background(), map[string]string{"COUNTERSIGN_DATABASE_URL": url, "COUNTERSIGN_MASTER_KEY": tc.key, "COUNTERSIGN_NEAR_RPC": "off"}, "doctor")
		if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%s: doctor %+v, want %q", tc.name, r, tc.want)
		}
	}
}
