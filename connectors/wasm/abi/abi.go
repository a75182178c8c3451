// Package abi is the wire between the service and a WebAssembly connector
// (SPEC §14, out-of-process connectors): the JSON messages each side sends
// and the names of the functions each side offers. The host
// (connectors/wasm) and the guest SDK (connectors/wasm/guest) both read and
// write these types, so the two cannot drift apart.
//
// # The module's side
//
// A module is a WASI preview 1 reactor (for Go: GOOS=wasip1 GOARCH=wasm,
// -buildmode=c-shared) that exports:
//
//   - ExportABI() → i32: the ABI version it speaks (Version).
//   - ExportAlloc(size i32) → ptr i32: a buffer of size bytes the host may
//     write one message into; it stays the module's until the module
//     returns from the call the message is for.
//   - ExportHandle(ptr, len i32) → i64: handles one [Request] (JSON at
//     ptr, len bytes) and answers one [Response] as (ptr << 32) | len.
//
// # The host's side
//
// Module ImportModule offers three functions, each taking a JSON message
// at (ptr, len) in the module's memory:
//
//   - ImportHTTP(ptr, len) → i32: an [HTTPRequest]; the answer, an
//     [HTTPResponse], is held for ImportTake. Returns its length.
//   - ImportPlatform(ptr, len) → i32: a [PlatformRequest] (open a task,
//     count a write, count a payment); the answer, a [PlatformResponse], is
//     held for ImportTake. Returns its length.
//   - ImportTake(ptr) → (): copies the answer held into the module's
//     memory at ptr, which the module allocated with the length it was
//     told, and forgets it.
//
// Besides these, the module sees WASI's clocks and random source (the
// host's), no files, no environment, no arguments and no network.
package abi

import (
	"encoding/json"
	"fmt"
	"time"

	"countersign"
)

// Version is the ABI version this package describes.
const Version = 1

// The names of the functions each side offers.
const (
	ExportABI      = "countersign_abi"
	ExportAlloc    = "countersign_alloc"
	ExportHandle   = "countersign_handle"
	ImportModule   = "countersign"
	ImportHTTP     = "http_do"
	ImportPlatform = "platform"
	ImportTake     = "take"
)

// The kinds of Request.
const (
	KindDescribe = "describe" // which operations the module serves
	KindRun      = "run"      // a read's or a write's run
	KindAnswer   = "answer"   // an answer operation's run
)

// Request is what the host asks of the module.
type Request struct {
	Kind      string `json:"kind"`
	Operation string `json:"operation,omitempty"`
	// Args is the agent's call body, exactly as sent (KindRun).
	Args        json.RawMessage `json:"args,omitempty"`
	Agent       string          `json:"agent,omitempty"`
	Owner       string          `json:"owner,omitempty"`
	Project     string          `json:"project,omitempty"`
	ProjectUUID string          `json:"project_uuid,omitempty"`
	Run         string          `json:"run,omitempty"`
	// Now is the platform's time, RFC 3339 with nanoseconds.
	Now    string  `json:"now,omitempty"`
	Policy *Policy `json:"policy,omitempty"`
	// What an answer run reads (KindAnswer).
	Task     *Task    `json:"task,omitempty"`
	Envelope []byte   `json:"envelope,omitempty"` // the task's canonical envelope
	State    []byte   `json:"state,omitempty"`
	Supplied []byte   `json:"supplied"` // null for a confirm task; "" for an empty supply
	Note     string   `json:"note,omitempty"`
	Files    [][]byte `json:"files,omitempty"`
}

// Policy is the project's policy as the module may read it: its mode, what
// it decides for each of the connector's writes, and the connector's own
// keys. A WebAssembly connector declares no rule conditions, so a decision
// depends on the write alone and the host makes each one.
type Policy struct {
	Mode      string              `json:"mode"`
	Sentence  string              `json:"sentence,omitempty"`
	Hash      string              `json:"hash,omitempty"`
	Asks      []string            `json:"asks,omitempty"`
	Decisions map[string]Decision `json:"decisions,omitempty"`
	Keys      map[string]KeyValue `json:"keys,omitempty"`
}

// Decision is the policy's answer for one write.
type Decision struct {
	Outcome  string `json:"outcome"` // allow, ask or refuse
	Rule     int    `json:"rule,omitempty"`
	Code     string `json:"code,omitempty"`
	Sentence string `json:"sentence,omitempty"`
}

// KeyValue is the value of one of the connector's own policy keys: one
// member is set, as the key's kind says.
type KeyValue struct {
	Count  *int     `json:"count,omitempty"`
	Amount *int64   `json:"amount_cents,omitempty"`
	Text   *string  `json:"text,omitempty"`
	List   []string `json:"list,omitempty"`
}

// Response is what the module answers.
type Response struct {
	// Result is a read's or a write's output (KindRun): a JSON object.
	Result json.RawMessage `json:"result,omitempty"`
	// Did is what a write carried out at once tells the owner's history.
	Did *Did `json:"did,omitempty"`
	// Report is an answer run's report (KindAnswer).
	Report *Report `json:"report,omitempty"`
	// Error is a refusal of the call (a contract code and its sentence),
	// or internal_error for a failure of the module's own.
	Error *Error `json:"error,omitempty"`
	// Refusal is an answer run's refusal after the owner's approval.
	Refusal *Refusal `json:"refusal,omitempty"`
	// Operations are the operations the module serves (KindDescribe).
	Operations []Operation `json:"operations,omitempty"`
}

// Operation names one operation a module serves and its kind.
type Operation struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // read, write or answer
}

// Error is a refusal: a contract code and a sentence safe to show.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Refusal is an answer run's refusal, saying whether the write happened.
type Refusal struct {
	Code     string `json:"code"`
	Sentence string `json:"sentence"`
	Wrote    bool   `json:"wrote,omitempty"`
	Unknown  bool   `json:"unknown,omitempty"`
}

// Report is what an answer run reports.
type Report struct {
	Result  json.RawMessage `json:"result"`
	Outcome Outcome         `json:"outcome"`
}

// Outcome tells the owner what a write did.
type Outcome struct {
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Did is what a write carried out at once tells the owner's history.
type Did struct {
	Title   string  `json:"title"`
	Summary string  `json:"summary,omitempty"`
	Outcome Outcome `json:"outcome"`
}

// The platform's operations (PlatformRequest.Op).
const (
	OpOpenTask = "open_task"
	OpReserve  = "reserve"
	OpSpend    = "spend"
	OpUnspend  = "unspend"
)

// The turns a task may be opened as (PlatformRequest.Turn).
const (
	TurnFirst  = "first"  // a read's or a write's task, starting a thread
	TurnNext   = "next"   // an answer run's next turn in its thread
	TurnNotice = "notice" // an answer run's notice in its thread
)

// PlatformRequest asks the platform to do something for the running call.
type PlatformRequest struct {
	Op string `json:"op"`
	// OpOpenTask.
	Turn string    `json:"turn,omitempty"`
	Spec *TaskSpec `json:"spec,omitempty"`
	// OpReserve: which daily number ("direct" or "confirmed") and its
	// bound.
	Count string `json:"count,omitempty"`
	Limit int    `json:"limit,omitempty"`
	// OpSpend, OpUnspend: the payment's key, its amount and the bound, in
	// cents (a negative bound: none).
	Key        string `json:"key,omitempty"`
	Amount     int64  `json:"amount_cents,omitempty"`
	SpendLimit int64  `json:"limit_cents,omitempty"`
}

// PlatformResponse is the platform's answer.
type PlatformResponse struct {
	Task  *Task  `json:"task,omitempty"`
	OK    bool   `json:"ok,omitempty"`
	Error *Error `json:"error,omitempty"`
}

// TaskSpec is what a connector asks to show its owner.
type TaskSpec struct {
	Kind     string    `json:"kind"`
	Display  Display   `json:"display"`
	Files    []File    `json:"files,omitempty"`
	AnswerBy *AnswerBy `json:"answer_by,omitempty"`
	LifeMS   int64     `json:"life_ms,omitempty"`
	State    []byte    `json:"state,omitempty"`
}

// Display is what the owner is shown.
type Display struct {
	Title   string  `json:"title"`
	Summary string  `json:"summary,omitempty"`
	Fields  []Field `json:"fields,omitempty"`
}

// Field is one labelled value of a display.
type Field struct {
	Kind      string   `json:"kind"`
	Label     string   `json:"label"`
	Values    []string `json:"values"`
	WrittenBy string   `json:"written_by"`
}

// File is a file the owner is handed with a task.
type File struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
}

// AnswerBy is a task's answer operation and what the owner supplies to it.
type AnswerBy struct {
	Operation string `json:"operation"`
	Supplies  string `json:"supplies"`
}

// Task is a task a run opened (or the task an answer run answers).
type Task struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Hash      string `json:"hash"`
	Thread    string `json:"thread"`
	ExpiresAt string `json:"expires_at"` // RFC 3339
	Link      string `json:"link"`
}

// HTTPRequest is one https request the module asks the host to make.
type HTTPRequest struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
}

// HTTPResponse is the answer the host got, or why there is none (Error:
// the request was refused before it left, or no answer came back).
type HTTPResponse struct {
	Status int                 `json:"status,omitempty"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
	Error  *Error              `json:"error,omitempty"`
	// Sent says, with an Error, whether the request may have reached the
	// host (a write may have happened).
	Sent bool `json:"sent,omitempty"`
}

// ErrorOf is err as a wire Error: its contract code and sentence; any
// other error is internal_error with no sentence (its text may quote what
// a task holds).
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	return &Error{Code: string(countersign.ErrorCode(err)), Message: countersign.ErrorMessage(err)}
}

// Err is e as a *countersign.Error; nil when e is.
func (e *Error) Err() error {
	if e == nil {
		return nil
	}
	return &countersign.Error{Code: countersign.Code(e.Code), Message: e.Message}
}

// SpecOf is a task spec on the wire.
func SpecOf(kind countersign.Kind, d countersign.Display, files []File, by *countersign.AnswerBy, life time.Duration, state []byte) *TaskSpec {
	s := &TaskSpec{Kind: string(kind), Display: DisplayOf(d), Files: files, LifeMS: life.Milliseconds(), State: state}
	if by != nil {
		s.AnswerBy = &AnswerBy{Operation: by.Operation, Supplies: string(by.Supplies)}
	}
	return s
}

// DisplayOf is a display on the wire.
func DisplayOf(d countersign.Display) Display {
	out := Display{Title: d.Title, Summary: d.Summary}
	for _, f := range d.Fields {
		out.Fields = append(out.Fields, Field{Kind: string(f.Kind), Label: f.Label, Values: f.Values, WrittenBy: string(f.WrittenBy)})
	}
	return out
}

// Domain is the display the wire carries.
func (d Display) Domain() countersign.Display {
	out := countersign.Display{Title: d.Title, Summary: d.Summary}
	for _, f := range d.Fields {
		out.Fields = append(out.Fields, countersign.Field{Kind: countersign.FieldKind(f.Kind), Label: f.Label,
			Values: f.Values, WrittenBy: countersign.WrittenBy(f.WrittenBy)})
	}
	return out
}

// Life is the task's life the wire carries (0: the default).
func (s *TaskSpec) Life() time.Duration { return time.Duration(s.LifeMS) * time.Millisecond }

// By is the answer operation the wire carries, nil for none.
func (s *TaskSpec) By() *countersign.AnswerBy {
	if s.AnswerBy == nil {
		return nil
	}
	return &countersign.AnswerBy{Operation: s.AnswerBy.Operation, Supplies: countersign.Supplies(s.AnswerBy.Supplies)}
}

// TimeFormat is how the wire writes times.
const TimeFormat = time.RFC3339Nano

// ParseTime reads a time the wire carries.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("abi: a time is not RFC 3339: %w", err)
	}
	return t, nil
}

// Manifest is the declaration beside a module (manifest.json): what the
// service shows agents and owners, what the module may reach, and how the
// project's credentials are attached to what it sends.
type Manifest struct {
	ABI     int    `json:"abi"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Module is the module's file name, beside the manifest.
	Module string `json:"module"`
	Tasks  bool   `json:"tasks,omitempty"`
	// PolicyKeys are the connector's own policy members besides confirm,
	// by kind: count, amount, text, list or write_list.
	PolicyKeys map[string]string `json:"policy_keys,omitempty"`
	// Allowed names the write_list key listing the writes allowed at all.
	Allowed    string              `json:"allowed,omitempty"`
	Operations []ManifestOperation `json:"operations"`
	Egress     Egress              `json:"egress"`
}

// ManifestOperation declares one operation, as connectors.Operation does.
type ManifestOperation struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"` // read, write or answer
	Price       int64             `json:"price"`
	Description string            `json:"description"`
	Schema      json.RawMessage   `json:"schema,omitempty"`
	Examples    []json.RawMessage `json:"examples,omitempty"`
	Result      json.RawMessage   `json:"result,omitempty"`
	// SuppliedText is an answer operation's shape of supplied text.
	SuppliedText json.RawMessage `json:"supplied_text,omitempty"`
	// LimitMS is the run's compute limit in milliseconds (0: the default).
	LimitMS int64 `json:"limit_ms,omitempty"`
	// InProcess declares that the operation reaches no host
	// (connectors.Operation's InProcess): its http_do is refused, and the
	// platform keeps each of its runs in one transaction.
	InProcess bool `json:"in_process,omitempty"`
}

// Egress says where the module's requests may go and how the project's
// credentials go with them.
type Egress struct {
	// Hosts are the only hosts http_do reaches: "name" (port 443) or
	// "name:port".
	Hosts []string `json:"hosts,omitempty"`
	// Credentials, when set, says how the host attaches the project's
	// credentials to every request.
	Credentials *Credentials `json:"credentials,omitempty"`
}

// Credentials says how the host attaches the project's credentials: the
// credentials are a JSON object whose members are Members, each a string;
// Header and Query are templates in which "{member}" stands for that
// member's value.
type Credentials struct {
	Members []string          `json:"members"`
	Header  map[string]string `json:"header,omitempty"`
	Query   map[string]string `json:"query,omitempty"`
}
