package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"countersign"
	"countersign/inbox"
	"countersign/store"
)

// Open event streams are bounded (SPEC §12): 4 per session, 16 per owner,
// on all processes together; past either, the oldest is closed.
const (
	maxStreamsPerSession = 4
	maxStreamsPerOwner   = 16
)

// streams is this process's account of the owners' open event streams on
// the database: its own, which it ends, and every other process's, which it
// only counts.
//
// Every process hears the same stream signals in the same order (they
// travel with the task events over LISTEN/NOTIFY): a stream opened, a stream
// closed, a device's session ended. Each process applies them to its account
// alike, so all agree which stream is the oldest past a limit, and the one
// holding it closes it at once; an ended session's streams close on every
// process the moment its signal arrives. A process that starts later knows
// only the streams opened since, which are the newest: it closes no stream
// the others keep. The heartbeat's look at the session stays as a backstop
// for a signal lost while the listening connection was down.
type streams struct {
	sig store.StreamSignaller // nil: this process alone
	log *slog.Logger
	now func() time.Time

	watch sync.Once
	mu    sync.Mutex
	local map[string]*stream // this process's streams, by id
	// owners holds every stream heard of, by owner, oldest first;
	// devices is the owner of each device with a stream there.
	owners  map[string][]heard
	devices map[string]string
	swept   time.Time
}

type heard struct {
	id, device string
	until      time.Time
}

// stream is one of this process's event streams; done closes when it must
// end.
type stream struct {
	id, owner, device string
	done              chan struct{}
	ended             bool
	// onEnd, if set, is called (under the lock) when done closes.
	onEnd func()
}

func newStreams(st store.Store, log *slog.Logger) *streams {
	s := &streams{log: log, now: time.Now, local: map[string]*stream{}, owners: map[string][]heard{}, devices: map[string]string{}}
	if sig, ok := st.(store.StreamSignaller); ok {
		s.sig = sig
	}
	return s
}

// register adds a stream of sess to this process, listening from now on for
// its session's end; it counts toward the limits once announced.
func (s *streams) register(sess inbox.Session) *stream {
	s.watch.Do(func() {
		if s.sig != nil {
			s.sig.WatchStreams(s.handle)
		}
	})
	st := &stream{id: countersign.NewRunID(), owner: sess.AccountID, device: sess.DeviceID, done: make(chan struct{})}
	s.mu.Lock()
	s.local[st.id] = st
	s.mu.Unlock()
	return st
}

// announce tells every process the stream is open, closing the oldest past a
// limit.
func (s *streams) announce(ctx context.Context, st *stream, until time.Time) error {
	return s.send(ctx, store.StreamSignal{Kind: store.StreamOpened, Stream: st.id, Owner: st.owner, Device: st.device, ValidUntil: until})
}

// close forgets a stream that ended, on every process.
func (s *streams) close(st *stream) {
	s.mu.Lock()
	delete(s.local, st.id)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.send(ctx, store.StreamSignal{Kind: store.StreamClosed, Stream: st.id, Owner: st.owner}); err != nil {
		s.log.Warn("an event stream's end was not told to the other processes", "err", err)
	}
}

func (s *streams) send(ctx context.Context, sig store.StreamSignal) error {
	if s.sig == nil {
		s.handle(sig)
		return nil
	}
	return s.sig.SignalStream(ctx, sig)
}

// handle applies one signal; it never blocks.
func (s *streams) handle(sig store.StreamSignal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch sig.Kind {
	case store.SessionEnded:
		for _, st := range s.local {
			if st.device == sig.Device {
				s.end(st)
			}
		}
		if owner, ok := s.devices[sig.Device]; ok {
			s.forget(owner, func(h heard) bool { return h.device == sig.Device })
		}
	case store.StreamClosed:
		s.forget(sig.Owner, func(h heard) bool { return h.id == sig.Stream })
	case store.StreamOpened:
		s.sweep()
		list := append(s.owners[sig.Owner], heard{id: sig.Stream, device: sig.Device, until: sig.ValidUntil})
		s.owners[sig.Owner] = list
		s.devices[sig.Device] = sig.Owner
		n := 0
		for _, h := range list {
			if h.device == sig.Device {
				n++
			}
		}
		if n > maxStreamsPerSession {
			s.evictOldest(sig.Owner, func(h heard) bool { return h.device == sig.Device })
		}
		if len(s.owners[sig.Owner]) > maxStreamsPerOwner {
			s.evictOldest(sig.Owner, func(heard) bool { return true })
		}
	}
}

// evictOldest closes the oldest stream of owner that match says; the caller
// holds s.mu.
func (s *streams) evictOldest(owner string, match func(heard) bool) {
	for _, h := range s.owners[owner] {
		if match(h) {
			if st, ok := s.local[h.id]; ok {
				s.end(st)
			}
			s.forget(owner, func(x heard) bool { return x.id == h.id })
			return
		}
	}
}

// forget drops the streams of owner that match says; the caller holds s.mu.
func (s *streams) forget(owner string, match func(heard) bool) {
	list := s.owners[owner]
	kept := list[:0]
	gone := map[string]bool{}
	for _, h := range list {
		if match(h) {
			gone[h.device] = true
		} else {
			kept = append(kept, h)
		}
	}
	for _, h := range kept {
		delete(gone, h.device)
	}
	for d := range gone {
		delete(s.devices, d)
	}
	if len(kept) == 0 {
		delete(s.owners, owner)
	} else {
		s.owners[owner] = kept
	}
}

// sweep forgets, once a minute, the streams whose sessions are over (those a
// process that stopped never said were closed); the caller holds s.mu.
func (s *streams) sweep() {
	now := s.now()
	if now.Sub(s.swept) < time.Minute {
		return
	}
	s.swept = now
	for owner, list := range s.owners {
		for _, h := range list {
			if !h.until.IsZero() && !now.Before(h.until) {
				s.forget(owner, func(x heard) bool { return !x.until.IsZero() && !now.Before(x.until) })
				break
			}
		}
	}
}

// end closes a local stream's done; the caller holds s.mu.
func (s *streams) end(st *stream) {
	if !st.ended {
		st.ended = true
		close(st.done)
		if st.onEnd != nil {
			st.onEnd()
		}
	}
}

// whenEnded has fn called, without waiting, when the stream must end (at
// once if it must already).
func (s *streams) whenEnded(st *stream, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.onEnd = fn
	if st.ended {
		fn()
	}
}
