// Package sweeps ends, on the enclave side, what the platform must end:
// open tasks past their expiry, approved tasks whose run never began or
// whose job was lost, answer runs that never reported; and purges what is
// kept no longer (SPEC §8). The queue's leader runs a sweep every
// SweepEvery.
package sweeps

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"countersign"
	"countersign/enclave"
	"countersign/enclave/answers"
	"countersign/store"
)

// Sweep timings.
const (
	// SweepEvery is how often the leader sweeps.
	SweepEvery = 10 * time.Second
	// StrandedAfter is how long an approved task may wait with no answer
	// job in the queue before the sweep queues it again: a process that
	// runs answers takes its own approvals' runs at once, keeping no copy
	// in the queue, so an approval waiting this long was most likely
	// handed to a process that died.
	StrandedAfter = 10 * time.Second
	// sweepBatch bounds the tasks one sweep ends.
	sweepBatch = 500
	// idempotencyKeep is how long idempotency keys answer.
	idempotencyKeep = 24 * time.Hour
	// countsKeep is how long daily counts and heartbeats are kept.
	countsKeep = 3 * 24 * time.Hour
)

// Service sweeps.
type Service struct {
	keys       *enclave.Keys
	store      store.Port[sweepsTx]
	now        func() time.Time
	log        *slog.Logger
	runnerDead time.Duration
}

// Config is what a Service is built from.
type Config struct {
	enclave.Deps
	// RunnerDead is how long a process that runs answers may go unheard
	// from before its runs in flight end run_unfinished (0:
	// answers.RunnerDead).
	RunnerDead time.Duration
}

// New returns the sweeps service.
func New(c Config) *Service {
	c.Deps = c.Deps.WithDefaults()
	if c.RunnerDead <= 0 {
		c.RunnerDead = answers.RunnerDead
	}
	return &Service{keys: c.Keys, store: port(c.Store), now: c.Now, log: c.Logger, runnerDead: c.RunnerDead}
}

// Every is how often the leader sweeps: SweepEvery, or half the time a
// runner is taken for dead after if that is shorter, so that a dead
// runner's runs end soon after it is. A stranded approval is queued again
// within StrandedAfter and one sweep.
func (s *Service) Every() time.Duration { return min(SweepEvery, s.runnerDead/2) }

// sweepsTx is everything a sweep may read and change in one of the
// store's transactions: the stale tasks it ends and their outcomes, the
// stranded approvals it queues again, and what it purges.
type sweepsTx interface {
	store.Tasks
	store.Outcomes
	store.AnswerJobs
	store.Upkeep
}

// port gives the sweeps service the store's transactions as sweepsTx.
func port(s store.Store) store.Port[sweepsTx] {
	return store.Narrow(s, func(tx store.Tx) sweepsTx { return tx })
}

// clock is the time in whole seconds, UTC.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Second) }

// SweepResult counts what a sweep did.
type SweepResult struct {
	Expired, NotStarted, Unfinished, Requeued, Purged int
}

// Sweep ends what the platform must end, idempotently: open tasks past
// expires_at → expired; approved for 30 minutes → failed run_not_started;
// approved for as long as a runner is taken for dead after (Config's
// RunnerDead) with no answer job waiting in the queue (its job was lost
// with a process that died working it) → queued again,
// so the owner's yes is carried out rather than ended; answering for 30
// minutes, or on a process that stopped beating →
// failed run_unfinished ("the write may or may not have happened"); then it
// purges outcomes kept 30 days, spent nonces past their window, idempotency
// keys past 24 hours. Every move is a compare-and-set, so sweeps on several
// processes, or a run finishing at the same moment, never end a task twice.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := s.clock()
	err := s.store.Tx(ctx, func(tx sweepsTx) error {
		stale, err := tx.Stale(ctx, now, now.Add(-countersign.AnswerRunDeadline), now.Add(-countersign.AnswerRunDeadline), now.Add(-s.runnerDead), sweepBatch)
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
				s.log.Error("the sweep cannot end a task", "task", t.ID, "err", err)
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
					if err := s.unfinished(ctx, tx, t); err != nil {
						return err
					}
				}
			}
		}
		stranded, err := tx.StrandedApprovals(ctx, now.Add(-StrandedAfter), sweepBatch)
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
		s.log.Info("swept", "expired", res.Expired, "run_not_started", res.NotStarted, "run_unfinished", res.Unfinished,
			"requeued", res.Requeued, "purged", res.Purged)
	}
	return res, err
}

// unfinished seals, for the preparer, the result of a run that never
// reported.
func (s *Service) unfinished(ctx context.Context, tx store.Outcomes, t store.Task) error {
	result, err := json.Marshal(map[string]any{"ok": false,
		"error": "run_unfinished: the run did not report; the write may or may not have happened.", "wrote": nil})
	if err != nil {
		return err
	}
	sealed, err := s.keys.SealOutcome(t, result)
	if err != nil {
		return err
	}
	return tx.RecordAnswer(ctx, t.ID, sealed, "", "")
}
