package enclave_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors"
	"countersign/egress"
	"countersign/egress/egresstest"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestInProcessRunsReachNothing: a write declared in process that tries a
// request through an egress client is refused before anything is dialed
// (its run then answers the error, the task it opened kept with its
// end), while the same request from a write that is not declared so
// reaches the host.
func TestInProcessRunsReachNothing(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	httpc := egress.NewClient(egress.Options{AllowPrivate: true})
	var reachErr error
	reach := func(inProcess bool) connectors.Operation {
		name := "reach"
		if inProcess {
			name = "reach_in_process"
		}
		return connectors.Operation{Name: name, Kind: connectors.Write, Description: name + " in a test.", Schema: anyArgs, InProcess: inProcess,
			Run: func(ctx context.Context, c *connectors.Call) (any, error) {
				task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindNotice,
					Display: countersign.Display{Title: "Reached", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "Host", Values: []string{"a test"}, WrittenBy: countersign.WrittenByProject}}}})
				if err != nil {
					return nil, err
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/write", nil)
				resp, err := httpc.Do(req)
				if err != nil {
					reachErr = err
					return nil, err
				}
				resp.Body.Close()
				return connectors.Notified(task), nil
			}}
	}
	reacher := &connectors.Connector{Name: "reacher", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{reach(true), reach(false)}}
	db := storetest.Postgres(t)
	w := servicetest.New(t, db, servicetest.WithConnector(reacher))
	agent := w.AgentClient()

	raw, err := agent.Call(ctx, w.Owner.Account, "reacher", "reach_in_process", nil, nil)
	var r *client.Refusal
	if !errors.As(err, &r) || r.Code != "internal_error" || !errors.Is(reachErr, egress.ErrInProcess) {
		t.Fatalf("the in-process write answered %s %v (its request: %v)", raw, err, reachErr)
	}
	if srv.Conns() != 0 || srv.Requests() != 0 {
		t.Fatalf("the in-process write reached the host: %d connections, %d requests", srv.Conns(), srv.Requests())
	}
	if page, err := w.Owner.Client.Tasks(ctx, "waiting", "", 10); err != nil || len(page.Tasks) != 1 || page.Tasks[0].Kind != "notice" {
		t.Fatalf("waiting: %+v %v, want the notice the in-process write opened before its request", page, err)
	}

	raw, err = agent.Call(ctx, w.Owner.Account, "reacher", "reach", nil, nil)
	var a client.Awaiting
	if err != nil || json.Unmarshal(raw, &a) != nil || a.Status != "notified" || srv.Requests() != 1 {
		t.Fatalf("the ordinary write answered %s %v, the host saw %d requests", raw, err, srv.Requests())
	}
}
