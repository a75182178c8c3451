package enclave

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/sealing"
	"countersign/store"
	"countersign/webhook"
	"countersign/webpush"
)

// Enclave runs connectors and opens and carries out tasks with the master
// keyring.
type Enclave struct {
	keys       *sealing.Keyring
	store      store.Port[enclaveTx]
	connectors connectors.Catalogue
	// schemas are the compiled argument schemas of the catalogue's
	// operations and of the task operations.
	schemas   *argschema.Set
	recipient string
	publicURL string
	// origin is the public origin, canonical: callback URLs in owners'
	// statements must be under it (SPEC §7).
	origin string
	now    func() time.Time
	log    *slog.Logger
	// taskWaitPoll is how often task_wait looks at a task besides listening
	// to its events; not positive: never.
	taskWaitPoll time.Duration
	// instance names this process: an answer run's row names the process
	// that runs it, and the process's heartbeat says it is alive.
	instance string
	// webhooks sends owners' webhooks; webhookPrivate lets them reach
	// loopback and private addresses (development and tests only).
	webhooks       *webhook.Sender
	webhookPrivate bool
	// push sends owners' devices their pushes (SPEC §10), signed with the
	// VAPID key (made once, kept in vapid) naming pushContact.
	push        *webpush.Sender
	pushContact string
	vapid       vapidCache
	// jitter picks the retry schedule's jitter (nil: random).
	jitter func() float64
	// metrics count answer runs and webhook attempts.
	metrics metrics
}

// Config is what an Enclave is built from.
type Config struct {
	Keys       *sealing.Keyring
	Store      store.Store
	Connectors connectors.Catalogue
	// Recipient is the NEP-413 recipient owners sign for (empty: the public
	// origin's host, SPEC §7; with neither, no owner's statement checks out).
	Recipient string
	// PublicURL is the service's origin, for the links agents are given;
	// a callback URL an owner signed must be under it.
	PublicURL string
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// WebhookAllowPrivate lets webhooks reach loopback and private
	// addresses (development and tests only).
	WebhookAllowPrivate bool
	// WebhookSender sends webhooks (nil: a sender under the rule above).
	WebhookSender *webhook.Sender
	// PushAllowAnyEndpoint lets pushes reach endpoints on any host, over
	// http and to loopback and private addresses too (development and
	// tests only; SPEC §10).
	PushAllowAnyEndpoint bool
	// PushSender sends pushes (nil: a sender under the rule above).
	PushSender *webpush.Sender
	// PushContact is the VAPID JWT's sub: mailto: or an https URL (empty:
	// the public URL).
	PushContact string
	// Jitter picks retry jitter (nil: random).
	Jitter func() float64
	// TaskWaitPoll is how often task_wait looks at a task besides listening
	// to its events (0: DefaultTaskWaitPoll; negative: never, events only).
	TaskWaitPoll time.Duration
}

// DefaultTaskWaitPoll is how often task_wait looks at a task in case an event
// was missed.
const DefaultTaskWaitPoll = 5 * time.Second

// New returns an enclave. It panics when an operation's argument schema
// does not compile or an example does not fit it: check a catalogue with
// argschema.NewSet first.
func New(c Config) *Enclave {
	if c.Now == nil {
		c.Now = time.Now
	}
	origin, _ := approval.PublicOrigin(c.PublicURL)
	if c.Recipient == "" && origin != "" {
		c.Recipient, _ = approval.RecipientOf(origin)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WebhookSender == nil {
		c.WebhookSender = webhook.NewSender(c.WebhookAllowPrivate)
	}
	if c.PushSender == nil {
		c.PushSender = webpush.NewSender(c.PushAllowAnyEndpoint)
	}
	if c.PushContact == "" {
		c.PushContact = strings.TrimSuffix(c.PublicURL, "/")
	}
	if c.TaskWaitPoll == 0 {
		c.TaskWaitPoll = DefaultTaskWaitPoll
	}
	schemas, err := argschema.NewSet(c.Connectors)
	if err != nil {
		panic(fmt.Sprintf("enclave: %v", err))
	}
	return &Enclave{keys: c.Keys, store: enclavePort(c.Store), connectors: c.Connectors, schemas: schemas, recipient: c.Recipient,
		publicURL: strings.TrimSuffix(c.PublicURL, "/"), origin: origin, now: c.Now, log: c.Logger, taskWaitPoll: c.TaskWaitPoll,
		instance: "p" + countersign.NewRunID(), webhooks: c.WebhookSender, webhookPrivate: c.WebhookAllowPrivate, jitter: c.Jitter,
		push: c.PushSender, pushContact: c.PushContact, metrics: newMetrics()}
}

// clock is the time in whole seconds, UTC.
func (e *Enclave) clock() time.Time { return e.now().UTC().Truncate(time.Second) }

// Project is what the enclave needs of the project a run acts on.
type Project struct {
	Owner      string
	Name       string
	UUID       string
	Connector  string
	Build      string // <connector>@<version>
	PolicyHash string
	// Approvers is who approves its confirm tasks (SPEC §13 `approvers`):
	// a confirm task of a project whose policy names approvers is shared
	// with them.
	Approvers countersign.Approvers
}

// Run is one execution of an operation that may open tasks.
type Run struct {
	ID           string
	Agent        string // the preparer of the tasks it opens
	Project      Project
	Request      []byte // the agent's call body, exactly as sent
	ComputeLimit time.Duration
	// Operation is what the run calls: the history names it beside the
	// tasks the run opens and the write it carries out.
	Operation string
	opened    int
	// did is what a write carried out at once tells the owner's history
	// (nil: nothing).
	did *connectors.Did
	// receipt keys the run's own receipt (SPEC §11).
	receipt *sealing.ReceiptKey
	// abandoned is set when the handler overran its limit and was given up.
	abandoned atomic.Bool
}

// Opened is what the agent is told of a task it opened.
type Opened struct {
	ID        string
	Kind      countersign.Kind
	Hash      string
	Thread    string
	ExpiresAt time.Time
	// receipt is the task's receipt key, from its content key, and input
	// its receipt's input hash (SPEC §11).
	receipt *sealing.ReceiptKey
	input   string
}

// voucher is what the answer run is admitted with: the preparing run's agent
// and compute limit, no more.
type voucher struct {
	Run            string `json:"run,omitempty"`
	Agent          string `json:"agent,omitempty"`
	ComputeLimitMS int64  `json:"compute_limit_ms,omitempty"`
}

// sealedCopy is the plaintext of a task's sealed copy.
type sealedCopy struct {
	ContentKey string  `json:"content_key"` // hex
	Envelope   string  `json:"envelope"`    // exact envelope text
	State      []byte  `json:"state"`       // base64
	Voucher    voucher `json:"voucher"`
}

// content is the plaintext of a task's content blob, for the owner's device.
type content struct {
	Envelope string `json:"envelope"`
	Request  string `json:"request"`
}

// OpenTask opens a task in tx, in thread ("" starts one): it enforces every
// limit of the contract whatever the connector asked, seals what the task
// shows and writes it.
func (e *Enclave) OpenTask(ctx context.Context, tx openTx, run *Run, spec connectors.TaskSpec, thread string) (Opened, error) {
	life, err := spec.Check(run.opened)
	if err != nil {
		return Opened{}, err
	}
	id, err := countersign.TaskID(run.ID, run.opened+1)
	if err != nil {
		return Opened{}, err
	}
	if thread == "" {
		thread = id
	} else {
		first, err := tx.Task(ctx, thread)
		if errors.Is(err, store.ErrNotFound) || err == nil && (first.Preparer != run.Agent || first.Owner != run.Project.Owner) {
			return Opened{}, countersign.Errorf(countersign.InvalidRequest, "no such thread for this preparer")
		} else if err != nil {
			return Opened{}, err
		}
		thread = first.Thread
	}

	now := e.clock()
	keyID := e.keys.Current()
	tk, err := e.keys.TaskKeys(keyID, run.Project.UUID, run.Project.Owner, id)
	if err != nil {
		return Opened{}, fmt.Errorf("derive task keys: %w", err)
	}
	stateHash := sha256.Sum256(spec.State)
	env := countersign.Envelope{
		AnswerBy:    spec.AnswerBy,
		Build:       run.Project.Build,
		CreatedAt:   now,
		Display:     spec.Display,
		ExpiresAt:   now.Add(life),
		Files:       make([]countersign.File, len(spec.Files)),
		ID:          id,
		Kind:        spec.Kind,
		Owner:       run.Project.Owner,
		PolicyHash:  run.Project.PolicyHash,
		Preparer:    run.Agent,
		Project:     run.Project.Name,
		ProjectUUID: run.Project.UUID,
		StateHash:   hex.EncodeToString(stateHash[:]),
		Thread:      thread,
	}
	if spec.Kind.Asks() {
		env.ReplyPubkey = sealing.FormatP256PublicKey(tk.ReplyKey().PublicKey())
	}
	for i, f := range spec.Files {
		sum := sha256.Sum256(f.Data)
		env.Files[i] = countersign.File{ContentType: f.ContentType, Name: f.Name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f.Data))}
	}
	envelope, err := env.Canonical()
	if err != nil {
		return Opened{}, err
	}

	ck := sealing.NewContentKey()
	plain, err := marshal(content{Envelope: string(envelope), Request: string(run.Request)})
	if err != nil {
		return Opened{}, err
	}
	rk := ck.ReceiptKey()
	input, err := taskInput(rk, plain)
	if err != nil {
		return Opened{}, err
	}
	var ct store.TaskCiphertext
	if ct.Content, err = ck.SealContent(id, plain); err != nil {
		return Opened{}, err
	}
	size := int64(len(ct.Content))
	for n, f := range spec.Files {
		blob, err := ck.SealFile(id, n, f.Data)
		if err != nil {
			return Opened{}, err
		}
		ct.Files = append(ct.Files, blob)
		size += int64(len(blob))
	}
	sealedPlain, err := marshal(sealedCopy{
		ContentKey: hex.EncodeToString(ck.Bytes()),
		Envelope:   string(envelope),
		State:      spec.State,
		Voucher:    voucher{Run: run.ID, Agent: run.Agent, ComputeLimitMS: run.ComputeLimit.Milliseconds()},
	})
	if err != nil {
		return Opened{}, err
	}
	if ct.Sealed, err = tk.Seal(sealing.TaskRecord, sealedPlain); err != nil {
		return Opened{}, err
	}

	// Under the owner's lock: mutes, limits and devices, read at once.
	gate, err := tx.OwnerGate(ctx, run.Project.Owner, run.Agent, run.Project.Name, now)
	if err != nil {
		return Opened{}, err
	}
	if gate.Muted {
		return Opened{}, countersign.Errorf(countersign.Muted, "the owner muted this agent or this project")
	}
	load := gate.Load
	switch {
	case load.OwnerOpen >= countersign.MaxOpenTasksPerOwner:
		return Opened{}, countersign.Errorf(countersign.InboxFull, "the owner has %d tasks waiting", countersign.MaxOpenTasksPerOwner)
	case load.PreparerActive >= countersign.MaxActiveTasksPerPreparer:
		return Opened{}, countersign.Errorf(countersign.InboxFull, "this agent has %d tasks waiting for this owner", countersign.MaxActiveTasksPerPreparer)
	case load.WaitingContent+size > countersign.MaxWaitingContentBytes:
		return Opened{}, countersign.Errorf(countersign.InboxFull, "the owner's waiting tasks hold 64 MiB")
	}

	devices := e.checkedKeys(gate.Devices, now)
	ct.DeviceCopies = make(map[string][]byte, len(devices))
	for deviceID, pub := range devices {
		if ct.DeviceCopies[deviceID], err = sealing.WrapContentKey(pub, id, ck); err != nil {
			return Opened{}, err
		}
	}
	pushTo := pushDevices(gate.Devices, devices)
	// A confirm task of a project whose policy names approvers is shared
	// (SPEC §13): sealed to each approver's devices too, and listed, told
	// and pushed to them as to the owner. An input task's answer and a
	// notice stay the owner's.
	rule := run.Project.Approvers
	shared := spec.Kind == countersign.KindConfirm && rule.Shared()
	if shared {
		theirs, err := tx.DevicesOf(ctx, rule.Accounts, now)
		if err != nil {
			return Opened{}, err
		}
		keys := e.checkedKeys(theirs, now)
		for deviceID, pub := range keys {
			if ct.DeviceCopies[deviceID], err = sealing.WrapContentKey(pub, id, ck); err != nil {
				return Opened{}, err
			}
		}
		pushTo = append(pushTo, pushDevices(theirs, keys)...)
	}
	row := store.Task{
		ID: id, Owner: run.Project.Owner, Preparer: run.Agent, Project: run.Project.Name,
		ProjectUUID: run.Project.UUID, Connector: run.Project.Connector, Kind: countersign.Kind(string(spec.Kind)),
		State: countersign.StateOpen, Thread: thread, Run: run.ID, ReplyPubkey: env.ReplyPubkey,
		TaskHash: countersign.TaskHash(envelope), KeyID: keyID, ContentSize: size,
		CreatedAt: env.CreatedAt, ExpiresAt: env.ExpiresAt,
	}
	if spec.AnswerBy != nil {
		row.Operation, row.Supplies = spec.AnswerBy.Operation, countersign.Supplies(string(spec.AnswerBy.Supplies))
	}
	if shared {
		row.Threshold = rule.Threshold
	}
	// The task's history entry, listed once the task ends, goes with the
	// task's rows.
	entry, entryCopies, err := e.taskEntry(run, row, spec.Display, devices)
	if err != nil {
		return Opened{}, err
	}
	if err := tx.InsertActivity(ctx, entry, entryCopies); err != nil {
		return Opened{}, err
	}
	if err := tx.InsertTask(ctx, row, ct); err != nil {
		return Opened{}, err
	}
	if shared {
		if err := tx.ShareTask(ctx, row, rule.Accounts); err != nil {
			return Opened{}, err
		}
	}
	// Each device with a push subscription is told, once this commits,
	// that a task waits (nothing of it).
	if err := tx.QueuePushes(ctx, id, pushTo, now); err != nil {
		return Opened{}, err
	}
	run.opened++
	return Opened{ID: id, Kind: spec.Kind, Hash: row.TaskHash, Thread: thread, ExpiresAt: env.ExpiresAt, receipt: rk, input: input}, nil
}

// marshal writes JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
