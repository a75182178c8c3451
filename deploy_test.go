package countersign_test

// The compose file's checks, run for real: PostgreSQL's health check must
// not pass while the server answers on its socket only (as the postgres
// image's first start does while it initialises), and must pass once it
// accepts TCP connections, which is what migrate needs.

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"countersign/store/storetest"
)

// composeCheck is the postgres service's health-check command.
func composeCheck(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`test: \["CMD-SHELL", "(pg_isready[^"]*)"\]`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("docker-compose.yml has no pg_isready health check")
	}
	return m[1]
}

func TestComposeHealthCheckWaitsForTCP(t *testing.T) {
	t.Parallel()
	check := composeCheck(t)
	for _, want := range []string{"-h 127.0.0.1", "-p 5432"} {
		if !strings.Contains(check, want) {
			t.Fatalf("the health check %q does not ask over TCP (%s)", check, want)
		}
	}
	ready := func(s *storetest.Server) bool {
		// The compose file's command, with this server's port and user.
		args := strings.Fields(strings.NewReplacer("-p 5432", "-p "+s.Port, "-U countersign", "-U postgres", "-d countersign", "-d postgres").Replace(check))
		cmd := exec.Command(tool(t, s, args[0]), args[1:]...)
		cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=2")
		return cmd.Run() == nil
	}
	socketOnly, err := storetest.StartPostgres("")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer socketOnly.Stop()
	if ready(socketOnly) {
		t.Error("the health check passes while PostgreSQL answers on its socket only")
	}
	if err := exec.Command(tool(t, socketOnly, "pg_isready"), "-h", socketOnly.SocketDir, "-p", socketOnly.Port, "-U", "postgres").Run(); err != nil {
		t.Errorf("the socket-only server does not answer on its socket, so the check above proves nothing: %v", err)
	}
	tcp, err := storetest.StartPostgres("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Stop()
	if !ready(tcp) {
		t.Error("the health check fails on a server that accepts TCP connections")
	}
}

// tool is one of PostgreSQL's programs: beside the server's, or on PATH.
func tool(t *testing.T, s *storetest.Server, name string) string {
	t.Helper()
	if _, err := os.Stat(s.Bin + "/" + name); err == nil {
		return s.Bin + "/" + name
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("no %s beside %s or on PATH", name, s.Bin)
	}
	return p
}
