package calls

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/enclave/history"
	"countersign/policy"
	"countersign/store"
)

// AgentKeyPrefix starts every agent key.
const AgentKeyPrefix = "ak_"

// MaxIdempotencyKey is the longest Idempotency-Key kept.
const MaxIdempotencyKey = 128

// idempotencyKept is how long an idempotency key answers with its first
// answer; a first call still without an answer after stalledCall did not
// finish.
const (
	idempotencyKept = 24 * time.Hour
	stalledCall     = MaxRunLimit + time.Minute
)

// MaxRunLimit is the longest compute limit of any run.
const MaxRunLimit = connectors.MaxLimit

// callRequest is an agent's POST /call/{owner}/{project}.
type callRequest struct {
	AgentKey       string
	Owner          string
	Project        string
	Body           []byte // a JSON object, exactly as sent
	IdempotencyKey string
}

// HashAgentKey is how agent keys are stored.
func HashAgentKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Call serves an agent's call. Its answer is the JSON the agent gets with
// HTTP 200: the operation's output, or a refusal {"success": false, …}. An
// error is a transport-level failure (unauthorized, the store unavailable).
//
// Nothing is charged for a call refused before its run starts: a bad key, a
// project not granted, an unknown operation, arguments its schema refuses,
// a write under an unreadable policy, a balance that does not cover the
// price. The price is charged when the run starts, in the transaction that
// records the run, so concurrent calls never spend more than the balance.
// A run refused for its own arguments (invalid_request, display_invalid,
// connectors.Uncharged) that opened no task and did no write is not
// charged: the charge is taken back in the transaction that records the
// run's end (SPEC §14). Whatever else the run answers — output, a task, or
// any other refusal by the connector or by the task layer — the charge
// stands.
func (s *Service) Call(ctx context.Context, agentKey, owner, project, idempotencyKey string, body []byte) ([]byte, error) {
	return s.call(ctx, callRequest{AgentKey: agentKey, Owner: owner, Project: project, Body: body, IdempotencyKey: idempotencyKey})
}

func (s *Service) call(ctx context.Context, req callRequest) ([]byte, error) {
	d, err := s.admit(ctx, req.AgentKey, req.Owner, req.Project)
	if err != nil {
		return nil, err
	}
	answer, err := s.callThrough(ctx, req, d)
	if d.kept && !d.stands {
		// Decided from a kept admission that no transaction of the call
		// checked: decided again from the admission as it is (which the
		// read keeps, or drops).
		if d, err = s.readAdmission(ctx, d.keyHash, d.owner, d.name); err != nil {
			return nil, err
		}
		answer, err = s.callThrough(ctx, req, d)
	}
	return answer, err
}

// errReadTheAdmission: what the call asks is served only from an admission
// read for it, not from a kept one.
var errReadTheAdmission = errors.New("calls: the operation reads its admission")

// callThrough serves a call let in by d.
func (s *Service) callThrough(ctx context.Context, req callRequest, d *admission) ([]byte, error) {
	// The body is read by the one rule for JSON bodies: a member named twice
	// (ignoring case, at any depth) is refused, so the operation that runs
	// is the only one the body names. "operation" is matched exactly.
	var members map[string]json.RawMessage
	var call struct{ Operation string }
	if err := countersign.DecodeStrict(req.Body, &members); err != nil {
		var je *countersign.JSONError
		if errors.As(err, &je) && je.Problem == countersign.JSONRepeated {
			return refusal(countersign.Errorf(countersign.InvalidRequest, "%s", je.Sentence("the call"))), nil
		}
		return refusal(countersign.Errorf(countersign.InvalidRequest, "the call needs an `operation`, a string")), nil
	}
	if json.Unmarshal(members["operation"], &call.Operation) != nil || call.Operation == "" {
		return refusal(countersign.Errorf(countersign.InvalidRequest, "the call needs an `operation`, a string")), nil
	}
	if len(req.IdempotencyKey) > MaxIdempotencyKey {
		return refusal(countersign.Errorf(countersign.InvalidRequest, "the Idempotency-Key is longer than %d characters", MaxIdempotencyKey)), nil
	}
	if !d.granted {
		// Whether the project exists is not the agent's to learn.
		return refusal(countersign.Errorf(countersign.NotGranted, "this agent may not use this project")), nil
	}
	project := d.project
	if isTaskOperation(call.Operation) {
		if d.kept && call.Operation == opTaskWait {
			// It waits, and answers from reads made later.
			return nil, errReadTheAdmission
		}
		if err := s.taskArgs(call.Operation, req.Body); err != nil {
			return refusal(err), nil
		}
		out, err := s.taskOperation(ctx, d, call.Operation, req.Body)
		if err != nil {
			return answerOf(nil, err)
		}
		return answerOf(out, nil)
	}
	conn, ok := s.connectors[project.Connector]
	if !ok {
		s.log.Error("a project's connector is not installed", "connector", project.Connector)
		return refusal(countersign.Errorf(countersign.Internal, "the project's connector is not installed here")), nil
	}
	op, ok := conn.Operation(call.Operation)
	if !ok || op.Kind == connectors.Answer {
		return refusal(countersign.Errorf(countersign.InvalidRequest, "%s has no operation %q an agent may call", conn.Name, call.Operation)), nil
	}
	// The arguments fit the operation's schema before anything runs or is
	// charged.
	if sch, ok := s.schemas.For(conn.Name, op.Name); !ok {
		return refusal(countersign.Errorf(countersign.Internal, "%s has no schema for %s", conn.Name, op.Name)), nil
	} else if err := sch.Check(req.Body); err != nil {
		return refusal(err), nil
	}
	pol := conn.ParsePolicy(project.Policy)
	if op.Kind == connectors.Write && pol.Mode() != policy.OK {
		return refusal(countersign.Errorf(countersign.PolicyUnreadable, "%s", pol.Sentence())), nil
	}
	return s.runOperation(ctx, d, conn, op, pol, req)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// agent authenticates an agent key.
func (s *Service) agent(ctx context.Context, key string) (store.Agent, error) {
	if !wellFormedKey(key) {
		return store.Agent{}, unauthorized()
	}
	if a, ok := authenticatedAs(ctx, key); ok {
		return a, nil
	}
	var a store.Agent
	err := s.store.Read(ctx, func(tx callsTx) (err error) {
		a, err = tx.AgentByKey(ctx, HashAgentKey(key))
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Agent{}, unauthorized()
	case err != nil:
		return store.Agent{}, Transport(err)
	}
	return a, nil
}

// unauthorized refuses a key that is not an agent's.
func unauthorized() error {
	return countersign.Errorf(countersign.Unauthorized, "a valid agent key is needed (Authorization: Bearer ak_…)")
}

// wellFormedKey is what an agent key can be: its prefix, then at least 16
// and at most 128 characters in all. Anything else is not looked up.
func wellFormedKey(key string) bool {
	return len(key) >= len(AgentKeyPrefix)+16 && len(key) <= 128 && key[:len(AgentKeyPrefix)] == AgentKeyPrefix
}

// Transport turns a store failure into the transient refusal agents get.
func Transport(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return &countersign.Error{Code: countersign.TaskStoreUnavailable, Message: "the store is unavailable; try again shortly", RetryAfter: countersign.RetryShortly}
	}
	return err
}

// refusal is the body of a refusal answered with HTTP 200.
func refusal(err error) []byte {
	b, _ := Marshal(map[string]any{"success": false, "error": string(countersign.ErrorCode(err)) + ": " + countersign.ErrorMessage(err)})
	return b
}

// answerOf renders an operation's output or refusal. Errors that are not
// refusals are internal errors, shown as such.
func answerOf(out any, err error) ([]byte, error) {
	if err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			return nil, Transport(err)
		}
		return refusal(err), nil
	}
	b, err := Marshal(out)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return refusal(countersign.Errorf(countersign.Internal, "the operation's output is not a JSON object")), nil
	}
	return b, nil
}

// runOperation starts a run (charging its price), runs the connector's
// handler within the operation's compute limit, and records the answer:
// an operation declared InProcess in one transaction (runInProcess), any
// other with its start kept before the handler runs.
func (s *Service) runOperation(ctx context.Context, d *admission, conn *connectors.Connector,
	op *connectors.Operation, pol *policy.Policy, req callRequest) ([]byte, error) {
	agent, project := d.agent, d.project
	// Credentials are opened before anything is charged: a project whose
	// credentials do not open refuses, free.
	creds, err := s.keys.Credentials(project)
	if err != nil {
		s.log.Error("cannot open a project's credentials", "project", project.UUID, "err", err)
		return refusal(countersign.Errorf(countersign.Internal, "the project's credentials cannot be opened")), nil
	}
	now := s.clock()
	st := &started{admission: d, op: op, body: req.Body, now: now}
	st.run = &Run{
		ID: countersign.NewRunID(), Agent: agent.Account, Request: req.Body, ComputeLimit: op.ComputeLimit(), Operation: op.Name,
		Project: Project{Owner: project.Owner, Name: project.Name, UUID: project.UUID, Connector: conn.Name,
			Build: conn.Build(), PolicyHash: pol.Hash(), Approvers: pol.For(project.Owner)},
	}
	// The body's hash is keyed under the master key (SPEC §11): the same body
	// is recognised, and no reader of the database can test guesses of it.
	st.idem = store.IdempotentCall{Agent: agent.Account, Owner: project.Owner, Project: project.Name,
		Key: req.IdempotencyKey, BodyKeyID: s.keys.Current(), CreatedAt: now}
	if req.IdempotencyKey != "" {
		if st.idem.BodySHA256, err = s.keys.BodyHash(st.idem.BodyKeyID, idemRow(st.idem), req.Body); err != nil {
			return nil, err
		}
	}
	if st.run.Receipt, st.receiptKeyID, st.receiptKey, err = s.keys.NewReceiptKey(st.run.ID); err != nil {
		return nil, err
	}
	newCall := func() *connectors.Call {
		return &connectors.Call{
			Operation: op.Name, Args: req.Body, Agent: agent.Account, Owner: project.Owner, Project: project.Name,
			ProjectUUID: project.UUID, Run: st.run.ID, Policy: pol, Credentials: creds, Now: now,
		}
	}
	if op.InProcess {
		if answer, ok, err := s.runInProcess(ctx, st, conn, newCall); ok {
			return answer, err
		}
		// Nothing of it was kept: it runs again, the ordinary way.
		st.run.reset()
	}
	var replay []byte
	err = s.admittedTx(ctx, d, func(tx callsTx) (err error) {
		replay, err = s.startRun(ctx, tx, st)
		return err
	})
	if err != nil && d.kept {
		return nil, err // decided again from a fresh read of the admission
	}
	if replay != nil {
		return replay, nil
	} else if err != nil {
		return startRefused(err, st)
	}
	call := newCall()
	s.logStart(st)
	// The run is not the request's: a client that hangs up does not cut a
	// write off half way (the compute limit bounds it).
	out, opened, runErr := s.Execute(context.WithoutCancel(ctx), st.run, conn, func(ctx context.Context, p connectors.Platform) (any, error) {
		call.Platform = p
		return op.Run(ctx, call)
	})
	st.run.did = didOf(st.run, op, call, runErr, opened)
	return s.finish(ctx, st.run, op.Name, opened, st.idem, out, runErr, uncharged(op, call, runErr, opened))
}

// started is a call's run as it starts: its row's parts and the
// idempotent call it answers.
type started struct {
	admission    *admission // its agent is the run's
	op           *connectors.Operation
	body         []byte
	now          time.Time
	run          *Run
	idem         store.IdempotentCall
	receiptKeyID uint32
	receiptKey   []byte // sealed, for the run's row
}

// startRun claims the call's idempotency key (a replay returns the first
// call's answer, and nothing starts), records the run and charges its
// price in tx; the charge is checked with tx's next round trip.
func (s *Service) startRun(ctx context.Context, tx callsTx, st *started) (replay []byte, err error) {
	if st.idem.Key != "" {
		first, claimed, err := tx.ClaimCall(ctx, st.idem)
		if err != nil {
			return nil, err
		}
		if !claimed {
			return s.replay(first, st.idem, st.body, st.now)
		}
	}
	r := st.run
	if err := tx.InsertRun(ctx, store.Run{ID: r.ID, Agent: r.Agent, Owner: r.Project.Owner,
		ProjectUUID: r.Project.UUID, Operation: st.op.Name, Price: st.op.Price, ComputeLimit: r.ComputeLimit,
		InputSHA256: r.Receipt.Sum(st.body), ReceiptKeyID: st.receiptKeyID, ReceiptKey: st.receiptKey, StartedAt: st.now}); err != nil {
		return nil, err
	}
	if st.op.Price > 0 {
		return nil, tx.Charge(ctx, r.Agent, st.op.Price, r.ID, st.now)
	}
	return nil, nil
}

// startRefused answers a call whose run did not start: its balance does
// not cover the price, the store is away, or a refusal.
func startRefused(err error, st *started) ([]byte, error) {
	switch {
	case errors.Is(err, store.ErrUncovered):
		return refusal(countersign.Errorf(countersign.PaymentRequired, "the agent's balance of %d µUSD does not cover the price of %d µUSD", st.admission.agent.Balance, st.op.Price)), nil
	case errors.Is(err, store.ErrUnavailable):
		return nil, Transport(err)
	case countersign.ErrorCode(err) != countersign.Internal:
		return refusal(err), nil
	}
	return nil, err
}

func (s *Service) logStart(st *started) {
	s.log.Info("run started", "run", st.run.ID, "agent", st.run.Agent, "owner", st.run.Project.Owner,
		"project", st.run.Project.Name, "operation", st.op.Name, "price", st.op.Price)
}

// uncharged tells whether a run's charge is taken back: a call refused
// for its own arguments is not charged, wherever in the connector the
// refusal arose, unless its run left something behind.
func uncharged(op *connectors.Operation, call *connectors.Call, runErr error, opened []Opened) bool {
	return op.Price > 0 && runErr != nil && connectors.Uncharged(runErr) && len(opened) == 0 && call.Done() == nil
}

// runInProcess runs a call of an operation declared InProcess in one
// transaction: its start and charge, what the handler does through the
// platform, and its end are kept together or not at all. ok is false
// when nothing was kept for a reason the ordinary way may not meet (an
// error of the store's other than its being away or the balance): the
// call then runs again that way.
//
// Its transaction may share its commit with other owners' (store.Grouped)
// and so be tried twice: each try starts from a new call and the run as
// it was, and a handler given up for overrunning its limit is not tried
// again.
func (s *Service) runInProcess(ctx context.Context, st *started, conn *connectors.Connector, newCall func() *connectors.Call) (answer []byte, ok bool, err error) {
	var replay []byte
	var runErr error
	var began, unch bool
	// The client hanging up does not cut the run off (the compute limit
	// bounds it).
	ctx = context.WithoutCancel(ctx)
	err = s.admittedTx(store.Grouped(ctx, st.run.Project.Owner), st.admission, func(tx callsTx) error {
		if st.run.abandoned.Load() {
			return errGivenUp
		}
		replay, runErr, began, unch = nil, nil, false, false
		st.run.reset()
		call := newCall()
		var err error
		if replay, err = s.startRun(ctx, tx, st); err != nil || replay != nil {
			return err
		}
		began = true
		out, opened, rErr, broke := s.ExecuteIn(ctx, tx, st.run, conn, func(ctx context.Context, p connectors.Platform) (any, error) {
			call.Platform = p
			return st.op.Run(ctx, call)
		})
		if broke != nil {
			return broke
		}
		runErr = rErr
		st.run.did = didOf(st.run, st.op, call, runErr, opened)
		if answer, err = answerOf(out, runErr); err != nil {
			return err
		}
		unch = uncharged(st.op, call, runErr, opened)
		return s.recordEnd(ctx, tx, st.run, st.op.Name, opened, st.idem, answer, unch)
	})
	// The run is logged once, for the try that counts (the last): a try
	// its transaction did not keep did not happen; one that runs again
	// the ordinary way, or from a fresh read of its admission, is logged there.
	answered := errors.Is(err, store.ErrUncovered) || errors.Is(err, store.ErrUnavailable) || !began
	switch {
	case err != nil && st.admission.kept && (answered || errors.Is(err, store.ErrAdmissionChanged)):
		return nil, true, err // decided again from a fresh read of the admission
	case replay != nil:
		return replay, true, nil
	case err == nil:
		s.logStart(st)
		s.logFailure(st.run, runErr)
		s.logEnd(st.run, runErr, unch)
		return answer, true, nil
	case answered:
		if began {
			s.logStart(st)
			s.log.Info("run kept nothing", "run", st.run.ID, "uncovered", errors.Is(err, store.ErrUncovered))
		}
		answer, err = startRefused(err, st)
		return answer, true, err
	}
	if st.run.abandoned.Load() {
		// Its handler overran its limit and may still be running: it is
		// not run again, whoever calls.
		st.admission.stands = true
		s.logStart(st)
		s.log.Error("an in-process run overran its limit and kept nothing", "run", st.run.ID)
		return refusal(countersign.Errorf(countersign.Internal, "the run passed its compute limit of %s", st.run.ComputeLimit)), true, nil
	}
	s.log.Warn("an in-process run kept nothing; it runs again in transactions of its own", "run", st.run.ID, "err_type", fmt.Sprintf("%T", err))
	return nil, false, nil
}

// finishPatience is how long a run's end is tried again while the store is
// unavailable, with the agent waiting.
const finishPatience = 30 * time.Second

// finish records the run's end and its answer, and takes its charge back
// when uncharge says so, in one transaction.
func (s *Service) finish(ctx context.Context, run *Run, op string, opened []Opened, idem store.IdempotentCall, out any, runErr error, uncharge bool) ([]byte, error) {
	s.logFailure(run, runErr)
	answer, err := answerOf(out, runErr)
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	// The run's end (its receipts, the idempotent answer) is tried again a
	// while if the store went away during the run; the agent waits for it.
	err = UntilStored(ctx, s.store, s.log, time.Now().Add(finishPatience), func(tx callsTx) error {
		return s.recordEnd(ctx, tx, run, op, opened, idem, answer, uncharge)
	})
	if err != nil {
		// The charge of a run refused for its arguments then stands.
		s.log.Error("cannot record a run's end", "run", run.ID, "uncharge", uncharge, "err", err)
	}
	s.logEnd(run, runErr, uncharge && err == nil)
	return answer, nil
}

// logFailure logs a run that failed with an error that is not a refusal:
// only the error's type, since a connector's own error text may quote
// what the task holds.
func (s *Service) logFailure(run *Run, runErr error) {
	var ce *countersign.Error
	if runErr != nil && countersign.ErrorCode(runErr) == countersign.Internal && !errors.As(runErr, &ce) {
		s.log.Error("run failed", "run", run.ID, "err_type", fmt.Sprintf("%T", runErr))
	}
}

func (s *Service) logEnd(run *Run, runErr error, uncharged bool) {
	s.log.Info("run finished", "run", run.ID, "refused", string(countersign.ErrorCode(runErr)), "uncharged", uncharged)
}

// recordEnd records, in tx, a run's end: its receipts, the charge taken
// back when uncharge says so, the history entry of a write it carried out
// at once, and its answer to an idempotent call.
func (s *Service) recordEnd(ctx context.Context, tx callsTx, run *Run, op string, opened []Opened, idem store.IdempotentCall, answer []byte, uncharge bool) error {
	if err := s.Sign(ctx, tx, run, op, answer, opened); err != nil {
		return err
	}
	if uncharge {
		if _, err := tx.Uncharge(ctx, run.Agent, run.ID); err != nil {
			return err
		}
	}
	if run.did != nil {
		if err := s.recordDirect(ctx, tx, run, *run.did); err != nil {
			return err
		}
	}
	if idem.Key == "" {
		return nil
	}
	keyID, blob, err := s.keys.SealCallAnswer(idemRow(idem), answer)
	if err != nil {
		return err
	}
	idem.AnswerKeyID, idem.Answer = keyID, blob
	return tx.AnswerCall(ctx, idem)
}

// recordDirect writes, in tx, the history entry of a write carried out at
// once, its key wrapped to the owner's current devices.
func (s *Service) recordDirect(ctx context.Context, tx callsTx, run *Run, d connectors.Did) error {
	now := s.clock()
	devices, err := tx.ActiveDevices(ctx, run.Project.Owner, now)
	if err != nil {
		return err
	}
	w := history.Write{Run: run.ID, Owner: run.Project.Owner, Project: run.Project.Name, ProjectUUID: run.Project.UUID,
		Connector: run.Project.Connector, Operation: run.Operation, Agent: run.Agent}
	entry, copies, err := s.history.Direct(w, d, now, s.keys.CheckedKeys(devices, now))
	if err != nil {
		return err
	}
	return tx.InsertActivity(ctx, entry, copies)
}

// sameBody tells whether body is the body of the first call with the key,
// comparing keyed hashes under the first call's key id; known is false when
// that cannot be told.
func (s *Service) sameBody(first, this store.IdempotentCall, body []byte) (same, known bool) {
	if first.BodySHA256 == "" || first.BodyKeyID == 0 {
		return false, false
	}
	h := this.BodySHA256
	if first.BodyKeyID != this.BodyKeyID {
		var err error
		if h, err = s.keys.BodyHash(first.BodyKeyID, idemRow(first), body); err != nil {
			return false, false
		}
	}
	return hmac.Equal([]byte(h), []byte(first.BodySHA256)), true
}

func idemRow(c store.IdempotentCall) string {
	return c.Agent + "\x00" + c.Owner + "\x00" + c.Project + "\x00" + c.Key
}

// replay answers a call whose idempotency key was used before.
func (s *Service) replay(first, this store.IdempotentCall, body []byte, now time.Time) ([]byte, error) {
	same, known := s.sameBody(first, this, body)
	switch {
	case !known:
		// Kept before body hashes were keyed, or under a master key no longer
		// held: whether the arguments are the same cannot be told, so the
		// call is not run again.
		return refusal(countersign.Errorf(countersign.Conflict, "the first call with this idempotency key cannot be compared with this one; use another key")), nil
	case !same:
		return refusal(countersign.Errorf(countersign.Conflict, "idempotency key reused with different arguments")), nil
	case first.Answer == nil && now.Sub(first.CreatedAt) < stalledCall:
		return refusal(countersign.Errorf(countersign.Conflict, "a call with this idempotency key is still running")), nil
	case first.Answer == nil:
		return refusal(countersign.Errorf(countersign.Internal, "the first call with this idempotency key did not finish; whether it acted is unknown")), nil
	}
	answer, err := s.keys.OpenCallAnswer(first.AnswerKeyID, idemRow(first), first.Answer)
	if err != nil {
		return nil, fmt.Errorf("open an idempotent answer: %w", err)
	}
	return answer, nil
}

// NewAgentKey makes an agent key; store only its HashAgentKey.
func NewAgentKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return AgentKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// didOf is what a run of a write carried out at once tells the owner's
// history: what the connector told with Did, or an empty account of a
// write that ran well without opening a task; nil when it wrote nothing
// the history keeps. A run given up is not read: its handler may still run.
func didOf(run *Run, op *connectors.Operation, call *connectors.Call, runErr error, opened []Opened) *connectors.Did {
	if run.abandoned.Load() {
		return nil
	}
	if d := call.Done(); d != nil {
		return d
	}
	if op.Kind == connectors.Write && runErr == nil && len(opened) == 0 {
		return &connectors.Did{}
	}
	return nil
}
