// Package loadtest is `countersign bench`: it measures the whole service
// under load and sets each figure beside a floor the same run measures of
// PostgreSQL itself.
//
// A run creates a throwaway database on a loopback PostgreSQL server
// (countersign_bench_<random hex>, dropped at the end, also when the run
// fails or is interrupted), measures the server's own commit rate on it,
// migrates it with the binary's migrate command and starts the binary's
// serve as a child process (NEAR RPC off, a fresh master key, the agent-call
// limit raised). Agents are made with the operator commands and call over
// HTTP through the Go client; owners are NEAR-implicit accounts whose
// wallets are held here, signing in, approving and watching their event
// streams through the device and client packages, from several loopback
// source addresses (sign-ins are limited per address). Every phase is
// bounded in count and in time.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is what a run needs.
type Config struct {
	// DatabaseURL names the PostgreSQL server (postgres://…, a loopback
	// host). Its database is used only to create and drop the bench's own.
	DatabaseURL string
	// Binary is the countersign executable run for migrate, keys, agent,
	// project and serve.
	Binary string
	// Sizes are the phases' counts and caps (zero: Default()).
	Sizes Sizes
	// Progress, when set, is told what the run is doing, a line at a time.
	Progress io.Writer
	// ProfileDir, when set, is where the service's profiles are written
	// (the service then serves Go's profiler beside /metrics, on
	// loopback): p1-writes.cpu.pprof over P1's loop, p2-approvals.cpu.pprof
	// for as long from P2's first round on (its approvals, their answer
	// runs and the next rounds' listings), p7-streams.heap.pprof with P7's
	// tasks waiting and streams open.
	ProfileDir string
}

// Sizes are the counts and time caps of the phases.
type Sizes struct {
	// FloorTime is how long the 16-connection commit loop runs;
	// FloorConns how many connections it uses; FloorSamples how many
	// single commits are timed on one connection.
	FloorTime    time.Duration
	FloorConns   int
	FloorSamples int
	// Owners is the number of owners of P1 and P2, each with an agent of
	// its own granted its probe project.
	Owners int
	// P1Time caps P1's loop, P1MaxPairs its guess_start/task_cancel pairs.
	P1Time     time.Duration
	P1MaxPairs int
	// P2Approvals is P2's approvals in total.
	P2Approvals int
	// P3Samples is P3's approvals timed one at a time (at most 50: one
	// owner's writes are limited to 60 at once).
	P3Samples int
	// P7Owners is P7's owners; each has P7TasksPerAgent tasks waiting from
	// each of two agents (at most 10: the per-preparer limit) and one
	// event stream open.
	P7Owners        int
	P7TasksPerAgent int
	// PhaseTime caps every other phase (P2, P3, P7 and the setup).
	PhaseTime time.Duration
}

// Default is the full run: about three minutes on two cores.
func Default() Sizes {
	return Sizes{
		FloorTime: 5 * time.Second, FloorConns: 16, FloorSamples: 200,
		Owners: 16, P1Time: 10 * time.Second, P1MaxPairs: 100_000,
		P2Approvals: 480, P3Samples: 50,
		P7Owners: 500, P7TasksPerAgent: 10,
		PhaseTime: 90 * time.Second,
	}
}

// Quick is a run of tiny sizes, a few seconds, for tests.
func Quick() Sizes {
	return Sizes{
		FloorTime: 500 * time.Millisecond, FloorConns: 4, FloorSamples: 20,
		Owners: 2, P1Time: time.Second, P1MaxPairs: 200,
		P2Approvals: 6, P3Samples: 3,
		P7Owners: 4, P7TasksPerAgent: 2,
		PhaseTime: 30 * time.Second,
	}
}

func (s Sizes) check() error {
	switch {
	case s.FloorTime <= 0 || s.FloorConns < 1 || s.FloorSamples < 1:
		return errors.New("the floor needs a time, a connection and a sample")
	case s.Owners < 1 || s.P1Time <= 0 || s.P1MaxPairs < 1:
		return errors.New("P1 needs an owner, a time and a pair")
	case s.P2Approvals < 1 || s.P3Samples < 1 || s.P3Samples > 50:
		return errors.New("P2 needs an approval and P3 1 to 50 samples")
	case s.P7Owners < 1 || s.P7TasksPerAgent < 1 || s.P7TasksPerAgent > 10:
		return errors.New("P7 needs an owner and 1 to 10 tasks per agent")
	case s.PhaseTime <= 0:
		return errors.New("every phase needs a time cap")
	}
	return nil
}

// bench is one run.
type bench struct {
	cfg   Config
	sizes Sizes
	svc   *service
	// dir holds the run's scratch files (the policy file).
	dir   string
	addrs *addresses
	// t0 is when the run began; progress lines say how long ago.
	t0 time.Time
	// recipient is what owners sign for ("": the service's host and port).
	recipient string
	// prof takes the service's profiles (nil: none asked for).
	prof *profiles
	// dbURL is the throwaway database's.
	dbURL string
	// wal reads the server's WAL position (nil: not read).
	wal *pgxpool.Pool
}

func (b *bench) progress(format string, args ...any) {
	if b.cfg.Progress != nil {
		fmt.Fprintf(b.cfg.Progress, "bench %5.1fs: %s\n", time.Since(b.t0).Seconds(), fmt.Sprintf(format, args...))
	}
}

// Run runs the bench and returns its report (on an error, what it measured
// until then). The throwaway database and the child service are gone when it
// returns, whatever happened.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	sizes := cfg.Sizes
	if sizes == (Sizes{}) {
		sizes = Default()
	}
	if err := sizes.check(); err != nil {
		return nil, err
	}
	if cfg.Binary == "" {
		return nil, errors.New("the countersign binary to run is not known")
	}
	server, err := checkURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, sizes: sizes, addrs: newAddresses(), t0: time.Now()}
	defer b.addrs.close()
	if b.dir, err = os.MkdirTemp("", "countersign-bench-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(b.dir)

	rep = &Report{Started: time.Now().UTC(), Cores: runtime.NumCPU(), Quick: sizes == Quick()}
	db, err := createDatabase(ctx, server)
	if err != nil {
		return rep, err
	}
	rep.Database, b.dbURL = db.name, db.url
	b.progress("created the database %s", db.name)
	defer func() {
		if derr := db.drop(); derr != nil {
			err = errors.Join(err, derr)
		} else {
			rep.Dropped = true
			b.progress("dropped the database %s", db.name)
		}
	}()

	b.progress("floor: %d connections committing 4 KiB rows for %s, then %d single commits", sizes.FloorConns, sizes.FloorTime, sizes.FloorSamples)
	if rep.Floor, err = measureFloor(ctx, db.url, sizes); err != nil {
		return rep, fmt.Errorf("the PostgreSQL floor: %w", err)
	}

	if b.wal, err = openPool(ctx, db.url, 1); err != nil {
		return rep, err
	}
	defer b.wal.Close()

	if b.svc, err = startService(ctx, cfg.Binary, db.url, cfg.ProfileDir != "", b.progress); err != nil {
		return rep, err
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return rep, fmt.Errorf("the profiles' directory: %w", err)
		}
		b.prof = &profiles{dir: cfg.ProfileDir, base: strings.TrimSuffix(b.svc.metrics, "/metrics")}
		defer func() { rep.Profiles, rep.ProfileProblems = b.prof.written, b.prof.failed }()
	}
	defer func() {
		if serr := b.svc.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		rep.ServiceLog = b.svc.log.errors()
	}()
	rep.IdleRSS, _ = rss(b.svc.pid())

	if rep.P1, rep.P2, err = b.writesAndApprovals(ctx); err != nil {
		return rep, err
	}
	if rep.P3, err = b.latency(ctx); err != nil {
		return rep, err
	}
	if rep.P7, err = b.memory(ctx); err != nil {
		return rep, err
	}
	rep.Figures = rep.figures()
	return rep, nil
}
