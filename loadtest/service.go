package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// service is the service under load: the binary's serve, a child process.
type service struct {
	binary string
	env    []string
	cmd    *exec.Cmd
	base   string
	// metrics is its /metrics URL, when it serves one.
	metrics string
	log     *logTail
	exited  chan struct{}
}

// serviceEnv is the environment of every command the bench runs: this
// process's, without its COUNTERSIGN_* settings, plus the bench's.
func serviceEnv(dbURL, masterKey string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COUNTERSIGN_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"COUNTERSIGN_DATABASE_URL="+dbURL,
		"COUNTERSIGN_NEAR_RPC=off",
		// An agent's calls are limited per key; the bench's agents call
		// as fast as the service answers.
		"COUNTERSIGN_AGENT_CALLS_PER_MINUTE=1000000",
		"COUNTERSIGN_LOG_LEVEL=warn",
	)
	if masterKey != "" {
		env = append(env, "COUNTERSIGN_MASTER_KEY="+masterKey)
	}
	return env
}

// command runs one of the binary's commands to its end and returns what it
// printed on standard output.
func command(ctx context.Context, binary string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("countersign %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

var (
	listening        = regexp.MustCompile(`listening on (http://\S+)`)
	metricsListening = regexp.MustCompile(`metrics on (http://\S+/metrics)`)
)

// startService migrates the database, makes a master key and starts serve
// on a free loopback port, returning once it listens.
func startService(ctx context.Context, binary, dbURL string, profiler bool, progress func(string, ...any)) (*service, error) {
	env, err := prepareService(ctx, binary, dbURL)
	if err != nil {
		return nil, err
	}
	if profiler {
		// Go's profiler is served beside /metrics, on loopback.
		env = append(env, "COUNTERSIGN_PPROF=true")
	}
	// /metrics, on loopback, tells what the lanes did in each phase.
	return launch(ctx, binary, env, true, progress)
}

// prepareService migrates the database and makes a master key: the
// environment of every serve process on it.
func prepareService(ctx context.Context, binary, dbURL string) ([]string, error) {
	env := serviceEnv(dbURL, "")
	if _, err := command(ctx, binary, env, "migrate"); err != nil {
		return nil, err
	}
	key, err := command(ctx, binary, env, "keys", "new")
	if err != nil {
		return nil, err
	}
	return serviceEnv(dbURL, strings.TrimSpace(key)), nil
}

// launch starts one serve process with env on a free loopback port (and,
// when metrics is set, its /metrics on another), returning once it listens.
func launch(ctx context.Context, binary string, env []string, metrics bool, progress func(string, ...any)) (*service, error) {
	s := &service{binary: binary, env: env, log: &logTail{}, exited: make(chan struct{})}
	metricsAddr := "off"
	if metrics {
		metricsAddr = "127.0.0.1:0"
	}
	s.cmd = exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", metricsAddr)
	s.cmd.Env = s.env
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s serve: %w", binary, err)
	}
	addr := make(chan string, 1)
	metricsURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			if m := metricsListening.FindStringSubmatch(line); m != nil {
				select {
				case metricsURL <- m[1]:
				default:
				}
			}
			s.log.add(line)
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	timeout := time.After(30 * time.Second)
	for s.base == "" || (metrics && s.metrics == "") {
		select {
		case s.base = <-addr:
		case s.metrics = <-metricsURL:
		case <-s.exited:
			return nil, fmt.Errorf("the service ended before it listened: %s", s.log.last())
		case <-timeout:
			_ = s.stop()
			return nil, errors.New("the service did not listen within 30 s: " + s.log.last())
		case <-ctx.Done():
			_ = s.stop()
			return nil, ctx.Err()
		}
	}
	if metrics {
		progress("the service (pid %d) listens on %s, its metrics on %s", s.cmd.Process.Pid, s.base, s.metrics)
	} else {
		progress("the service (pid %d) listens on %s", s.cmd.Process.Pid, s.base)
	}
	return s, nil
}

func (s *service) pid() string { return strconv.Itoa(s.cmd.Process.Pid) }

// run runs an operator command against the service's database.
func (s *service) run(ctx context.Context, args ...string) (string, error) {
	return command(ctx, s.binary, s.env, args...)
}

// stop asks the service to shut down, and kills it if it has not within
// ten seconds.
func (s *service) stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("the service did not shut down within 10 s of SIGTERM and was killed")
	}
}

// logTail keeps the service's log lines at warning level or above: the
// first few and a count.
type logTail struct {
	mu    sync.Mutex
	lines []string
	count int
	final string
}

const keptLogLines = 5

func (t *logTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.final = line
	if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
		t.count++
		if len(t.lines) < keptLogLines {
			t.lines = append(t.lines, line)
		}
	}
}

// last is the last line written.
func (t *logTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.final
}

// errors is what the log says went wrong.
func (t *logTail) errors() ServiceLog {
	t.mu.Lock()
	defer t.mu.Unlock()
	return ServiceLog{Lines: t.count, First: append([]string(nil), t.lines...)}
}

// ServiceLog is the service's warnings and errors during the run: how many
// lines, and the first few.
type ServiceLog struct {
	Lines int      `json:"lines"`
	First []string `json:"first,omitempty"`
}

// add counts another service's log in, keeping the first few lines.
func (l *ServiceLog) add(o ServiceLog) {
	l.Lines += o.Lines
	for _, line := range o.First {
		if len(l.First) < keptLogLines {
			l.First = append(l.First, line)
		}
	}
}

// readMetrics reads the values of unlabelled series from a /metrics URL, in
// the order named (0 for one it does not serve).
func readMetrics(ctx context.Context, url string, names ...string) ([]float64, error) {
	vals := make([]float64, len(names))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return vals, err
	}
	resp, err := agentHTTP.Do(req)
	if err != nil {
		return vals, fmt.Errorf("the service's /metrics: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if i := slices.Index(names, name); ok && i >= 0 {
			if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
				vals[i] = f
			}
		}
	}
	return vals, sc.Err()
}
