// Package connectortest plays the platform for a connector's unit tests, so
// that a connector that passes here behaves the same in the service.
//
// A [Harness] stands where the service stands. Building one fails when the
// connector does not validate, when an operation's argument or result
// schema does not compile, or when one of its examples does not fit it
// (package argschema, as the service compiles them). [Harness.Call] takes
// an agent's call body: it reads the operation the body names, checks the
// arguments against the operation's schema (a refusal names the member;
// nothing is charged), refuses a write when the project's policy cannot be
// applied, charges the price, runs the operation under its compute limit,
// and answers with the output as JSON or with the refusal. A run refused
// for its own arguments (invalid_request, display_invalid) is not charged,
// unless it opened a task or did its write (SPEC §14).
//
// Every answer is held to what the operation declares: an output to its
// Result, an awaiting_owner or notified answer to the platform's schema of
// it, a refusal to the refusal's, and an answer run's report to the answer
// operation's Result. One that does not fit fails the test: a connector
// whose answers drift from its declarations fails its own tests.
// [CheckResults] tells which operations declare no result yet.
//
// The [connectors.Platform] each run is given opens tasks
// under the rules the service applies whatever a connector asks: the
// connector declares tasks; kind and answer operation agree; the answer
// operation is one of the connector's answer operations and takes what the
// kind supplies; what the task shows and its files pass
// [countersign.ValidateDisplay] and [countersign.ValidateFiles]; it waits at most 24
// hours; its sealed state is at most 256 KiB; a run opens at most five tasks;
// a thread is continued only by its own preparer for its own owner. Each task
// gets an id <run id>-<n>, a real canonical envelope and its task hash, a
// thread, an expiry and a link, and is recorded for the test to read
// ([Harness.Tasks], [Harness.Task], [Harness.Status]). Reserve counts in a
// policy.MemoryCounter under the run's owner, project uuid, agent and UTC day
// ([Harness.Count]).
//
// [Harness.Answer] plays the owner's approval and the answer run that
// follows. It refuses what the inbox refuses before any run (a notice, a
// supply that does not fit the task's kind, an oversized supply or note, a
// task that is not open or has expired), voids the task when the project's
// policy or the connector's build changed since it was opened, and otherwise
// runs the answer operation as the task's preparer with the sealed state,
// the files, the parsed envelope, the supply and note, and the policy as it is
// now. It checks the reported result (a JSON object of at most 16 KiB) and
// returns it with the tasks the run opened (the next turn, or a notice). The
// task moves through the states of SPEC §3 as it would in the service: open,
// approved, answering, then done or failed (or expired, or void).
//
// # Choices where the contract is silent
//
//   - A call body is read as the service reads it, with the service's
//     sentences: invalid_request when it is over 64 KiB, is not a JSON object,
//     or names no operation (a non-empty string, its member name matched in
//     any case, as encoding/json does); invalid UTF-8 is not refused. An
//     unknown operation and an answer operation, which only the platform
//     starts, are refused alike. The task operations (task_status, …) are the
//     service's own and are not played here: calling one is invalid_request.
//   - An output that is not a JSON object is an internal error, as in the
//     service.
//   - The policy is parsed on every call from the bytes in [Harness.Policy],
//     so a test may change it between calls. A write is refused
//     policy_unreadable before its run starts, and then nothing is charged.
//   - A call's *countersign.Error is the agent's refusal and is returned as
//     it is. Any other error of a run is returned wrapped, so the test sees
//     it; the agent would read "internal_error: internal error" ([Text] gives
//     that reading). A run that panics fails the test. A run that outlives
//     its compute limit is abandoned: its platform opens no more tasks.
//   - Only a *connectors.Refusal says whether an answer run's write
//     happened: it ends the task failed with run_refused:<code> and is
//     returned as it is. Any other error, a panic, an overrun compute limit
//     or a result that is not a JSON object of at most 16 KiB ends the task
//     failed with run_unfinished (the write may or may not have happened).
//   - Every task shares one fixed reply key, a valid P-256 point, since a
//     connector never uses it; the link is PublicURL + "/#/tasks/" + id, as
//     the service writes it.
//   - An approval that arrives after expires_at is refused task_expired and
//     the task is recorded expired, as the platform's sweep would end it.
//   - The answer run is given the answer operation's own compute limit.
//   - A supply and a note are bounded as the inbox bounds them, in its order
//     and with its sentences: 8 KiB of sealed bytes, which is 8,098 bytes of
//     plaintext once the 94 bytes a seal to the reply key adds are taken off. A text supply is handed over as the
//     owner's page sent it, even when it is not valid UTF-8: the inbox cannot
//     look inside a sealed supply, so a connector must cope.
//   - The limits that belong to the owner's inbox rather than to a connector
//     (open tasks per owner and per preparer, waiting content, mutes, the
//     agent's balance) are not played; [Harness.FailOpen] lets a test answer
//     OpenTask with such a refusal. [Harness.Spent] adds up the prices
//     charged.
//
// Two fields go beyond what the service does, for tests of a connector's own
// defences: [Harness.NoVoid] skips the void check so an answer run meets a
// changed policy (in the service only a change racing the answer does), and
// [Harness.SupplyLimit] hands an answer run supplies larger than the inbox
// lets through.
package connectortest
