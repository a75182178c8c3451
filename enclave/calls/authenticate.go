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

// AuthenticateCall is Authenticate for a call to an owner's project: the
// project is read with the key, in the same round trip, and kept in the
// context for the Call that follows, which does not read it again. Whether
// the project exists is still not the agent's to learn: a bad key is
// refused as by Authenticate, and the grant is checked by Call.
//
// A key, project and grant found together before, by an earlier call, may
// be what lets the call in instead of a read (see admission): the call's own
// transaction then checks them, and a call none of whose transactions
// checked them is decided again from a fresh read.
func (s *Service) AuthenticateCall(ctx context.Context, agentKey, owner, project string) (context.Context, error) {
	d, err := s.admit(ctx, agentKey, owner, project)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, authenticatedKey{}, authenticated{keyHash: d.keyHash, admission: d}), nil
}

// authenticated is what a request's key was found to be, kept in its
// context for the rest of the request: the admission of the call it makes
// (AuthenticateCall), or the agent alone (Authenticate).
type authenticated struct {
	keyHash   string
	agent     store.Agent // when admission is nil
	admission *admission
}

// agentRead is the agent this request read for its key, if it read one:
// an admission kept from an earlier call is no read of this request's.
func (a authenticated) agentRead() (store.Agent, bool) {
	if a.admission != nil {
		return a.admission.agent, !a.admission.kept
	}
	return a.agent, true
}

type authenticatedKey struct{}

// authenticatedAs returns the agent ctx's request already read for key.
func authenticatedAs(ctx context.Context, key string) (store.Agent, bool) {
	a, ok := ctx.Value(authenticatedKey{}).(authenticated)
	if !ok || a.keyHash != string(HashAgentKey(key)) {
		return store.Agent{}, false
	}
	return a.agentRead()
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
