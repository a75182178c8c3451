package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"countersign/connectors/wasm"
	"countersign/connectors/wasm/abi"
	"countersign/connectors/wasm/wasmtest"
)

var ctx = context.Background()

// readManifest reads the manifest in dir.
func readManifest(t testing.TB, dir string) abi.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, wasm.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasm.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// connectorDir copies the connector in src to a new directory, its
// manifest changed by edit and its module by module (either may be nil),
// and returns the directory.
func connectorDir(t testing.TB, src string, edit func(*abi.Manifest), module func([]byte) []byte) string {
	t.Helper()
	m := readManifest(t, src)
	bin, err := os.ReadFile(filepath.Join(src, m.Module))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&m)
	}
	if module != nil {
		bin = module(bin)
	}
	dir := t.TempDir()
	writeConnector(t, dir, m, bin)
	return dir
}

func writeConnector(t testing.TB, dir string, m abi.Manifest, bin []byte) {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, wasm.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if bin != nil {
		if err := os.WriteFile(filepath.Join(dir, m.Module), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// withCustomSection is a module with one more custom section: the same
// code, other bytes.
func withCustomSection(bin []byte) []byte {
	out := append([]byte(nil), bin...)
	return append(out, 0x00, 0x07, 0x05, 'o', 't', 'h', 'e', 'r', 'x')
}

var hostile = wasmtest.TestModule("hostile")
