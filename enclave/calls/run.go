package calls

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/egress"
	"countersign/policy"
	"countersign/store"
)

// Execute runs a handler of conn's for run within the run's compute limit
// (runHandler), giving it the platform through which it opens tasks,
// counts and spends, and returns what it answered and the tasks it
// opened.
func (s *Service) Execute(ctx context.Context, run *Run, conn *connectors.Connector, f func(context.Context, connectors.Platform) (any, error)) (any, []Opened, error) {
	p := &platform{s: s, run: run, conn: conn}
	out, err := s.runHandler(ctx, run, func(ctx context.Context) (any, error) { return f(ctx, p) })
	return out, p.tasks(), err
}

// ExecuteIn is Execute for an operation declared InProcess, whose run is
// kept in tx, the caller's transaction: what the handler does through the
// platform is done in tx (never tried again on its own), and a request it
// makes through an egress client is refused. broke is the first error of
// tx's that the platform met, after which tx is not to be committed: the
// run then kept nothing, and may run again.
func (s *Service) ExecuteIn(ctx context.Context, tx RunTx, run *Run, conn *connectors.Connector, f func(context.Context, connectors.Platform) (any, error)) (out any, opened []Opened, runErr, broke error) {
	p := &platform{s: s, run: run, conn: conn, tx: tx, txCtx: context.WithoutCancel(ctx)}
	out, runErr = s.runHandler(egress.InProcess(ctx), run, func(ctx context.Context) (any, error) { return f(ctx, p) })
	// A handler given up may still call the platform: from now on it is
	// refused, and tx is the caller's alone.
	p.txMu.Lock()
	p.closed = true
	broke = p.broke
	p.txMu.Unlock()
	return out, p.tasks(), runErr, broke
}

// RunTx is what the platform's operations read and write: opening tasks,
// the daily counts and the spend ledger. A transaction a run is kept in
// (ExecuteIn) offers it.
type RunTx interface {
	openTx
	store.Counts
}

// OverrunGrace is how long a handler may take, past its compute limit, to
// notice its context ended before the run is given up.
const OverrunGrace = time.Second

// runHandler runs a connector's handler within the run's compute limit. A
// panic is an internal error and the process survives; a handler that
// overruns its limit is given up (whatever it tries through the platform
// afterwards is refused).
func (s *Service) runHandler(ctx context.Context, run *Run, f func(context.Context) (any, error)) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, run.ComputeLimit)
	defer cancel()
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("a connector panicked", "run", run.ID, "panic", panicKind(r), "stack", string(debug.Stack()))
				done <- result{nil, countersign.Errorf(countersign.Internal, "the connector failed")}
			}
		}()
		out, err := f(ctx)
		done <- result{out, err}
	}()
	overrun := countersign.Errorf(countersign.Internal, "the run passed its compute limit of %s", run.ComputeLimit)
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() == context.DeadlineExceeded && countersign.ErrorCode(r.err) == countersign.Internal {
			return nil, overrun
		}
		return r.out, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		if r.err == nil && ctx.Err() != context.DeadlineExceeded {
			return r.out, nil
		}
		if r.err != nil && countersign.ErrorCode(r.err) != countersign.Internal {
			return r.out, r.err
		}
		return nil, overrun
	case <-time.After(OverrunGrace):
		run.abandoned.Store(true)
		s.log.Error("a connector overran its compute limit and was given up", "run", run.ID, "limit", run.ComputeLimit)
		return nil, overrun
	}
}

// panicKind names a panic for the log without its value, which may hold
// what the run was reading; the runtime's own faults (nil dereference, index
// out of range) are named in full since their text holds no content.
func panicKind(v any) string {
	if re, ok := v.(runtime.Error); ok {
		return re.Error()
	}
	return fmt.Sprintf("%T", v)
}

// storeWithin runs a running operation's transaction, trying again while the
// store is unavailable, within the run's compute limit (its context's
// deadline): a short outage does not fail a run that has not written yet.
func (s *Service) storeWithin(ctx context.Context, fn func(callsTx) error) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(finishPatience)
	}
	return UntilStored(ctx, s.store, s.log, deadline, fn)
}

// storeRetry is the first wait before a transaction the store was
// unavailable for is tried again; it doubles up to storeRetryMax.
const (
	storeRetry    = 50 * time.Millisecond
	storeRetryMax = 5 * time.Second
)

// UntilStored runs fn in a transaction of port, trying again while the
// store is unavailable, until deadline (or ctx ends).
func UntilStored[T any](ctx context.Context, port store.Port[T], log *slog.Logger, deadline time.Time, fn func(T) error) error {
	wait := storeRetry
	for {
		err := port.Tx(ctx, fn)
		if !errors.Is(err, store.ErrUnavailable) || time.Now().Add(wait).After(deadline) {
			return err
		}
		log.Warn("the store is unavailable; trying again shortly", "wait", wait)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, storeRetryMax)
	}
}

// platform is what a running operation gets of the service.
type platform struct {
	s    *Service
	run  *Run
	conn *connectors.Connector
	// opened records the tasks the run opened.
	mu     sync.Mutex
	opened []Opened
	// tx, when set, is the transaction the run is kept in (ExecuteIn),
	// used under txMu with txCtx; closed once the run is over, broke set
	// by the first failure that leaves tx not to be committed.
	tx     RunTx
	txCtx  context.Context
	txMu   sync.Mutex
	closed bool
	broke  error
}

// within runs fn in the run's transaction (ExecuteIn), or else in a
// transaction of its own, tried again while the store is away.
func (p *platform) within(ctx context.Context, fn func(ctx context.Context, tx RunTx) error) error {
	if p.tx == nil {
		return p.s.storeWithin(ctx, func(tx callsTx) error { return fn(ctx, tx) })
	}
	p.txMu.Lock()
	defer p.txMu.Unlock()
	switch {
	case p.closed:
		return errGivenUp
	case p.broke != nil:
		return p.broke
	}
	// The statements run on the run's own context: the handler's deadline
	// cutting one off would leave the transaction unusable.
	err := fn(p.txCtx, p.tx)
	if err != nil && !refusedBeforeWriting(err) {
		p.broke = err
	}
	return err
}

// refusedBeforeWriting tells whether err, from a platform operation, is
// a refusal the task layer makes before it writes anything (a limit, a
// mute, a thread that is not the preparer's), which leaves the run's
// transaction as it was. Anything else — the store's errors, a charge
// the balance did not cover, an internal error — may leave it half
// written or failed.
func refusedBeforeWriting(err error) bool {
	var ce *countersign.Error
	return errors.As(err, &ce) && ce.Code != countersign.Internal && ce.Code != countersign.TaskStoreUnavailable
}

// tasks are the tasks the run opened so far.
func (p *platform) tasks() []Opened {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Opened(nil), p.opened...)
}

// errGivenUp refuses what a handler asks after its run was given up.
var errGivenUp = countersign.Errorf(countersign.Internal, "the run passed its compute limit")

func (p *platform) OpenTask(ctx context.Context, spec connectors.TaskSpec, thread string) (connectors.Task, error) {
	if p.run.abandoned.Load() {
		return connectors.Task{}, errGivenUp
	}
	if err := p.conn.CanOpen(spec); err != nil {
		return connectors.Task{}, err
	}
	var o Opened
	err := p.within(ctx, func(ctx context.Context, tx RunTx) (err error) {
		o, err = p.s.OpenTask(ctx, tx, p.run, spec, thread)
		return err
	})
	if err != nil {
		return connectors.Task{}, err
	}
	p.mu.Lock()
	p.opened = append(p.opened, o)
	p.mu.Unlock()
	return connectors.Task{ID: o.ID, Kind: o.Kind, Hash: o.Hash, Thread: o.Thread, ExpiresAt: o.ExpiresAt, Link: p.s.Link(o.ID)}, nil
}

func (p *platform) Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error) {
	if p.run.abandoned.Load() {
		return false, errGivenUp
	}
	var ok bool
	err := p.within(ctx, func(ctx context.Context, tx RunTx) (err error) {
		ok, err = tx.ReserveDaily(ctx, store.DailyKey{Owner: p.run.Project.Owner, ProjectUUID: p.run.Project.UUID,
			Agent: p.run.Agent, Day: policy.Day(p.s.now()), Kind: kind.String()}, limit)
		return err
	})
	return ok, err
}

func (p *platform) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	if p.run.abandoned.Load() {
		return false, errGivenUp
	}
	now := p.s.now()
	var ok bool
	err := p.within(ctx, func(ctx context.Context, tx RunTx) (err error) {
		ok, err = tx.ReserveSpend(ctx, store.Spend{Owner: p.run.Project.Owner, ProjectUUID: p.run.Project.UUID, Key: key,
			Cents: int64(amount), At: now, Since: now.Add(-connectors.SpendWindow)}, int64(limit))
		return err
	})
	return ok, err
}

func (p *platform) Unspend(ctx context.Context, key string) error {
	return p.within(ctx, func(ctx context.Context, tx RunTx) error { return tx.ReleaseSpend(ctx, p.run.Project.UUID, key) })
}
