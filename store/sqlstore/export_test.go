package sqlstore

import (
	"context"
	"errors"
	"sync/atomic"

	"countersign"
	"countersign/store"
)

// ParseEvent reads a task event's NOTIFY payload, for tests.
var ParseEvent = parseEvent

// ParseEvents reads the task events of a NOTIFY's payload, for tests.
func ParseEvents(p string) []store.TaskEvent {
	_, evs, _ := parseNotification(p)
	return evs
}

// MoveStatement is a move's UPDATE as PostgreSQL receives it, for tests.
func MoveStatement(m store.Move) (string, []any) {
	q, args := moveStatement(m)
	return rebind(q), args
}

// OwnerLoadStatement is the owner's load as PostgreSQL receives it, for
// tests.
func OwnerLoadStatement(owner, preparer string) (string, []any) {
	return rebind(ownerLoadQuery), []any{preparer, owner}
}

// OwnerGateStatement is what the owner's gate reads of the owner beside
// its devices (load, mutes, webhook) as PostgreSQL receives it, for tests.
func OwnerGateStatement(owner, preparer, project string) (string, []any) {
	return rebind(gateQuery), []any{preparer, owner, preparer, project, owner, owner}
}

// InboxTasksStatement is a page of an account's inbox (its own tasks and
// those it is an approver of) as PostgreSQL receives it, for tests.
func InboxTasksStatement(account string, waiting bool, before *store.Task, limit int) (string, []any) {
	q, args := inboxTasksQuery(account, waiting, before, limit)
	return rebind(q), args
}

// PreparerTasksStatement is a page of an agent's list of its tasks as
// PostgreSQL receives it, for tests.
func PreparerTasksStatement(owner, projectUUID, preparer string, state countersign.State, limit int) (string, []any) {
	q, args := preparerTasksQuery(owner, projectUUID, preparer, state, limit)
	return rebind(q), args
}

// RunGroups runs fns as one lane would if they all waited for it, in
// order: each group made of those waiting, and each fn whose group kept
// nothing tried again alone afterwards. It returns each fn's answer.
func RunGroups(db *DB, fns ...func(store.Tx) error) []error {
	p := db.e.(*pgEngine)
	in := make(chan *member, len(fns))
	ms := make([]*member, len(fns))
	for i, fn := range fns {
		ms[i] = &member{fn: fn, done: make(chan error, 1)}
		in <- ms[i]
	}
	var running atomic.Int64
	for len(in) > 0 {
		p.group(db, <-in, in, &running)
	}
	errs := make([]error, len(fns))
	for i, m := range ms {
		if errs[i] = <-m.done; errors.Is(errs[i], errAlone) {
			errs[i] = p.tx(context.Background(), db, m.fn)
		}
	}
	return errs
}
