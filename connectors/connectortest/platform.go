package connectortest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/policy"
)

// run is one execution of an operation: the connectors.Platform its handler
// is given.
type run struct {
	h                                  *Harness
	id, operation                      string
	owner, agent, project, projectUUID string
	policyHash                         string // of the policy the run was given

	mu     sync.Mutex
	n      int      // tasks opened
	opened []Opened // what it opened, in order
	ended  bool
}

func (h *Harness) newRun(operation, owner, agent, project, projectUUID string, pol *policy.Policy) *run {
	return &run{h: h, id: countersign.NewRunID(), operation: operation,
		owner: owner, agent: agent, project: project, projectUUID: projectUUID, policyHash: pol.Hash()}
}

// end marks the run over; it reports whether it was already.
func (r *run) end() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.ended
	r.ended = true
	return was
}

func (r *run) tasks() []Opened {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Opened, len(r.opened))
	for i, o := range r.opened {
		out[i] = o.clone()
	}
	return out
}

// OpenTask opens a task as the platform does, enforcing what the platform
// enforces whatever the connector asked.
func (r *run) OpenTask(ctx context.Context, spec connectors.TaskSpec, thread string) (connectors.Task, error) {
	if err := ctx.Err(); err != nil {
		return connectors.Task{}, fmt.Errorf("open a task: %w", err)
	}
	h := r.h
	if h.FailOpen != nil {
		if err := h.FailOpen(spec); err != nil {
			return connectors.Task{}, err
		}
	}
	if err := h.conn.CanOpen(spec); err != nil {
		return connectors.Task{}, err
	}
	spec = cloneSpec(spec) // what the connector holds may change after the call

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return connectors.Task{}, fmt.Errorf("open a task: the run of %s has ended", r.operation)
	}
	life, err := spec.Check(r.n)
	if err != nil {
		return connectors.Task{}, err
	}
	files := make([]countersign.File, len(spec.Files))
	for i, f := range spec.Files {
		sum := sha256.Sum256(f.Data)
		files[i] = countersign.File{ContentType: f.ContentType, Name: f.Name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f.Data))}
	}

	id, err := countersign.TaskID(r.id, r.n+1)
	if err != nil {
		return connectors.Task{}, fmt.Errorf("open a task: %w", err)
	}
	if thread == "" {
		thread = id
	} else if thread, err = h.thread(thread, r.owner, r.agent); err != nil {
		return connectors.Task{}, err
	}
	now := h.now().UTC().Truncate(time.Second)
	stateSum := sha256.Sum256(spec.State)
	env := countersign.Envelope{
		AnswerBy:    spec.AnswerBy,
		Build:       h.conn.Build(),
		CreatedAt:   now,
		Display:     spec.Display,
		ExpiresAt:   now.Add(life),
		Files:       files,
		ID:          id,
		Kind:        spec.Kind,
		Owner:       r.owner,
		PolicyHash:  r.policyHash,
		Preparer:    r.agent,
		Project:     r.project,
		ProjectUUID: r.projectUUID,
		StateHash:   hex.EncodeToString(stateSum[:]),
		Thread:      thread,
	}
	if spec.Kind.Asks() {
		env.ReplyPubkey = replyPubkey
	}
	// Canonical checks the rest as the service does: the kind, what the
	// answer supplies, the display (countersign.ValidateDisplay) and the files
	// (countersign.ValidateFiles).
	envelope, err := env.Canonical()
	if err != nil {
		return connectors.Task{}, err
	}
	task := connectors.Task{
		ID: id, Kind: spec.Kind, Hash: countersign.TaskHash(envelope), Thread: thread,
		ExpiresAt: env.ExpiresAt, Link: h.PublicURL + "/#/tasks/" + id,
	}
	o := Opened{Task: task, Spec: spec, Envelope: envelope, Run: r.id, Operation: r.operation, Preparer: r.agent}
	h.mu.Lock()
	rec := &record{opened: o, owner: r.owner, status: Status{State: countersign.StateOpen}}
	h.tasks = append(h.tasks, rec)
	h.byID[id] = rec
	h.mu.Unlock()
	r.n++
	r.opened = append(r.opened, o.clone())
	return task, nil
}

// thread finds the thread a task continues: the thread of the task whose id
// is given, when it is the same preparer's for the same owner.
func (h *Harness) thread(of, owner, agent string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first, ok := h.byID[of]
	if !ok || first.opened.Preparer != agent || first.owner != owner {
		return "", countersign.Errorf(countersign.InvalidRequest, "no such thread for this preparer")
	}
	return first.opened.Task.Thread, nil
}

// Reserve counts one write against the day's number of the run's owner,
// project and agent.
func (r *run) Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error) {
	key := policy.Key{Owner: r.owner, Project: r.projectUUID, Agent: r.agent, Day: policy.Day(r.h.now())}
	ok, err := r.h.counts.Reserve(ctx, key, kind, limit)
	if err != nil {
		return false, fmt.Errorf("reserve a %s write: %w", kind, err)
	}
	return ok, nil
}

// Spend counts a payment against the project's spending, as the platform
// does (Platform.Spend), over the harness's clock.
func (r *run) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("count a payment: %w", err)
	}
	if key == "" || amount <= 0 {
		return false, fmt.Errorf("count a payment: a payment needs a key and a positive amount")
	}
	h := r.h
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.payments[key]; ok {
		return true, nil
	}
	var sum policy.Cents
	for _, p := range h.payments {
		if p.at.After(now.Add(-connectors.SpendWindow)) {
			sum += p.amount
		}
	}
	if limit >= 0 && (sum > limit || amount > limit-sum) {
		return false, nil
	}
	if h.payments == nil {
		h.payments = map[string]payment{}
	}
	h.payments[key] = payment{amount: amount, at: now}
	return true, nil
}

// Unspend forgets a counted payment.
func (r *run) Unspend(_ context.Context, key string) error {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	delete(r.h.payments, key)
	return nil
}

// payment is one payment the harness counted.
type payment struct {
	amount policy.Cents
	at     time.Time
}
