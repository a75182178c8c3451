package inbox

import "countersign/store"

// doorTx is everything the owner's service may read and change in one of
// the store's transactions: these aggregates and no other. It moves and
// lists tasks and hands their ciphertext to devices, counts approvals,
// signs devices in and out, changes the owner's mutes, webhook, push
// subscriptions and projects, reads the owner's history and a task's run
// and receipt, and queues the answer job an approval calls for. It opens no
// task, opens or wraps no key (Openings, TaskKeys), writes no history
// entry (History), and reaches no agent, balance, idempotent call,
// project count, push, outbox row or upkeep of the platform.
type doorTx interface {
	store.Tasks
	store.TaskLists
	store.TaskContent
	store.Outcomes
	store.Approvals
	store.Devices
	store.Sessions
	store.Mutes
	store.Webhooks
	store.PushSubscriptions
	store.HistoryReads
	store.Runs
	store.Projects
	store.AnswerJobs
}

// doorPort gives the service the store's transactions as doorTx.
func doorPort(s store.Store) store.Port[doorTx] {
	return store.Narrow(s, func(tx store.Tx) doorTx { return tx })
}

// lookupTx is what finding a task a session sees reads: the task and, for
// a shared task, its approvers.
type lookupTx interface {
	store.Tasks
	store.Approvals
}

// viewTx is what a task's view reads besides its row: its ciphertext and
// its approvals.
type viewTx interface {
	store.TaskContent
	store.Approvals
}

// cancelTx is what cancelling an owner's waiting tasks reads and moves.
type cancelTx interface {
	store.Tasks
	store.TaskLists
}
