package enclave

import (
	"context"

	"countersign"
	"countersign/store"
)

// Authenticate checks an agent key alone, so the HTTP side can refuse a bad
// key before it reads or limits anything else of the call: nil, or the
// transport-level refusal Call would give it (unauthorized, the store
// unavailable).
func (e *Enclave) Authenticate(ctx context.Context, agentKey string) error {
	_, err := e.agent(ctx, agentKey)
	return err
}

// Grants lists the projects granted to an agent key, by owner then name:
// what the key may call. A bad key is refused as Call refuses it.
func (e *Enclave) Grants(ctx context.Context, agentKey string) ([]countersign.Grant, error) {
	agent, err := e.agent(ctx, agentKey)
	if err != nil {
		return nil, err
	}
	var projects []store.Project
	if err := e.store.Tx(ctx, func(tx store.Tx) (err error) {
		projects, err = tx.GrantedProjects(ctx, agent.Account)
		return err
	}); err != nil {
		return nil, transport(err)
	}
	out := []countersign.Grant{}
	for _, p := range projects {
		out = append(out, countersign.Grant{Owner: p.Owner, Project: p.Name, Connector: p.Connector})
	}
	return out, nil
}
