package webhook

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"countersign"
)

// EventType names what happened. It is the body's "type" and the
// X-Event-Type header. The task events and the state each reports are the
// domain's (countersign.EventFor); Ping is the webhook's own.
type EventType = countersign.EventType

// The event types of SPEC §10.
const (
	TaskCreated            = countersign.EventTaskCreated
	TaskApproved           = countersign.EventTaskApproved
	TaskAnswered           = countersign.EventTaskAnswered
	TaskFailed             = countersign.EventTaskFailed
	TaskExpired            = countersign.EventTaskExpired
	Ping         EventType = "ping" // a test the owner asked for
)

// TimeFormat is the layout of the body's "at": the contract's UTC time,
// to the second.
const TimeFormat = "2006-01-02T15:04:05Z"

// Event is one webhook event. Its body holds exactly the fields of SPEC
// §10 and nothing a task shows; there is no way to add others.
//
// For a task event every field but Run and FailureReason is required.
// Run is required for TaskApproved and allowed for TaskAnswered and
// TaskFailed; FailureReason is required for TaskFailed and refused
// elsewhere. A notice only has TaskCreated and TaskExpired events.
//
// A Ping carries only ID, At, Owner and Link; its body has no
// "preparer", "project", "task_id", "kind" or "state".
type Event struct {
	ID            string    // unique per event: [A-Za-z0-9_-]{1,64}; also the webhook-id header
	Type          EventType // one of the types above
	At            time.Time // when the state changed; rendered in TimeFormat (UTC)
	Owner         string    // the owner's NEAR account
	Preparer      string    // the agent account whose run prepared the task
	Project       string    // the project's name
	TaskID        string    // [a-z0-9-]{1,80}
	Kind          string    // confirm, input or notice
	Run           string    // the run queued for (or that answered) the task
	FailureReason string    // a failure reason of SPEC §3
	Link          string    // an absolute http(s) link into the owner's inbox
}

// body is the wire form. Field order is the contract's.
type body struct {
	ID            string    `json:"id"`
	Type          EventType `json:"type"`
	At            string    `json:"at"`
	Owner         string    `json:"owner"`
	Preparer      string    `json:"preparer,omitempty"`
	Project       string    `json:"project,omitempty"`
	TaskID        string    `json:"task_id,omitempty"`
	Kind          string    `json:"kind,omitempty"`
	State         string    `json:"state,omitempty"`
	Run           string    `json:"run,omitempty"`
	FailureReason string    `json:"failure_reason,omitempty"`
	Link          string    `json:"link"`
}

// Limits on the free-text fields of an event.
const (
	maxEventID   = 64
	maxRunID     = 80 // a run the event names: a bound on its characters, not the run id rule
	maxName      = 128
	maxLinkBytes = 2048
)

// Encode validates the event and returns its JSON body: compact, fields in
// the contract's order, no HTML escaping, no trailing newline.
func (e Event) Encode() ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	b := body{
		ID:    e.ID,
		Type:  e.Type,
		At:    e.At.UTC().Format(TimeFormat),
		Owner: e.Owner,
		Link:  e.Link,
	}
	if e.Type != Ping {
		b.Preparer, b.Project, b.TaskID, b.Kind = e.Preparer, e.Project, e.TaskID, e.Kind
		state, _ := e.Type.State()
		b.State = string(state)
		b.Run, b.FailureReason = e.Run, e.FailureReason
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("webhook: encode event: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (e Event) validate() error {
	if !token(e.ID, maxEventID, eventIDByte) {
		return errors.New("webhook: event id must be 1-64 of [A-Za-z0-9_-]")
	}
	if y := e.At.UTC().Year(); y < 2000 || y > 9999 {
		return errors.New("webhook: event time is missing or out of range")
	}
	if !countersign.ValidAccountID(e.Owner) {
		return errors.New("webhook: event owner is not a NEAR account id")
	}
	if u, err := url.Parse(e.Link); err != nil || len(e.Link) > maxLinkBytes ||
		(u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return errors.New("webhook: event link must be an absolute http(s) URL")
	}
	if e.Type == Ping {
		if e.Preparer != "" || e.Project != "" || e.TaskID != "" || e.Kind != "" || e.Run != "" || e.FailureReason != "" {
			return errors.New("webhook: a ping event carries no task")
		}
		return nil
	}
	if _, ok := e.Type.State(); !ok {
		return fmt.Errorf("webhook: unknown event type %q", e.Type)
	}
	if !name(e.Preparer) || !name(e.Project) {
		return errors.New("webhook: event preparer and project must be 1-128 printable characters")
	}
	if !countersign.ValidTaskID(e.TaskID) {
		return errors.New("webhook: event task id must be 1-80 of [a-z0-9-]")
	}
	switch kind := countersign.Kind(e.Kind); {
	case !kind.Valid():
		return fmt.Errorf("webhook: unknown task kind %q", e.Kind)
	case !e.Type.Concerns(kind):
		return fmt.Errorf("webhook: a %s has no %s event", e.Kind, e.Type)
	}
	switch {
	case e.Type == TaskApproved && e.Run == "":
		return errors.New("webhook: a task_approved event names its run")
	case e.Run != "" && e.Type != TaskApproved && e.Type != TaskAnswered && e.Type != TaskFailed:
		return fmt.Errorf("webhook: a %s event carries no run", e.Type)
	case e.Run != "" && !token(e.Run, maxRunID, lowerIDByte):
		return errors.New("webhook: event run id must be 1-80 of [a-z0-9-]")
	}
	switch {
	case e.Type == TaskFailed && !failureReason(e.FailureReason):
		return errors.New("webhook: a task_failed event needs a known failure reason")
	case e.Type != TaskFailed && e.FailureReason != "":
		return fmt.Errorf("webhook: a %s event carries no failure reason", e.Type)
	}
	return nil
}

// Character sets of identifiers.
func lowerIDByte(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' }
func eventIDByte(c byte) bool { return lowerIDByte(c) || 'A' <= c && c <= 'Z' || c == '_' }

// token reports whether s is 1–max bytes, each accepted by ok.
func token(s string, max int, ok func(byte) bool) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// name reports whether s is 1–128 bytes of UTF-8 without control
// characters.
func name(s string) bool {
	if s == "" || len(s) > maxName || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
}

func failureReason(s string) bool {
	_, err := countersign.ParseFailureReason(s)
	return err == nil
}

// NewEventID returns a fresh event id: "evt_" and 26 lowercase base32
// characters of 128 random bits.
func NewEventID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("webhook: event id: %w", err)
	}
	return "evt_" + eventIDEncoding.EncodeToString(b[:]), nil
}

var eventIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
