package client

// The owner's inbox calls (SPEC §6): the task list, one task and its files,
// proof of origin, approvals, rejections, notices, cancellations, unlock,
// mutes, projects, the public connector catalogue, the event stream and a
// task's history.
//
// Every call but Connectors sends the session token (c.Session) as a bearer
// token. Byte fields are []byte here and standard base64 on the wire, as
// encoding/json writes []byte. A refusal is an *Error.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Which tasks Tasks lists.
const (
	ShowWaiting = "waiting" // open tasks, with their content
	ShowClosed  = "closed"  // tasks that left open; they carry no content
)

// What a mute silences.
const (
	SubjectAgent   = "agent"   // a preparer, by account id
	SubjectProject = "project" // a project, by name
)

// TaskFile is a file a task lists: its index (from 0) and size.
type TaskFile struct {
	N    int   `json:"n"`
	Size int64 `json:"size"`
}

// TaskView is a task as the inbox lists it to one of the owner's devices.
// Nothing in it but the ciphertext is trusted by a device: device.Open checks
// every member a device relies on against the envelope it decrypts.
type TaskView struct {
	ID string `json:"id"`
	// Owner is the task's owner. Role is this account's part in it:
	// RoleOwner, or RoleApprover for a task of another owner whose
	// project names this account among its approvers.
	Owner         string `json:"owner"`
	Role          string `json:"role"`
	Project       string `json:"project"`
	ProjectUUID   string `json:"project_uuid"`
	Connector     string `json:"connector"`
	Preparer      string `json:"preparer"`
	Kind          string `json:"kind"`
	State         string `json:"state"`
	Thread        string `json:"thread"`
	CreatedAt     string `json:"created_at"`
	ExpiresAt     string `json:"expires_at"`
	Run           string `json:"run,omitempty"`
	FailureReason string `json:"failure_reason,omitempty"`
	// ReplyPubkey is the task's reply key ("p256:…"); empty for a notice
	// (null on the wire).
	ReplyPubkey string `json:"reply_pubkey"`
	TaskHash    string `json:"task_hash"`
	// Content is the content blob; nil when the task is not waiting.
	Content []byte `json:"content"`
	// DeviceCopy is the content key wrapped to this device; nil when this
	// device has none.
	DeviceCopy []byte `json:"device_copy"`
	// Locked is true for a waiting task this device holds no copy of the
	// key for (Unlock wraps it to every current device).
	Locked bool       `json:"locked"`
	Files  []TaskFile `json:"files"`
	// Approvals is, for a task that needs the approvals of several
	// accounts, who approved it so far and how many it needs; nil for a
	// task its owner alone approves.
	Approvals *Approvals `json:"approvals,omitempty"`
	// RejectedBy names the account that rejected a rejected task.
	RejectedBy string `json:"rejected_by,omitempty"`
}

// A task view's Role.
const (
	RoleOwner    = "owner"
	RoleApprover = "approver"
)

// Approvals is how far a task that needs the approvals of several
// accounts (its project's approvers) is from being approved.
type Approvals struct {
	// Have distinct accounts approved it; it needs Need.
	Have int `json:"have"`
	Need int `json:"need"`
	// Approvers may approve it: the owner first, then the others.
	Approvers []string `json:"approvers"`
	// By is who approved it, oldest first.
	By []ApprovalBy `json:"by"`
	// Approved tells whether this account approved it.
	Approved bool `json:"approved"`
}

// ApprovalBy is one account's approval, and when the service accepted it.
type ApprovalBy struct {
	Account string `json:"account"`
	At      string `json:"at"`
}

// TaskPage is one page of the task list.
type TaskPage struct {
	Tasks []TaskView `json:"tasks"`
	// More is true when older tasks follow: ask again with before set to
	// the last task's id.
	More bool `json:"more"`
}

// Origin is the proof of origin of a task's preparing run (SPEC §11).
type Origin struct {
	Run          string `json:"run"`
	Operation    string `json:"operation"`
	InputSHA256  string `json:"input_sha256"`
	OutputSHA256 string `json:"output_sha256"`
	// Receipt is the run's signed receipt exactly as the service sent it
	// (a JSON object or string).
	Receipt json.RawMessage `json:"receipt"`
}

// ApproveRequest is the body of an approval: the task hash, the signed
// approval sentence and the sealed supply and note it covers.
type ApproveRequest struct {
	TaskHash string `json:"task_hash"`
	// Summary is the summary the signed sentence names: the envelope's
	// display.summary, "" (left out) for a task without one.
	Summary  string       `json:"summary,omitzero"`
	Approval Confirmation `json:"approval"`
	// Supplied is the owner's answer sealed to the task's reply key; nil
	// sends none (the member is left out).
	Supplied []byte `json:"supplied,omitzero"`
	// Note is the owner's note sealed to the task's reply key; nil sends
	// none (the member is left out).
	Note []byte `json:"note,omitzero"`
}

// TaskState is the service's answer to a move of a task: its id, its new
// state and, for an approval, the answer run.
type TaskState struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Run   string `json:"run,omitempty"`
	// Approvals is set in the answer to an approval of a task that needs
	// the approvals of several accounts: State stays open until enough
	// have approved.
	Approvals *Approvals `json:"approvals,omitempty"`
}

// Mute is a silenced preparer or project.
type Mute struct {
	SubjectIs string `json:"subject_is"` // SubjectAgent or SubjectProject
	Subject   string `json:"subject"`
	CreatedAt string `json:"created_at"`
}

// Project is one of the owner's projects as the inbox shows it. Its
// credentials are never returned, only whether it has some.
type Project struct {
	Name        string   `json:"name"`
	ProjectUUID string   `json:"project_uuid"`
	Connector   string   `json:"connector"`
	Agents      []string `json:"agents"`
	// Policy is the policy's JSON text as stored.
	Policy string `json:"policy"`
	// PolicyMode is ok, unreadable or broken; PolicySentence says why when
	// it is not ok.
	PolicyMode     string `json:"policy_mode"`
	PolicySentence string `json:"policy_sentence,omitempty"`
	// PolicyExplained is what the policy does, as the service's policy
	// reader tells it.
	PolicyExplained PolicyExplained `json:"policy_explained"`
	Credentials     bool            `json:"credentials"`
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
}

// PolicyExplained is what a project's policy does: per write, one line
// (Text) and its parts; one sentence per rule; the other keys as set.
type PolicyExplained struct {
	Writes []WriteExplained `json:"writes"`
	Rules  []string         `json:"rules"`
	Limits []string         `json:"limits"`
	// Approvers is who approves besides the owner; nil when nobody does.
	Approvers *ApproversExplained `json:"approvers,omitempty"`
}

// ApproversExplained is a policy's approvers: the accounts besides the
// owner, how many distinct accounts must approve, and that in a sentence.
type ApproversExplained struct {
	Accounts  []string `json:"accounts"`
	Threshold int      `json:"threshold"`
	Text      string   `json:"text"`
}

// WriteExplained is what a policy does with one write: Always (allow, ask
// or refuse) when one outcome is all there is, else Cases in order and
// Otherwise.
type WriteExplained struct {
	Op        string        `json:"op"`
	Noun      string        `json:"noun"`
	Always    string        `json:"always,omitempty"`
	Cases     []CaseExplain `json:"cases"`
	Otherwise string        `json:"otherwise,omitempty"`
	Text      string        `json:"text"`
}

// CaseExplain is one step of a write's plan.
type CaseExplain struct {
	When    string `json:"when"`
	Outcome string `json:"outcome"`
	Because string `json:"because"`
}

// Connector is one entry of the public connector catalogue.
type Connector struct {
	Name       string               `json:"name"`
	Version    string               `json:"version"`
	Build      string               `json:"build"`
	Tasks      bool                 `json:"tasks"` // the connector declares that it opens tasks
	Operations []ConnectorOperation `json:"operations"`
	PolicyKeys []string             `json:"policy_keys"`
	AllowedKey string               `json:"allowed_key,omitempty"` // the policy key listing the writes allowed at all
}

// ConnectorOperation is an operation of a connector: its kind (read, write
// or answer), its price in micro-USD, what it does in one line, the JSON
// Schema of its arguments with examples (none for an answer), the JSON
// Schema of its result when it declares one, and for an answer operation
// the shape of the text the owner supplies when it declares one (a JSON
// Schema of a string with a description of what is expected).
type ConnectorOperation struct {
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	Price        int64             `json:"price"`
	Description  string            `json:"description"`
	Schema       json.RawMessage   `json:"schema,omitempty"`
	Examples     []json.RawMessage `json:"examples,omitempty"`
	Result       json.RawMessage   `json:"result,omitempty"`
	SuppliedText json.RawMessage   `json:"supplied_text,omitempty"`
}

// Catalogue is the public catalogue: the connectors, and the task
// operations every project answers.
type Catalogue struct {
	Connectors     []Connector          `json:"connectors"`
	TaskOperations []ConnectorOperation `json:"task_operations"`
}

// TaskEvent says that a task of the owner changed state. It carries nothing
// the task shows; fetch the task to see it.
type TaskEvent struct {
	TaskID string `json:"task_id"`
	State  string `json:"state"`
}

func taskPath(id string) string { return "/inbox/tasks/" + url.PathEscape(id) }

// Tasks lists one page of the owner's tasks. show is ShowWaiting or
// ShowClosed, before the id of the last task of the previous page, limit 1
// to 100; "", "" and 0 leave them to the service's defaults.
func (c *Client) Tasks(ctx context.Context, show, before string, limit int) (TaskPage, error) {
	q := url.Values{}
	if show != "" {
		q.Set("show", show)
	}
	if before != "" {
		q.Set("before", before)
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/inbox/tasks"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var page TaskPage
	if err := c.do(ctx, http.MethodGet, path, c.Session, nil, &page); err != nil {
		return TaskPage{}, fmt.Errorf("list tasks: %w", err)
	}
	return page, nil
}

// Task fetches one task.
func (c *Client) Task(ctx context.Context, id string) (TaskView, error) {
	var t TaskView
	if err := c.do(ctx, http.MethodGet, taskPath(id), c.Session, nil, &t); err != nil {
		return TaskView{}, fmt.Errorf("fetch task %s: %w", id, err)
	}
	return t, nil
}

// File fetches file n (from 0) of a waiting task: its ciphertext, which
// device.OpenFile opens and checks.
func (c *Client) File(ctx context.Context, id string, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("fetch file of task %s: file numbers start at 0, not %d", id, n)
	}
	var out struct {
		Ciphertext []byte `json:"ciphertext"`
	}
	if err := c.do(ctx, http.MethodGet, taskPath(id)+"/files/"+strconv.Itoa(n), c.Session, nil, &out); err != nil {
		return nil, fmt.Errorf("fetch file %d of task %s: %w", n, id, err)
	}
	if out.Ciphertext == nil {
		return nil, fmt.Errorf("fetch file %d of task %s: the answer holds no ciphertext", n, id)
	}
	return out.Ciphertext, nil
}

// Origin fetches the proof of origin of the run that prepared a task.
func (c *Client) Origin(ctx context.Context, id string) (Origin, error) {
	var o Origin
	if err := c.do(ctx, http.MethodGet, taskPath(id)+"/origin", c.Session, nil, &o); err != nil {
		return Origin{}, fmt.Errorf("fetch the origin of task %s: %w", id, err)
	}
	return o, nil
}

// Approve sends a signed approval of a task (see device.ApproveRequest).
// The answer names the run that carries the task out.
func (c *Client) Approve(ctx context.Context, id string, req ApproveRequest) (TaskState, error) {
	var st TaskState
	if err := c.do(ctx, http.MethodPost, taskPath(id)+"/approve", c.Session, req, &st); err != nil {
		return TaskState{}, fmt.Errorf("approve task %s: %w", id, err)
	}
	return st, nil
}

// BatchLine is one task of a batch approval: the line
// "{id} {task hash} {supply hash}\n" its sentence's hash covers.
type BatchLine struct {
	ID         string `json:"id"`
	TaskHash   string `json:"task_hash"`
	SupplyHash string `json:"supply_hash"`
}

// BatchApproveRequest is the body of a batch approval (SPEC §6):
// 2–10 open confirm tasks of one project, nothing supplied, one signature
// over the batch sentence naming Summaries[i] for Tasks[i].
type BatchApproveRequest struct {
	Tasks     []BatchLine  `json:"tasks"`
	Approval  Confirmation `json:"approval"`
	Summaries []string     `json:"summaries"`
}

// BatchApproved is the answer to a batch approval: every task approved,
// in the order of the request.
type BatchApproved struct {
	Tasks []TaskState `json:"tasks"`
}

// BatchApprove approves 2–10 tasks with one signature: all or none. A
// refusal (an *Error) names the task it is about in TaskID.
func (c *Client) BatchApprove(ctx context.Context, req BatchApproveRequest) (BatchApproved, error) {
	var out BatchApproved
	if err := c.do(ctx, http.MethodPost, "/inbox/tasks/approve", c.Session, req, &out); err != nil {
		return BatchApproved{}, fmt.Errorf("approve %d tasks: %w", len(req.Tasks), err)
	}
	return out, nil
}

// Reject refuses a task. reason is the owner's reason sealed to the task's
// reply key, or nil for none.
func (c *Client) Reject(ctx context.Context, id string, reason []byte) (TaskState, error) {
	body := struct {
		Reason []byte `json:"reason,omitzero"`
	}{reason}
	var st TaskState
	if err := c.do(ctx, http.MethodPost, taskPath(id)+"/reject", c.Session, body, &st); err != nil {
		return TaskState{}, fmt.Errorf("reject task %s: %w", id, err)
	}
	return st, nil
}

// Acknowledge closes a notice ("Got it").
func (c *Client) Acknowledge(ctx context.Context, id string) (TaskState, error) {
	var st TaskState
	if err := c.do(ctx, http.MethodPost, taskPath(id)+"/acknowledge", c.Session, nil, &st); err != nil {
		return TaskState{}, fmt.Errorf("acknowledge task %s: %w", id, err)
	}
	return st, nil
}

// Cancel cancels an open task.
func (c *Client) Cancel(ctx context.Context, id string) (TaskState, error) {
	var st TaskState
	if err := c.do(ctx, http.MethodDelete, taskPath(id), c.Session, nil, &st); err != nil {
		return TaskState{}, fmt.Errorf("cancel task %s: %w", id, err)
	}
	return st, nil
}

// CancelMatching cancels the open tasks of a preparer, of a project, or of
// a preparer in a project, and returns how many it cancelled. It refuses,
// without asking the service, when both are empty: a slip must not cancel
// every task.
func (c *Client) CancelMatching(ctx context.Context, preparer, project string) (int, error) {
	if preparer == "" && project == "" {
		return 0, errors.New("cancel tasks: name a preparer, a project or both")
	}
	q := url.Values{}
	if preparer != "" {
		q.Set("preparer", preparer)
	}
	if project != "" {
		q.Set("project", project)
	}
	var out struct {
		Deleted int `json:"deleted"`
	}
	if err := c.do(ctx, http.MethodDelete, "/inbox/tasks?"+q.Encode(), c.Session, nil, &out); err != nil {
		return 0, fmt.Errorf("cancel tasks: %w", err)
	}
	return out.Deleted, nil
}

// Unlock asks the service to wrap the content key of every waiting task to
// every current device, and returns how many tasks are waiting.
func (c *Client) Unlock(ctx context.Context) (int, error) {
	var out struct {
		Waiting int `json:"waiting"`
	}
	if err := c.do(ctx, http.MethodPost, "/inbox/unlock", c.Session, nil, &out); err != nil {
		return 0, fmt.Errorf("unlock: %w", err)
	}
	return out.Waiting, nil
}

// Mute silences a preparer (SubjectAgent) or a project (SubjectProject):
// its new tasks are refused. With deleteWaiting its waiting tasks are
// deleted too; Mute returns how many.
func (c *Client) Mute(ctx context.Context, subjectIs, subject string, deleteWaiting bool) (int, error) {
	body := struct {
		SubjectIs     string `json:"subject_is"`
		Subject       string `json:"subject"`
		DeleteWaiting bool   `json:"delete_waiting"`
	}{subjectIs, subject, deleteWaiting}
	var out struct {
		Deleted int `json:"deleted"`
	}
	if err := c.do(ctx, http.MethodPost, "/inbox/mutes", c.Session, body, &out); err != nil {
		return 0, fmt.Errorf("mute: %w", err)
	}
	return out.Deleted, nil
}

// Mutes lists the owner's mutes.
func (c *Client) Mutes(ctx context.Context) ([]Mute, error) {
	var out struct {
		Mutes []Mute `json:"mutes"`
	}
	if err := c.do(ctx, http.MethodGet, "/inbox/mutes", c.Session, nil, &out); err != nil {
		return nil, fmt.Errorf("list mutes: %w", err)
	}
	return out.Mutes, nil
}

// Unmute lifts a mute and returns how many it removed (0 or 1).
func (c *Client) Unmute(ctx context.Context, subjectIs, subject string) (int, error) {
	body := struct {
		SubjectIs string `json:"subject_is"`
		Subject   string `json:"subject"`
	}{subjectIs, subject}
	var out struct {
		Deleted int `json:"deleted"`
	}
	if err := c.do(ctx, http.MethodDelete, "/inbox/mutes", c.Session, body, &out); err != nil {
		return 0, fmt.Errorf("unmute: %w", err)
	}
	return out.Deleted, nil
}

// Projects lists the owner's projects.
func (c *Client) Projects(ctx context.Context) ([]Project, error) {
	var out struct {
		Projects []Project `json:"projects"`
	}
	if err := c.do(ctx, http.MethodGet, "/inbox/projects", c.Session, nil, &out); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out.Projects, nil
}

func projectPath(name string) string { return "/inbox/projects/" + url.PathEscape(name) }

// AllowProposal is what "Always allow this" sets a project to (SPEC §13):
// the project text to confirm and put as it is, the policy in it, the rule
// inserted first and its sentence, and whether the write was taken out of
// `confirm`.
type AllowProposal struct {
	Project  string `json:"project"`
	Policy   string `json:"policy"`
	Rule     string `json:"rule"`
	Sentence string `json:"sentence"`
	Moved    bool   `json:"moved"`
}

// ProposeAllow asks what project name becomes with the "Always allow this"
// rule whose `when` (a JSON object) names a write and its values. It
// changes nothing.
func (c *Client) ProposeAllow(ctx context.Context, name string, when json.RawMessage) (AllowProposal, error) {
	var out AllowProposal
	body := struct {
		When json.RawMessage `json:"when"`
	}{when}
	if err := c.do(ctx, http.MethodPost, projectPath(name)+"/allow", c.Session, body, &out); err != nil {
		return AllowProposal{}, fmt.Errorf("always allow in project %s: %w", name, err)
	}
	return out, nil
}

// PutProject sets project name to projectText, the exact JSON text of
// {connector, policy, credentials?, agents} that conf confirms
// (approval.ActionSetProject(name, projectText)). It is sent as given,
// never re-serialized, so its hash stays the one signed.
func (c *Client) PutProject(ctx context.Context, name, projectText string, conf Confirmation) (Project, error) {
	body := struct {
		Project      string       `json:"project"`
		Confirmation Confirmation `json:"confirmation"`
	}{projectText, conf}
	var p Project
	if err := c.do(ctx, http.MethodPut, projectPath(name), c.Session, body, &p); err != nil {
		return Project{}, fmt.Errorf("set project %s: %w", name, err)
	}
	return p, nil
}

// DeleteProject removes project name with the owner's confirmation
// (approval.ActionRemoveProject(name)).
func (c *Client) DeleteProject(ctx context.Context, name string, conf Confirmation) error {
	body := struct {
		Confirmation Confirmation `json:"confirmation"`
	}{conf}
	var out struct {
		Deleted bool `json:"deleted"`
	}
	if err := c.do(ctx, http.MethodDelete, projectPath(name), c.Session, body, &out); err != nil {
		return fmt.Errorf("remove project %s: %w", name, err)
	}
	if !out.Deleted {
		return fmt.Errorf("remove project %s: the service did not say it was removed", name)
	}
	return nil
}

// Connectors fetches the public connector catalogue; it needs no session.
func (c *Client) Connectors(ctx context.Context) ([]Connector, error) {
	cat, err := c.Catalogue(ctx)
	return cat.Connectors, err
}

// Catalogue fetches the whole public catalogue; it needs no session.
func (c *Client) Catalogue(ctx context.Context) (Catalogue, error) {
	var out Catalogue
	if err := c.do(ctx, http.MethodGet, "/connectors", "", nil, &out); err != nil {
		return Catalogue{}, fmt.Errorf("list connectors: %w", err)
	}
	return out, nil
}

// Limits of the event stream reader.
const (
	// maxEventLine bounds one line of the stream, maxEventData the data of
	// one event; a stream that exceeds either is ended.
	maxEventLine = 64 << 10
	maxEventData = 64 << 10
)

// DefaultEventsIdle is how long an event stream may stay silent before it
// is taken for dead when Client.EventsIdle is not set: three of the
// service's 15-second heartbeats.
const DefaultEventsIdle = 45 * time.Second

// Events opens the owner's event stream (Server-Sent Events) and delivers
// its task events on the returned channel. Heartbeats and other comments,
// events of other types and task events whose data is not the expected JSON
// are skipped. The channel is closed when the stream ends, when it stays
// silent for c.EventsIdle (default 45 seconds: a connection that died
// without closing), when it breaks the reader's limits (lines or event data
// over 64 KiB), or when ctx ends; the caller reconnects if it wants more,
// and fetches the tasks anew, since events may have been missed in between.
//
// The stream is not bound by the client's overall timeout, only by ctx. An
// error is returned when the stream cannot be opened: a refusal (*Error) or
// an answer that is not an event stream.
func (c *Client) Events(ctx context.Context) (<-chan TaskEvent, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.BaseURL, "/")+"/inbox/events", nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("open the event stream: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if c.Session != "" {
		req.Header.Set("Authorization", "Bearer "+c.Session)
	}
	hc := http.Client{}
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("open the event stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode < 300 {
			return nil, fmt.Errorf("open the event stream: the service answered HTTP %d", resp.StatusCode)
		}
		return nil, fmt.Errorf("open the event stream: %w", decodeError(resp, raw))
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/event-stream" {
		resp.Body.Close()
		cancel()
		return nil, errors.New("open the event stream: the service did not answer with an event stream")
	}

	silence := c.EventsIdle
	if silence <= 0 {
		silence = DefaultEventsIdle
	}
	events := make(chan TaskEvent)
	go func() {
		defer close(events)
		defer cancel()
		defer resp.Body.Close()
		idle := time.AfterFunc(silence, cancel)
		defer idle.Stop()
		_ = readEvents(resp.Body, func() { idle.Reset(silence) }, func(typ, data string) bool {
			if typ != "task" {
				return true
			}
			var ev TaskEvent
			if json.Unmarshal([]byte(data), &ev) != nil || ev.TaskID == "" {
				return true
			}
			// A slow reader of the channel is not a dead stream: the
			// silence is timed only while reading.
			idle.Stop()
			select {
			case events <- ev:
				idle.Reset(silence)
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return events, nil
}

// readEvents reads a Server-Sent Events stream as the WHATWG HTML standard
// defines it (lines end with CR LF, LF or CR; a leading byte order mark is
// dropped; lines starting with a colon are comments; "event" sets the type,
// default "message"; "data" lines are joined with LF; a blank line dispatches
// an event that has data; an event cut off by the end of the stream is
// dropped; "id" and "retry" are ignored, since the caller reconnects itself).
// It calls line after every line, emit for every event, and stops when emit
// returns false, at the end of the stream (nil) or at a read error or broken
// limit (an error).
func readEvents(r io.Reader, line func(), emit func(typ, data string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	sc.Split(sseLines())
	var (
		typ   string
		data  bytes.Buffer
		first = true
	)
	for sc.Scan() {
		b := sc.Bytes()
		if first {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
			first = false
		}
		if line != nil {
			line()
		}
		if len(b) == 0 {
			if data.Len() > 0 {
				t := typ
				if t == "" {
					t = "message"
				}
				d := strings.TrimSuffix(data.String(), "\n")
				if !emit(t, d) {
					return nil
				}
			}
			typ = ""
			data.Reset()
			continue
		}
		if b[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(b, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			if data.Len()+len(value)+1 > maxEventData {
				return fmt.Errorf("an event's data is over %d bytes", maxEventData)
			}
			data.Write(value)
			data.WriteByte('\n')
		}
	}
	return sc.Err()
}

// sseLines returns a bufio.SplitFunc that splits at CR LF, LF or CR. A CR is
// a line end at once (a stream ending its lines with CR alone is not held
// back waiting for the next byte); an LF right after it is then skipped.
// It remembers how far it has searched, so a long line arriving in small
// pieces is searched once, not once per piece.
func sseLines() bufio.SplitFunc {
	afterCR := false
	scanned := 0 // bytes at the start of data already searched for a line end
	return func(data []byte, atEOF bool) (int, []byte, error) {
		start := 0
		if afterCR && len(data) > 0 {
			afterCR = false
			if data[0] == '\n' {
				start = 1
			}
		}
		scanned = max(scanned, start)
		if i := bytes.IndexAny(data[scanned:], "\r\n"); i >= 0 {
			i += scanned
			scanned = 0
			afterCR = data[i] == '\r'
			return i + 1, data[start:i], nil
		}
		if atEOF {
			// A line the stream ends without ending is dropped, as is the
			// event it belongs to.
			scanned = 0
			return len(data), nil, nil
		}
		// Ask for more. A skipped LF is consumed now (the Scanner only
		// reads more after a call that yields no token, and at the end of
		// the stream it stops) so that it is not taken for a blank line.
		scanned = len(data) - start
		return start, nil, nil
	}
}

// HistoryEntry is one state change of a task.
type HistoryEntry struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Actor string `json:"actor"`
	Run   string `json:"run,omitempty"`
	At    string `json:"at"`
}

// History lists a task's state changes, oldest first (the audit trail).
func (c *Client) History(ctx context.Context, id string) ([]HistoryEntry, error) {
	var out struct {
		Events []HistoryEntry `json:"events"`
	}
	err := c.do(ctx, http.MethodGet, "/inbox/tasks/"+url.PathEscape(id)+"/events", c.Session, nil, &out)
	return out.Events, err
}
