package calls

import "countersign/store"

// callsTx is everything serving agents' calls may read and change in one
// of the store's transactions: these aggregates and no other. It finds
// agents and their grants, records runs, idempotent calls, charges and
// counts, opens tasks (their rows, their history entries and pushes) and
// answers the task operations.
type callsTx interface {
	store.Tasks
	store.TaskLists
	store.Openings
	store.Outcomes
	store.Approvals
	store.Devices
	store.Pushes
	store.History
	store.Agents
	store.Balances
	store.Runs
	store.Calls
	store.Projects
	store.Counts
}

// port gives the calls service the store's transactions as callsTx.
func port(s store.Store) store.Port[callsTx] {
	return store.Narrow(s, func(tx store.Tx) callsTx { return tx })
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
