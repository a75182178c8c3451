package calls

import (
	"context"
	"errors"

	"countersign"
	"countersign/store"
)

// Authenticate checks an agent key alone, so the HTTP side can refuse a bad
// key before it reads or limits anything else of the call: the transport-
// level refusal Call would give it (unauthorized, the store unavailable),
// or a context carrying the agent found, with which a Call or Grants for
// the same key does not look the key up again.
func (s *Service) Authenticate(ctx context.Context, agentKey string) (context.Context, error) {
	a, err := s.agent(ctx, agentKey)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, authenticatedKey{}, authenticated{keyHash: string(HashAgentKey(agentKey)), agent: a}), nil
}

// AuthenticateCall is Authenticate for a call to an owner's project: the
// project is read with the key, in the same round trip, and kept in the
// context with the agent for the Call that follows, which does not read it
// again. Whether the project exists is still not the agent's to learn: a
// bad key is refused as by Authenticate, and the grant is checked by Call.
func (s *Service) AuthenticateCall(ctx context.Context, agentKey, owner, project string) (context.Context, error) {
	if !wellFormedKey(agentKey) {
		return ctx, unauthorized()
	}
	var a authenticated
	err := s.store.Read(ctx, func(tx callsTx) (err error) {
		var p store.Project
		var found bool
		a.agent, p, found, err = tx.AgentCalling(ctx, HashAgentKey(agentKey), owner, project)
		if found {
			a.project = &p
		}
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ctx, unauthorized()
	case err != nil:
		return ctx, Transport(err)
	}
	a.keyHash, a.owner, a.name, a.looked = string(HashAgentKey(agentKey)), owner, project, true
	return context.WithValue(ctx, authenticatedKey{}, a), nil
}

// authenticated is the agent a request's key was found to be, kept in its
// context for the rest of the request, and the project it calls when it
// was read with the key (looked; project nil if there is none).
type authenticated struct {
	keyHash     string
	agent       store.Agent
	owner, name string
	looked      bool
	project     *store.Project
}

// calledProject returns the project ctx's request read with key, if it
// read owner's project of that name: the project, or nil when there is
// none.
func calledProject(ctx context.Context, key, owner, name string) (p *store.Project, looked bool) {
	a, ok := ctx.Value(authenticatedKey{}).(authenticated)
	if !ok || !a.looked || a.keyHash != string(HashAgentKey(key)) || a.owner != owner || a.name != name {
		return nil, false
	}
	return a.project, true
}

type authenticatedKey struct{}

// authenticatedAs returns the agent ctx's request already found for key.
func authenticatedAs(ctx context.Context, key string) (store.Agent, bool) {
	a, ok := ctx.Value(authenticatedKey{}).(authenticated)
	if !ok || a.keyHash != string(HashAgentKey(key)) {
		return store.Agent{}, false
	}
	return a.agent, true
}

// Grants lists the projects granted to an agent key, by owner then name:
// what the key may call. A bad key is refused as Call refuses it.
func (s *Service) Grants(ctx context.Context, agentKey string) ([]countersign.Grant, error) {
	agent, err := s.agent(ctx, agentKey)
	if err != nil {
		return nil, err
	}
	var projects []store.Project
	if err := s.store.Read(ctx, func(tx callsTx) (err error) {
		projects, err = tx.GrantedProjects(ctx, agent.Account)
		return err
	}); err != nil {
		return nil, Transport(err)
	}
	out := []countersign.Grant{}
	for _, p := range projects {
		out = append(out, countersign.Grant{Owner: p.Owner, Project: p.Name, Connector: p.Connector})
	}
	return out, nil
}
