// The web inbox's entry point (issue 12). The page itself is built on these
// modules; for now the entry exports the device's crypto and its kept key,
// which the browser tests load from the shipped bundle and check against the
// contract's vectors and against the Go side.
export * from "./crypto";
export * from "./devicekey";
