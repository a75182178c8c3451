// Package guest is the SDK for writing a connector as a WebAssembly module
// in Go (SPEC §14, out-of-process connectors). It mirrors the compiled-in
// SDK, package connectors: the same Connector and Operation declarations,
// the same Call and AnswerCall with Decode, OpenTask, Decide, Reserve,
// Spend, Next and Notice, the same TaskSpec, Report, Refuse and Refused. A
// connector's logic moves from one to the other with only its import
// changed:
//
//	import connectors "countersign/connectors/wasm/guest"
//
// What differs is what a module cannot have. A Call carries no
// credentials: the module names the hosts it reaches (Connector.Hosts) and
// how the project's credentials go with its requests
// (Connector.Credentials), and the host attaches them to each request made
// with [Fetch] — the module never sees them. A module has no network but
// [Fetch], no files and no environment; its time and randomness are the
// host's (time.Now, crypto/rand work as usual). A policy is read, not
// parsed: [Policy] holds what the host's reading of it decides for each
// write, and the connector's own keys; a WebAssembly connector declares no
// rule conditions.
//
// # Building a module
//
// Declare the connector and register it in an init function (a module is
// a reactor: main never runs in it), then build with the standard
// toolchain:
//
//	func init() { guest.Register(New()) }
//	func main() { guest.Main() }
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o name.wasm .
//	go run . > manifest.json
//
// Run natively, Main prints the connector's manifest, the declaration the
// service reads beside the module. `countersign connector check DIR`
// checks the pair as the service will.
package guest
