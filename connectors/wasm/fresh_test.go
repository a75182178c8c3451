package wasm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"countersign/connectors/wasm/wasmtest"
)

// buildFlags are how go generate builds every module in this repository:
// a WASI reactor, reproducible (no paths, no version control stamp, no
// build id, which would change with any edit of a source, comments too).
var buildFlags = []string{"-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-ldflags=-s -buildid="}

// TestCommittedModulesAreWhatTheSourcesBuild: each committed module and
// manifest is exactly what its source builds with the standard toolchain
// (go generate in its directory), so go build and go test need no
// generate step and a review of the source is a review of the module.
func TestCommittedModulesAreWhatTheSourcesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds each module with the Go toolchain")
	}
	t.Parallel()
	for _, dir := range []string{wasmtest.Example("probe"), wasmtest.Example("todo"), wasmtest.TestModule("hostile")} {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			module := name + ".wasm"
			want := "//go:generate sh -c \"GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags='-s -buildid=' -o " +
				module + " . && go run . " + module + " > manifest.json\""
			if !generates(t, dir, want) {
				t.Fatalf("no Go file in %s says %s", dir, want)
			}
			out := filepath.Join(t.TempDir(), module)
			build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", out, ".")...)
			build.Dir = dir
			build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=", "GOWASM=")
			if b, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, b)
			}
			built, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(filepath.Join(dir, module))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(built, committed) {
				t.Errorf("%s is not what its source builds (%d bytes built, %d committed): run go generate ./connectors/wasm and commit the modules", module, len(built), len(committed))
			}
			run := exec.Command("go", "run", ".", module)
			run.Dir = dir
			run.Env = append(os.Environ(), "GOFLAGS=")
			manifest, err := run.Output()
			if err != nil {
				t.Fatalf("go run: %v", err)
			}
			if committed, _ := os.ReadFile(filepath.Join(dir, "manifest.json")); !bytes.Equal(manifest, committed) {
				t.Errorf("%s's manifest.json is not what its source declares: run go generate ./connectors/wasm and commit it", name)
			}
		})
	}
}

// generates reports whether a Go file in dir holds the line.
func generates(t *testing.T, dir, line string) bool {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == line {
				return true
			}
		}
	}
	return false
}

// TestProbeModuleIsTheProbe: the probe module's game is the compiled-in
// probe's source with one import changed, so the two cannot drift apart.
func TestProbeModuleIsTheProbe(t *testing.T) {
	t.Parallel()
	compiled, err := os.ReadFile(filepath.Join(wasmtest.Example("probe"), "..", "..", "..", "probe", "probe.go"))
	if err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(filepath.Join(wasmtest.Example("probe"), "probe.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(string(compiled), "\npackage probe\n", "\npackage main\n", 1),
		"\t\"countersign/connectors\"\n", "\tconnectors \"countersign/connectors/wasm/guest\"\n", 1)
	if string(module) != want {
		t.Fatal("connectors/wasm/examples/probe/probe.go is not connectors/probe/probe.go with package main and the guest SDK imported as connectors: copy it again and run go generate there")
	}
}
