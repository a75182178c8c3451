package expiring

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestKeptUntilItsTime(t *testing.T) {
	t.Parallel()
	m := New[string, int](10)
	m.Put("a", 1, t0.Add(time.Minute), t0)
	if v, ok := m.Get("a", t0.Add(time.Minute-time.Nanosecond)); !ok || v != 1 {
		t.Fatalf("before its time: %d, %v", v, ok)
	}
	if v, ok := m.Get("a", t0.Add(time.Minute)); ok || v != 0 {
		t.Fatalf("at its time: %d, %v; want nothing", v, ok)
	}
	if n := m.Len(); n != 0 {
		t.Errorf("an entry read at its time was kept (%d held)", n)
	}
	if _, ok := m.Get("b", t0); ok {
		t.Error("a key never put was found")
	}
	m.Put("a", 2, t0.Add(time.Hour), t0)
	m.Put("a", 3, t0.Add(time.Hour), t0)
	if v, _ := m.Get("a", t0); v != 3 || m.Len() != 1 {
		t.Errorf("a key put again holds %d (%d held), want 3 (1)", v, m.Len())
	}
}

func TestBound(t *testing.T) {
	t.Parallel()
	m := New[string, int](3)
	m.Put("old", 1, t0.Add(time.Minute), t0)
	m.Put("a", 2, t0.Add(time.Hour), t0)
	m.Put("b", 3, t0.Add(time.Hour), t0)
	// Full: the entry whose time has come goes first.
	now := t0.Add(time.Minute)
	m.Put("c", 4, now.Add(time.Hour), now)
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := m.Get(k, now); !ok {
			t.Errorf("%s was dropped while an expired entry was held", k)
		}
	}
	if n := m.Len(); n != 3 {
		t.Fatalf("%d held, want 3", n)
	}
	// Full of live entries: any one goes.
	m.Put("d", 5, now.Add(time.Hour), now)
	if n := m.Len(); n != 3 {
		t.Fatalf("%d held past the bound of 3", n)
	}
	if _, ok := m.Get("d", now); !ok {
		t.Error("the new entry was not kept")
	}
	// A key already held is replaced without dropping another.
	m.Put("d", 6, now.Add(time.Hour), now)
	held := 0
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, ok := m.Get(k, now); ok {
			held++
		}
	}
	if held != 3 {
		t.Errorf("%d of the 3 entries held after a key was put again", held)
	}
	if n := New[int, int](0).bound; n != 1 {
		t.Errorf("a bound of 0 is %d, want 1", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	m := New[string, int](8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := fmt.Sprint((g + i) % 12)
				now := t0.Add(time.Duration(i) * time.Millisecond)
				m.Put(k, i, now.Add(5*time.Millisecond), now)
				m.Get(k, now)
			}
		})
	}
	wg.Wait()
	if n := m.Len(); n > 8 {
		t.Errorf("%d held past the bound of 8", n)
	}
}
