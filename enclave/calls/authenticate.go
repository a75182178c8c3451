package calls

import (
	"context"

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

// authenticated is the agent a request's key was found to be, kept in its
// context for the rest of the request.
type authenticated struct {
	keyHash string
	agent   store.Agent
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
