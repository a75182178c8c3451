// Package wasmtest loads WebAssembly connectors for tests: the examples
// and the test modules by name, on hosts that share one compilation cache
// across test binaries and runs (a Go module takes seconds to compile;
// from the cache, milliseconds).
package wasmtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"countersign/connectors/wasm"
)

// dir is this package's directory.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Example is the directory of one of the examples (probe, todo).
func Example(name string) string { return filepath.Join(dir(), "..", "examples", name) }

// TestModule is the directory of one of the test modules (hostile).
func TestModule(name string) string { return filepath.Join(dir(), "..", "testdata", name) }

// CacheDir is where tests keep compiled modules: the user's cache
// directory, or "" (no cache kept) when there is none.
func CacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "countersign", "wasm-test")
}

// Host is a host with opts, its compilation cache CacheDir's unless opts
// names one, closed when t ends.
func Host(t testing.TB, opts wasm.Options) *wasm.Host {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = CacheDir()
	}
	ctx := context.Background()
	h, err := wasm.NewHost(ctx, opts)
	if err != nil {
		t.Fatalf("wasmtest: %v", err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	return h
}

// Load loads the connector in dir on a new host with opts.
func Load(t testing.TB, dir string, opts wasm.Options) *wasm.Module {
	t.Helper()
	m, err := Host(t, opts).LoadDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("wasmtest: %v", err)
	}
	return m
}
