package calls

import (
	"context"
	"errors"
	"sync"

	"countersign/store"
)

// A call's door is what lets it in: the agent its key is, and the project
// it calls, with whether the agent is granted it.
//
// Reading the door is a round trip and a transaction of its own, about a
// quarter of what the database does for an agent's write. So a door found
// granted is kept (doors), and the next call by that key to that project
// is let in on it without a read, on one condition: a transaction of the
// call that commits checks, with its own statements, that the door is as it
// was kept (store DoorUnchanged: the key not revoked, the project the same
// version and still granted). A check that fails keeps nothing of its
// transaction and drops the kept door. Whatever a call decides from a kept
// door without such a transaction committing — a refusal of its arguments,
// a balance that does not cover the price, a failed check — is decided
// again from a fresh read, so an agent is never told more or less than the
// door as it is would tell it.
type door struct {
	keyHash     string
	owner, name string
	agent       store.Agent
	project     store.Project // the zero Project when there is none
	granted     bool
	// kept: let in on a door an earlier call read. stands: a transaction
	// of this call that checked it committed, or the call did what is not
	// to be done twice, so its answer stands.
	kept, stands bool
}

// check adds the door's check to tx when the door was kept.
func (d *door) check(ctx context.Context, tx callsTx) error {
	if !d.kept {
		return nil
	}
	return tx.DoorUnchanged(ctx, store.Door{KeyHash: []byte(d.keyHash), Agent: d.agent.Account,
		Owner: d.project.Owner, Project: d.project.Name, UUID: d.project.UUID, Version: d.project.Version})
}

// door finds the door of a call by agentKey to owner's project: the one
// ctx's request already found, a kept one, or a fresh read.
func (s *Service) door(ctx context.Context, agentKey, owner, name string) (*door, error) {
	if !wellFormedKey(agentKey) {
		return nil, unauthorized()
	}
	h := string(HashAgentKey(agentKey))
	if a, ok := ctx.Value(authenticatedKey{}).(authenticated); ok && a.keyHash == h {
		if a.door != nil && a.door.owner == owner && a.door.name == name {
			d := *a.door // each call its own
			return &d, nil
		}
		if a.read {
			return s.readProject(ctx, h, a.agent, owner, name)
		}
	}
	if d, ok := s.doors.get(h, owner, name); ok {
		return d, nil
	}
	return s.readDoor(ctx, h, owner, name)
}

// readDoor reads a call's door (its key and project in one round trip),
// and keeps it if it is granted.
func (s *Service) readDoor(ctx context.Context, keyHash, owner, name string) (*door, error) {
	d := &door{keyHash: keyHash, owner: owner, name: name}
	err := s.store.Read(ctx, func(tx callsTx) (err error) {
		var found bool
		d.agent, d.project, found, err = tx.AgentCalling(ctx, []byte(keyHash), owner, name)
		d.granted = found && contains(d.project.Agents, d.agent.Account)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.doors.drop(keyHash, owner, name)
		return nil, unauthorized()
	case err != nil:
		return nil, Transport(err)
	}
	if d.granted {
		s.doors.keep(d)
	} else {
		s.doors.drop(keyHash, owner, name)
	}
	return d, nil
}

// readProject is readDoor for a request that read its agent already.
func (s *Service) readProject(ctx context.Context, keyHash string, agent store.Agent, owner, name string) (*door, error) {
	d := &door{keyHash: keyHash, owner: owner, name: name, agent: agent}
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
	return d, nil
}

// maxKeptDoors bounds the doors kept: past it, one kept door is dropped
// for each one kept.
const maxKeptDoors = 1024

// doors are the granted doors calls found, by key hash, owner and project.
type doors struct {
	mu   sync.Mutex
	kept map[string]door
}

func doorKey(keyHash, owner, name string) string { return keyHash + "\x00" + owner + "\x00" + name }

func (k *doors) get(keyHash, owner, name string) (*door, bool) {
	k.mu.Lock()
	d, ok := k.kept[doorKey(keyHash, owner, name)]
	k.mu.Unlock()
	if !ok {
		return nil, false
	}
	d.kept = true
	return &d, true
}

func (k *doors) keep(d *door) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := doorKey(d.keyHash, d.owner, d.name)
	if k.kept == nil {
		k.kept = map[string]door{}
	}
	if _, ok := k.kept[key]; !ok && len(k.kept) >= maxKeptDoors {
		for other := range k.kept {
			delete(k.kept, other)
			break
		}
	}
	kept := *d
	kept.kept, kept.stands = false, false
	k.kept[key] = kept
}

func (k *doors) drop(keyHash, owner, name string) {
	k.mu.Lock()
	delete(k.kept, doorKey(keyHash, owner, name))
	k.mu.Unlock()
}
