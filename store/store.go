// Package store is the service's persistence port: the records it keeps and
// the transactions it runs on them. The domain (inbox, enclave) talks only to
// these interfaces; package sqlstore implements them on PostgreSQL and on the
// embedded SQLite store, and package storetest is the conformance suite both
// must pass.
//
// A record never holds anything a task shows in clear: task content, files,
// sealed copies and device copies are ciphertext made by the enclave side.
// Agent keys are kept only as their SHA-256; project credentials and the
// answers of idempotent calls only sealed under the master key.
//
// Where the contract leaves the store's behaviour open, it does this:
//   - Money is micro-USD in an int64. Credits and charges refuse negative
//     amounts; a zero amount moves nothing and leaves no ledger entry. A
//     charge is one conditional update, so concurrent charges never take
//     more than the balance; a credit never takes it past the largest int64.
//   - A daily count is reserved in one statement that counts only while the
//     count is below the limit; a limit of zero or less admits nothing.
//     Reservations that commit are never given back.
//   - A project keeps its uuid and creation time for life; putting it again
//     replaces everything else, grants included.
//   - A run finishes once (its receipt is never replaced); an idempotent
//     call is answered once, on the claim with the same body's hash.
//   - Lists by name (agents, projects, grants) are in byte order on both
//     databases, whatever the PostgreSQL collation.
package store

import (
	"context"
	"errors"
	"time"

	"countersign"
)

// Errors a store returns. Callers test them with errors.Is.
var (
	// ErrNotFound: no such row.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a row with that key already exists.
	ErrConflict = errors.New("store: already exists")
	// ErrUnavailable wraps a failure to reach the database; it is the only
	// transient error.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrNoMove: MoveTask was given a zero countersign.Move; a task's
	// state changes only by a move countersign.Transition made.
	ErrNoMove = errors.New("store: a task moves only by a countersign.Transition")
	// ErrSpent: a signature's nonce was used already (SpendNonce), and the
	// transaction that spent it again kept nothing.
	ErrSpent = errors.New("store: the nonce was used already")
	// ErrStale: a move made from what a read before its transaction saw of
	// the task (Move.Seen) found the task, or its owner's webhook, no
	// longer so; the transaction kept nothing. The caller moves the task
	// again without Seen, from the task as it is now.
	ErrStale = errors.New("store: the task changed since it was read")
	// ErrUncovered: a charge (Charge) the agent's balance did not cover,
	// or of no such agent; the transaction that made it kept nothing.
	ErrUncovered = errors.New("store: the balance does not cover the charge")
	// ErrAdmissionChanged: a transaction checked an admission read before
	// it (AdmissionHolds) and found the key revoked, the project changed or
	// no longer granted; the transaction kept nothing.
	ErrAdmissionChanged = errors.New("store: the agent's key or project changed since it was read")
)

// Store opens transactions. Every state change happens in one transaction
// together with what must follow it (events, outbox rows, jobs).
type Store interface {
	// Tx runs fn in one transaction, committed if fn returns nil.
	Tx(ctx context.Context, fn func(Tx) error) error
	// Read runs fn's lookups outside a transaction, each statement on its
	// own (no snapshot across them, no BEGIN and COMMIT around them): for
	// reads alone, where each answer stands by itself. fn must not write.
	Read(ctx context.Context, fn func(Tx) error) error
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Schema reports the schema version the database is at and the version
	// this binary needs.
	Schema(ctx context.Context) (SchemaStatus, error)
	// Dialect names the database ("postgres" or "sqlite").
	Dialect() string
	Close() error
}

// SchemaStatus compares the database's schema with the binary's.
type SchemaStatus struct {
	Current int // version the database is at (0: none)
	Needed  int // version this binary's migrations reach
	// JobsCurrent is false when the job queue's own tables are behind.
	JobsCurrent bool
}

// Behind reports whether migrations must run before the service starts.
func (s SchemaStatus) Behind() bool { return s.Current < s.Needed || !s.JobsCurrent }

// Ahead reports whether the database was migrated by a newer binary.
func (s SchemaStatus) Ahead() bool { return s.Current > s.Needed }

// Tx is one transaction: every aggregate the store keeps, each an
// interface of its own below. No consumer takes a whole Tx: each declares
// the aggregates it may touch as an interface made of them and is given its
// transactions through it (Narrow), and its functions take the aggregates
// they use.
type Tx interface {
	// Tasks
	Tasks
	TaskLists
	Openings
	TaskContent
	TaskKeys
	Outcomes
	Approvals
	// Owners
	Devices
	Sessions
	Mutes
	Webhooks
	Outbox
	PushSubscriptions
	Pushes
	History
	HistoryReads
	// Agents and projects
	Agents
	Balances
	Runs
	Calls
	Projects
	Counts
	// The job queue and the platform
	AnswerJobs
	Upkeep
	Metrics
	Rewrap
}

// Port is a store whose transactions a consumer is given as P, the
// interface of the aggregates it may touch. Store's other methods are
// Port's as they are.
type Port[P any] struct {
	Store
	as func(Tx) P
}

// Narrow gives s's transactions as P. as is func(tx store.Tx) P { return
// tx }, which compiles only while Tx has every method of P.
func Narrow[P any](s Store, as func(Tx) P) Port[P] { return Port[P]{Store: s, as: as} }

// Tx runs fn in one transaction, as Store.Tx does.
func (p Port[P]) Tx(ctx context.Context, fn func(P) error) error {
	return p.Store.Tx(ctx, func(tx Tx) error { return fn(p.as(tx)) })
}

// Read runs fn's lookups outside a transaction, as Store.Read does.
func (p Port[P]) Read(ctx context.Context, fn func(P) error) error {
	return p.Store.Read(ctx, func(tx Tx) error { return fn(p.as(tx)) })
}

// Approvals holds what M-of-N approval keeps (SPEC §13 `approvers`, wave
// 3): the accounts besides the owner listed as approvers of a shared task
// (a confirm task of a project whose policy names approvers, its Threshold
// set), and each account's approval while the task waits for the
// threshold. A listed account sees the task in its inbox, sealed to its
// own devices, and is told of its moves as the owner is (event streams,
// its own webhook); it is given nothing else of the owner's. A shared task
// is listed by Openings.ShareTask and read by TaskLists.InboxTasks; its
// approvers' devices by Devices.DevicesOf.
//
// An approval is recorded once per account; the approvals' signed records
// are dropped when the task ends (as the owner's approval is), and who
// approved when is kept with the task's outcome until it is purged.
type Approvals interface {
	// TaskApprovers lists the accounts besides the owner listed as
	// approvers of a task, in byte order (none: nil).
	TaskApprovers(ctx context.Context, id string) ([]string, error)
	// AddApproval records one account's approval of a task; it reports
	// false, changing nothing, when that account has approved it
	// already.
	AddApproval(ctx context.Context, a Approval) (bool, error)
	// Approvals lists a task's approvals, oldest first (by time, then
	// account); a Record is nil once the task ended.
	Approvals(ctx context.Context, id string) ([]Approval, error)
	// DropApprover takes account off the approvers of the waiting tasks
	// of a project, with its approvals of them and the copies of their
	// content keys wrapped to its devices, under each task's row lock,
	// and tells the account of each on its event streams (state open: its
	// inbox changed); it returns the ids of the tasks it was taken off.
	DropApprover(ctx context.Context, projectUUID, account string) ([]string, error)
	// NotifyTask tells the owner and every approver of a task, on their
	// event streams, that it is in state now (its approvals changed):
	// no webhook event, which only state changes send.
	NotifyTask(ctx context.Context, id string, state countersign.State) error
}

// Approval is one account's approval of a shared task.
type Approval struct {
	TaskID  string
	Account string
	// At is when the door accepted it.
	At time.Time
	// Record is the signed approval as the door checked it
	// (approval.Record's bytes), for the answer run to check again; nil
	// once the task ended.
	Record []byte
}

// PushSubscriptions holds each device's one Web Push subscription (SPEC
// §10), on its row, sealed under the master key; EndDevice deletes it with
// the device's copies.
type PushSubscriptions interface {
	// PutPush sets (or replaces) the subscription of a device whose
	// session has not ended; it reports whether it did.
	PutPush(ctx context.Context, deviceID string, keyID uint32, sealed []byte) (bool, error)
	// DeletePush removes a device's subscription (with sealed not nil,
	// only if it is still that one); it reports whether it did.
	DeletePush(ctx context.Context, deviceID string, sealed []byte) (bool, error)
}

// Pushes holds the rest of Web Push (SPEC §10): the service's VAPID key
// pair and the outbox of pushes. A task's opening writes a delivery for
// each of the owner's devices with a subscription, and queues its job, in
// the task's transaction (QueuePushes): a push is sent only once the
// task's creation commits.
type Pushes interface {
	// PushKey returns the VAPID key pair (ErrNotFound before one is made).
	PushKey(ctx context.Context) (PushKey, error)
	// InsertPushKey stores the VAPID key pair unless one is stored
	// already; it reports whether it did.
	InsertPushKey(ctx context.Context, k PushKey) (bool, error)
	// QueuePushes writes a delivery of task taskID to each device, and
	// queues its job, in this transaction.
	QueuePushes(ctx context.Context, taskID string, devices []string, at time.Time) error
	// PushDelivery returns a delivery (ErrNotFound once it is done).
	PushDelivery(ctx context.Context, taskID, deviceID string) (PushDelivery, error)
	// ClaimPushAttempt counts one more attempt of a delivery if it has had
	// exactly attempts so far; it reports whether it did, so that of two
	// workers holding the same delivery one sends.
	ClaimPushAttempt(ctx context.Context, taskID, deviceID string, attempts int) (bool, error)
	// DeletePushDelivery removes a delivery that is done.
	DeletePushDelivery(ctx context.Context, taskID, deviceID string) error
}

// PushKey is the service's VAPID key pair: the public key (unpadded
// base64url of the point) in clear, the private key sealed under master
// key KeyID.
type PushKey struct {
	PublicKey string
	KeyID     uint32
	Sealed    []byte
	CreatedAt time.Time
}

// PushDelivery is an outbox row of a push: ids and a count only.
type PushDelivery struct {
	TaskID, DeviceID string
	Attempts         int
	CreatedAt        time.Time
}

// PushJob sends one task's push to one device.
type PushJob struct {
	TaskID   string `json:"task_id"`
	DeviceID string `json:"device_id"`
}

// Kind names the job for the queue.
func (PushJob) Kind() string { return "push_delivery" }

// History holds the owner's history (SPEC §6, GET /inbox/activity): one
// entry per write carried out, asked or not, and per task that ended. An
// entry keeps in clear only ids, names, states and times; its title,
// summary and result are sealed by the enclave side under the entry's key,
// which is wrapped to each of the owner's devices (its copies).
//
// A task's entry is written when the task opens (its id is the task's) and
// is listed only once the task has ended: the move that ends the task
// (MoveTask) sets the entry's state, failure reason and time in the same
// transaction, and its sealed body when the move carries one. An ended
// device's copies go with it (EndDevice); entries ended 30 days ago go with
// the outcomes (Purge).
//
// History writes the entries and the copies of their keys; HistoryReads
// reads them.
type History interface {
	// InsertActivity writes an entry and its key's copies, by device id.
	// It goes with the transaction's next round trip (a statement, a batch
	// or the commit), so it costs none of its own; a taken id is
	// ErrConflict there.
	InsertActivity(ctx context.Context, a Activity, copies map[string][]byte) error
	// ActivityToWrap lists, newest first, up to limit pairs of an entry of
	// owner whose time is at or after since (ended or not) and one of
	// devices (ids of the owner's) that has no copy of its key.
	ActivityToWrap(ctx context.Context, owner string, devices []string, since time.Time, limit int) ([]EntryToWrap, error)
	// PutActivityCopies stores copies of entries' keys; a copy a device
	// has already is kept as it is. They go with the transaction's next
	// round trip.
	PutActivityCopies(ctx context.Context, copies []ActivityCopy) error
}

// HistoryReads holds the owner's history as it is listed and read (see
// History), ciphertext and ids only.
type HistoryReads interface {
	// ActivityEntry returns an entry without its copies (ErrNotFound).
	ActivityEntry(ctx context.Context, id string) (Activity, error)
	// OwnerActivity lists an owner's ended entries, newest first (by time,
	// then id), each with its copy for q.Device (nil when it has none).
	OwnerActivity(ctx context.Context, q ActivityQuery) ([]Activity, error)
}

// How an entry of the history came about.
const (
	ViaTask   = "task"   // a task the owner was asked (or told)
	ViaDirect = "direct" // a write carried out at once, not asked
)

// Activity is an entry of the owner's history.
type Activity struct {
	ID          string // the task's id (via task) or the run's (direct)
	Owner       string
	Project     string
	ProjectUUID string
	Connector   string
	// Operation is the operation the run that made the entry called: the
	// write carried out at once, or the one whose run opened the task.
	Operation     string
	Preparer      string
	Via           string // ViaTask | ViaDirect
	State         countersign.State
	FailureReason countersign.FailureReason
	// At is when it ended (a task's entry: when the task opened, until it
	// ends).
	At time.Time
	// KeyID is the master key id the entry's key derives from; Sealed is
	// {title, summary, result} under it.
	KeyID  uint32
	Sealed []byte
	// DeviceCopy is the entry's key wrapped to the device a listing is
	// for (OwnerActivity only; nil when it has none).
	DeviceCopy []byte
}

// TaskID is the task an entry is of ("" for a write carried out at once).
func (a Activity) TaskID() string {
	if a.Via == ViaTask {
		return a.ID
	}
	return ""
}

// ActivityQuery is one page of an owner's history.
type ActivityQuery struct {
	Owner string
	// Device is the device whose copies are listed with the entries.
	Device string
	// Before, when set, lists only entries older than it (time, then id).
	Before *Activity
	// Project and Preparer, when set, list only that project's (by name)
	// or that agent's entries.
	Project, Preparer string
	Limit             int
}

// EntryToWrap is an entry whose key a device has no copy of.
type EntryToWrap struct {
	ID, ProjectUUID string
	KeyID           uint32
	Device          string
}

// ActivityCopy is an entry's key wrapped to one device.
type ActivityCopy struct {
	EntryID, Device string
	Blob            []byte
}

// Rewrap finds and replaces what is sealed directly under a master key
// (project credentials, webhooks, idempotent answers, push subscriptions,
// the VAPID key), for key rotation.
// Task blobs are not among them: their keys derive from the key id that
// made the task, which stays in the keyring until they are purged.
type Rewrap interface {
	// SealedUnder lists up to limit secrets sealed under another key id than
	// current.
	SealedUnder(ctx context.Context, current uint32, limit int) ([]Sealed, error)
	// ReplaceSealed stores a secret sealed again, if it is still sealed under
	// the key id it was read with; it reports whether it did.
	ReplaceSealed(ctx context.Context, old Sealed, keyID uint32, blob []byte) (bool, error)
	// KeyIDsInUse lists every master key id the data still needs (tasks,
	// results, credentials, webhooks, idempotent answers, run receipts), each
	// with what needs it ("tasks", "projects", …).
	KeyIDsInUse(ctx context.Context) (map[uint32][]string, error)
	// SealedSamples returns, of each kind of row sealed under a master
	// key, one row sealed under keyID (if any): the Sealed kinds and "run"
	// (a run's receipt key, row: the run id) and "task" (a task's sealed
	// copy, row: project uuid NUL owner NUL task id), so that a keyring can
	// be tried against the data before it is trusted with it.
	SealedSamples(ctx context.Context, keyID uint32) ([]Sealed, error)
}

// Sealed is one secret sealed under a master key.
type Sealed struct {
	// Kind is "project" (credentials), "webhook", "call" (an idempotent
	// answer), "push" (a device's push subscription) or "vapid" (the VAPID
	// private key); SealedSamples also gives "run" and "task".
	Kind string
	// Row is the sealing row id (the AAD's): the project uuid, the owner,
	// agent NUL owner NUL project NUL key, the device id, or "vapid".
	Row   string
	KeyID uint32
	Blob  []byte
}

// Webhooks holds owners' webhooks and the log of delivery attempts.
type Webhooks interface {
	// PutWebhook names (or renames) an owner's webhook.
	PutWebhook(ctx context.Context, w Webhook) error
	// Webhook returns an owner's webhook (ErrNotFound).
	Webhook(ctx context.Context, owner string) (Webhook, error)
	// DeleteWebhook removes it; it reports whether there was one.
	DeleteWebhook(ctx context.Context, owner string) (bool, error)
	// Attempts lists an owner's latest attempts, newest first.
	Attempts(ctx context.Context, owner string, limit int) ([]WebhookAttempt, error)
}

// Outbox holds the outbox of task events and what their deliveries
// record. Every task state change that has a webhook event (task_created
// on opening; task_approved, task_answered — not a notice's Got it —,
// task_failed, task_expired) writes its event, and queues its delivery, in
// the transaction of the change, when the owner has a webhook; for a
// shared task, also one for each approver that has a webhook (the same
// body, the event's Receiver naming the approver).
type Outbox interface {
	// WebhookEvent returns an event of the outbox (ErrNotFound).
	WebhookEvent(ctx context.Context, id string) (WebhookEvent, error)
	// RecordAttempt logs a delivery attempt.
	RecordAttempt(ctx context.Context, a WebhookAttempt) error
	// AttemptCount is how many attempts an event had.
	AttemptCount(ctx context.Context, eventID string) (int, error)
}

// Webhook is an owner's URL and secret, sealed together.
type Webhook struct {
	Owner    string
	ID       string
	SetAt    time.Time
	SetByKey string // the wallet key that confirmed it
	KeyID    uint32
	Sealed   []byte
}

// WebhookEvent is an outbox row: who asked whom, of what, when — nothing a
// task shows.
type WebhookEvent struct {
	ID, Owner, WebhookID, TaskID, Preparer, Project, Run, FailureReason string
	Type                                                                countersign.EventType
	Kind                                                                countersign.Kind
	At                                                                  time.Time
	// Receiver is the account whose webhook the event is for: "" for the
	// task's owner, else an approver of the task (the body is the same).
	Receiver string
}

// Account is the account whose webhook the event is for.
func (e WebhookEvent) Account() string {
	if e.Receiver != "" {
		return e.Receiver
	}
	return e.Owner
}

// WebhookAttempt is one delivery attempt, for the owner's log.
type WebhookAttempt struct {
	Owner, EventID, Type, TaskID string
	Attempt, StatusCode          int
	Error                        string
	At                           time.Time
}

// DeliveryJob delivers one event to one webhook.
type DeliveryJob struct {
	EventID   string `json:"event_id"`
	WebhookID string `json:"webhook_id"`
}

// Kind names the job for the queue.
func (DeliveryJob) Kind() string { return "webhook_delivery" }

// Upkeep holds what the platform's sweeps read and purge, and the
// heartbeats of the processes that run answers.
type Upkeep interface {
	// Heartbeat says a process that runs answers is alive.
	Heartbeat(ctx context.Context, runner string, at time.Time) error
	// Stale lists tasks a sweep must end: open past expires_at,
	// approved since approvedBefore, and answering since answeringBefore or
	// whose runner's last heartbeat is before deadBefore.
	Stale(ctx context.Context, now, approvedBefore, answeringBefore, deadBefore time.Time, limit int) ([]Task, error)
	// StrandedApprovals lists approved tasks, approved before before, whose
	// answer job waits in no queue: it was handed to a process that died
	// before its run began, or lost with a process that died working it.
	// The sweep queues them again; the task row keeps the run once.
	StrandedApprovals(ctx context.Context, before time.Time, limit int) ([]AnswerJob, error)
	// Purge deletes what is past its keeping: outcomes of tasks closed
	// before outcomesBefore (with their events, and their receipts), runs
	// started before outcomesBefore that no task kept names (as the run that
	// opened it or the task it answers) with their receipts, spent nonces
	// expired at now, idempotent calls made before callsBefore, payments
	// counted (ReserveSpend) before outcomesBefore, history entries ended
	// before outcomesBefore with their copies, copies of history entries'
	// keys wrapped to devices that ended, the push subscriptions of
	// devices whose session ran out at now, push deliveries written before
	// outcomesBefore, daily counts and heartbeats older than oldBefore. It
	// returns how many rows it deleted or cleared.
	Purge(ctx context.Context, now, outcomesBefore, callsBefore, oldBefore time.Time) (int, error)
}

// AnswerJobs holds the job an approval queues.
type AnswerJobs interface {
	// EnqueueAnswer queues the answer run of an approved task, in this
	// transaction: the job carries ids only. Where this process runs
	// answers itself, the job is handed to it the moment the transaction
	// commits and is not written to the queue: the approved task's row is
	// its durable record, which the sweep queues again if the process dies
	// before the run begins (see sqlstore.HandOff and package jobs).
	EnqueueAnswer(ctx context.Context, job AnswerJob) error
}

// Mutes holds the agents and projects owners muted.
type Mutes interface {
	// PutMute mutes an agent or a project for an owner (idempotent).
	PutMute(ctx context.Context, m Mute) error
	// DeleteMute lifts a mute; it reports whether there was one.
	DeleteMute(ctx context.Context, owner, subjectIs, subject string) (bool, error)
	// Mutes lists an owner's mutes.
	Mutes(ctx context.Context, owner string) ([]Mute, error)
	// Muted reports whether an owner muted the agent or the project.
	Muted(ctx context.Context, owner, agent, project string) (bool, error)
}

// Metrics counts what the service holds.
type Metrics interface {
	// Gauges counts what the service holds now, for its metrics.
	Gauges(ctx context.Context) (Gauges, error)
}

// Gauges is what the service holds at one moment: its tasks by state, and
// its answer runs and webhook deliveries waiting in the job queue (to run
// now, scheduled or to retry), by job kind.
type Gauges struct {
	Tasks  map[countersign.State]int
	Queued map[string]int
}

// Mute silences an agent or a project for an owner.
type Mute struct {
	Owner     string
	SubjectIs string // agent | project
	Subject   string
	CreatedAt time.Time
}

// TaskReceipt is the signed receipt of the run that opened a task, kept
// with the task when the run finishes.
type TaskReceipt struct {
	TaskID  string
	Receipt string
}

// AnswerJob is the job that runs an approved task's answer operation. It
// carries ids only, never content.
type AnswerJob struct {
	TaskID string `json:"task_id"`
	Run    string `json:"run"`
	// Inputs are what RunInputs reads of the task, read right after the
	// approval's COMMIT, in its round trip, when the job was handed to this
	// process's workers there (sqlstore.HandOff, on PostgreSQL): the claim
	// then reads nothing, and makes its move from what was read
	// (Inputs.Seen), or, if the task changed since, reads it again. nil
	// otherwise. Never written to the queue.
	Inputs *RunInputs `json:"-"`
}

// Kind names the job for the queue.
func (AnswerJob) Kind() string { return "answer_run" }

// TaskEvent says a task of an owner reached a state. Events are published
// when the transaction that made the change commits.
type TaskEvent struct {
	Owner  string            `json:"-"`
	TaskID string            `json:"task_id"`
	State  countersign.State `json:"state"`
}

// Subscriber gives the events of one owner's tasks as they commit, in every
// process on the same database.
type Subscriber interface {
	// Subscribe returns a channel of the owner's task events and a function
	// that ends the subscription. A subscriber that does not keep up is
	// dropped: its channel is closed.
	Subscribe(owner string) (<-chan TaskEvent, func())
}

// FuncSubscriber gives one owner's task events to a function rather than a
// channel, so that one subscription serves many readers with no goroutine
// or buffer of its own.
type FuncSubscriber interface {
	// SubscribeFunc calls fn with each of the owner's task events as they
	// commit, one at a time and in the order they are heard, until stop is
	// called. fn must not block, nor subscribe or stop a subscription.
	SubscribeFunc(owner string, fn func(TaskEvent)) (stop func())
}

// Agents holds agents and their keys.
type Agents interface {
	// AddAgentKey records a new key (by its SHA-256, 32 bytes) for an
	// account, making the agent, with a zero balance, if it is new. A hash
	// recorded already, for any account, is ErrConflict.
	AddAgentKey(ctx context.Context, account string, keyHash []byte, at time.Time) error
	// AgentByKey returns the agent a key hash belongs to, if the key is not
	// revoked (ErrNotFound otherwise).
	AgentByKey(ctx context.Context, keyHash []byte) (Agent, error)
	// AgentCalling is AgentByKey with the project the agent calls, read in
	// the same round trip: the agent (ErrNotFound as AgentByKey), then the
	// owner's project by name with its grants, found or not.
	AgentCalling(ctx context.Context, keyHash []byte, owner, project string) (Agent, Project, bool, error)
	// AdmissionHolds keeps the transaction only while d still holds: the
	// key not revoked and still the agent's, the project of that uuid and
	// version still the owner's by that name and still granted to the
	// agent. Otherwise the transaction fails with ErrAdmissionChanged and keeps
	// nothing. The check goes with the transaction's next round trip (at
	// the latest its COMMIT).
	AdmissionHolds(ctx context.Context, a Admission) error
	// Agent returns an agent (ErrNotFound).
	Agent(ctx context.Context, account string) (Agent, error)
	// Agents lists every agent, by account.
	Agents(ctx context.Context) ([]Agent, error)
	// RevokeAgentKeys revokes every key of an account not revoked yet; it
	// reports how many. The agent and its balance stay.
	RevokeAgentKeys(ctx context.Context, account string, at time.Time) (int, error)
}

// Balances holds agents' money: their balances and ledgers.
type Balances interface {
	// Credit adds micro-USD to an agent's balance (ErrNotFound for no such
	// agent), with a ledger entry, and returns the new balance. A negative
	// amount, or one that would take the balance past the largest int64, is
	// refused; a zero amount changes nothing and writes no entry.
	Credit(ctx context.Context, account string, amount int64, note string, at time.Time) (int64, error)
	// Charge takes a run's price from the balance, with a ledger entry, as
	// a checked write: it travels with the transaction's next round trip,
	// at the latest its commit, and if the balance does not cover the
	// price, or there is no such agent, the transaction fails with
	// ErrUncovered and keeps nothing. Concurrent charges never take more
	// than the balance. A negative amount is refused at once; a zero amount
	// is covered by any balance and writes no entry.
	Charge(ctx context.Context, account string, amount int64, run string, at time.Time) error
	// Uncharge takes back the charge of a run, once: its ledger entry is
	// removed and its amount returned to the balance, which it reports (0
	// when the run was charged nothing, or was uncharged already). For a
	// run refused for its own arguments, which is not charged (SPEC §14).
	Uncharge(ctx context.Context, account, run string) (int64, error)
	// Ledger lists an agent's entries, oldest first.
	Ledger(ctx context.Context, account string) ([]LedgerEntry, error)
}

// Agent is an account that calls connectors with a key.
type Agent struct {
	Account   string
	Balance   int64 // micro-USD
	Keys      int   // keys not revoked
	CreatedAt time.Time
}

// LedgerEntry is one movement of an agent's money.
type LedgerEntry struct {
	Amount int64 // micro-USD; charges are negative
	Run    string
	Note   string
	At     time.Time
}

// Projects holds owners' projects and the agents granted them.
type Projects interface {
	// PutProject creates a project or replaces its connector, policy,
	// credentials (nil: none), update time and grants. A project keeps its
	// uuid and creation time for life: p.UUID and p.CreatedAt are used only
	// for a new project (CreatedAt zero: UpdatedAt), and a new project's
	// uuid that another project has is ErrConflict. A project without an
	// owner, name, uuid, connector, policy or update time is refused.
	// p.Version is not read: a new project's is 1, and every put of an
	// existing one moves it.
	PutProject(ctx context.Context, p Project) error
	// Project returns an owner's project by name (ErrNotFound), with its
	// grants.
	Project(ctx context.Context, owner, name string) (Project, error)
	// ProjectByUUID returns a project by uuid (ErrNotFound).
	ProjectByUUID(ctx context.Context, uuid string) (Project, error)
	// Projects lists an owner's projects by name.
	Projects(ctx context.Context, owner string) ([]Project, error)
	// GrantedProjects lists the projects granted to an agent, by owner then
	// name, without their grants.
	GrantedProjects(ctx context.Context, agent string) ([]Project, error)
	// DeleteProject removes a project and its grants; it reports whether
	// there was one.
	DeleteProject(ctx context.Context, owner, name string) (bool, error)
}

// Counts holds what connectors count against a project's bounds: writes
// per day and payments.
type Counts interface {
	// ReserveDaily counts one write of a kind for (owner, project, agent,
	// day) if fewer than limit were counted; it reports whether it did.
	// Concurrent reservations for one key admit at most limit in all; a
	// limit of zero or less admits nothing. A key with an empty member is
	// refused.
	ReserveDaily(ctx context.Context, k DailyKey, limit int) (bool, error)
	// ReserveSpend counts a payment of s.Cents against what the project
	// paid since s.Since, if the sum stays within limit (cents; negative:
	// no bound), and reports whether it did. A key already counted for the
	// project reports true and counts nothing more, so a retried payment
	// counts once. Concurrent reservations for one project never pass the
	// limit together. A spend without an owner, project, key or a positive
	// amount is refused.
	ReserveSpend(ctx context.Context, s Spend, limit int64) (bool, error)
	// ReleaseSpend forgets a reservation whose payment certainly did not
	// happen.
	ReleaseSpend(ctx context.Context, projectUUID, key string) error
}

// Spend is one payment a connector counts against a project's bound.
type Spend struct {
	Owner, ProjectUUID string
	// Key names the payment (its idempotency key upstream).
	Key   string
	Cents int64
	// At is when it is made; Since starts the window it is bounded in.
	At, Since time.Time
}

// Project is one owner's installation of one connector.
type Project struct {
	Owner     string
	Name      string
	UUID      string
	Connector string
	Policy    []byte // as stored; tasks name its SHA-256
	// CredsKeyID and Creds are the credentials sealed under the master key
	// (nil when none).
	CredsKeyID uint32
	Creds      []byte
	Agents     []string // granted agents, sorted, each once (nil: none)
	// PolicyWidens are the SHA-256 hashes (lowercase hex, newest first) of
	// the policies Policy only widens ("Always allow this", SPEC §13): a
	// task naming one of them is not void for its policy.
	PolicyWidens []string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Version moves with every change of the project (PutProject, its
	// credentials sealed again); a new project starts at 1.
	Version int64
}

// Admission is what an agent's call to a project was let in on, as one read
// found it: the key's hash, the agent it belongs to, the project called
// and its version.
type Admission struct {
	KeyHash              []byte
	Agent                string
	Owner, Project, UUID string
	Version              int64
}

// DailyKey names one day's count of one kind of write.
type DailyKey struct {
	Owner, ProjectUUID, Agent, Day, Kind string
}

// Runs holds runs: each one's start, end and receipt.
type Runs interface {
	// InsertRun records a run as it starts.
	InsertRun(ctx context.Context, r Run) error
	// FinishRun records a run's end, its output's hash and its receipt,
	// once, with the receipts of the tasks it opened: ErrConflict for no
	// such run or one that finished already, ErrNotFound for no such task,
	// and then the transaction keeps nothing. The writes go with the
	// transaction's next round trip (at the latest its COMMIT), so these
	// refusals may come from a later statement or from the commit.
	FinishRun(ctx context.Context, id string, at time.Time, outputSHA256, receipt string, tasks ...TaskReceipt) error
	// Run returns a run (ErrNotFound).
	Run(ctx context.Context, id string) (Run, error)
}

// Calls holds agents' idempotent calls and their answers.
type Calls interface {
	// ClaimCall records the first call with an idempotency key (for one
	// agent, owner and project), or returns the call that claimed it first
	// (claimed false), whose Answer is nil while that call runs. Comparing
	// the bodies' hashes, and the age of the first call, is the caller's. A
	// call without its time is refused.
	ClaimCall(ctx context.Context, c IdempotentCall) (first IdempotentCall, claimed bool, err error)
	// AnswerCall stores the sealed answer of a claimed call, once:
	// ErrNotFound if no call claimed that key with that body's hash,
	// ErrConflict if it was answered already.
	AnswerCall(ctx context.Context, c IdempotentCall) error
}

// Run is one execution of one operation.
type Run struct {
	ID           string
	Agent        string
	Owner        string
	ProjectUUID  string
	Operation    string
	Price        int64         // micro-USD
	ComputeLimit time.Duration // wall-clock bound, kept to the millisecond
	TaskID       string        // the task an answer run answers
	// InputSHA256 and OutputSHA256 are the run's own receipt's keyed hashes
	// (SPEC §11): hex HMAC-SHA256 under the run's receipt key, never bare.
	InputSHA256  string
	OutputSHA256 string
	Receipt      string
	// ReceiptKey is the run's own receipt key, sealed under master key
	// ReceiptKeyID.
	ReceiptKeyID uint32
	ReceiptKey   []byte
	StartedAt    time.Time
	FinishedAt   time.Time // zero while it runs
	// Runner is the process that runs an answer run (its heartbeat tells
	// whether it is alive).
	Runner string
}

// IdempotentCall is an agent's call with an Idempotency-Key.
type IdempotentCall struct {
	Agent, Owner, Project, Key string
	// BodySHA256 is the keyed hash of the body under master key BodyKeyID
	// (SPEC §11), never a bare hash: the same body is recognised under the
	// same key id.
	BodySHA256  string
	BodyKeyID   uint32
	AnswerKeyID uint32
	Answer      []byte // sealed; nil while the first call runs
	CreatedAt   time.Time
}

// Devices holds owners' devices as they are read.
type Devices interface {
	// Device returns a device by id (ErrNotFound).
	Device(ctx context.Context, id string) (Device, error)
	// DeviceByToken returns the device whose session token hashes to hash
	// (ErrNotFound).
	DeviceByToken(ctx context.Context, hash []byte) (Device, error)
	// DeviceWithTask is DeviceByToken with a task and what a move of it in
	// a later transaction needs (TaskSeen), read in the same round trip:
	// the device (ErrNotFound as DeviceByToken), then the task, a zero
	// Task (its ID empty) and a zero Seen if there is none. The task is
	// read whoever it belongs to: the caller checks that the device may
	// see it.
	DeviceWithTask(ctx context.Context, hash []byte, id string) (Device, Task, Seen, error)
	// ActiveDevices lists an account's devices not ended and valid at now,
	// in the order they signed in (oldest first; within one second, in the
	// order of InsertDevice).
	ActiveDevices(ctx context.Context, account string, now time.Time) ([]Device, error)
	// DevicesOf lists the devices of several accounts not ended and valid
	// at now (as ActiveDevices does for one), by account then sign-in.
	DevicesOf(ctx context.Context, accounts []string, now time.Time) ([]Device, error)
}

// Sessions holds what signing a device in and out changes: the devices
// and the spent signature nonces.
type Sessions interface {
	// SpendNonce records a signature nonce of an account as used, until
	// expires. If it was used already, the transaction fails with ErrSpent
	// and keeps nothing: the write goes with the transaction's next round
	// trip (at the latest its COMMIT), so the refusal may come from a later
	// statement or from the commit, and callers tell it by errors.Is on the
	// transaction's error.
	SpendNonce(ctx context.Context, account string, nonce []byte, expires time.Time) error
	// InsertDevice signs a device in, after every device the account signed in
	// before (the caller holds the owner's lock).
	InsertDevice(ctx context.Context, d Device) error
	// EndDevice ends a device's session if it has not ended yet, deleting every
	// copy of a content key or of a history entry's key wrapped to it, and
	// its push subscription, in the same transaction; it reports whether it
	// did.
	EndDevice(ctx context.Context, id, reason string, at time.Time) (bool, error)
	// RecordKeyCheck stores when the device's signer key was last checked on
	// chain and how many checks in a row found it gone.
	RecordKeyCheck(ctx context.Context, id string, at time.Time, gone int) error
}

// Device is a signed-in browser or terminal: its session and its P-256 key.
type Device struct {
	ID           string
	Account      string
	DevicePubkey string // p256:…
	SignerPubkey string // the wallet key that signed the sign-in
	TokenHash    []byte
	Statement    string // the signed sign-in statement, as JSON
	CreatedAt    time.Time
	ValidUntil   time.Time
	EndedAt      time.Time // zero while the session lasts
	EndReason    string    // signed_out | replaced | withdrawn | key_gone
	KeyCheckedAt time.Time
	KeyGone      int
	// Push is the device's Web Push subscription sealed under master key
	// PushKeyID (nil: none).
	PushKeyID uint32
	Push      []byte
}

// Tasks holds the task rows: each one read, locked and moved, and its
// state changes.
type Tasks interface {
	// LockOwner serializes, until the transaction ends, every transaction
	// that counts or changes one owner's tasks, so per-owner limits hold
	// under concurrency.
	LockOwner(ctx context.Context, owner string) error
	// Task returns a task's metadata (ErrNotFound).
	Task(ctx context.Context, id string) (Task, error)
	// TaskSeen returns a task's metadata as Task does, and what a move of
	// it in a later transaction needs to know (Move.Seen), in one round
	// trip (ErrNotFound).
	TaskSeen(ctx context.Context, id string) (Task, Seen, error)
	// TasksSeen is TaskSeen of each of ids, all in one round trip; a task
	// that does not exist is a zero Task (its ID empty) and a zero Seen.
	TasksSeen(ctx context.Context, ids []string) ([]Task, []Seen, error)
	// LockTask returns a task's metadata as Task does, and holds its row
	// until the transaction ends (ErrNotFound): a MoveTask of it in the
	// same transaction then knows whether it moves without asking the
	// database, and waits for nothing.
	LockTask(ctx context.Context, id string) (Task, error)
	// HoldTask is LockTask for a task already read, before this
	// transaction, as k and seen: it asks the database nothing, and holds
	// the task's row from the transaction's next round trip, which fails
	// the transaction with ErrStale, keeping nothing, unless the task is
	// still as k (its state and kind) and seen say.
	HoldTask(ctx context.Context, k Task, seen Seen) error
	// MoveTask changes a task's state if and only if it is in the state
	// m.Move leaves and of its kind (compare-and-set), appends the event,
	// and drops what the new state may no longer hold (see Move). It
	// reports whether the move happened; a zero m.Move is ErrNoMove. The
	// owner is told (a task event, the webhook's event) and, for a shared
	// task, each of its approvers as well. A task the transaction read
	// with its lock (RunInputs, LockTask), or one the move was told about
	// (Move.Seen), is moved without a round trip of its own: its UPDATE
	// goes with the transaction's next one.
	MoveTask(ctx context.Context, m Move) (bool, error)
	// LockWaiting locks a task's row until the transaction ends if it is
	// still open, and reports whether it is: a move out of open waits for
	// the lock, so a device copy written under it cannot outlive open.
	LockWaiting(ctx context.Context, id string) (bool, error)
	// Events lists a task's state changes, oldest first.
	Events(ctx context.Context, id string) ([]Event, error)
}

// TaskLists holds the lists of tasks that owners, approvers and agents
// read.
type TaskLists interface {
	// OwnerTasks lists an owner's tasks, newest first: waiting (open) ones,
	// or the others (closed); before, when set, lists only tasks older than
	// that task (created_at, id).
	OwnerTasks(ctx context.Context, owner string, waiting bool, before *Task, limit int) ([]Task, error)
	// InboxTasks lists the tasks an account sees in its inbox, newest
	// first: its own and those it is listed an approver of, waiting
	// (open) or the others (closed); before, when set, lists only tasks
	// older than that task (created_at, id).
	InboxTasks(ctx context.Context, account string, waiting bool, before *Task, limit int) ([]Task, error)
	// PreparerTasks lists the tasks one agent prepared for one owner, in
	// one project ("" for any), that it has not forgotten, newest first,
	// optionally in one state.
	PreparerTasks(ctx context.Context, owner, projectUUID, preparer string, state countersign.State, limit int) ([]Task, error)
	// ForgetTask hides a closed task from its preparer's list; it reports
	// whether it did (false for an open, approved or answering task, one
	// forgotten already, or none).
	ForgetTask(ctx context.Context, id string) (bool, error)
}

// Openings holds what opening a task reads and writes: what counts against
// its owner, under the owner's lock, and the new task's rows.
type Openings interface {
	// OwnerGate is what opening a task for an owner needs, in one round
	// trip: it takes the owner's lock (as LockOwner), then reads whether
	// the owner muted the preparer or the project (as Muted), the owner's
	// load (as OwnerLoad), active devices at now (as ActiveDevices) and,
	// when thread is not "", the task of that id (as Task) the new task
	// would continue.
	OwnerGate(ctx context.Context, owner, preparer, project string, now time.Time, thread string) (Gate, error)
	// OwnerLoad counts an owner's open tasks, the open and approved tasks of
	// one preparer for that owner, and the bytes of waiting content.
	OwnerLoad(ctx context.Context, owner, preparer string) (Load, error)
	// InsertTask writes a new task with its ciphertext. ErrConflict if the id
	// is taken.
	InsertTask(ctx context.Context, t Task, c TaskCiphertext) error
	// ShareTask lists accounts as approvers of t, a task inserted in this
	// transaction with its Threshold set, and tells each of them of the
	// task as InsertTask tells its owner: a task event, and a
	// task_created event in the outbox of an account that has a webhook.
	ShareTask(ctx context.Context, t Task, accounts []string) error
}

// TaskContent holds what a waiting task shows, as the owner's devices
// fetch it: ciphertext only.
type TaskContent interface {
	// Content returns a waiting task's content blob (ErrNotFound if none).
	Content(ctx context.Context, id string) ([]byte, error)
	// Files lists the sizes of a task's files, in order.
	Files(ctx context.Context, id string) ([]int64, error)
	// File returns file n of a task (ErrNotFound if none).
	File(ctx context.Context, id string, n int) ([]byte, error)
	// DeviceCopy returns the content key wrapped to a device (ErrNotFound).
	DeviceCopy(ctx context.Context, id, deviceID string) ([]byte, error)
}

// TaskKeys holds what the enclave side opens and wraps: a task's sealed
// copy, what its answer run reads with it, and the copies of its content
// key wrapped to devices.
type TaskKeys interface {
	// Sealed returns the task's sealed copy and the key id that sealed it
	// (ErrNotFound once the task is closed).
	Sealed(ctx context.Context, id string) ([]byte, uint32, error)
	// RunInputs reads in one round trip what an approved task's answer run
	// checks before it claims the run: the task, its project, its sealed
	// copy with the approval, and its preparer (ErrNotFound when there is
	// no such task). The task's row stays locked until the transaction
	// ends, so a MoveTask of it in the same transaction knows whether it
	// moves without asking the database, and waits for nothing.
	RunInputs(ctx context.Context, id string) (RunInputs, error)
	// DeviceCopies lists the devices a task's content key is wrapped to.
	DeviceCopies(ctx context.Context, id string) ([]string, error)
	// PutDeviceCopy stores (or replaces) a device copy of a waiting task.
	PutDeviceCopy(ctx context.Context, id, deviceID string, blob []byte) error
}

// Outcomes holds what a task keeps for its preparer: the result its answer
// run reported and the tasks that run opened, the owner's rejection reason,
// and the receipt of the run that opened it.
type Outcomes interface {
	// RecordAnswer keeps what an answer run reported for the preparer (the
	// result sealed for it) and the tasks it opened next.
	RecordAnswer(ctx context.Context, id string, result []byte, nextTaskID, noticeTaskID string) error
	// Outcome returns what a closed task keeps for its preparer: the result
	// sealed for it and the owner's rejection reason (sealed to the reply
	// key); nil when there is none.
	Outcome(ctx context.Context, id string) (result, reason []byte, err error)
	// SetReason keeps the owner's rejection reason of a task.
	SetReason(ctx context.Context, id string, reason []byte) error
	// SetTaskReceipt keeps the signed receipt of the run that made a task.
	SetTaskReceipt(ctx context.Context, id, receipt string) error
	// TaskReceipt returns it ("" while the run has not finished).
	TaskReceipt(ctx context.Context, id string) (string, error)
}

// RunInputs is what RunInputs reads; a project or preparer that is not
// there is nil, as is the sealed copy of a closed task.
type RunInputs struct {
	Task     Task
	Project  *Project
	Sealed   []byte
	KeyID    uint32
	Approval []byte
	// Approvals are the approvals of a shared task (Threshold set).
	Approvals []Approval
	Preparer  *Agent
	// Seen is what a later move of the task needs (Move.Seen).
	Seen Seen
}

// Gate is what OwnerGate reads under the owner's lock.
type Gate struct {
	Muted   bool
	Load    Load
	Devices []Device
	// Thread is the task OwnerGate was asked for, nil when it was asked
	// for none or there is no such task.
	Thread *Task
}

// Task is a task's clear metadata: nothing the task shows.
type Task struct {
	ID          string
	Owner       string
	Preparer    string
	Project     string
	ProjectUUID string
	Connector   string
	Kind        countersign.Kind
	State       countersign.State
	Thread      string
	Run         string               // the run that prepared it
	Operation   string               // the answer operation ("" for notices)
	Supplies    countersign.Supplies // none|text|file ("" for notices)
	ReplyPubkey string               // "" for notices
	TaskHash    string
	KeyID       uint32 // master key id its keys derive from
	ContentSize int64  // bytes of content and files, for the owner's limit
	Forgotten   bool   // the preparer deleted it from its list
	CreatedAt   time.Time
	ExpiresAt   time.Time
	StateAt     time.Time // when it reached its state
	ClosedAt    time.Time // zero while open, approved or answering

	OutcomeClass  countersign.OutcomeClass
	FailureReason countersign.FailureReason
	AnswerRun     string
	NextTaskID    string
	NoticeTaskID  string

	// Threshold is, for a shared task (SPEC §13 `approvers`), how many
	// distinct accounts among the owner and the approvers ShareTask listed
	// must approve it; 0 for a task its owner alone approves.
	Threshold int
	// RejectedBy is the account that rejected the task ("" unless it was
	// rejected, and in tasks rejected before it was kept).
	RejectedBy string
}

// Shared reports whether others than the owner approve the task.
func (t Task) Shared() bool { return t.Threshold > 0 }

// TaskCiphertext is what a task shows, sealed.
type TaskCiphertext struct {
	Sealed       []byte            // sealed copy, for the enclave
	Content      []byte            // content blob, under the content key
	Files        [][]byte          // file blobs, under the content key
	DeviceCopies map[string][]byte // device id → content key wrapped to it
}

// Move is a compare-and-set of a task's state: the domain's move
// (countersign.Transition, the only maker of one) applied to one task.
//
// Leaving "open" deletes the content and the device copies at once; files
// are deleted too unless the task moves to "approved", whose answer run
// still needs them. Reaching a state a task ends in (any but open, approved
// and answering) deletes the sealed copy, every file and every device copy,
// sets the closing time and the outcome class, and ends the task's history
// entry (its state, failure reason and time, and its body when Entry is
// set); a shared task's approvals lose their signed records. What goes is
// the move's Drops.
type Move struct {
	ID string
	// Move is the task's kind, the states it leaves and reaches, who moves
	// it, its failure reason and outcome class. MoveTask refuses the zero
	// Move, and does not move a task of another kind.
	Move countersign.Move
	At   time.Time
	Run  string // the run concerned, if any, for the event
	// By, on a move to rejected, is the account that rejected the task.
	By        string
	AnswerRun string // set as the task's answer run when not empty
	// Unexpired, when set, also requires the task not to have expired by
	// then (an approval must arrive before expires_at).
	Unexpired time.Time
	// Approval, when set, is kept by the move as the task's approval (the
	// signed pieces and the sealed supply and note) for the answer run to
	// check again; leaving open drops it with the sealed copy.
	Approval []byte
	// Answer, when set, is kept by the move as RecordAnswer keeps it.
	Answer *Answer
	// Entry, when set on a move that ends the task, replaces the sealed
	// body of the task's history entry (sealed again with its result).
	Entry []byte
	// Through, when set, is a move the task makes first, in the same
	// write: the task leaves Through's state (which Move must leave from
	// Through's end) and its row is written once, with both moves' events,
	// notifications and drops. Only a transaction in which nothing reads
	// the task between the two may join them: an answer run kept whole in
	// the transaction that claims it.
	Through *Step
	// Seen, when set, is what a read before this transaction saw of the
	// task. The move then asks the database nothing and MoveTask reports
	// true: its UPDATE, which also requires the task's owner, threshold
	// and owner's webhook to be as seen, goes with the transaction's next
	// round trip, and if it changes no row the transaction fails with
	// ErrStale and keeps nothing.
	Seen *Seen
}

// Step is a move made in the same write as the one after it (Move.Through):
// the move, when it was made, and the run concerned, for its event.
type Step struct {
	Move countersign.Move
	At   time.Time
	Run  string
}

// Seen is what a move needs to know of its task besides its state: who
// owns it, a shared task's threshold, and the id of the owner's webhook
// ("" for none), as a read found them (TaskSeen, RunInputs).
type Seen struct {
	Owner     string
	Threshold int
	Webhook   string
}

// FromSeen runs try(true), a transaction whose moves are made from what a
// read before it saw (Move.Seen), and if that found a task changed
// (ErrStale) runs try(false), which makes them from the tasks as they are.
func FromSeen(try func(fromSeen bool) error) error {
	err := try(true)
	if errors.Is(err, ErrStale) {
		err = try(false)
	}
	return err
}

// Answer is what an answer run leaves on its task: the result sealed for
// the preparer, and the tasks it opened next.
type Answer struct {
	Result               []byte
	NextTaskID, NoticeID string
}

// Event is one state change of a task, kept for the owner's audit trail.
type Event struct {
	TaskID string
	From   countersign.State
	To     countersign.State
	Actor  countersign.Actor
	Run    string
	At     time.Time
}

// Load is what counts against an owner's limits.
type Load struct {
	OwnerOpen      int   // open tasks of the owner
	PreparerActive int   // open and approved tasks of one preparer
	WaitingContent int64 // bytes of content and files of open tasks
}

// groupKey is the context key of Grouped.
type groupKey struct{}

// Grouped marks ctx so that a transaction begun with it (Tx) may share
// its commit with other such transactions begun meanwhile: one BEGIN and
// one COMMIT, one flush of the log, for several actions, each still kept
// whole or not at all. Transactions of the same key (an owner) go to the
// same group, one after another. A store that does not group them runs
// each alone.
//
// A transaction so marked may be tried twice: when any transaction of its
// group fails, or waits long for a lock another holds, nothing of the
// group is kept and each is tried again alone, and that try's answer is
// its answer. So fn must start every try from nothing it kept of an
// earlier one, as a transaction tried again after an outage does. And fn
// runs where its group is made: it must not begin a grouped transaction
// itself (with ctx), which would wait for the group it is in.
func Grouped(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, groupKey{}, key)
}

// Alone unmarks a ctx Grouped marked: a transaction begun within a grouped
// one, or tried again alone, runs on its own.
func Alone(ctx context.Context) context.Context {
	if _, ok := GroupOf(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, groupKey{}, "")
}

// GroupOf is the key Grouped marked ctx with.
func GroupOf(ctx context.Context) (string, bool) {
	k, _ := ctx.Value(groupKey{}).(string)
	return k, k != ""
}

// Grouping counts what a store's lanes did with its grouped transactions:
// a store that groups them says so (sqlstore.DB.Grouping on PostgreSQL).
type Grouping struct {
	// Lanes is how many lanes group transactions.
	Lanes int
	// Commits are the commits of groups, Kept the transactions they kept.
	Commits, Kept int64
	// Alone are the transactions run alone instead: their group kept
	// nothing, or the member their lane was running had held it too long.
	Alone int64
	// Busy is the time the lanes spent on their groups, summed over the
	// lanes: from taking a group's connection to its members' answers.
	Busy time.Duration
}
