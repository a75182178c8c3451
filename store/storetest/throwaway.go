package storetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Where the tests find PostgreSQL (README "Start"):
//
//   - TEST_DATABASE_URL, when set (the value "throwaway" asks for a
//     throwaway server, below);
//   - else PostgreSQL at DefaultPostgresURL, when it answers;
//   - else, with CI unset, a throwaway server this test binary starts from
//     the machine's PostgreSQL binaries (initdb into a temporary directory, a
//     free loopback port, killed when the binary exits);
//   - else the tests that need PostgreSQL skip, said once in one line, and
//     the rest run on the embedded store. Under CI a missing PostgreSQL
//     fails the tests instead.
var where struct {
	once sync.Once
	url  string
	skip string
}

func resolve() {
	where.once.Do(func() {
		env := os.Getenv("TEST_DATABASE_URL")
		if env != "" && env != "throwaway" {
			where.url = env
			return
		}
		where.url = DefaultPostgresURL
		if env == "" && (answers(DefaultPostgresURL) || os.Getenv("CI") != "") {
			return
		}
		srv, err := StartPostgres("127.0.0.1")
		if err == nil {
			url := srv.URL
			where.url = url
			// Subprocesses a test starts (a crashed server's restart, say)
			// use the same server.
			os.Setenv("TEST_DATABASE_URL", url)
			fmt.Fprintf(os.Stderr, "storetest: no PostgreSQL at %s: this test binary started a throwaway one at %s\n", DefaultPostgresURL, url)
			return
		}
		if os.Getenv("CI") != "" {
			return // the tests fail, naming the database they could not reach
		}
		where.skip = fmt.Sprintf("no PostgreSQL at %s and none could be started (%v): tests that need PostgreSQL skip; set TEST_DATABASE_URL to run them", DefaultPostgresURL, err)
		fmt.Fprintln(os.Stderr, "storetest: "+where.skip)
	})
}

// needPostgres skips the test when this binary found no PostgreSQL.
func needPostgres(t interface{ Skip(...any) }) {
	resolve()
	if where.skip != "" {
		t.Skip(where.skip)
	}
}

func answers(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	conn.Close(ctx)
	return true
}

// postgresBin finds a directory holding initdb and postgres: on PATH, or
// Debian's /usr/lib/postgresql/<version>/bin, the newest first.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real // the directory of the real binaries holds the other tools
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb on PATH or in /usr/lib/postgresql/*/bin")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Server is a PostgreSQL server a test started.
type Server struct {
	// URL reaches it over TCP (when it listens on TCP at all).
	URL string
	// Port is its port; SocketDir holds its Unix socket.
	Port      string
	SocketDir string
	// Bin is the directory of the PostgreSQL binaries it runs from.
	Bin string
	// Stop kills it and removes its directory.
	Stop func()

	// start starts the postmaster on the cluster's data and port; mu
	// guards the one running now (nil while halted).
	start   func() (*exec.Cmd, error)
	mu      sync.Mutex
	running *exec.Cmd
}

// Halt stops the server as an operator's fast shutdown does (SIGINT to the
// postmaster, as `pg_ctl stop -m fast`): open connections are ended, the
// data is kept, and nothing answers on its port until Resume.
func (s *Server) Halt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return errors.New("the throwaway PostgreSQL is not running")
	}
	if err := s.running.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	_ = s.running.Wait() // it exits once its backends have
	s.running = nil
	return nil
}

// Resume starts a halted server again on the same data and port, and waits
// until it answers.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return errors.New("the throwaway PostgreSQL is running")
	}
	cmd, err := s.start()
	if err != nil {
		return err
	}
	s.running = cmd
	return s.await()
}

// await waits until the server answers on its socket.
func (s *Server) await() error {
	socket := "postgres://postgres@/postgres?host=" + s.SocketDir + "&port=" + s.Port
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if answers(socket) {
			return nil
		}
	}
	return errors.New("the throwaway PostgreSQL did not answer within 30 s")
}

// StartPostgres starts a PostgreSQL server of its own from the machine's
// binaries: a new cluster in a temporary directory (trust auth, user
// postgres), on a free port, listening on the given addresses ("" for its
// Unix socket only, as PostgreSQL's container image does while it
// initialises). Run as root it runs as the postgres account, as PostgreSQL
// requires. It waits until the server answers on its socket; the server is
// killed when this process exits, or by Stop, which also removes its
// directory.
func StartPostgres(listen string) (*Server, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	sweepThrowaways()
	dir, err := os.MkdirTemp("", "countersign-test-pg-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	var cred *account
	if os.Geteuid() == 0 {
		if cred, err = postgresAccount(); err != nil {
			return fail(err)
		}
		if err := os.Chown(dir, cred.uid, cred.gid); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	asAccount(initdb, cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(string(out))))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	start := func() (*exec.Cmd, error) {
		server := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", port, "-k", dir,
			"-c", "listen_addresses="+listen, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "max_connections=300")
		asAccount(server, cred)
		if err := startOwned(server); err != nil {
			return nil, fmt.Errorf("postgres: %v", err)
		}
		return server, nil
	}
	server, err := start()
	if err != nil {
		return fail(err)
	}
	srv := &Server{URL: "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable", Port: port, SocketDir: dir, Bin: bin,
		start: start, running: server}
	srv.Stop = func() {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.running != nil {
			_ = srv.running.Process.Kill()
			_ = srv.running.Wait()
			srv.running = nil
		}
		os.RemoveAll(dir)
	}
	if err := srv.await(); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

type account struct{ uid, gid int }

func postgresAccount() (*account, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root, and there is no postgres account to run PostgreSQL as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &account{uid, gid}, nil
}

// sweepThrowaways removes the directories of throwaway servers whose
// process is gone (a test binary that was killed leaves its directory).
func sweepThrowaways() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "countersign-test-pg-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid"))
		if err == nil {
			if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil && alive(pid) {
				continue
			}
		} else if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) < time.Hour {
			continue // being made now, perhaps
		}
		os.RemoveAll(d)
	}
}
