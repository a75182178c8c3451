package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
)

// Grouped transactions on PostgreSQL (store.Grouped). A few lanes each
// hold a connection while they have work: a lane runs the transactions
// sent to it one after another in one transaction of the database's, and
// commits when none waits or the group is full. A lane has no timer: a
// group forms only of what queued while the lane was busy, so a
// transaction that finds its lane idle commits alone, as soon as it
// would have.
//
// Each member is kept whole or not at all without savepoints: the first
// runs as a transaction alone would (its failure is its own answer), and
// when a later one fails, for any reason, nothing of the group is kept
// and every member is tried again alone (errAlone). Members after the
// first wait at most groupLockWait for a lock another transaction holds:
// the group has taken its earlier members' locks, and another waiting
// for one of those while the group waits for it must not wait for
// PostgreSQL's deadlock check.

const (
	// groupMax is how many transactions share a commit at most.
	groupMax = 8
	// groupLockWait is how long a group's later members wait for a lock.
	groupLockWait = "50ms"
	// groupJoinWait is how long a member may hold its lane before the
	// transactions waiting for the lane run alone instead: a member that
	// takes long (an in-process handler using its compute limit) holds
	// its lane, not the others of it. A lane busy with many quick members
	// keeps them waiting: they share its commits.
	groupJoinWait = 50 * time.Millisecond
)

// errAlone answers a member whose group kept nothing: it is tried again
// alone.
var errAlone = errors.New("store: the group kept nothing; tried again alone")

// lanes are a store's groups in the making, one channel each; a
// transaction goes to its key's.
type lanes struct {
	in []chan *member
	// running is, for each lane, when its member running now began
	// (UnixNano; 0 between members).
	running []atomic.Int64
	stop    chan struct{}
	// counts are what the lanes did, for Grouping.
	counts struct{ commits, kept, alone, busy atomic.Int64 }
}

func (p *pgEngine) grouping() store.Grouping {
	if p.lanes == nil {
		return store.Grouping{}
	}
	c := &p.lanes.counts
	return store.Grouping{Lanes: len(p.lanes.in), Commits: c.commits.Load(), Kept: c.kept.Load(), Alone: c.alone.Load(),
		Busy: time.Duration(c.busy.Load())}
}

// member is a transaction sent to a lane, and its answer.
type member struct {
	fn   func(store.Tx) error
	done chan error
	t    *tx
}

// lanesFor starts the lanes of a pool: half its connections, so that
// transactions alone and reads always find one.
func lanesFor(p *pgEngine, db *DB, pool *pgxpool.Pool) *lanes {
	n := max(1, int(pool.Config().MaxConns)/2)
	l := &lanes{in: make([]chan *member, n), running: make([]atomic.Int64, n), stop: make(chan struct{})}
	for i := range l.in {
		l.in[i] = make(chan *member)
		go l.work(p, db, l.in[i], &l.running[i])
	}
	return l
}

func (l *lanes) close() { close(l.stop) }

// grouped runs fn in its key's lane, or alone when that kept nothing.
func (p *pgEngine) grouped(ctx context.Context, db *DB, key string, fn func(store.Tx) error) error {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &member{fn: fn, done: make(chan error, 1)}
	lane := h.Sum32() % uint32(len(p.lanes.in))
	wait := time.NewTimer(groupJoinWait)
	defer wait.Stop()
	for {
		select {
		case p.lanes.in[lane] <- m:
			err := <-m.done
			var pn *panicked
			if errors.As(err, &pn) {
				panic(pn.value) // on the caller's goroutine, as alone
			}
			if !errors.Is(err, errAlone) {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-wait.C:
			if began := p.lanes.running[lane].Load(); began == 0 || time.Since(time.Unix(0, began)) < groupJoinWait {
				wait.Reset(groupJoinWait)
				continue
			}
			p.lanes.counts.alone.Add(1)
		case <-p.lanes.stop:
		}
		return p.tx(store.Alone(ctx), db, fn)
	}
}

// work runs the lane's groups until the store closes.
func (l *lanes) work(p *pgEngine, db *DB, in chan *member, running *atomic.Int64) {
	for {
		select {
		case m := <-in:
			p.group(db, m, in, running)
		case <-l.stop:
			return
		}
	}
}

// group runs first and what waits in the lane after it, up to groupMax,
// in one transaction, and answers each; running says when the member
// running now began.
func (p *pgEngine) group(db *DB, first *member, in chan *member, running *atomic.Int64) {
	ctx := context.Background()
	began := time.Now()
	defer func() { p.lanes.counts.busy.Add(int64(time.Since(began))) }()
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		first.done <- classify(err)
		return
	}
	defer c.Release()
	carry := []stmt{{sql: "BEGIN"}}
	var kept []*member
	for m := first; m != nil; {
		t := newTx(pgQuerier{c}, nil, db)
		t.native = queueTx{c: c, t: t}
		if len(kept) == 1 {
			carry = append(carry, stmt{sql: "SET LOCAL lock_timeout = '" + groupLockWait + "'"})
		}
		t.pending = carry
		running.Store(time.Now().UnixNano())
		err := try(m.fn, t)
		running.Store(0)
		if err != nil {
			t.rollback(ctx, c)
			var pn *panicked
			if len(kept) == 0 || errors.As(err, &pn) {
				// As alone: the first waits for locks as long as alone.
				m.done <- err
			} else {
				m.done <- errAlone
				p.lanes.counts.alone.Add(1)
			}
			for _, k := range kept {
				k.done <- errAlone
			}
			p.lanes.counts.alone.Add(int64(len(kept)))
			return
		}
		m.t, kept = t, append(kept, m)
		carry = t.takePending()
		m = nil
		if len(kept) < groupMax {
			select {
			case m = <-in:
			default:
			}
		}
	}
	last := kept[len(kept)-1].t
	last.pending = carry
	if len(kept) > 1 {
		// The COMMIT waits for the NOTIFY queue's lock as long as alone.
		last.later(stmt{sql: "SET LOCAL lock_timeout = 0"})
	}
	var events []store.TaskEvent
	var handoffs []store.AnswerJob
	for _, k := range kept {
		events = append(events, k.t.events...)
		handoffs = append(handoffs, k.t.handoffs...)
	}
	last.events, last.handoffs = events, handoffs
	err = p.commit(ctx, db, c, last)
	if err == nil {
		p.lanes.counts.commits.Add(1)
		p.lanes.counts.kept.Add(int64(len(kept)))
	} else if !errors.Is(err, store.ErrUnavailable) {
		p.lanes.counts.alone.Add(int64(len(kept)))
	}
	for _, k := range kept {
		switch {
		case err == nil, errors.Is(err, store.ErrUnavailable):
			// Kept, or perhaps kept: the members answer as one alone would.
			k.done <- err
		default:
			k.done <- errAlone
		}
	}
}

// panicked is a member's panic, carried to its caller's goroutine.
type panicked struct{ value any }

func (p *panicked) Error() string {
	return fmt.Sprint("store: a grouped transaction panicked: ", p.value)
}

// try runs fn in t, a panic in it made an error (the lane goes on).
func try(fn func(store.Tx) error, t *tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicked{r}
		}
	}()
	return fn(t)
}
