package sqlstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"countersign"
	"countersign/store"
)

// subscriberBuffer is how many events a subscriber may fall behind before it
// is dropped.
const subscriberBuffer = 64

// hub fans task events out to the subscribers of each owner, and stream
// signals to their watchers.
type hub struct {
	mu       sync.Mutex
	subs     map[string]map[*subscription]struct{}
	funcs    map[string]map[*funcSub]struct{}
	watchers map[*watcher]struct{}
}

// funcSub is a subscription that calls a function.
type funcSub struct{ fn func(store.TaskEvent) }

type watcher struct{ fn func(store.StreamSignal) }

type subscription struct {
	ch     chan store.TaskEvent
	closed bool
}

func (h *hub) subscribe(owner string) (<-chan store.TaskEvent, func()) {
	s := &subscription{ch: make(chan store.TaskEvent, subscriberBuffer)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[*subscription]struct{}{}
	}
	if h.subs[owner] == nil {
		h.subs[owner] = map[*subscription]struct{}{}
	}
	h.subs[owner][s] = struct{}{}
	h.mu.Unlock()
	return s.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.drop(owner, s)
	}
}

// subscribeFunc calls fn with the owner's events until stop.
func (h *hub) subscribeFunc(owner string, fn func(store.TaskEvent)) func() {
	s := &funcSub{fn: fn}
	h.mu.Lock()
	if h.funcs == nil {
		h.funcs = map[string]map[*funcSub]struct{}{}
	}
	if h.funcs[owner] == nil {
		h.funcs[owner] = map[*funcSub]struct{}{}
	}
	h.funcs[owner][s] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.funcs[owner], s)
		if len(h.funcs[owner]) == 0 {
			delete(h.funcs, owner)
		}
	}
}

// count is how many subscriptions an owner has.
func (h *hub) count(owner string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[owner]) + len(h.funcs[owner])
}

// drop ends a subscription; the caller holds h.mu.
func (h *hub) drop(owner string, s *subscription) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	delete(h.subs[owner], s)
	if len(h.subs[owner]) == 0 {
		delete(h.subs, owner)
	}
}

// publish gives an event to its owner's subscribers without waiting: one
// that is not keeping up is dropped, never the others.
func (h *hub) publish(ev store.TaskEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[ev.Owner] {
		select {
		case s.ch <- ev:
		default:
			h.drop(ev.Owner, s)
		}
	}
	for s := range h.funcs[ev.Owner] {
		s.fn(ev)
	}
}

// watch adds a watcher of stream signals.
func (h *hub) watch(fn func(store.StreamSignal)) func() {
	w := &watcher{fn: fn}
	h.mu.Lock()
	if h.watchers == nil {
		h.watchers = map[*watcher]struct{}{}
	}
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.watchers, w)
	}
}

// signal gives a stream signal to every watcher, outside the hub's lock.
func (h *hub) signal(sig store.StreamSignal) {
	h.mu.Lock()
	ws := make([]*watcher, 0, len(h.watchers))
	for w := range h.watchers {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	for _, w := range ws {
		w.fn(sig)
	}
}

// closeAll ends every subscription.
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for owner, subs := range h.subs {
		for s := range subs {
			h.drop(owner, s)
		}
	}
}

// Subscribe gives the owner's task events as they commit. On PostgreSQL they
// come through LISTEN/NOTIFY, so every process on the database sees every
// change; the embedded store has one process.
func (db *DB) Subscribe(owner string) (<-chan store.TaskEvent, func()) {
	db.startListening()
	return db.hub.subscribe(owner)
}

// SubscribeFunc calls fn with the owner's task events as they commit (see
// Subscribe), until stop; fn must not block.
func (db *DB) SubscribeFunc(owner string, fn func(store.TaskEvent)) func() {
	db.startListening()
	return db.hub.subscribeFunc(owner, fn)
}

// WatchStreams calls fn with every stream signal on the database from now
// on; on PostgreSQL they come through the same LISTEN connection as task
// events, so every process hears them in the order they committed.
func (db *DB) WatchStreams(fn func(store.StreamSignal)) func() {
	stop := db.hub.watch(fn)
	db.startListening()
	return stop
}

// SignalStream sends a stream signal to every process on the database.
func (db *DB) SignalStream(ctx context.Context, sig store.StreamSignal) error {
	return classify(db.e.signalNow(ctx, db, sig))
}

// signal records a stream signal in the transaction, delivered at commit.
func (t *tx) signal(ctx context.Context, sig store.StreamSignal) error {
	return t.db.e.signal(ctx, t, sig)
}

// startListening starts, the first time, what feeds the hub with the
// events of other processes on the database.
func (db *DB) startListening() { db.listenOnce.Do(func() { db.e.listen(db) }) }

// Subscribers is how many subscriptions to an owner's task events this store
// holds now (open event streams and waiting task_wait calls), so a test can
// await a listener instead of sleeping.
func (db *DB) Subscribers(owner string) int { return db.hub.count(owner) }

func eventPayload(ev store.TaskEvent) string {
	return ev.Owner + " " + ev.TaskID + " " + string(ev.State)
}

// notifyMax is how long a NOTIFY's payload may be: PostgreSQL refuses
// 8000 bytes and more.
const notifyMax = 7999

// notices are the NOTIFYs of a transaction's events: their payloads one
// to a line, as many to a NOTIFY as fit. A transaction of one event (most)
// sends the payload it always did.
func notices(channel string, evs []store.TaskEvent) []stmt {
	var stmts []stmt
	var b strings.Builder
	send := func() {
		if b.Len() > 0 {
			stmts = append(stmts, stmt{sql: "SELECT pg_notify(?, ?)", args: []any{channel, b.String()}})
			b.Reset()
		}
	}
	for _, ev := range evs {
		p := eventPayload(ev)
		if b.Len() > 0 && b.Len()+1+len(p) > notifyMax {
			send()
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	send()
	return stmts
}

// parseNotification reads a NOTIFY's payload: a stream signal, or task
// events one to a line. A line that is neither is skipped.
func parseNotification(p string) (store.StreamSignal, []store.TaskEvent, bool) {
	if sig, ok := parseSignal(p); ok {
		return sig, nil, true
	}
	var evs []store.TaskEvent
	for line := range strings.SplitSeq(p, "\n") {
		if ev, ok := parseEvent(line); ok {
			evs = append(evs, ev)
		}
	}
	return store.StreamSignal{}, evs, false
}

func parseEvent(p string) (store.TaskEvent, bool) {
	f := strings.Fields(p)
	if len(f) != 3 {
		return store.TaskEvent{}, false
	}
	state := countersign.State(f[2])
	if !state.Valid() {
		return store.TaskEvent{}, false
	}
	return store.TaskEvent{Owner: f[0], TaskID: f[1], State: state}, true
}

// A stream signal's payload is "!kind stream owner device valid_until",
// "-" for a field it does not carry; no task event starts with "!".
func signalPayload(sig store.StreamSignal) string {
	f := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	until := "-"
	if !sig.ValidUntil.IsZero() {
		until = strconv.FormatInt(sig.ValidUntil.Unix(), 10)
	}
	return "!" + string(sig.Kind) + " " + f(sig.Stream) + " " + f(sig.Owner) + " " + f(sig.Device) + " " + until
}

func parseSignal(p string) (store.StreamSignal, bool) {
	rest, ok := strings.CutPrefix(p, "!")
	f := strings.Fields(rest)
	if !ok || len(f) != 5 {
		return store.StreamSignal{}, false
	}
	for i, v := range f {
		if v == "-" {
			f[i] = ""
		}
	}
	sig := store.StreamSignal{Kind: store.StreamSignalKind(f[0]), Stream: f[1], Owner: f[2], Device: f[3]}
	if f[4] != "" {
		sec, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return store.StreamSignal{}, false
		}
		sig.ValidUntil = time.Unix(sec, 0).UTC()
	}
	switch sig.Kind {
	case store.SessionEnded, store.StreamOpened, store.StreamClosed:
		return sig, true
	}
	return store.StreamSignal{}, false
}

// tell keeps ev to tell the owner's event streams once t commits: in
// the NOTIFY sent with the COMMIT on PostgreSQL, published after it on
// SQLite.
func (t *tx) tell(ev store.TaskEvent) { t.events = append(t.events, ev) }
