package enclave

import "countersign/store"

// enclaveTx is everything the enclave side may read and change in one of
// the store's transactions: these aggregates and no other. It opens tasks
// and carries out their answers, and so reads their sealed copies and
// wraps their keys; it writes the owner's history, records runs,
// idempotent calls, charges and counts, delivers the outbox and the
// pushes, sweeps, purges and rewraps. It signs no device in or out and
// spends no owner's nonce (Sessions), changes no mute (Mutes), and does
// not list the owner's history (HistoryReads).
type enclaveTx interface {
	store.Tasks
	store.TaskLists
	store.Openings
	store.TaskContent
	store.TaskKeys
	store.Outcomes
	store.Approvals
	store.Devices
	store.Webhooks
	store.Outbox
	store.PushSubscriptions
	store.Pushes
	store.History
	store.Agents
	store.Balances
	store.Runs
	store.Calls
	store.Projects
	store.Counts
	store.AnswerJobs
	store.Upkeep
	store.Rewrap
}

// enclavePort gives the enclave side the store's transactions as enclaveTx.
func enclavePort(s store.Store) store.Port[enclaveTx] {
	return store.Narrow(s, func(tx store.Tx) enclaveTx { return tx })
}

// openTx is what opening a task reads and writes: its thread's first
// task, its owner's gate, its approvers' devices, its rows, its history
// entry and its pushes.
type openTx interface {
	store.Tasks
	store.Openings
	store.Devices
	store.History
	store.Pushes
}

// directTx is what recording a write carried out at once writes: its
// history entry, wrapped to the owner's devices.
type directTx interface {
	store.History
	store.Devices
}

// endTx is what ending an approved task whose run cannot begin moves and
// keeps.
type endTx interface {
	store.Tasks
	store.Outcomes
}
