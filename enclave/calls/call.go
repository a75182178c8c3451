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
	agent, err := s.agent(ctx, req.AgentKey)
	if err != nil {
		return nil, err
	}
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
	var project store.Project
	granted := false
	if p, looked := calledProject(ctx, req.AgentKey, req.Owner, req.Project); looked {
		if p != nil {
			project, granted = *p, contains(p.Agents, agent.Account)
		}
	} else if err := s.store.Read(ctx, func(tx callsTx) error {
		p, err := tx.Project(ctx, req.Owner, req.Project)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		project, granted = p, contains(p.Agents, agent.Account)
		return nil
	}); err != nil {
		return nil, Transport(err)
	}
	if !granted {
		// Whether the project exists is not the agent's to learn.
		return refusal(countersign.Errorf(countersign.NotGranted, "this agent may not use this project")), nil
	}
	if isTaskOperation(call.Operation) {
		if err := s.taskArgs(call.Operation, req.Body); err != nil {
			return refusal(err), nil
		}
		out, err := s.taskOperation(ctx, agent.Account, project, call.Operation, req.Body)
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
	return s.runOperation(ctx, agent, project, conn, op, pol, req)
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
// handler within the operation's compute limit, and records the answer.
func (s *Service) runOperation(ctx context.Context, agent store.Agent, project store.Project, conn *connectors.Connector,
	op *connectors.Operation, pol *policy.Policy, req callRequest) ([]byte, error) {
	// Credentials are opened before anything is charged: a project whose
	// credentials do not open refuses, free.
	creds, err := s.keys.Credentials(project)
	if err != nil {
		s.log.Error("cannot open a project's credentials", "project", project.UUID, "err", err)
		return refusal(countersign.Errorf(countersign.Internal, "the project's credentials cannot be opened")), nil
	}
	now := s.clock()
	run := &Run{
		ID: countersign.NewRunID(), Agent: agent.Account, Request: req.Body, ComputeLimit: op.ComputeLimit(), Operation: op.Name,
		Project: Project{Owner: project.Owner, Name: project.Name, UUID: project.UUID, Connector: conn.Name,
			Build: conn.Build(), PolicyHash: pol.Hash(), Approvers: pol.For(project.Owner)},
	}
	// The body's hash is keyed under the master key (SPEC §11): the same body
	// is recognised, and no reader of the database can test guesses of it.
	idem := store.IdempotentCall{Agent: agent.Account, Owner: project.Owner, Project: project.Name,
		Key: req.IdempotencyKey, BodyKeyID: s.keys.Current(), CreatedAt: now}
	if req.IdempotencyKey != "" {
		if idem.BodySHA256, err = s.keys.BodyHash(idem.BodyKeyID, idemRow(idem), req.Body); err != nil {
			return nil, err
		}
	}
	rk, rkKeyID, rkSealed, err := s.keys.NewReceiptKey(run.ID)
	if err != nil {
		return nil, err
	}
	run.Receipt = rk
	var replay []byte
	err = s.store.Tx(ctx, func(tx callsTx) error {
		if req.IdempotencyKey != "" {
			first, claimed, err := tx.ClaimCall(ctx, idem)
			if err != nil {
				return err
			}
			if !claimed {
				replay, err = s.replay(first, idem, req.Body, now)
				return err
			}
		}
		if err := tx.InsertRun(ctx, store.Run{ID: run.ID, Agent: agent.Account, Owner: project.Owner,
			ProjectUUID: project.UUID, Operation: op.Name, Price: op.Price, ComputeLimit: run.ComputeLimit,
			InputSHA256: rk.Sum(req.Body), ReceiptKeyID: rkKeyID, ReceiptKey: rkSealed, StartedAt: now}); err != nil {
			return err
		}
		if op.Price > 0 {
			// Checked at the commit, with which it travels.
			return tx.Charge(ctx, agent.Account, op.Price, run.ID, now)
		}
		return nil
	})
	switch {
	case replay != nil:
		return replay, nil
	case err == nil:
	case errors.Is(err, store.ErrUncovered):
		return refusal(countersign.Errorf(countersign.PaymentRequired, "the agent's balance of %d µUSD does not cover the price of %d µUSD", agent.Balance, op.Price)), nil
	case errors.Is(err, store.ErrUnavailable):
		return nil, Transport(err)
	case countersign.ErrorCode(err) != countersign.Internal:
		return refusal(err), nil
	default:
		return nil, err
	}

	call := &connectors.Call{
		Operation: op.Name, Args: req.Body, Agent: agent.Account, Owner: project.Owner, Project: project.Name,
		ProjectUUID: project.UUID, Run: run.ID, Policy: pol, Credentials: creds, Now: now,
	}
	s.log.Info("run started", "run", run.ID, "agent", agent.Account, "owner", project.Owner,
		"project", project.Name, "operation", op.Name, "price", op.Price)
	// The run is not the request's: a client that hangs up does not cut a
	// write off half way (the compute limit bounds it).
	out, opened, runErr := s.Execute(context.WithoutCancel(ctx), run, conn, func(ctx context.Context, p connectors.Platform) (any, error) {
		call.Platform = p
		return op.Run(ctx, call)
	})
	run.did = didOf(run, op, call, runErr, opened)
	// A call refused for its own arguments is not charged, wherever in the
	// connector the refusal arose, unless its run left something behind.
	uncharge := op.Price > 0 && runErr != nil && connectors.Uncharged(runErr) && len(opened) == 0 && call.Done() == nil
	return s.finish(ctx, run, op.Name, opened, idem, out, runErr, uncharge)
}

// finishPatience is how long a run's end is tried again while the store is
// unavailable, with the agent waiting.
const finishPatience = 30 * time.Second

// finish records the run's end and its answer, and takes its charge back
// when uncharge says so, in one transaction.
func (s *Service) finish(ctx context.Context, run *Run, op string, opened []Opened, idem store.IdempotentCall, out any, runErr error, uncharge bool) ([]byte, error) {
	if runErr != nil && countersign.ErrorCode(runErr) == countersign.Internal {
		var ce *countersign.Error
		if !errors.As(runErr, &ce) {
			// Only the error's type: a connector's own error text may
			// quote what the task holds.
			s.log.Error("run failed", "run", run.ID, "err_type", fmt.Sprintf("%T", runErr))
		}
	}
	answer, err := answerOf(out, runErr)
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	// The run's end (its receipts, the idempotent answer) is tried again a
	// while if the store went away during the run; the agent waits for it.
	err = UntilStored(ctx, s.store, s.log, time.Now().Add(finishPatience), func(tx callsTx) error {
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
	})
	if err != nil {
		// The charge of a run refused for its arguments then stands.
		s.log.Error("cannot record a run's end", "run", run.ID, "uncharge", uncharge, "err", err)
	}
	s.log.Info("run finished", "run", run.ID, "refused", string(countersign.ErrorCode(runErr)), "uncharged", uncharge && err == nil)
	return answer, nil
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
