package enclave

import (
	"context"
	"time"

	"countersign"
	"countersign/store"
)

// Sweep timings.
const (
	// HeartbeatEvery is how often a process says it is alive; a process not
	// heard from for RunnerDead is taken for dead, and its answer runs end
	// run_unfinished (never replayed).
	HeartbeatEvery = 10 * time.Second
	RunnerDead     = time.Minute
	// SweepEvery is how often the leader sweeps.
	SweepEvery = 30 * time.Second
	// sweepBatch bounds the tasks one sweep ends.
	sweepBatch = 500
	// idempotencyKeep is how long idempotency keys answer.
	idempotencyKeep = 24 * time.Hour
	// countsKeep is how long daily counts and heartbeats are kept.
	countsKeep = 3 * 24 * time.Hour
)

// Heartbeat says this process is alive, for the answer runs it runs.
func (e *Enclave) Heartbeat(ctx context.Context) error {
	return e.store.Tx(ctx, func(tx enclaveTx) error { return tx.Heartbeat(ctx, e.instance, e.now().UTC()) })
}

// KeepAlive beats until ctx ends.
func (e *Enclave) KeepAlive(ctx context.Context) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		if err := e.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepResult counts what a sweep did.
type SweepResult struct {
	Expired, NotStarted, Unfinished, Requeued, Purged int
}

// Sweep ends what the platform must end, idempotently: open tasks past
// expires_at → expired; approved for 30 minutes → failed run_not_started;
// approved for RunnerDead with no answer job waiting in the queue (its job
// was lost with a process that died working it) → queued again, so the
// owner's yes is carried out rather than ended;
// answering for 30 minutes, or on a process that stopped beating →
// failed run_unfinished ("the write may or may not have happened"); then it
// purges outcomes kept 30 days, spent nonces past their window, idempotency
// keys past 24 hours. Every move is a compare-and-set, so sweeps on several
// processes, or a run finishing at the same moment, never end a task twice.
func (e *Enclave) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := e.clock()
	err := e.store.Tx(ctx, func(tx enclaveTx) error {
		stale, err := tx.Stale(ctx, now, now.Add(-countersign.AnswerRunDeadline), now.Add(-countersign.AnswerRunDeadline), now.Add(-RunnerDead), sweepBatch)
		if err != nil {
			return err
		}
		for _, t := range stale {
			var to countersign.State
			var reason countersign.FailureReason
			switch t.State {
			case countersign.StateOpen:
				to = countersign.StateExpired
			case countersign.StateApproved:
				to, reason = countersign.StateFailed, countersign.FailRunNotStarted
			case countersign.StateAnswering:
				to, reason = countersign.StateFailed, countersign.FailRunUnfinished
			default:
				continue
			}
			m, err := countersign.Transition(t.Kind, t.State, to, countersign.ActorPlatform, reason)
			if err != nil {
				// A row the domain cannot end (a notice that is not
				// open) stops no other task's end.
				e.log.Error("the sweep cannot end a task", "task", t.ID, "err", err)
				continue
			}
			moved, err := tx.MoveTask(ctx, store.Move{ID: t.ID, Move: m, At: now, Run: t.AnswerRun})
			if err != nil {
				return err
			}
			if !moved {
				continue
			}
			switch to {
			case countersign.StateExpired:
				res.Expired++
			default:
				if reason == countersign.FailRunNotStarted {
					res.NotStarted++
				} else {
					res.Unfinished++
					if err := e.recordResult(ctx, tx, t, map[string]any{"ok": false,
						"error": "run_unfinished: the run did not report; the write may or may not have happened.", "wrote": nil}, "", ""); err != nil {
						return err
					}
				}
			}
		}
		stranded, err := tx.StrandedApprovals(ctx, now.Add(-RunnerDead), sweepBatch)
		if err != nil {
			return err
		}
		for _, j := range stranded {
			if err := tx.EnqueueAnswer(ctx, j); err != nil {
				return err
			}
			res.Requeued++
		}
		n, err := tx.Purge(ctx, now, now.Add(-countersign.OutcomeKept), now.Add(-idempotencyKeep), now.Add(-countsKeep))
		res.Purged = n
		return err
	})
	if err == nil && res != (SweepResult{}) {
		e.log.Info("swept", "expired", res.Expired, "run_not_started", res.NotStarted, "run_unfinished", res.Unfinished,
			"requeued", res.Requeued, "purged", res.Purged)
	}
	return res, err
}
