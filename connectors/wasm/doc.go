// Package wasm runs connectors that are WebAssembly modules (SPEC §14,
// out-of-process connectors), so that a connector can be added to a
// service without recompiling it.
//
// A connector is a directory: manifest.json (abi.Manifest: name, version,
// operations with their kinds, prices, descriptions, argument and result
// schemas and examples, policy keys, the hosts the module may reach and
// how the project's credentials go with its requests) and the module it
// names, a WASI preview 1 reactor speaking the ABI of package abi. A
// [Host] loads every connector under a directory ([Host.Load], serve's
// CONNECTORS_DIR): the manifest read strictly, the connector it declares
// validated with every schema compiled and every example checked as the
// service checks them, the module compiled and held to the ABI, and one
// instance asked which operations it serves (exactly the manifest's). Each
// loaded [Module] is a connectors.Connector whose build is
// name@version+<first 12 hex of the module's SHA-256>, so the rest of the
// service — the catalogue, argument schemas, tasks, receipts, the OpenAPI
// document and the MCP tools — does not know it from a compiled-in one.
//
// Every call runs in a fresh instance of its module, with at most
// [MemoryLimit] of memory and within its operation's compute limit, and no
// filesystem, environment, arguments or network: the host's clocks and
// random source, http_do and the platform's operations (open a task, count
// a write or a payment) are all it has. A trap, an exit, an exhausted
// memory or an overrun ends that instance only, and the agent reads an
// internal_error naming which. http_do reaches only the manifest's hosts,
// over https, through the egress guard; the host attaches the project's
// credentials to each request as the manifest's templates say and redacts
// them from the answer, so the module never holds them.
//
// [Host.Check] is what `countersign connector check DIR` runs: the load,
// then a dry prepare of each example.
//
// The choices where the contract is silent are in docs/decisions.md
// (WebAssembly connectors).
//
// go generate here rebuilds every module of the repository (the examples
// and the test modules) with the standard toolchain; a module links the
// guest SDK and the domain package, so a change there changes the modules
// too, and TestCommittedModulesAreWhatTheSourcesBuild says so.
package wasm

//go:generate go generate ./examples/probe ./examples/todo ./testdata/hostile
