package probe_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"countersign/connectors"
	"countersign/connectors/probe"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/wasmtest"
)

// asModule, set in the environment, makes every test of this package run
// against the WebAssembly build of the probe (connectors/wasm/examples/
// probe: this package's source with one import changed) instead of the
// compiled-in one. TestAsModule sets it.
const asModule = "COUNTERSIGN_PROBE_AS_MODULE"

var module struct {
	once sync.Once
	m    *wasm.Module
	err  error
}

// newProbe is the connector under test: probe.New(), or its WebAssembly
// build when asModule is set.
func newProbe(t testing.TB) *connectors.Connector {
	t.Helper()
	if os.Getenv(asModule) == "" {
		return probe.New()
	}
	module.once.Do(func() {
		ctx := context.Background()
		h, err := wasm.NewHost(ctx, wasm.Options{CacheDir: wasmtest.CacheDir()})
		if err != nil {
			module.err = err
			return
		}
		module.m, module.err = h.LoadDir(ctx, wasmtest.Example("probe"))
	})
	if module.err != nil {
		t.Fatal(module.err)
	}
	return module.m.Connector
}

// TestAsModule runs this package's tests again against the WebAssembly
// build of the probe: the same game, through the same harness, passes the
// same tests (SPEC §14: a module follows the compiled-in contract).
func TestAsModule(t *testing.T) {
	if os.Getenv(asModule) != "" {
		t.Skip("running as the module already")
	}
	if testing.Short() {
		t.Skip("runs the package's tests again against the module")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run", "^(Test|Fuzz)", "-test.skip", "^TestAsModule$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), asModule+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests against the module failed: %v\n%s", err, out)
	}
	passed := strings.Count(string(out), "--- PASS: Test")
	if passed < 15 || !strings.Contains(string(out), "--- PASS: TestWholeGameByBinarySearch") {
		t.Fatalf("only %d tests passed against the module:\n%s", passed, out)
	}
	t.Logf("%d tests and subtests passed against the module", passed)
}
