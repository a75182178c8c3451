package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Kind says which daily number a write counts against.
type Kind uint8

// The two daily numbers of SPEC §13, each bounded on its own by the
// connector's `max_…_per_day` key.
const (
	// Direct counts writes the agent made at once.
	Direct Kind = iota + 1
	// Confirmed counts writes the owner approved. A confirmed write
	// counts against the agent that prepared it.
	Confirmed
)

// String returns "direct" or "confirmed".
func (k Kind) String() string {
	switch k {
	case Direct:
		return "direct"
	case Confirmed:
		return "confirmed"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Key names one agent's day of writes in one project.
type Key struct {
	Owner   string // the owner's account, e.g. "alice.near"
	Project string // the project's uuid, so that a renamed project keeps its count
	Agent   string // the agent's account; for a confirmed write, the preparer
	Day     string // the UTC day, as Day gives it
}

// Day returns t's UTC day as YYYY-MM-DD, the Day of a Key.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Counter keeps the daily numbers. A store implements it atomically; the
// connector SDK calls Reserve just before a write happens (at once, or in the
// answer run of an approved task).
type Counter interface {
	// Reserve counts one write of kind for key if fewer than limit are
	// counted already, and reports whether it did. Reservations are never
	// given back: a write that was attempted counts, whether or not it
	// succeeded, because a failed write may have acted in part. Concurrent
	// reservations for one key and kind admit at most limit in all.
	// Arguments CheckReservation refuses are an error, and count nothing.
	Reserve(ctx context.Context, key Key, kind Kind, limit int) (bool, error)
}

// CheckReservation reports an argument to Reserve that no Counter accepts:
// a key with an empty member or a Day not written as Day writes it, an
// unknown kind, or a negative limit. Implementations call it first.
func CheckReservation(key Key, kind Kind, limit int) error {
	switch {
	case key.Owner == "" || key.Project == "" || key.Agent == "" || key.Day == "":
		return errors.New("policy: daily count key is incomplete")
	case !isDay(key.Day):
		return errors.New("policy: daily count key's day is not YYYY-MM-DD")
	case kind != Direct && kind != Confirmed:
		return fmt.Errorf("policy: unknown count kind %d", uint8(kind))
	case limit < 0:
		return fmt.Errorf("policy: negative daily limit %d", limit)
	}
	return nil
}

// isDay reports whether s is a day as Day writes it. The layout's fields
// are fixed-width, and a day that does not exist is refused.
func isDay(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// MemoryCounter is a Counter held in memory, safe for concurrent use, for
// tests and development. It never forgets a day. Its zero value is ready to
// use.
type MemoryCounter struct {
	mu     sync.Mutex
	counts map[memoryKey]int
}

type memoryKey struct {
	key  Key
	kind Kind
}

var _ Counter = (*MemoryCounter)(nil)

// Reserve implements Counter.
func (m *MemoryCounter) Reserve(ctx context.Context, key Key, kind Kind, limit int) (bool, error) {
	if err := CheckReservation(key, kind, limit); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("policy: reserving a daily count: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoryKey{key, kind}
	if m.counts[k] >= limit {
		return false, nil
	}
	if m.counts == nil {
		m.counts = make(map[memoryKey]int)
	}
	m.counts[k]++
	return true, nil
}

// Count returns how many writes of kind are counted for key.
func (m *MemoryCounter) Count(key Key, kind Kind) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[memoryKey{key, kind}]
}
