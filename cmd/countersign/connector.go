package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"countersign/config"
	"countersign/connectors"
	"countersign/connectors/wasm"
	"countersign/egress"
)

func init() {
	commands["connector"] = command{"WebAssembly connectors: connector check DIR (validate a module and its manifest before deploying)", runConnector}
}

func runConnector(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		return errors.New("usage: countersign connector check DIR")
	}
	fset := a.flags("connector check")
	quiet := fset.Bool("quiet", false, "print only what fails")
	cache := fset.String("cache", a.getenv("COUNTERSIGN_CONNECTORS_CACHE"), "directory of compiled modules kept across runs (COUNTERSIGN_CONNECTORS_CACHE)")
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return errors.New("usage: countersign connector check DIR (the directory holding manifest.json and its module)")
	}
	host, err := wasm.NewHost(ctx, wasm.Options{Stderr: a.stderr, CacheDir: *cache})
	if err != nil {
		return err
	}
	defer host.Close(context.Background())
	findings, _ := host.Check(ctx, fset.Arg(0))
	failed := 0
	for _, f := range findings {
		mark := "ok  "
		if !f.OK {
			mark, failed = "FAIL", failed+1
		} else if *quiet {
			continue
		}
		fmt.Fprintf(a.stdout, "%s %s: %s\n", mark, f.What, f.Note)
	}
	if failed > 0 {
		return fmt.Errorf("%s does not pass: %d of %d checks failed", fset.Arg(0), failed, len(findings))
	}
	fmt.Fprintf(a.stdout, "%s passes: %d checks\n", fset.Arg(0), len(findings))
	return nil
}

// loadModules loads the WebAssembly connectors under the settings'
// CONNECTORS_DIR onto a host, telling stderr what each one is; private
// hosts only for serve --dev. Compiled modules are kept in
// CONNECTORS_CACHE, by default DATA_DIR/connectors-cache when it can be
// made (compiling takes seconds a module). The host is closed with close.
func loadModules(ctx context.Context, cfg *config.Config, dev bool, stderr io.Writer) ([]*wasm.Module, func(), error) {
	dir, cache := cfg.ConnectorsDir, cfg.ConnectorsCache
	if cache == "" {
		cache = filepath.Join(cfg.DataDir, "connectors-cache")
		if err := os.MkdirAll(cache, 0o700); err != nil {
			fmt.Fprintf(stderr, "connectors: no cache of compiled modules (%s); set COUNTERSIGN_CONNECTORS_CACHE to a directory this service may write\n", oneLine(err))
			cache = ""
		}
	}
	host, err := wasm.NewHost(ctx, wasm.Options{Egress: egress.Options{AllowPrivate: dev}, CacheDir: cache})
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	mods, err := host.Load(ctx, dir)
	if err != nil {
		_ = host.Close(context.Background())
		return nil, nil, fmt.Errorf("CONNECTORS_DIR: %s", oneLine(err))
	}
	for _, m := range mods {
		fmt.Fprintf(stderr, "connector %s loaded from %s (%d KiB, compiled in %s)\n", m.Build, m.Dir, m.Size>>10, m.Compile.Round(time.Millisecond))
	}
	if len(mods) > 0 {
		fmt.Fprintf(stderr, "%d WebAssembly connectors loaded in %s\n", len(mods), time.Since(start).Round(time.Millisecond))
	}
	return mods, func() { _ = host.Close(context.Background()) }, nil
}

// withConnectors adds connectors to a catalogue, refusing a name it holds.
func withConnectors(cat connectors.Catalogue, cs ...*connectors.Connector) (connectors.Catalogue, error) {
	out := connectors.Catalogue{}
	for n, c := range cat {
		out[n] = c
	}
	for _, c := range cs {
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("CONNECTORS_DIR: connector %s is named as a connector this service already runs", c.Name)
		}
		out[c.Name] = c
	}
	return out, nil
}
