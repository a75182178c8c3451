package enclave_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors/probe"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// refusedAs is the code an agent is refused with: a refusal's (HTTP 200)
// or the HTTP error's; "" for none.
func refusedAs(err error) string {
	var r *client.Refusal
	var e *client.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &r):
		return r.Code
	case errors.As(err, &e):
		return e.Reason
	}
	return err.Error()
}

// TestKeptAdmissionIsCheckedByTheCall: after a first call let an agent's key
// into a project, the next call by that key to that project is let in on
// what the first read, without reading it again; each change below, made
// between the two calls, is still what the second call meets, as an agent
// would meet it with nothing kept: the refusal the change calls for, with
// nothing charged, opened or cancelled; or, where the change refuses
// nothing, the call served by the project as it is now. Each operation is
// called by an agent of its own, whose first call kept its admission
// before the change.
func TestKeptAdmissionIsCheckedByTheCall(t *testing.T) {
	t.Parallel()
	changes := []struct {
		name   string
		change func(w *servicetest.World, agents []string)
		// want is each operation's refusal ("": served).
		want map[string]string
	}{
		{"nothing", func(*servicetest.World, []string) {},
			map[string]string{"guess_start": "", "pay": "", "task_cancel": "", "task_status": "", "task_wait": ""}},
		{"the key revoked", func(w *servicetest.World, agents []string) {
			inWorld(t, w, func(tx store.Tx) error {
				for _, a := range agents {
					if _, err := tx.RevokeAgentKeys(ctx, a, w.Clock.Now()); err != nil {
						return err
					}
				}
				return nil
			})
		}, map[string]string{"guess_start": "unauthorized", "pay": "unauthorized", "task_cancel": "unauthorized", "task_status": "unauthorized", "task_wait": "unauthorized"}},
		{"the grant withdrawn", func(w *servicetest.World, _ []string) { w.Grant("probe"); w.Grant("ledger") },
			map[string]string{"guess_start": "not_granted", "pay": "not_granted", "task_cancel": "not_granted", "task_status": "not_granted", "task_wait": "not_granted"}},
		{"the project deleted", func(w *servicetest.World, _ []string) {
			inWorld(t, w, func(tx store.Tx) error {
				for _, name := range []string{"probe", "ledger"} {
					if _, err := tx.DeleteProject(ctx, w.Owner.Account, name); err != nil {
						return err
					}
				}
				return nil
			})
		}, map[string]string{"guess_start": "not_granted", "pay": "not_granted", "task_cancel": "not_granted", "task_status": "not_granted", "task_wait": "not_granted"}},
		// The same second as the first call: only the project's version
		// tells the change.
		{"the policy made unreadable", func(w *servicetest.World, _ []string) {
			w.PutProject("probe", "probe", `{"rules":[{"then":"deny"}]}`, nil)
			w.PutProject("ledger", "ledger", `{"rules":[{"then":"deny"}]}`, nil)
		}, map[string]string{"guess_start": "policy_unreadable", "pay": "policy_unreadable", "task_cancel": "", "task_status": "", "task_wait": ""}},
		{"the balance spent", func(w *servicetest.World, agents []string) {
			inWorld(t, w, func(tx store.Tx) error {
				for _, account := range agents {
					a, err := tx.Agent(ctx, account)
					if err != nil {
						return err
					}
					if err := tx.Charge(ctx, account, a.Balance, "spent-elsewhere", w.Clock.Now()); err != nil {
						return err
					}
				}
				return nil
			})
		}, map[string]string{"guess_start": "payment_required", "pay": "payment_required", "task_cancel": "", "task_status": "", "task_wait": ""}},
	}
	stores := map[string]func(t *testing.T) *sqlstore.DB{
		"postgres": func(t *testing.T) *sqlstore.DB { return storetest.Postgres(t) },
		"sqlite":   func(t *testing.T) *sqlstore.DB { return storetest.SQLite(t) },
	}
	ops := []string{"guess_start", "pay", "task_cancel", "task_status", "task_wait"}
	for _, c := range changes {
		for kind, open := range stores {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				w := servicetest.New(t, open(t))
				agents := make([]string, len(ops))
				clients := make([]*client.Client, len(ops))
				firsts := make([]string, len(ops))
				for i := range ops {
					agents[i] = fmt.Sprintf("agent%d.near", i)
					clients[i] = w.NewAgent(agents[i], fmt.Sprintf("ak_agent-%d-of-the-admission-test", i))
					// The first call reads its admission and keeps it.
					raw, err := clients[i].Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil)
					var first client.Awaiting
					if err != nil || json.Unmarshal(raw, &first) != nil || first.TaskID == "" {
						t.Fatalf("the first call: %s %v", raw, err)
					}
					firsts[i] = first.TaskID
				}
				uuid := w.Task(firsts[0]).ProjectUUID
				c.change(w, agents)
				for i, op := range ops {
					project := map[string]string{"guess_start": "probe", "pay": "ledger", "task_cancel": "probe", "task_status": "probe", "task_wait": "probe"}[op]
					before := agentState(t, w, agents[i], uuid)
					args := map[string]any(nil)
					if op == "task_cancel" || op == "task_status" {
						args = map[string]any{"task_id": firsts[i]}
					}
					if op == "task_wait" {
						args = map[string]any{"task_id": firsts[i], "timeout_s": 0}
					}
					if op == "pay" {
						args = map[string]any{"amount": 1}
					}
					raw, err := clients[i].Call(ctx, w.Owner.Account, project, op, args, nil)
					got, want := refusedAs(err), c.want[op]
					if got != want {
						t.Errorf("%s answered %s %v; want %q", op, raw, err, want)
						continue
					}
					after := agentState(t, w, agents[i], uuid)
					if want != "" {
						if after != before {
							t.Errorf("%s: the refused call changed what the agent has: %+v → %+v", op, before, after)
						}
						if want == "payment_required" && !strings.Contains(err.Error(), "balance of 0 µUSD") {
							t.Errorf("%s: the refusal names another balance than the agent's: %v", op, err)
						}
						continue
					}
					switch op {
					case "task_status", "task_wait":
						var st client.TaskStatus
						if json.Unmarshal(raw, &st) != nil || st.TaskID != firsts[i] || st.State != "open" || after != before {
							t.Errorf("%s answered %s; want the task, open, and nothing changed", op, raw)
						}
					case "task_cancel":
						if s := w.Task(firsts[i]).State; s != countersign.StateCancelled {
							t.Errorf("%s: the cancelled task is %s", op, s)
						}
					default:
						var a client.Awaiting
						if json.Unmarshal(raw, &a) != nil || a.TaskID == "" || after.runs != before.runs+1 {
							t.Errorf("%s answered %s; runs %d → %d; want a task and a run", op, raw, before.runs, after.runs)
						}
					}
				}
			})
		}
	}
}

// inWorld runs fn in a transaction of w's store.
func inWorld(t *testing.T, w *servicetest.World, fn func(tx store.Tx) error) {
	t.Helper()
	if err := w.DB.Tx(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

// held is what an agent has that a call can change: its balance, its
// ledger's entries, its runs and the tasks it opened in a project.
type held struct {
	balance        int64
	entries, runs  int
	tasks, waiting int
}

func agentState(t *testing.T, w *servicetest.World, agent, projectUUID string) held {
	t.Helper()
	var h held
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		a, err := tx.Agent(ctx, agent)
		if err != nil {
			return err
		}
		l, err := tx.Ledger(ctx, agent)
		if err != nil {
			return err
		}
		tasks, err := tx.PreparerTasks(ctx, w.Owner.Account, projectUUID, agent, "", 100)
		if err != nil {
			return err
		}
		for _, k := range tasks {
			if !k.State.Terminal() {
				h.waiting++
			}
		}
		h.balance, h.entries, h.tasks = a.Balance, len(l), len(tasks)
		for _, e := range l {
			if e.Run != "" {
				h.runs++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestKeptAdmissionRevokedWhileCalled: an agent's key revoked while its calls
// run on an admission kept from before: a call made after the revocation
// committed is refused unauthorized, whatever it asks (to open a task or to
// cancel one), and a task is opened for each call answered with one and for
// no other.
func TestKeptAdmissionRevokedWhileCalled(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	agent := w.AgentClient()
	if _, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil); err != nil {
		t.Fatal(err)
	}
	const callers, each = 8, 6
	var revoked atomic.Bool
	var opened, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				if i == 0 && k == each/2 {
					if err := w.DB.Tx(ctx, func(tx store.Tx) error {
						_, err := tx.RevokeAgentKeys(ctx, w.Agent, w.Clock.Now())
						return err
					}); err != nil {
						t.Error(err)
					}
					revoked.Store(true)
				}
				after := revoked.Load()
				raw, err := agent.Call(ctx, w.Owner.Account, "probe", "guess_start", map[string]any{"max": probe.MinMax}, nil)
				switch refusedAs(err) {
				case "":
					var a client.Awaiting
					if json.Unmarshal(raw, &a) != nil || a.TaskID == "" {
						t.Errorf("answered %s", raw)
					}
					if after {
						t.Errorf("a call made after the revocation committed was served: %s", raw)
					}
					opened.Add(1)
					// Cancelled, so the owner's inbox has room for the
					// next (an agent has at most ten tasks waiting).
					after = revoked.Load()
					_, err := agent.Call(ctx, w.Owner.Account, "probe", "task_cancel", map[string]any{"task_id": a.TaskID}, nil)
					if code := refusedAs(err); code != "unauthorized" && (code != "" || after) {
						t.Errorf("the task's cancel (made after the revocation: %v): %v", after, err)
					}
				case "unauthorized":
					refused.Add(1)
				default:
					t.Errorf("answered %s %v", raw, err)
				}
			}
		}()
	}
	wg.Wait()
	for _, op := range []string{"guess_start", "task_status", "tasks", "task_cancel"} {
		if _, err := agent.Call(ctx, w.Owner.Account, "probe", op, nil, nil); refusedAs(err) != "unauthorized" {
			t.Errorf("%s after the revocation: %v; want unauthorized", op, err)
		}
	}
	var tasks []store.Task
	if err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, "probe")
		if err != nil {
			return err
		}
		tasks, err = tx.PreparerTasks(ctx, w.Owner.Account, p.UUID, w.Agent, "", 1000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if int32(len(tasks)) != opened.Load()+1 || opened.Load()+refused.Load() != callers*each || refused.Load() == 0 {
		t.Errorf("%d tasks; %d calls answered with one and %d refused of %d; want a task for each call answered with one, and refusals",
			len(tasks), opened.Load(), refused.Load(), callers*each)
	}
	t.Logf("%d calls opened a task, %d were refused", opened.Load(), refused.Load())
}
