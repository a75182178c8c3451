// The web inbox's entry point (issue 12). The page itself is built on this
// module; for now it exports the device's crypto, which the browser tests
// load from the shipped bundle and check against the contract's vectors and
// against the Go side.
export * from "./crypto";
