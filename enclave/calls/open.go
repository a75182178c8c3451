package calls

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/sealing"
	"countersign/store"
)

// Project is what a run needs of the project a run acts on.
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
	// Receipt keys the run's own receipt (SPEC §11).
	Receipt *sealing.ReceiptKey
	// Claiming is set on an answer run whose claim is written with its
	// end (store.Move.Through): the task it answers is still approved in
	// the database while it runs, and is not counted against its
	// preparer's limit of active tasks, as the answering task it is.
	Claiming bool
	// abandoned is set when the handler overran its limit and was given up.
	abandoned atomic.Bool
}

// reset makes r as it was before its handler ran, for a run of which
// nothing was kept to run again.
func (r *Run) reset() {
	r.opened = 0
	r.did = nil
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

// content is the plaintext of a task's content blob, for the owner's device.
type content struct {
	Envelope string `json:"envelope"`
	Request  string `json:"request"`
}

// OpenTask opens a task in tx, in thread ("" starts one): it enforces every
// limit of the contract whatever the connector asked, seals what the task
// shows and writes it.
func (s *Service) OpenTask(ctx context.Context, tx openTx, run *Run, spec connectors.TaskSpec, thread string) (Opened, error) {
	life, err := spec.Check(run.opened)
	if err != nil {
		return Opened{}, err
	}
	id, err := countersign.TaskID(run.ID, run.opened+1)
	if err != nil {
		return Opened{}, err
	}
	now := s.clock()
	// Under the owner's lock: mutes, limits, devices and the thread's first
	// task, read at once.
	gate, err := tx.OwnerGate(ctx, run.Project.Owner, run.Agent, run.Project.Name, now, thread)
	if err != nil {
		return Opened{}, err
	}
	if thread == "" {
		thread = id
	} else {
		first := gate.Thread
		if first == nil || first.Preparer != run.Agent || first.Owner != run.Project.Owner {
			return Opened{}, countersign.Errorf(countersign.InvalidRequest, "no such thread for this preparer")
		}
		thread = first.Thread
	}
	if gate.Muted {
		return Opened{}, countersign.Errorf(countersign.Muted, "the owner muted this agent or this project")
	}
	load := gate.Load
	if run.Claiming {
		// The task answered, held approved in this transaction, is one
		// of the preparer's active tasks the gate counted.
		load.PreparerActive--
	}
	switch {
	case load.OwnerOpen >= countersign.MaxOpenTasksPerOwner:
		return Opened{}, countersign.Errorf(countersign.InboxFull, "the owner has %d tasks waiting", countersign.MaxOpenTasksPerOwner)
	case load.PreparerActive >= countersign.MaxActiveTasksPerPreparer:
		return Opened{}, countersign.Errorf(countersign.InboxFull, "this agent has %d tasks waiting for this owner", countersign.MaxActiveTasksPerPreparer)
	}
	st, err := s.seal(run, spec, id, thread, now, life)
	if err != nil {
		return Opened{}, err
	}
	if load.WaitingContent+st.size > countersign.MaxWaitingContentBytes {
		return Opened{}, countersign.Errorf(countersign.InboxFull, "the owner's waiting tasks hold 64 MiB")
	}

	devices := s.keys.CheckedKeys(gate.Devices, now)
	st.ct.DeviceCopies = make(map[string][]byte, len(devices))
	for deviceID, pub := range devices {
		if st.ct.DeviceCopies[deviceID], err = s.keys.WrapContentKey(pub, id, st.ck); err != nil {
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
		keys := s.keys.CheckedKeys(theirs, now)
		for deviceID, pub := range keys {
			if st.ct.DeviceCopies[deviceID], err = s.keys.WrapContentKey(pub, id, st.ck); err != nil {
				return Opened{}, err
			}
		}
		pushTo = append(pushTo, pushDevices(theirs, keys)...)
	}
	row := store.Task{
		ID: id, Owner: run.Project.Owner, Preparer: run.Agent, Project: run.Project.Name,
		ProjectUUID: run.Project.UUID, Connector: run.Project.Connector, Kind: countersign.Kind(string(spec.Kind)),
		State: countersign.StateOpen, Thread: thread, Run: run.ID, ReplyPubkey: st.env.ReplyPubkey,
		TaskHash: countersign.TaskHash(st.envelope), KeyID: st.keyID, ContentSize: st.size,
		CreatedAt: st.env.CreatedAt, ExpiresAt: st.env.ExpiresAt,
	}
	if spec.AnswerBy != nil {
		row.Operation, row.Supplies = spec.AnswerBy.Operation, countersign.Supplies(string(spec.AnswerBy.Supplies))
	}
	if shared {
		row.Threshold = rule.Threshold
	}
	// The task's history entry, listed once the task ends, goes with the
	// task's rows.
	entry, entryCopies, err := s.history.Task(run.Operation, row, spec.Display, devices)
	if err != nil {
		return Opened{}, err
	}
	if err := tx.InsertActivity(ctx, entry, entryCopies); err != nil {
		return Opened{}, err
	}
	if err := tx.InsertTask(ctx, row, st.ct); err != nil {
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
	return Opened{ID: id, Kind: spec.Kind, Hash: row.TaskHash, Thread: thread, ExpiresAt: st.env.ExpiresAt, receipt: st.rk, input: st.input}, nil
}

// sealedTask is a task being opened, sealed: its envelope (and its
// canonical bytes), the master key id its keys derive from, its content
// key, its receipt key and input hash, and its rows' ciphertext but the
// device copies, whose size counts against the owner's waiting content.
type sealedTask struct {
	env      countersign.Envelope
	envelope []byte
	keyID    uint32
	ck       *sealing.ContentKey
	rk       *sealing.ReceiptKey
	input    string
	ct       store.TaskCiphertext
	size     int64
}

// seal builds task id's envelope at now and seals what it shows: its
// keys derived under the current master key, its content and files
// encrypted under a fresh content key, its sealed copy for the answer run.
func (s *Service) seal(run *Run, spec connectors.TaskSpec, id, thread string, now time.Time, life time.Duration) (sealedTask, error) {
	keyID := s.keys.Current()
	tk, err := s.keys.TaskKeys(keyID, run.Project.UUID, run.Project.Owner, id)
	if err != nil {
		return sealedTask{}, fmt.Errorf("derive task keys: %w", err)
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
		return sealedTask{}, err
	}

	ck := sealing.NewContentKey()
	plain, err := Marshal(content{Envelope: string(envelope), Request: string(run.Request)})
	if err != nil {
		return sealedTask{}, err
	}
	rk := ck.ReceiptKey()
	input, err := taskInput(rk, plain)
	if err != nil {
		return sealedTask{}, err
	}
	var ct store.TaskCiphertext
	if ct.Content, err = ck.SealContent(id, plain); err != nil {
		return sealedTask{}, err
	}
	size := int64(len(ct.Content))
	for n, f := range spec.Files {
		blob, err := ck.SealFile(id, n, f.Data)
		if err != nil {
			return sealedTask{}, err
		}
		ct.Files = append(ct.Files, blob)
		size += int64(len(blob))
	}
	sc := enclave.SealedCopy{
		ContentKey: hex.EncodeToString(ck.Bytes()),
		Envelope:   string(envelope),
		State:      spec.State,
		Voucher:    enclave.Voucher{Run: run.ID, Agent: run.Agent, ComputeLimitMS: run.ComputeLimit.Milliseconds()},
	}
	if ct.Sealed, err = sc.Seal(tk); err != nil {
		return sealedTask{}, err
	}
	return sealedTask{env: env, envelope: envelope, keyID: keyID, ck: ck, rk: rk, input: input, ct: ct, size: size}, nil
}

// pushDevices are the devices of an opening task's owner that get its
// push: those with a subscription, among those the task is wrapped to.
func pushDevices(all []store.Device, checked map[string]*ecdh.PublicKey) []string {
	var out []string
	for _, d := range all {
		if _, ok := checked[d.ID]; ok && d.Push != nil {
			out = append(out, d.ID)
		}
	}
	return out
}

// Marshal writes JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
