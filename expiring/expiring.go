// Package expiring holds a bounded map whose entries expire: what the
// service remembers for a while to spare itself work (a wallet key's status
// on the chain, a device's wrapping key), never the only copy of anything.
package expiring

import (
	"sync"
	"time"
)

// Map is a map of at most its bound entries, each kept until a time of its
// own. It is safe for concurrent use.
type Map[K comparable, V any] struct {
	bound int

	mu sync.Mutex
	m  map[K]entry[V]
}

type entry[V any] struct {
	v     V
	until time.Time
}

// New returns an empty Map of at most bound entries (at least one).
func New[K comparable, V any](bound int) *Map[K, V] {
	return &Map[K, V]{bound: max(bound, 1), m: make(map[K]entry[V])}
}

// Get returns k's value if it is kept past now. An entry whose time has
// come is dropped.
func (m *Map[K, V]) Get(k K, now time.Time) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[k]
	if ok && now.Before(e.until) {
		return e.v, true
	}
	if ok {
		delete(m.m, k)
	}
	var zero V
	return zero, false
}

// Put keeps v as k's value until until. A new key in a full Map first makes
// room: the entries whose time has come at now are dropped, then any, until
// there is room for one.
func (m *Map[K, V]) Put(k K, v V, until, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.m[k]; !held && len(m.m) >= m.bound {
		for ek, e := range m.m {
			if !now.Before(e.until) {
				delete(m.m, ek)
			}
		}
		for ek := range m.m {
			if len(m.m) < m.bound {
				break
			}
			delete(m.m, ek)
		}
	}
	m.m[k] = entry[V]{v: v, until: until}
}

// Len is how many entries are held, expired ones not yet dropped included.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
