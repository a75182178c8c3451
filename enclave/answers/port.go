package answers

import (
	"countersign/enclave/calls"
	"countersign/store"
)

// answersTx is everything an answer run may read and change in one of the
// store's transactions: these aggregates and no other. It reads what the
// run needs (the task, its sealed copy and approvals, the project, the
// preparer), claims and ends the task, records the run and its receipts,
// reads the task's files, and says the process is alive.
//
// An answer of an operation declared InProcess runs in the claim's
// transaction, so it is also what the run's platform does
// (calls.RunTx): opening the next turns, counting.
type answersTx interface {
	calls.RunTx
	store.Runs
	store.TaskContent
	store.TaskKeys
	store.Outcomes
	store.Upkeep
}

// port gives the answers service the store's transactions as answersTx.
func port(s store.Store) store.Port[answersTx] {
	return store.Narrow(s, func(tx store.Tx) answersTx { return tx })
}

// endTx is what ending an approved task whose run cannot begin moves and
// keeps.
type endTx interface {
	store.Tasks
	store.Outcomes
}
