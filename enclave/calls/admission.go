package calls

import (
	"context"
	"errors"
	"sync"

	"countersign/store"
)

// A call's admission is what lets it in: the agent its key is, and the
// project it calls, with whether the agent is granted it.
//
// Reading it is a round trip and a transaction of its own, about a quarter
// of what the database does for an agent's write. So an admission found
// granted is kept (admissions), and the next call by that key to that
// project is let in on it without a read, on one condition: a transaction
// of the call that commits checks, with its own statements, that the
// admission is as it was kept (store AdmissionHolds: the key not revoked,
// the project the same version and still granted). A check that fails
// keeps nothing of its transaction. Whatever a call decides from a kept
// admission without such a transaction committing — a refusal of its
// arguments, a balance that does not cover the price, a failed check — is
// decided again from a fresh read, which keeps or drops it: an agent is
// never told more or less than its admission as it is would tell it.
type admission struct {
	keyHash     string
	owner, name string
	agent       store.Agent
	project     store.Project // the zero Project when there is none
	granted     bool
	// kept: let in on what an earlier call read. stands: a transaction
	// of this call that checked it committed, or the call did what is not
	// to be done twice, so its answer stands.
	kept, stands bool
}

// check adds the admission's check to tx when it was kept.
func (d *admission) check(ctx context.Context, tx callsTx) error {
	if !d.kept {
		return nil
	}
	return tx.AdmissionHolds(ctx, store.Admission{KeyHash: []byte(d.keyHash), Agent: d.agent.Account,
		Owner: d.project.Owner, Project: d.project.Name, UUID: d.project.UUID, Version: d.project.Version})
}

// admit finds the admission of a call by agentKey to owner's project: the
// one ctx's request found with it (AuthenticateCall), a kept one, or a
// fresh read (of the project alone when ctx's request read its agent).
func (s *Service) admit(ctx context.Context, agentKey, owner, name string) (*admission, error) {
	if !wellFormedKey(agentKey) {
		return nil, unauthorized()
	}
	h := string(HashAgentKey(agentKey))
	a, ok := ctx.Value(authenticatedKey{}).(authenticated)
	ok = ok && a.keyHash == h
	if ok && a.admission != nil && a.admission.owner == owner && a.admission.name == name {
		d := *a.admission // each call its own
		return &d, nil
	}
	if d, kept := s.admissions.get(h, owner, name); kept {
		return d, nil
	}
	if agent, read := a.agentRead(); ok && read {
		return s.readProject(ctx, h, agent, owner, name)
	}
	return s.readAdmission(ctx, h, owner, name)
}

// admittedTx runs fn in one of the store's transactions that also checks
// d, if it was kept: when it commits, what the call answers from it stands.
func (s *Service) admittedTx(ctx context.Context, d *admission, fn func(tx callsTx) error) error {
	return s.admitted(ctx, s.store.Tx, d, fn)
}

// admittedRead is admittedTx for lookups (the store's Read): fn's first
// statement carries the check.
func (s *Service) admittedRead(ctx context.Context, d *admission, fn func(tx callsTx) error) error {
	return s.admitted(ctx, s.store.Read, d, fn)
}

func (s *Service) admitted(ctx context.Context, in func(context.Context, func(callsTx) error) error, d *admission, fn func(tx callsTx) error) error {
	err := in(ctx, func(tx callsTx) error {
		if err := d.check(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
	if err == nil {
		d.stands = true
	}
	return err
}

// readAdmission reads a call's admission (its key and project in one round
// trip), and keeps it if it is granted.
func (s *Service) readAdmission(ctx context.Context, keyHash, owner, name string) (*admission, error) {
	d := &admission{keyHash: keyHash, owner: owner, name: name}
	err := s.store.Read(ctx, func(tx callsTx) (err error) {
		var found bool
		d.agent, d.project, found, err = tx.AgentCalling(ctx, []byte(keyHash), owner, name)
		d.granted = found && contains(d.project.Agents, d.agent.Account)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.admissions.drop(keyHash, owner, name)
		return nil, unauthorized()
	case err != nil:
		return nil, Transport(err)
	}
	s.admissions.note(d)
	return d, nil
}

// readProject is readAdmission for a request that read its agent already
// (an MCP tool's call: its request was authenticated with no project).
func (s *Service) readProject(ctx context.Context, keyHash string, agent store.Agent, owner, name string) (*admission, error) {
	d := &admission{keyHash: keyHash, owner: owner, name: name, agent: agent}
	err := s.store.Read(ctx, func(tx callsTx) error {
		p, err := tx.Project(ctx, owner, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		d.project, d.granted = p, err == nil && contains(p.Agents, agent.Account)
		return err
	})
	if err != nil {
		return nil, Transport(err)
	}
	s.admissions.note(d)
	return d, nil
}

// maxKept bounds the admissions kept: past it, one is dropped for each one
// kept.
const maxKept = 1024

// admissions are the granted admissions calls read, by key hash, owner and
// project.
type admissions struct {
	mu   sync.Mutex
	kept map[string]admission
}

func admissionKey(keyHash, owner, name string) string {
	return keyHash + "\x00" + owner + "\x00" + name
}

func (k *admissions) get(keyHash, owner, name string) (*admission, bool) {
	k.mu.Lock()
	d, ok := k.kept[admissionKey(keyHash, owner, name)]
	k.mu.Unlock()
	if !ok {
		return nil, false
	}
	d.kept = true
	return &d, true
}

// note keeps d as read if it is granted, and drops what was kept of its
// key and project if it is not.
func (k *admissions) note(d *admission) {
	if !d.granted {
		k.drop(d.keyHash, d.owner, d.name)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key := admissionKey(d.keyHash, d.owner, d.name)
	if k.kept == nil {
		k.kept = map[string]admission{}
	}
	if _, ok := k.kept[key]; !ok && len(k.kept) >= maxKept {
		for other := range k.kept {
			delete(k.kept, other)
			break
		}
	}
	kept := *d
	kept.kept, kept.stands = false, false
	k.kept[key] = kept
}

func (k *admissions) drop(keyHash, owner, name string) {
	k.mu.Lock()
	delete(k.kept, admissionKey(keyHash, owner, name))
	k.mu.Unlock()
}
