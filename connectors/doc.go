// Package connectors is the SDK a connector author writes against, and the
// catalogue of the connectors the service runs (probe, gmail, mercury and
// github, each in its own package).
//
// # Writing a connector
//
// A connector is a [Connector] value: a name and a version (together its
// build, "name@version", which every task it opens names), the members its
// policy may hold, and its operations. Each [Operation] is a read, a write or
// an answer, with a price in micro-USD and a one-line description; a read or
// a write also declares the JSON Schema (2020-12) of its arguments, with
// examples. Each declares the schema of its result too (Operation.Result:
// what Run answers when it opens no task, [TaskOnly] when it always opens
// one, or what an answer reports). The catalogue (GET /connectors), the
// OpenAPI document and the MCP tools show them, and the platform checks
// every call against the schema before Run is called (a call that does not
// fit is refused invalid_request, naming the member, and costs nothing), so
// Run need not check the shapes the schema states. The platform compiles
// the schemas (this package does not carry a validator); the connectortest
// harness refuses a connector whose schema does not compile or whose
// examples do not fit it, and fails a test whose answer does not fit its
// result. A call Run refuses for its own arguments (invalid_request,
// display_invalid) is not charged ([Uncharged]).
//
//   - A read or a write has a Run function. The platform calls it once the
//     agent's key, grant, body and balance are checked and the price is
//     charged; it receives a [Call] with the agent's arguments, the project's
//     parsed policy and credentials.
//   - A write that the owner asked to see first does not happen: Run opens a
//     task with [Call.OpenTask] — what the owner is shown, the files, the
//     sealed state the answer will need, and the answer operation — and
//     answers the agent [AwaitingOwner]. A write the policy allows, Run does
//     at once. A write the policy refuses, Run refuses with [Refuse].
//   - An answer operation (priced 0) has an Answer function. The platform
//     starts it, as the agent, when the owner approves a task naming it. It
//     receives an [AnswerCall]: the sealed state, what the owner supplied,
//     the task's files, and the policy as it is now. It acts on the sealed
//     write and nothing else, reports a result for the agent, and may open
//     the next turn of the thread ([AnswerCall.Next]) or a notice
//     ([AnswerCall.Notice]). A write refused after the approval is reported
//     with [Refused], which says whether the write happened. One whose
//     tasks take text from the owner may declare what that text looks like
//     (Operation.SuppliedText, a [TextShape]: a pattern, lengths and a
//     description in plain words), so the owner's inbox tells a text that
//     does not fit before the wallet is asked; Answer still judges any
//     text it gets.
//
// A write counted against a daily number reserves its place just before it
// happens ([Call.Reserve], [AnswerCall.Reserve]); a payment bounded over
// the last 30 days is counted with [Call.Spend] or [AnswerCall.Spend],
// under the key it carries upstream, so a retried payment counts once, and
// given back with Platform.Unspend only when it certainly did not happen.
//
// The platform enforces every limit of the contract whatever a connector
// asks: what a task may show, file sizes, tasks per run, per owner and per
// preparer, waiting content, task life, mutes. Three rules a connector keeps:
// check the request against the policy before the task is made; check it
// again, as of that moment, before acting; and show what will be done whole
// — what cannot be shown whole is refused, never shown in part.
//
// The runnable example in this package builds a tiny connector.
package connectors
