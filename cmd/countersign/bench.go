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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: countersign bench [--scale] [--quick] [--json] [--database URL] [--binary PATH]", fs.Args())
	}
	cfg := loadtest.Config{DatabaseURL: *database, Binary: *binary, Progress: a.stderr}
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
	if *scale {
		sizes := loadtest.DefaultScale()
		if *quick {
			sizes = loadtest.QuickScale()
		}
		rep, err := loadtest.RunScale(ctx, cfg, sizes)
		if err != nil {
			if ctx.Err() != nil && rep != nil && rep.Dropped {
				return errors.New("interrupted (the bench's database is dropped and its service stopped)")
			}
			if rep != nil && rep.ServiceLog.Lines > 0 {
				fmt.Fprintf(a.stderr, "the service logged %d warning or error line(s), the first: %s\n", rep.ServiceLog.Lines, rep.ServiceLog.First[0])
			}
			return err
		}
		return writeReport(a, *asJSON, rep)
	}
	rep, err := loadtest.Run(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil && rep != nil && rep.Dropped {
			return errors.New("interrupted (the bench's database is dropped and its service stopped)")
		}
		if rep != nil && rep.ServiceLog.Lines > 0 {
			fmt.Fprintf(a.stderr, "the service logged %d warning or error line(s), the first: %s\n", rep.ServiceLog.Lines, rep.ServiceLog.First[0])
		}
		return err
	}
	return writeReport(a, *asJSON, rep)
}

// writeReport prints a bench's report as a table, or as JSON.
func writeReport(a *app, asJSON bool, rep interface{ WriteTable(io.Writer) error }) error {
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(a.stdout)
}
