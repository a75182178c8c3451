// Command probe is the guessing game of SPEC §14 as a WebAssembly
// connector: probe.go is the compiled-in probe's source with one import
// changed (a test holds them equal), served by the guest SDK. The module
// is named probe-wasm, so that it may run beside the compiled-in probe.
//
// go generate builds probe.wasm with the standard toolchain and writes its
// manifest; both are committed, and a test holds them to what this
// source builds.
package main

import "countersign/connectors/wasm/guest"

//go:generate sh -c "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags='-s -buildid=' -o probe.wasm . && go run . probe.wasm > manifest.json"

func init() {
	c := New()
	c.Name = "probe-wasm"
	guest.Register(c)
}

func main() { guest.Main() }
