package enclave_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/connectors/probe"
	"countersign/device"
	"countersign/enclave"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
)

// clock is a settable clock for the service, the enclave and the devices.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// effects counts what test connectors did, by task.
type effects struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *effects) add(task string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[task]++
}

func (f *effects) count(task string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[task]
}

func (f *effects) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.n {
		n += v
	}
	return n
}

// world is a service on one store: the enclave, the owner's inbox over
// HTTP, a probe project and a "ledger" project whose confirm task's answer
// counts a side effect, an agent and a signed-in owner.
type world struct {
	t       testing.TB
	db      *sqlstore.DB
	clock   *clock
	keys    *sealing.Keyring
	e       *enclave.Enclave
	url     string
	cat     connectors.Catalogue
	ledger  *connectors.Connector
	effects *effects
	agent   string
	key     string // the agent's key
	owner   *device.Device
	// answer is what the ledger's answer does (default: count and succeed).
	answer func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error)
}

const agentKey = "ak_test-agent-key-0123456789abcdefghijklmnop"

func newWorld(t testing.TB, db *sqlstore.DB) *world {
	t.Helper()
	w := &world{t: t, db: db, clock: &clock{now: time.Now().UTC().Truncate(time.Second)}, keys: sealing.GenerateKeyring(),
		effects: &effects{}, agent: "bot.near", key: agentKey}
	w.ledger = &connectors.Connector{Name: "ledger", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{
		{Name: "pay", Kind: connectors.Write, Price: 1, Run: func(ctx context.Context, c *connectors.Call) (any, error) {
			var args struct {
				Amount int `json:"amount"`
			}
			if err := c.Decode(&args); err != nil {
				return nil, err
			}
			state, _ := json.Marshal(args)
			task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: inbox.KindConfirm,
				Display:  inbox.Display{Title: "Pay", Fields: []inbox.Field{{Kind: inbox.FieldMoney, Label: "Amount", Values: []string{"$1"}, WrittenBy: "agent"}}},
				AnswerBy: &inbox.AnswerBy{Operation: "confirm", Supplies: inbox.SuppliesNone}, State: state})
			if err != nil {
				return nil, err
			}
			return connectors.AwaitingOwner(task), nil
		}},
		{Name: "confirm", Kind: connectors.Answer, Limit: 2 * time.Second, Answer: func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			return w.answer(ctx, a)
		}},
	}}
	w.answer = func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		w.effects.add(a.Task.ID)
		return connectors.Report{Result: map[string]any{"ok": true, "paid": true}}, nil
	}
	var err error
	if w.cat, err = connectors.NewCatalogue(probe.New(), w.ledger); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w.e = enclave.New(enclave.Config{Keys: w.keys, Store: db, Connectors: w.cat, Now: w.clock.Now, Logger: quiet, PublicURL: "https://inbox.example"})
	svc := inbox.NewService(inbox.Config{Store: db, Keeper: w.e, Catalogue: w.cat, Keys: approval.OffChecker{}, Now: w.clock.Now, Logger: quiet})
	cur, keys, _ := w.e.RunKeys()
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: db, Logger: quiet, Inbox: svc, Agents: w.e,
		Connectors: w.cat, RunKey: httpapi.RunKeys{Current: cur, Keys: keys},
		Limits: httpapi.Limits{SignInPerMinute: 1 << 20, OwnerWritesPerMinute: 1 << 20}}))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	w.owner = w.newOwner()
	now := w.clock.Now()
	err = db.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, w.agent, enclave.HashAgentKey(agentKey), now); err != nil {
			return err
		}
		if _, err := tx.Credit(ctx, w.agent, 1<<40, "test", now); err != nil {
			return err
		}
		for _, p := range []store.Project{
			{Owner: w.owner.Account, Name: "probe", UUID: inbox.NewProjectUUID(), Connector: "probe", Policy: []byte("{}"), Agents: []string{w.agent}, CreatedAt: now, UpdatedAt: now},
			{Owner: w.owner.Account, Name: "ledger", UUID: inbox.NewProjectUUID(), Connector: "ledger", Policy: []byte("{}"), Agents: []string{w.agent}, CreatedAt: now, UpdatedAt: now},
		} {
			if err := tx.PutProject(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newOwner signs in a device of a new implicit account.
func (w *world) newOwner() *device.Device {
	w.t.Helper()
	wallet, err := approval.NewWallet()
	if err != nil {
		w.t.Fatal(err)
	}
	key, _ := device.NewKey()
	d := &device.Device{Account: wallet.AccountID, Key: key, Signer: device.WalletSigner{Wallet: wallet},
		Client: &client.Client{BaseURL: w.url}, Now: w.clock.Now}
	if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
		w.t.Fatal(err)
	}
	return d
}

func (w *world) agentClient() *client.Client {
	return &client.Client{BaseURL: w.url, AgentKey: w.key}
}

// pay opens a ledger confirm task and returns its id.
func (w *world) pay() string {
	w.t.Helper()
	raw, err := w.agentClient().Call(ctx, w.owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	return a.TaskID
}

// approve approves a task as the owner at the door and returns the run.
func (w *world) approve(id string, supplied []byte) string {
	w.t.Helper()
	view, err := w.owner.Client.Task(ctx, id)
	if err != nil {
		w.t.Fatal(err)
	}
	o, err := w.owner.Open(view)
	if err != nil {
		w.t.Fatal(err)
	}
	st, err := w.owner.Approve(ctx, o, supplied, "")
	if err != nil {
		w.t.Fatal(err)
	}
	return st.Run
}

// task reads a task's row.
func (w *world) task(id string) store.Task {
	w.t.Helper()
	var t store.Task
	if err := w.db.Tx(ctx, func(tx store.Tx) (err error) {
		t, err = tx.Task(ctx, id)
		return err
	}); err != nil {
		w.t.Fatal(err)
	}
	return t
}

// status is what the agent reads.
func (w *world) status(project, id string) client.TaskStatus {
	w.t.Helper()
	st, err := w.agentClient().Status(ctx, w.owner.Account, project, id, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}
