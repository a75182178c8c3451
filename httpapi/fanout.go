package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"countersign/store"
)

// An event stream costs, while it is open, a socket and a small record:
// once its answer's header is sent, the handler hands the connection over
// (http.ResponseController.Hijack) to the fan-out and returns, so neither
// its goroutine nor the HTTP server's buffers for the connection stay. The
// fan-out holds one subscription to the store's events per owner with a
// stream here (a function the store calls, no channel), and writes each
// event to that owner's streams from a few goroutines that run only while
// there is something to write. One goroutine waits for all of the streams'
// sockets at once and sends the heartbeats: a client that hangs up (or
// sends anything at all, which no event-stream client does) ends its
// stream at once.
//
// Writes never wait for a client: what a full socket does not take waits
// in the stream's record, up to maxPending bytes, and is tried again with
// the next event or heartbeat. A stream past maxPending, or whose bytes
// have waited for a whole heartbeat, is dropped, as one that does not keep
// up. A stream ends as it did in its handler: its session's end or
// deadline, a newer stream past the limits, the heartbeat's look at the
// session, the HTTP server's Shutdown, Server.Close.

const (
	// maxPending bounds the bytes waiting for one stream's full socket.
	maxPending = 16 << 10
	// fanWriters bounds the goroutines writing to streams at once,
	// fanCheckers those looking at sessions for the heartbeats, fanEnders
	// those telling the other processes that streams closed.
	fanWriters  = 4
	fanCheckers = 4
	fanEnders   = 4
)

// fanout holds the event streams handed over by their handlers.
type fanout struct {
	subscribe func(owner string, fn func(store.TaskEvent)) (stop func())
	// check looks at a stream's session again (at each heartbeat).
	check func(ctx context.Context, token string) error
	// gone forgets a stream that ended, on every process.
	gone      func(*stream)
	heartbeat time.Duration
	log       *slog.Logger

	mu     sync.Mutex
	owners map[string]*ownerStreams
	// conns are the streams handed over, by id; live counts those opened
	// and not yet finished, handed over or not.
	conns  map[uint64]*sseConn
	live   int
	nextID uint64
	// beats is every stream handed over, by when its next heartbeat is
	// due, earliest first (each is due a heartbeat after the one before
	// it, so appending keeps the order).
	beats  []*sseConn
	poll   *poller // nil while no stream is handed over
	writes work[*sseConn]
	checks work[*sseConn]
	ends   work[*sseConn]
	// hooked are the HTTP servers whose Shutdown ends their streams, down
	// those shutting down; shut is set by close.
	hooked map[*http.Server]bool
	down   map[*http.Server]bool
	shut   bool
}

// ownerStreams are one owner's streams, with their one subscription.
type ownerStreams struct {
	conns map[*sseConn]struct{}
	stop  func()
	ready chan struct{} // closed once subscribed
}

// sseConn is one event stream. Its fields from pending on are under
// fanout.mu.
type sseConn struct {
	id    uint64
	owner string
	token string
	st    *stream
	srv   *http.Server
	conn  net.Conn
	raw   syscall.RawConn // nil: writes wait, with a deadline
	timer *time.Timer     // the session's end
	due   time.Time       // the next heartbeat

	pending []byte
	// stalled is since when bytes wait for a full socket (zero: none).
	stalled time.Time
	// queued: in writes, or being written; checking: in checks, or
	// being checked.
	queued, checking bool
	// ending: to be closed by a writer; closed: closed, or being.
	ending, closed bool
}

func newFanout(subscribe func(string, func(store.TaskEvent)) func(), check func(context.Context, string) error,
	gone func(*stream), heartbeat time.Duration, log *slog.Logger) *fanout {
	f := &fanout{subscribe: subscribe, check: check, gone: gone, heartbeat: heartbeat, log: log,
		owners: map[string]*ownerStreams{}, conns: map[uint64]*sseConn{}, hooked: map[*http.Server]bool{}, down: map[*http.Server]bool{}}
	f.writes = work[*sseConn]{max: fanWriters, fn: f.write}
	f.checks = work[*sseConn]{max: fanCheckers, fn: f.beat}
	f.ends = work[*sseConn]{max: fanEnders, fn: f.finish}
	return f
}

// canHandOff says whether the stream of w can be handed over: HTTP/1 on a
// plain connection (not TLS, not HTTP/2), a ResponseWriter that can give
// its connection up, and a platform whose sockets the fan-out can watch.
func canHandOff(w http.ResponseWriter, r *http.Request) bool {
	if !handOffSupported || r.ProtoMajor != 1 || r.TLS != nil {
		return false
	}
	for {
		if _, ok := w.(http.Hijacker); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// open adds a stream whose header is not sent yet: from now on it gathers
// its owner's events, to be written once attach hands its connection over
// (or forgotten by abandon).
func (f *fanout) open(st *stream, token string) *sseConn {
	c := &sseConn{owner: st.owner, token: token, st: st}
	f.mu.Lock()
	f.nextID++
	c.id = f.nextID
	f.live++
	o := f.owners[c.owner]
	first := o == nil
	if first {
		o = &ownerStreams{conns: map[*sseConn]struct{}{}, ready: make(chan struct{})}
		f.owners[c.owner] = o
	}
	o.conns[c] = struct{}{}
	f.mu.Unlock()
	if !first {
		<-o.ready
		return c
	}
	stop := f.subscribe(c.owner, f.publish)
	f.mu.Lock()
	if f.owners[c.owner] == o {
		o.stop, stop = stop, nil
	}
	f.mu.Unlock()
	close(o.ready)
	if stop != nil {
		stop() // every stream of the owner ended meanwhile
	}
	return c
}

// publish writes an event to its owner's streams; the store calls it and
// it never waits.
func (f *fanout) publish(ev store.TaskEvent) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	frame := "event: task\ndata: " + string(data) + "\n\n"
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := f.owners[ev.Owner]; o != nil {
		for c := range o.conns {
			f.sendLocked(c, frame)
		}
	}
}

// end ends a stream.
func (f *fanout) end(c *sseConn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endLocked(c)
}

// abandon forgets a stream that was not handed over (its handler answers
// it, or has failed to).
func (f *fanout) abandon(c *sseConn) {
	f.mu.Lock()
	c.ending, c.closed = true, true
	f.mu.Unlock()
	f.finish(c)
}

// attach takes over a stream's connection, whose header and first comment
// are sent; srv is the HTTP server it came from (nil: unknown), until its
// session's deadline.
func (f *fanout) attach(c *sseConn, conn net.Conn, srv *http.Server, until time.Time) {
	var raw syscall.RawConn
	if sc, ok := conn.(syscall.Conn); ok {
		raw, _ = sc.SyscallConn()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c.conn, c.raw, c.srv = conn, raw, srv
	f.conns[c.id] = c
	if f.poll == nil {
		p, err := newPoller()
		if err != nil {
			f.log.Error("cannot watch event streams' connections; the stream is closed", "err", err)
			f.endLocked(c)
			return
		}
		f.poll = p
		go f.run(p)
	}
	if raw != nil {
		if err := f.poll.add(raw, c.id); err != nil {
			f.log.Warn("cannot watch an event stream's connection for the client's hang-up; the stream is closed", "err", err)
			f.endLocked(c)
		}
	}
	c.due = time.Now().Add(f.heartbeat)
	f.beats = append(f.beats, c)
	c.timer = time.AfterFunc(time.Until(until), func() { f.end(c) })
	if srv != nil && !f.hooked[srv] {
		f.hooked[srv] = true
		srv.RegisterOnShutdown(func() { f.shutdown(srv) })
	}
	if f.shut || f.down[srv] {
		f.endLocked(c)
	}
	if len(c.pending) > 0 || c.ending {
		f.flushLocked(c)
	}
}

// sendLocked queues frame on a stream; the caller holds f.mu.
func (f *fanout) sendLocked(c *sseConn, frame string) {
	if c.ending || c.closed {
		return
	}
	if len(c.pending)+len(frame) > maxPending {
		f.endLocked(c) // not keeping up
		return
	}
	c.pending = append(c.pending, frame...)
	if c.conn != nil {
		f.flushLocked(c)
	}
}

// flushLocked has a writer take a stream's pending bytes (or its end); the
// caller holds f.mu.
func (f *fanout) flushLocked(c *sseConn) {
	if !c.queued {
		c.queued = true
		f.writes.push(&f.mu, c)
	}
}

// endLocked has a stream closed; the caller holds f.mu.
func (f *fanout) endLocked(c *sseConn) {
	if c.ending || c.closed {
		return
	}
	c.ending = true
	c.pending = nil
	if c.conn != nil {
		f.flushLocked(c)
	}
}

// write writes a stream's pending bytes, or closes it (a writer).
func (f *fanout) write(c *sseConn) {
	f.mu.Lock()
	for {
		if c.ending {
			c.closed, c.queued = true, false
			f.ends.push(&f.mu, c)
			f.mu.Unlock()
			return
		}
		buf := c.pending
		c.pending = nil
		if len(buf) == 0 {
			c.queued = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		n, err := writeNow(c, buf)
		f.mu.Lock()
		if err != nil {
			c.ending = true
		}
		if c.ending {
			continue
		}
		if n < len(buf) {
			// The socket is full: the rest waits for the next event or
			// heartbeat.
			c.pending = append(buf[n:len(buf):len(buf)], c.pending...)
			if c.stalled.IsZero() {
				c.stalled = time.Now()
			}
			c.queued = false
			f.mu.Unlock()
			return
		}
		c.stalled = time.Time{}
	}
}

// finish forgets a closed stream: its connection, its place among its
// owner's streams (and the owner's subscription with its last), and its
// count toward the limits on every process.
func (f *fanout) finish(c *sseConn) {
	if c.conn != nil {
		_ = c.conn.Close()
	}
	f.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	delete(f.conns, c.id)
	f.live--
	var stop func()
	if o := f.owners[c.owner]; o != nil {
		delete(o.conns, c)
		if len(o.conns) == 0 {
			delete(f.owners, c.owner)
			stop = o.stop
		}
	}
	if len(f.conns) == 0 && f.poll != nil {
		f.poll.wake() // it has nothing left to watch
	}
	f.mu.Unlock()
	if stop != nil {
		stop()
	}
	f.gone(c.st)
}

// run waits for the streams' sockets and sends the heartbeats, until no
// stream is handed over.
func (f *fanout) run(p *poller) {
	ids := make([]uint64, 256)
	for {
		f.mu.Lock()
		wait := time.Minute
		if len(f.beats) > 0 {
			wait = max(0, time.Until(f.beats[0].due))
		}
		f.mu.Unlock()
		n := p.wait(ids, wait)
		now := time.Now()
		f.mu.Lock()
		for _, id := range ids[:n] {
			if c := f.conns[id]; c != nil {
				f.endLocked(c) // the client hung up, or sent something
			}
		}
		for len(f.beats) > 0 && !f.beats[0].due.After(now) {
			c := f.beats[0]
			f.beats[0] = nil
			f.beats = f.beats[1:]
			if c.ending || c.closed {
				continue
			}
			c.due = c.due.Add(f.heartbeat)
			f.beats = append(f.beats, c)
			if !c.stalled.IsZero() && now.Sub(c.stalled) >= f.heartbeat {
				f.endLocked(c) // its writes have waited a whole heartbeat
				continue
			}
			if !c.checking {
				c.checking = true
				f.checks.push(&f.mu, c)
			}
		}
		if len(f.conns) == 0 {
			f.poll, f.beats = nil, nil
			p.close()
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// beat looks at a stream's session again and sends its heartbeat (a
// checker).
func (f *fanout) beat(c *sseConn) {
	ctx, cancel := context.WithTimeout(context.Background(), f.heartbeat)
	err := f.check(ctx, c.token)
	cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	c.checking = false
	if err != nil {
		f.endLocked(c)
		return
	}
	f.sendLocked(c, ": heartbeat\n\n")
}

// shutdown ends the streams of an HTTP server that shuts down.
func (f *fanout) shutdown(srv *http.Server) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[srv] = true
	for _, c := range f.conns {
		if c.srv == srv {
			f.endLocked(c)
		}
	}
}

// close ends every stream, now and from now on, and waits (up to limit)
// until they are closed.
func (f *fanout) close(limit time.Duration) {
	f.mu.Lock()
	f.shut = true
	for _, c := range f.conns {
		f.endLocked(c)
	}
	f.mu.Unlock()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		live := f.live
		f.mu.Unlock()
		if live == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stats is how many streams are open and handed over, and whether the
// goroutine watching their sockets runs.
func (f *fanout) stats() (open, handedOver int, watching bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live, len(f.conns), f.poll != nil
}

// writeNow writes what the stream's socket takes now, without waiting: the
// count written, and an error if the connection is broken. A connection
// that cannot be written without waiting is written with a short deadline.
func writeNow(c *sseConn, b []byte) (int, error) {
	if c.raw == nil {
		_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.conn.Write(b)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			err = nil
		}
		return n, err
	}
	return rawWrite(c.raw, b)
}

// work runs fn on queued items, with at most max goroutines at once and
// none while the queue is empty. Its fields are under the lock push is
// given.
type work[T any] struct {
	items   []T
	running int
	max     int
	fn      func(T)
}

// push queues it; the caller holds mu.
func (q *work[T]) push(mu *sync.Mutex, it T) {
	q.items = append(q.items, it)
	if q.running < q.max {
		q.running++
		go q.run(mu)
	}
}

func (q *work[T]) run(mu *sync.Mutex) {
	mu.Lock()
	for len(q.items) > 0 {
		it := q.items[0]
		var zero T
		q.items[0] = zero
		q.items = q.items[1:]
		if len(q.items) == 0 {
			q.items = nil
		}
		mu.Unlock()
		q.fn(it)
		mu.Lock()
	}
	q.running--
	mu.Unlock()
}
