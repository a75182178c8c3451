//go:build !wasip1

package guest

import (
	"fmt"
	"os"
	"path/filepath"
)

// Main, run natively (go run .), prints the manifest of the registered
// connector, naming the module <name>.wasm, or the file the first argument
// names.
func Main() {
	if registered == nil {
		fmt.Fprintln(os.Stderr, "guest: no connector is registered")
		os.Exit(1)
	}
	module := registered.Name + ".wasm"
	if len(os.Args) > 1 {
		module = filepath.Base(os.Args[1])
	}
	m, err := registered.Manifest(module)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guest:", err)
		os.Exit(1)
	}
	b, err := ManifestJSON(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guest:", err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
