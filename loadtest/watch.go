package loadtest

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// watch follows an owner's event stream (GET /inbox/events), keeping each
// task's last state and when a task's end was seen.
type watch struct {
	mu     sync.Mutex
	states map[string]string
	ended  map[string]time.Time
	// approved is when each task's approved event was seen.
	approved map[string]time.Time
	wake     chan struct{} // closed at the next event
	closed   bool
	// gone closes when the stream has ended.
	gone chan struct{}
	stop context.CancelFunc
}

// terminal says whether a state is an end.
func terminal(state string) bool {
	switch state {
	case "done", "failed", "rejected", "cancelled", "expired", "void":
		return true
	}
	return false
}

// watchEvents opens the owner's event stream and follows it until stop.
func (o *owner) watchEvents(ctx context.Context) (*watch, error) {
	ctx, cancel := context.WithCancel(ctx)
	events, err := o.Client.Events(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &watch{states: map[string]string{}, ended: map[string]time.Time{}, approved: map[string]time.Time{}, wake: make(chan struct{}), gone: make(chan struct{}), stop: cancel}
	go func() {
		for ev := range events {
			now := time.Now()
			w.mu.Lock()
			w.states[ev.TaskID] = ev.State
			if ev.State == "approved" {
				w.approved[ev.TaskID] = now
			}
			if terminal(ev.State) {
				w.ended[ev.TaskID] = now
			}
			close(w.wake)
			w.wake = make(chan struct{})
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.closed = true
		close(w.wake)
		w.mu.Unlock()
		close(w.gone)
	}()
	return w, nil
}

// await waits until every task in ids has ended on the stream, for at most
// limit, and returns each one's state and when its end was seen.
func (w *watch) await(ctx context.Context, ids []string, limit time.Duration) (map[string]string, map[string]time.Time, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		missing := ""
		for _, id := range ids {
			if _, ok := w.ended[id]; !ok {
				missing = id
				break
			}
		}
		if missing == "" {
			states, at := map[string]string{}, map[string]time.Time{}
			for _, id := range ids {
				states[id], at[id] = w.states[id], w.ended[id]
			}
			w.mu.Unlock()
			return states, at, nil
		}
		wake, closed, last := w.wake, w.closed, w.states[missing]
		w.mu.Unlock()
		if closed {
			return nil, nil, fmt.Errorf("the owner's event stream ended while task %s was %s", missing, orNone(last))
		}
		select {
		case <-wake:
		case <-deadline.C:
			return nil, nil, fmt.Errorf("task %s did not end within %s (last seen on the event stream: %s)", missing, limit, orNone(last))
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func orNone(state string) string {
	if state == "" {
		return "nothing"
	}
	return state
}

// approvedAt is when the task's approved event was seen (zero: not seen).
func (w *watch) approvedAt(id string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.approved[id]
}
