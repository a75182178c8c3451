// Package faults holds tests only: a fault campaign against the real
// binary. The test binary builds countersign once; each test runs
// `countersign serve` as a subprocess on PostgreSQL, with owners signing in
// and approving over
// loopback HTTP and agents calling the GitHub connector against its fake,
// whose comments are the side effects counted. They kill the server with
// SIGKILL mid-approval and restart it, hold about 200 mixed requests a
// second against one server and against two sharing a database, and stop
// and start a throwaway PostgreSQL under load; each proves that no approval
// is lost or carried out twice and that every task ends in a terminal
// state.
package faults
