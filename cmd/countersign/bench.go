package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"countersign/loadtest"
)

// runBench is `countersign bench`: the whole service under load against a
// throwaway database on a loopback PostgreSQL (package loadtest).
func runBench(ctx context.Context, a *app, args []string) error {
	fs := a.flags("bench")
	database := fs.String("database", "", "the PostgreSQL server, a postgres:// URL on a loopback host (default COUNTERSIGN_DATABASE_URL); the bench creates and drops a database of its own there")
	quick := fs.Bool("quick", false, "tiny sizes: a few seconds, for tests")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	binary := fs.String("binary", "", "the countersign binary to run as the service (default this one)")
	scale := fs.Bool("scale", false, "the memory ladder instead: owners signed in, tasks waiting and event streams open at growing counts (5,000 owners, up to 100,000 tasks and 5,000 streams), the service's memory read at each")
	profile := fs.String("profile", "", "a directory to write the service's CPU profiles of P1 and P2 and its heap profile at P7 to (go tool pprof reads them); the service then serves Go's profiler beside /metrics, on loopback")
	replicas := fs.Bool("replicas", false, "rounds against one, two, three and again one serve process on one database instead: their writes/s together ÷ one process's, and approvals sent to one process with the owner's event stream on another")
	paired := fs.String("paired", "", "P3, P1 and P2 alone on two services side by side instead: the --binary (A) and this other binary (B), each on a throwaway database of its own, their turns, P1's slices and P2's rounds timed in alternation; each one's median, writes/s and approvals done/s, B − A turn by turn and B ÷ A slice by slice and round by round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: countersign bench [--scale | --replicas | --paired OTHER] [--quick] [--json] [--profile DIR] [--database URL] [--binary PATH]", fs.Args())
	}
	if n := btoi(*scale) + btoi(*replicas) + btoi(*paired != ""); n > 1 {
		return errors.New("--scale, --replicas and --paired are three benches: run one at a time")
	}
	if *profile != "" && (*scale || *replicas || *paired != "") {
		return errors.New("--profile profiles the default bench's phases: run it without --scale, --replicas or --paired")
	}
	cfg := loadtest.Config{DatabaseURL: *database, Binary: *binary, Progress: a.stderr, ProfileDir: *profile}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = a.getenv("COUNTERSIGN_DATABASE_URL")
	}
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot find this binary to run the service with (--binary names one): %v", err)
		}
		cfg.Binary = exe
	}
	if *quick {
		cfg.Sizes = loadtest.Quick()
	}
	// A reader of the output that goes away (| head) must not kill the
	// bench before it drops its database: a broken pipe becomes a write
	// error instead of SIGPIPE.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	switch {
	case *scale:
		sizes := loadtest.DefaultScale()
		if *quick {
			sizes = loadtest.QuickScale()
		}
		rep, err := loadtest.RunScale(ctx, cfg, sizes)
		if rep != nil {
			return benchDone(ctx, a, *asJSON, rep, rep.Dropped, rep.ServiceLog, err)
		}
		return err
	case *paired != "":
		sizes := loadtest.DefaultPaired()
		if *quick {
			sizes = loadtest.QuickPaired()
		}
		rep, err := loadtest.RunPaired(ctx, cfg, *paired, sizes)
		if rep != nil {
			return benchDone(ctx, a, *asJSON, rep, rep.Dropped, rep.ServiceLog, err)
		}
		return err
	case *replicas:
		sizes := loadtest.DefaultReplicas()
		if *quick {
			sizes = loadtest.QuickReplicas()
		}
		rep, err := loadtest.RunReplicas(ctx, cfg, sizes)
		if rep != nil {
			return benchDone(ctx, a, *asJSON, rep, rep.Dropped, rep.ServiceLog, err)
		}
		return err
	}
	rep, err := loadtest.Run(ctx, cfg)
	if rep != nil {
		return benchDone(ctx, a, *asJSON, rep, rep.Dropped, rep.ServiceLog, err)
	}
	return err
}

// benchDone prints a bench's report, or says why it failed.
func benchDone(ctx context.Context, a *app, asJSON bool, rep interface{ WriteTable(io.Writer) error }, dropped bool, log loadtest.ServiceLog, err error) error {
	if err != nil {
		if ctx.Err() != nil && dropped {
			return errors.New("interrupted (the bench's database is dropped and its service stopped)")
		}
		if log.Lines > 0 {
			fmt.Fprintf(a.stderr, "the service logged %d warning or error line(s), the first: %s\n", log.Lines, log.First[0])
		}
		return err
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(a.stdout)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
