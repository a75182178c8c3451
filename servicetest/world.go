// Package servicetest builds the whole service on one store for tests: the
// enclave with a test connector ("ledger") whose answers count their side
// effects, the owner's inbox and the agents' API over a real loopback HTTP
// server, a settable clock, an agent and a signed-in owner (WithConnector
// adds a connector, PutProject a project of it with sealed credentials). Owners are
// implicit accounts, checked against a fake NEAR RPC (where named accounts
// can be added).
package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/connectors"
	"countersign/connectors/probe"
	"countersign/device"
	"countersign/enclave/calls"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
)

var ctx = context.Background()

// Clock is a settable clock for the service, the enclave and the devices.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Effects counts what the ledger connector did, by task.
type Effects struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one effect for a task.
func (f *Effects) Add(task string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[task]++
}

// Count is a task's effects.
func (f *Effects) Count(task string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[task]
}

// Total is every task's effects.
func (f *Effects) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.n {
		n += v
	}
	return n
}

// PushContact is the VAPID contact the world's pushes name; its push
// endpoints may be on any host (a fake push service on loopback).
const PushContact = "mailto:ops@example.com"

// AgentKey is the test agent's first key.
const AgentKey = "ak_test-agent-key-0123456789abcdefghijklmnop"

// World is the service on one store.
type World struct {
	T     testing.TB
	DB    *sqlstore.DB
	Clock *Clock
	Keys  *sealing.Keyring
	// Enclave is the enclave side around the keyring Keys.
	Enclave *Enclave
	Inbox   *inbox.Service
	URL     string
	// API is the HTTP server; every answer it gives is checked against
	// its OpenAPI document, and one that does not fit fails the test.
	API       *httpapi.Server
	Catalogue connectors.Catalogue
	// Ledger is a connector with a write "pay" that always asks (a confirm
	// task; its call may name the task's title and summary) and its answer
	// "confirm".
	Ledger  *connectors.Connector
	Effects *Effects
	Agent   string
	// AgentKey is the agent's current key.
	AgentKey string
	// Owner is a signed-in device of an owner with a "probe" and a
	// "ledger" project granted to the agent.
	Owner *device.Device
	// answer is what the ledger's confirm does (default: count and
	// succeed); SetAnswer changes it.
	answerMu sync.Mutex
	answer   func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error)
	// RPC is the fake NEAR RPC the service asks about wallet keys.
	RPC *neartest.Server
	// Logs holds everything the service logged, for tests that check what
	// must never reach a log.
	Logs *Logs
	log  *slog.Logger
}

// Logs is a log sink safe for the service's goroutines.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything logged so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Option changes how New builds the service.
type Option func(*settings)

type settings struct {
	heartbeat    time.Duration
	taskWaitPoll time.Duration
	answerLimit  time.Duration
	// sandboxWallet offers the page's sandbox wallet.
	sandboxWallet bool
	// pushHostsOnly keeps push endpoints to the push services' hosts, as
	// in production (default: any host, for a fake on loopback).
	pushHostsOnly bool
	mcpGrantPoll  time.Duration
	mcpIdle       time.Duration
	// extra are connectors besides probe and ledger, each with a project
	// of its name.
	extra []*connectors.Connector
	// inboxStore wraps the store the owner's service is given.
	inboxStore func(store.Store) store.Store
}

// WithInboxStore gives the owner's service wrap(the store) instead of the
// store, for a test that acts between its transactions.
func WithInboxStore(wrap func(store.Store) store.Store) Option {
	return func(s *settings) { s.inboxStore = wrap }
}

// WithMCPGrantPoll sets how often the MCP transport looks at a key's
// grants to announce a changed tool list (default: the service's).
func WithMCPGrantPoll(d time.Duration) Option { return func(s *settings) { s.mcpGrantPoll = d } }

// WithMCPSessionIdle sets how long an MCP session may go without a
// request before it ends (default: the service's).
func WithMCPSessionIdle(d time.Duration) Option { return func(s *settings) { s.mcpIdle = d } }

// WithAnswerLimit sets the compute limit of the ledger's answer operation
// (default 2 s).
func WithAnswerLimit(d time.Duration) Option { return func(s *settings) { s.answerLimit = d } }

// WithHeartbeat sets how often an idle event stream beats and looks at its
// session again (default: the service's).
func WithHeartbeat(d time.Duration) Option { return func(s *settings) { s.heartbeat = d } }

// WithTaskWaitPoll sets how often task_wait looks at a task besides
// listening to its events; negative: never (default: the service's).
func WithTaskWaitPoll(d time.Duration) Option { return func(s *settings) { s.taskWaitPoll = d } }

// WithPushHostsOnly keeps push endpoints to the push services' hosts, as
// in production: no fake push service is reachable then.
func WithPushHostsOnly() Option { return func(s *settings) { s.pushHostsOnly = true } }

// WithSandboxWallet has the page offer its sandbox wallet, as serve --dev does.
func WithSandboxWallet() Option { return func(s *settings) { s.sandboxWallet = true } }

// WithConnector adds c to the catalogue beside probe and ledger, and gives
// the owner a project named after it, with the policy {}, granted to the
// agent.
func WithConnector(c *connectors.Connector) Option {
	return func(s *settings) { s.extra = append(s.extra, c) }
}

// New builds the service on db.
func New(t testing.TB, db *sqlstore.DB, opts ...Option) *World {
	t.Helper()
	set := settings{answerLimit: 2 * time.Second}
	for _, o := range opts {
		o(&set)
	}
	w := &World{T: t, DB: db, Clock: NewClock(time.Now().UTC().Truncate(time.Second)), Keys: sealing.GenerateKeyring(),
		Effects: &Effects{}, Agent: "bot.near", AgentKey: AgentKey, Logs: &Logs{}}
	w.log = slog.New(slog.NewTextHandler(w.Logs, nil))
	w.Ledger = &connectors.Connector{Name: "ledger", Version: "1.0.0", Tasks: true, Operations: []connectors.Operation{
		{Name: "pay", Kind: connectors.Write, Price: 1, Description: "Pays an amount, once the owner confirms it.",
			Schema: json.RawMessage(`{"type": "object", "properties": {"amount": {"type": "integer", "minimum": 1, "maximum": 1000000},
				"memo": {"type": "string", "maxLength": 500}, "invoice": {"type": "string"},
				"title": {"type": "string", "maxLength": 80}, "summary": {"type": "string", "maxLength": 200}}, "required": ["amount"], "additionalProperties": false}`),
			Examples: []json.RawMessage{json.RawMessage(`{"amount": 1}`), json.RawMessage(`{"amount": 5, "memo": "rent", "invoice": "INV-1"}`)},
			Run: func(ctx context.Context, c *connectors.Call) (any, error) {
				var args struct {
					Amount  int    `json:"amount"`
					Memo    string `json:"memo"`
					Invoice string `json:"invoice"` // shown as the task's one file
					// Title and Summary replace the task's title "Pay" and
					// its summary "pay ${amount} from the ledger; …".
					Title   string `json:"title"`
					Summary string `json:"summary"`
				}
				if err := c.Decode(&args); err != nil {
					return nil, err
				}
				title, summary := "Pay", fmt.Sprintf("pay $%d from the ledger; it cannot be undone", args.Amount)
				if args.Title != "" {
					title = args.Title
				}
				if args.Summary != "" {
					summary = args.Summary
				}
				state, _ := json.Marshal(args)
				fields := []countersign.Field{{Kind: countersign.FieldMoney, Label: "Amount", Values: []string{"$1"}, WrittenBy: countersign.WrittenByAgent}}
				if args.Memo != "" {
					fields = append(fields, countersign.Field{Kind: countersign.FieldText, Label: "Memo", Values: []string{args.Memo}, WrittenBy: countersign.WrittenByAgent})
				}
				spec := connectors.TaskSpec{Kind: countersign.KindConfirm,
					Display:  countersign.Display{Title: title, Summary: summary, Fields: fields},
					AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}, State: state}
				if args.Invoice != "" {
					spec.Files = []connectors.File{{Name: "invoice.txt", ContentType: "text/plain", Data: []byte(args.Invoice)}}
				}
				task, err := c.OpenTask(ctx, spec)
				if err != nil {
					return nil, err
				}
				return connectors.AwaitingOwner(task), nil
			}},
		{Name: "collect", Kind: connectors.Write, Description: "Asks the owner for a file (an input task).",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Run: func(ctx context.Context, c *connectors.Call) (any, error) {
				task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindInput,
					Display:  countersign.Display{Title: "Send the receipt", Summary: "send the agent the receipt, as a file", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "Wanted", Values: []string{"the receipt, as a file"}, WrittenBy: "project"}}},
					AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesFile}})
				if err != nil {
					return nil, err
				}
				return connectors.AwaitingOwner(task), nil
			}},
		{Name: "tell", Kind: connectors.Write, Description: "Tells the owner the payment was made.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false}`), Run: func(ctx context.Context, c *connectors.Call) (any, error) {
				task, err := c.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindNotice,
					Display: countersign.Display{Title: "Paid", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "Note", Values: []string{"done"}, WrittenBy: "project"}}}})
				if err != nil {
					return nil, err
				}
				return connectors.Notified(task), nil
			}},
		{Name: "confirm", Kind: connectors.Answer, Description: "Carries out a payment the owner confirmed.", Limit: set.answerLimit, Answer: func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			w.answerMu.Lock()
			f := w.answer
			w.answerMu.Unlock()
			return f(ctx, a)
		}},
	}}
	w.answer = func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
		w.Effects.Add(a.Task.ID)
		return connectors.Report{Result: map[string]any{"ok": true, "paid": true}}, nil
	}
	var err error
	if w.Catalogue, err = connectors.NewCatalogue(append([]*connectors.Connector{probe.New(), w.Ledger}, set.extra...)...); err != nil {
		t.Fatal(err)
	}
	// The server's own address is its public origin, so a browser-like
	// client can use the session cookie, and the recipient owners sign for
	// is its host, as a deployment's is.
	srv := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + srv.Listener.Addr().String()
	w.Enclave = NewEnclave(EnclaveConfig{Keys: w.Keys, Store: db, Connectors: w.Catalogue, Now: w.Clock.Now, Logger: w.log,
		PublicURL: publicURL, WebhookAllowPrivate: true, Jitter: func() float64 { return 0.5 },
		TaskWaitPoll: set.taskWaitPoll, PushAllowAnyEndpoint: !set.pushHostsOnly, PushContact: PushContact})
	w.RPC = neartest.New()
	t.Cleanup(w.RPC.Close)
	checker, err := approval.NewRPCChecker(approval.RPCConfig{URL: w.RPC.URL(), Client: &http.Client{Timeout: 2 * time.Second}, Now: w.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var inboxStore store.Store = db
	if set.inboxStore != nil {
		inboxStore = set.inboxStore(db)
	}
	w.Inbox = inbox.NewService(inbox.Config{Store: inboxStore, Keeper: w.Enclave.Unlock, Tokens: w.Enclave.Keys, Webhooks: w.Enclave.Delivery,
		WebhookAllowPrivate: true, Push: w.Enclave.Delivery, PushAllowAnyEndpoint: !set.pushHostsOnly,
		Catalogue: w.Catalogue, Keys: checker, PublicURL: publicURL, Now: w.Clock.Now, Logger: w.log})
	cur, keys, _ := w.Enclave.Keys.RunKeys()
	api := httpapi.New(httpapi.Options{Version: "test", Store: db, Logger: w.log, Inbox: w.Inbox, Agents: w.Enclave.Calls,
		Connectors: w.Catalogue, RunKey: httpapi.RunKeys{Current: cur, Keys: keys},
		Limits:    httpapi.Limits{SignInPerMinute: 1 << 20, OwnerWritesPerMinute: 1 << 20, AgentCallsPerMinute: 1 << 20},
		Heartbeat: set.heartbeat, MCPGrantPoll: set.mcpGrantPoll, MCPSessionIdle: set.mcpIdle, PublicURL: publicURL,
		SandboxWallet: set.sandboxWallet})
	w.API = api
	t.Cleanup(api.Close)
	api.Registry().MustRegister(append(w.Enclave.Answers.Collectors(), w.Enclave.Delivery.Collectors()...)...)
	srv.Config.Handler = checkAnswers(t, api)
	srv.Start()
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	w.Owner = w.NewOwner()
	now := w.Clock.Now()
	err = db.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, w.Agent, calls.HashAgentKey(AgentKey), now); err != nil {
			return err
		}
		if _, err := tx.Credit(ctx, w.Agent, 1<<40, "test", now); err != nil {
			return err
		}
		names := []string{"probe", "ledger"}
		for _, c := range set.extra {
			names = append(names, c.Name)
		}
		for _, name := range names {
			if err := tx.PutProject(ctx, store.Project{Owner: w.Owner.Account, Name: name, UUID: countersign.NewProjectUUID(), Connector: name,
				Policy: []byte("{}"), Agents: []string{w.Agent}, CreatedAt: now, UpdatedAt: now}); err != nil {
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

// PutProject installs (or replaces) the owner's project name of connector
// with policy and credentials (sealed as the service seals them; nil: none),
// granted to the agent, and returns its uuid. A project that exists keeps
// its uuid.
func (w *World) PutProject(name, connector, policy string, creds []byte) string {
	w.T.Helper()
	now := w.Clock.Now()
	var uuid string
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p := store.Project{Owner: w.Owner.Account, Name: name, UUID: countersign.NewProjectUUID(), Connector: connector,
			Agents: []string{w.Agent}, CreatedAt: now}
		if old, err := tx.Project(ctx, w.Owner.Account, name); err == nil {
			p = old
		}
		p.Policy, p.UpdatedAt, p.PolicyWidens = []byte(policy), now, nil
		p.Creds, p.CredsKeyID = nil, 0
		if creds != nil {
			id, sealed, err := w.Enclave.Keys.SealCredentials(p.UUID, creds)
			if err != nil {
				return err
			}
			p.CredsKeyID, p.Creds = id, sealed
		}
		uuid = p.UUID
		return tx.PutProject(ctx, p)
	})
	if err != nil {
		w.T.Fatal(err)
	}
	return uuid
}

// SetAnswer changes what the ledger's confirm does.
func (w *World) SetAnswer(f func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error)) {
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	w.answer = f
}

// NewOwner signs in a device of a new implicit account.
func (w *World) NewOwner() *device.Device {
	w.T.Helper()
	wallet, err := approval.NewWallet()
	if err != nil {
		w.T.Fatal(err)
	}
	d := w.Device(wallet)
	if _, err := d.SignIn(ctx, 29*24*time.Hour); err != nil {
		w.T.Fatal(err)
	}
	return d
}

// Device is a new, not yet signed-in device of a wallet's account.
func (w *World) Device(wallet *approval.Wallet) *device.Device {
	w.T.Helper()
	key, err := device.NewKey()
	if err != nil {
		w.T.Fatal(err)
	}
	return &device.Device{Account: wallet.AccountID, Key: key, Signer: device.WalletSigner{Wallet: wallet},
		Client: &client.Client{BaseURL: w.URL}, Now: w.Clock.Now}
}

// AgentClient is the agent's client.
func (w *World) AgentClient() *client.Client {
	return &client.Client{BaseURL: w.URL, AgentKey: w.AgentKey}
}

// OtherEnclave is a second enclave process of this world (its keys,
// connectors, clock and address) on st, a store of its own or one wrapped
// to fail; it logs into Logs.
func (w *World) OtherEnclave(st store.Store) *Enclave {
	return NewEnclave(EnclaveConfig{Keys: w.Keys, Store: st, Connectors: w.Catalogue, Now: w.Clock.Now, PublicURL: w.URL, Logger: w.log})
}

// Pay opens a ledger confirm task for the owner and returns its id.
func (w *World) Pay() string {
	w.T.Helper()
	return w.pay(map[string]any{"amount": 1})
}

// PaySummed is Pay with the summary the owner's wallet shows (a task a
// batch may approve).
func (w *World) PaySummed(summary string) string {
	w.T.Helper()
	return w.pay(map[string]any{"amount": 1, "summary": summary})
}

func (w *World) pay(args map[string]any) string {
	w.T.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", args, nil)
	if err != nil {
		w.T.Fatal(err)
	}
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	return a.TaskID
}

// Open reads a task on the owner's device and opens it, as before an
// approval.
func (w *World) Open(id string) *device.Opened {
	w.T.Helper()
	view, err := w.Owner.Client.Task(ctx, id)
	if err != nil {
		w.T.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		w.T.Fatal(err)
	}
	return o
}

// Approve approves a task as the owner at the door and returns the run.
func (w *World) Approve(id string, supplied []byte) string {
	w.T.Helper()
	st, err := w.Owner.Approve(ctx, w.Open(id), supplied, "")
	if err != nil {
		w.T.Fatal(err)
	}
	return st.Run
}

// Task reads a task's row.
func (w *World) Task(id string) store.Task {
	w.T.Helper()
	var t store.Task
	if err := w.DB.Tx(ctx, func(tx store.Tx) (err error) {
		t, err = tx.Task(ctx, id)
		return err
	}); err != nil {
		w.T.Fatal(err)
	}
	return t
}

// DoneOnce fails the test unless the task ended done with the ledger's
// write made exactly once: what "carried out once" means to the owner.
func (w *World) DoneOnce(id string) {
	w.T.Helper()
	if got, n := w.Task(id), w.Effects.Count(id); got.State != countersign.StateDone || n != 1 {
		w.T.Fatalf("task %s ended %s %s with its write made %d times; want done, once", id, got.State, got.FailureReason, n)
	}
}

// Status is what the agent reads of a task.
func (w *World) Status(project, id string) client.TaskStatus {
	w.T.Helper()
	st, err := w.AgentClient().Status(ctx, w.Owner.Account, project, id, 0)
	if err != nil {
		w.T.Fatal(err)
	}
	return st
}

// StartJobs works the job queue with the world's enclave until the test
// ends, with a heartbeat.
func (w *World) StartJobs() { StartJobs(w.T, w.DB, w.Enclave) }

// WaitState waits until a task is in one of the states: it looks at the
// task each time the store says one of its owner's tasks moved.
func (w *World) WaitState(id string, states ...countersign.State) store.Task {
	w.T.Helper()
	t := w.Task(id)
	events, stop := w.DB.Subscribe(t.Owner)
	defer func() { stop() }()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		t = w.Task(id) // after subscribing: a move in between is seen here
		if slices.Contains(states, t.State) {
			return t
		}
		select {
		case _, ok := <-events:
			if !ok { // dropped for not keeping up: listen again
				stop()
				events, stop = w.DB.Subscribe(t.Owner)
			}
		case <-deadline.C:
			w.T.Fatalf("task %s is %s, not %v", id, t.State, states)
		}
	}
}

// Tell opens a ledger notice for the owner and returns its id.
func (w *World) Tell() string {
	w.T.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "tell", nil, nil)
	if err != nil {
		w.T.Fatal(err)
	}
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	return a.TaskID
}

// Guess starts a probe game for the owner and returns its first task.
func (w *World) Guess() string {
	w.T.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil)
	if err != nil {
		w.T.Fatal(err)
	}
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	return a.TaskID
}

// Grant sets which agents the owner's project is granted to (none: taken
// from every agent), as the owner's settings would.
func (w *World) Grant(project string, agents ...string) {
	w.T.Helper()
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, project)
		if err != nil {
			return err
		}
		p.Agents, p.UpdatedAt = agents, w.Clock.Now()
		return tx.PutProject(ctx, p)
	})
	if err != nil {
		w.T.Fatal(err)
	}
}

// RevokeAgent revokes every key of the world's agent, as `agent revoke`
// would.
func (w *World) RevokeAgent() {
	w.T.Helper()
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.RevokeAgentKeys(ctx, w.Agent, w.Clock.Now())
		return err
	})
	if err != nil {
		w.T.Fatal(err)
	}
}

// NewAgent adds another agent, with credit, granted the owner's projects,
// and returns its client.
func (w *World) NewAgent(name, key string) *client.Client {
	w.T.Helper()
	now := w.Clock.Now()
	err := w.DB.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, name, calls.HashAgentKey(key), now); err != nil {
			return err
		}
		if _, err := tx.Credit(ctx, name, 1<<40, "test", now); err != nil {
			return err
		}
		ps, err := tx.Projects(ctx, w.Owner.Account)
		if err != nil {
			return err
		}
		for _, p := range ps {
			p.Agents = append(p.Agents, name)
			p.UpdatedAt = now
			if err := tx.PutProject(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.T.Fatal(err)
	}
	return &client.Client{BaseURL: w.URL, AgentKey: key}
}

// checkAnswers checks every answer of api against its OpenAPI document
// (httpapi.Server.CheckResponse) and fails t, at its end, for each that
// does not fit. Event streams are checked by their status and type only.
func checkAnswers(t testing.TB, api *httpapi.Server) http.Handler {
	var mu sync.Mutex
	var failures []string
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range failures {
			t.Errorf("an answer does not fit the OpenAPI document: %s", f)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		api.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if err := api.CheckResponse(r, rec.status, rec.Header().Get("Content-Type"), rec.body.Bytes()); err != nil {
			mu.Lock()
			failures = append(failures, err.Error())
			mu.Unlock()
		}
	})
}

// recorder keeps a copy of an answer (but an event stream's) for
// checkAnswers.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if !strings.HasPrefix(r.Header().Get("Content-Type"), "text/event-stream") && r.body.Len() < 8<<20 {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
