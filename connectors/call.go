package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign"
	"countersign/policy"
)

// TaskSpec is what a connector asks to show its owner.
type TaskSpec struct {
	Kind    countersign.Kind
	Display countersign.Display
	Files   []File
	// AnswerBy is the answer operation and what the owner supplies to it;
	// nil for a notice.
	AnswerBy *countersign.AnswerBy
	// Life is how long the task waits (0: 24 hours, the most).
	Life time.Duration
	// State is sealed with the task: only the answer run reads it. Put in it
	// the exact write to carry out, and random salt beside anything the owner
	// must not be able to guess by hashing candidates.
	State []byte
}

// Check applies the contract's limits to a task its run opens after opened
// others, whatever the connector asked, and returns how long it waits: a
// confirm or input task needs an answer operation and a summary
// (Display.Summary, the one line of what approving does, SPEC §8), a
// notice neither an answer operation nor a summary of what approving does
// (it may still carry one). The platform checks the rest when it builds
// the envelope.
func (s TaskSpec) Check(opened int) (time.Duration, error) {
	if opened >= countersign.MaxTasksPerRun {
		return 0, countersign.Errorf(countersign.TaskRunLimit, "a run opens at most %d tasks", countersign.MaxTasksPerRun)
	}
	life := s.Life
	if life == 0 {
		life = countersign.DefaultTaskLife
	}
	if life < 0 || life > countersign.MaxTaskLife {
		return 0, countersign.Errorf(countersign.TaskLifeTooLong, "a task waits at most 24 hours")
	}
	if len(s.State) > countersign.MaxSealedStateBytes {
		return 0, countersign.Errorf(countersign.TaskTooLarge, "the sealed state is larger than 256 KiB")
	}
	switch asks := s.Kind.Asks(); {
	case asks && s.AnswerBy == nil:
		return 0, countersign.Errorf(countersign.InvalidRequest, "%s task needs an answer operation", aTask(s.Kind))
	case !asks && s.AnswerBy != nil:
		return 0, countersign.Errorf(countersign.InvalidRequest, "%s task has no answer operation", aTask(s.Kind))
	case asks && s.Display.Summary == "":
		// The owner approves what the summary says, and the wallet shows
		// it in the sentence (SPEC §7, §8).
		return 0, countersign.Errorf(countersign.DisplayInvalid, "%s task needs a summary: one line of what approving does", aTask(s.Kind))
	}
	return life, nil
}

// aTask is a kind with its article: "a confirm", "an input".
func aTask(k countersign.Kind) string {
	if k == countersign.KindInput {
		return "an " + string(k)
	}
	return "a " + string(k)
}

// File is a file the owner is handed with a task.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// Task is a task a run opened.
type Task struct {
	ID        string
	Kind      countersign.Kind
	Hash      string
	Thread    string
	ExpiresAt time.Time
	// Link is where the owner reads it.
	Link string
}

// Platform is what the service does for a running operation. Connectors
// do not implement it; tests use the connectortest harness.
type Platform interface {
	// OpenTask opens a task in thread ("" starts one).
	OpenTask(ctx context.Context, spec TaskSpec, thread string) (Task, error)
	// Reserve counts one write of a kind against a daily limit.
	Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error)
	// Spend counts a payment of amount against what the project paid over
	// the last SpendWindow, if the sum stays within limit (negative: no
	// bound), and reports whether it did. key names the payment (the
	// idempotency key it carries upstream): a key already counted reports
	// true and counts nothing more. Concurrent payments of one project
	// never pass the limit together.
	Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error)
	// Unspend forgets a payment that certainly did not happen.
	Unspend(ctx context.Context, key string) error
}

// SpendWindow is the window a project's spending is bounded over
// (max_spend_usd_month: the last 30 days).
const SpendWindow = 30 * 24 * time.Hour

// Call is one call of a read or write operation by an agent.
type Call struct {
	Operation   string
	Args        json.RawMessage // the agent's body, exactly as sent
	Agent       string
	Owner       string
	Project     string
	ProjectUUID string
	Run         string
	Policy      *policy.Policy
	Credentials []byte
	Now         time.Time
	Platform    Platform

	did *Did // what a write carried out at once told the owner's history
}

// Did records what a write carried out at once did, for the owner's
// history; the platform seals it to the owner's devices when the run ends
// well. A write calls it once, after the write happened.
func (c *Call) Did(d Did) { c.did = &d }

// Done is what the write told with Did, if anything.
func (c *Call) Done() *Did { return c.did }

// Decode reads the call's arguments into v, refusing members v does not
// have (besides "operation"): a malformed call is invalid_request.
func (c *Call) Decode(v any) error { return decodeArgs(c.Args, v) }

// OpenTask opens a task, starting a thread.
func (c *Call) OpenTask(ctx context.Context, spec TaskSpec) (Task, error) {
	return c.Platform.OpenTask(ctx, spec, "")
}

// Decide asks the policy about this write (see policy.Policy.Decide).
func (c *Call) Decide(facts policy.Facts) policy.Decision { return c.Policy.Decide(c.Operation, facts) }

// Reserve counts this write against a daily limit (policy max_…_per_day)
// just before it happens; false means the day's number is reached.
func (c *Call) Reserve(ctx context.Context, kind policy.Kind, limit int) (bool, error) {
	return c.Platform.Reserve(ctx, kind, limit)
}

// Spend counts this payment against the project's spending (see
// Platform.Spend).
func (c *Call) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	return c.Platform.Spend(ctx, key, amount, limit)
}

// AnswerCall is the run the platform starts, as the agent, when the owner
// approves a task.
type AnswerCall struct {
	Operation   string
	Task        Task
	Envelope    countersign.Envelope
	State       []byte
	Supplied    []byte // the owner's text or file; nil for a confirm task
	Note        string // the owner's note to the agent, if any
	Files       [][]byte
	Agent       string // the preparer: the run is the agent's
	Owner       string
	Project     string
	ProjectUUID string
	Run         string
	Policy      *policy.Policy // as it is now
	Credentials []byte
	Now         time.Time
	Platform    Platform
}

// Decide asks the policy, as it is now, about the sealed write: Ask is the
// owner's yes; Refuse refuses it.
func (a *AnswerCall) Decide(write string, facts policy.Facts) policy.Decision {
	return a.Policy.Decide(write, facts)
}

// Reserve counts the confirmed write against the day's number of the agent
// that prepared it.
func (a *AnswerCall) Reserve(ctx context.Context, limit int) (bool, error) {
	return a.Platform.Reserve(ctx, policy.Confirmed, limit)
}

// Spend counts the confirmed payment against the project's spending (see
// Platform.Spend).
func (a *AnswerCall) Spend(ctx context.Context, key string, amount, limit policy.Cents) (bool, error) {
	return a.Platform.Spend(ctx, key, amount, limit)
}

// Next opens the next turn of the task's thread (a confirm or input task).
func (a *AnswerCall) Next(ctx context.Context, spec TaskSpec) (Task, error) {
	if !spec.Kind.Asks() {
		return Task{}, countersign.Errorf(countersign.InvalidRequest, "the next turn asks the owner something; use Notice to tell")
	}
	return a.Platform.OpenTask(ctx, spec, a.Task.Thread)
}

// Notice tells the owner something in the task's thread.
func (a *AnswerCall) Notice(ctx context.Context, spec TaskSpec) (Task, error) {
	spec.Kind, spec.AnswerBy = countersign.KindNotice, nil
	return a.Platform.OpenTask(ctx, spec, a.Task.Thread)
}

// Report is what an answer run reports.
type Report struct {
	// Result is the JSON object the agent reads with task_status (at most
	// 16 KiB).
	Result any
	// Outcome tells the owner what the write did, in their history.
	Outcome Outcome
}

// Outcome tells the owner, in plain words, what a write did and where to
// see it: "Committed 3f2a9c1 to main" with the commit's page, "Payment
// sent: transaction …". It is sealed to the owner's devices and kept 30
// days (SPEC §6, the history).
type Outcome struct {
	Text string // one line, shown text (SPEC §12), at most 200 characters
	URL  string // https; "" when there is nothing to open
}

// Did is what a write carried out at once (not asked) tells the owner's
// history: what it was and what it did, as a task of it would have shown.
type Did struct {
	Title   string // as a task's title
	Summary string // as a task's summary
	Outcome Outcome
}

// AwaitingOwner is the agent's answer when a task was opened.
func AwaitingOwner(t Task) any { return taskAnswer("awaiting_owner", t) }

// Notified is the agent's answer when a notice was opened.
func Notified(t Task) any { return taskAnswer("notified", t) }

func taskAnswer(status string, t Task) any {
	return map[string]any{
		"ok": true, "status": status, "task_id": t.ID, "task_hash": t.Hash, "thread": t.Thread,
		"expires_at": t.ExpiresAt.UTC().Format(countersign.TimeFormat), "link": t.Link,
	}
}

// Refuse is a refusal of a call: "<code>: <sentence>" to the agent.
func Refuse(code countersign.Code, format string, args ...any) error {
	return countersign.Errorf(code, format, args...)
}

// Refusal is an answer run's refusal after the owner's approval.
type Refusal struct {
	Code countersign.Code
	// Sentence says what was refused; Wrote says whether the write
	// happened (a write refused part way may have acted).
	Sentence string
	Wrote    bool
	// Unknown says that whether the write happened cannot be told (an
	// upstream's answer was lost); Wrote is then false.
	Unknown bool
}

func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message() }

// Message is the sentence with what happened to the write.
func (r *Refusal) Message() string {
	if r.Unknown {
		return r.Sentence + " Whether the write happened is not known."
	}
	if r.Wrote {
		return r.Sentence + " The write happened."
	}
	return r.Sentence + " Nothing was written."
}

// Refused builds an answer run's refusal.
func Refused(code countersign.Code, wrote bool, format string, args ...any) error {
	return &Refusal{Code: code, Sentence: fmt.Sprintf(format, args...), Wrote: wrote}
}

// RefusedUnknown builds an answer run's refusal when whether the write
// happened cannot be told.
func RefusedUnknown(code countersign.Code, format string, args ...any) error {
	return &Refusal{Code: code, Sentence: fmt.Sprintf(format, args...), Unknown: true}
}

// decodeArgs decodes an agent's call body strictly, ignoring "operation",
// by the service's one rule for JSON bodies (countersign.DecodeStrict): a
// body that is not one JSON object, whose members repeat ignoring case at
// any depth, that writes a member in another case than v, or that holds
// members v does not have is invalid_request. The owner is shown the raw
// request, so it must read one way only.
func decodeArgs(raw json.RawMessage, v any) error {
	var members map[string]json.RawMessage
	if err := countersign.DecodeStrict(raw, &members); err != nil {
		return argsRefusal(err)
	}
	delete(members, "operation")
	rest, err := json.Marshal(members)
	if err != nil {
		return err
	}
	if err := countersign.DecodeStrict(rest, v); err != nil {
		return argsRefusal(err)
	}
	return nil
}

// argsRefusal words DecodeStrict's refusal of a call; it never quotes a
// value, and names a member only when its name is plain.
func argsRefusal(err error) error {
	var je *countersign.JSONError
	if !errors.As(err, &je) {
		return err
	}
	switch je.Problem {
	case countersign.JSONMalformed, countersign.JSONNotObject:
		return countersign.Errorf(countersign.InvalidRequest, "the call is not a JSON object")
	case countersign.JSONUnknown:
		return countersign.Errorf(countersign.InvalidRequest, "the call's arguments are not this operation's (unknown member %s)", je.Member)
	}
	return countersign.Errorf(countersign.InvalidRequest, "%s", je.Sentence("the call"))
}
