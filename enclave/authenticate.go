package enclave

import "context"

// Authenticate checks an agent key alone, so the HTTP side can refuse a bad
// key before it reads or limits anything else of the call: nil, or the
// transport-level refusal Call would give it (unauthorized, the store
// unavailable).
func (e *Enclave) Authenticate(ctx context.Context, agentKey string) error {
	_, err := e.agent(ctx, agentKey)
	return err
}
