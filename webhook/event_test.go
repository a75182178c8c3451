package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var eventTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func approvedEvent() Event {
	return Event{
		ID:       "evt_0123",
		Type:     TaskApproved,
		At:       eventTime,
		Owner:    "alice.near",
		Preparer: "agent-7.near",
		Project:  "github",
		TaskID:   "run-42-0",
		Kind:     "confirm",
		Run:      "run-43",
		Link:     "https://inbox.example.com/tasks/run-42-0?a=1&b=2",
	}
}

func TestEventEncodeExactBodies(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("UTC+2", 2*3600)
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"approved", approvedEvent(),
			`{"id":"evt_0123","type":"task_approved","at":"2026-11-29T12:00:00Z","owner":"alice.near","preparer":"agent-7.near","project":"github","task_id":"run-42-0","kind":"confirm","state":"approved","run":"run-43","link":"https://inbox.example.com/tasks/run-42-0?a=1&b=2"}`},
		{"notice created, local time, sub-second", Event{ID: "e1", Type: TaskCreated, At: time.Date(2026, 11, 29, 14, 0, 0, 999, zone),
			Owner: "bob.near", Preparer: "probe-agent", Project: "probe", TaskID: "r1-1", Kind: "notice", Link: "https://i.example/t/r1-1"},
			`{"id":"e1","type":"task_created","at":"2026-11-29T12:00:00Z","owner":"bob.near","preparer":"probe-agent","project":"probe","task_id":"r1-1","kind":"notice","state":"open","link":"https://i.example/t/r1-1"}`},
		{"answered without run", Event{ID: "e2", Type: TaskAnswered, At: eventTime,
			Owner: "bob.near", Preparer: "a", Project: "probe", TaskID: "r1-0", Kind: "input", Link: "https://i.example/"},
			`{"id":"e2","type":"task_answered","at":"2026-11-29T12:00:00Z","owner":"bob.near","preparer":"a","project":"probe","task_id":"r1-0","kind":"input","state":"done","link":"https://i.example/"}`},
		{"failed", Event{ID: "e3", Type: TaskFailed, At: eventTime, Owner: "bob.near", Preparer: "a", Project: "mercury",
			TaskID: "r2-0", Kind: "confirm", Run: "r3", FailureReason: "run_refused:policy_denied", Link: "https://i.example/"},
			`{"id":"e3","type":"task_failed","at":"2026-11-29T12:00:00Z","owner":"bob.near","preparer":"a","project":"mercury","task_id":"r2-0","kind":"confirm","state":"failed","run":"r3","failure_reason":"run_refused:policy_denied","link":"https://i.example/"}`},
		{"expired", Event{ID: "e4", Type: TaskExpired, At: eventTime, Owner: "bob.near", Preparer: "a", Project: "gmail",
			TaskID: "r4-0", Kind: "confirm", Link: "http://127.0.0.1:8080/"},
			`{"id":"e4","type":"task_expired","at":"2026-11-29T12:00:00Z","owner":"bob.near","preparer":"a","project":"gmail","task_id":"r4-0","kind":"confirm","state":"expired","link":"http://127.0.0.1:8080/"}`},
		{"ping", Event{ID: "e5", Type: Ping, At: eventTime, Owner: "bob.near", Link: "https://i.example/"},
			`{"id":"e5","type":"ping","at":"2026-11-29T12:00:00Z","owner":"bob.near","link":"https://i.example/"}`},
		{"non-ASCII project, no HTML escaping", Event{ID: "e6", Type: TaskCreated, At: eventTime, Owner: "bob.near", Preparer: "a<b>",
			Project: "café \"x\"", TaskID: "r5-0", Kind: "confirm", Link: "https://i.example/?a=1&b=<2>"},
			`{"id":"e6","type":"task_created","at":"2026-11-29T12:00:00Z","owner":"bob.near","preparer":"a<b>","project":"café \"x\"","task_id":"r5-0","kind":"confirm","state":"open","link":"https://i.example/?a=1&b=<2>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ev.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The body never holds a member outside the contract's list.
func TestEventBodyMembers(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"id": true, "type": true, "at": true, "owner": true, "preparer": true, "project": true,
		"task_id": true, "kind": true, "state": true, "run": true, "failure_reason": true, "link": true}
	ev := approvedEvent()
	b, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if !allowed[k] {
			t.Errorf("body has member %q", k)
		}
	}
	if len(m) != 11 {
		t.Errorf("body has %d members, want 11", len(m))
	}
}

func TestEventRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*Event)
	}{
		{"no id", func(e *Event) { e.ID = "" }},
		{"id with dot", func(e *Event) { e.ID = "evt.1" }},
		{"id with newline", func(e *Event) { e.ID = "evt\r\nX: y" }},
		{"id too long", func(e *Event) { e.ID = strings.Repeat("a", 65) }},
		{"unknown type", func(e *Event) { e.Type = "task_rejected" }},
		{"empty type", func(e *Event) { e.Type = "" }},
		{"zero time", func(e *Event) { e.At = time.Time{} }},
		{"year 10000", func(e *Event) { e.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"no owner", func(e *Event) { e.Owner = "" }},
		{"owner upper case", func(e *Event) { e.Owner = "Alice.near" }},
		{"owner header injection", func(e *Event) { e.Owner = "alice.near\r\nX-Evil: 1" }},
		{"owner leading dot", func(e *Event) { e.Owner = ".alice" }},
		{"owner double separator", func(e *Event) { e.Owner = "alice..near" }},
		{"owner trailing separator", func(e *Event) { e.Owner = "alice-" }},
		{"owner one char", func(e *Event) { e.Owner = "a" }},
		{"owner too long", func(e *Event) { e.Owner = strings.Repeat("a", 65) }},
		{"no preparer", func(e *Event) { e.Preparer = "" }},
		{"preparer control char", func(e *Event) { e.Preparer = "a\x00b" }},
		{"preparer C1 control", func(e *Event) { e.Preparer = "a\u0085b" }},
		{"preparer invalid UTF-8", func(e *Event) { e.Preparer = "a\xffb" }},
		{"no project", func(e *Event) { e.Project = "" }},
		{"project too long", func(e *Event) { e.Project = strings.Repeat("p", 129) }},
		{"no task id", func(e *Event) { e.TaskID = "" }},
		{"task id upper", func(e *Event) { e.TaskID = "Run-1" }},
		{"task id too long", func(e *Event) { e.TaskID = strings.Repeat("a", 81) }},
		{"no kind", func(e *Event) { e.Kind = "" }},
		{"unknown kind", func(e *Event) { e.Kind = "question" }},
		{"approved notice", func(e *Event) { e.Kind = "notice" }},
		{"approved without run", func(e *Event) { e.Run = "" }},
		{"bad run", func(e *Event) { e.Run = "run 43" }},
		{"run on created", func(e *Event) { e.Type = TaskCreated }},
		{"failure reason on approved", func(e *Event) { e.FailureReason = "run_unfinished" }},
		{"failed without reason", func(e *Event) { e.Type = TaskFailed }},
		{"failed unknown reason", func(e *Event) { e.Type = TaskFailed; e.FailureReason = "oops" }},
		{"failed run_refused without code", func(e *Event) { e.Type = TaskFailed; e.FailureReason = "run_refused:" }},
		{"failed run_refused bad code", func(e *Event) { e.Type = TaskFailed; e.FailureReason = "run_refused:Bad Code" }},
		{"answered notice", func(e *Event) { e.Type = TaskAnswered; e.Kind = "notice"; e.Run = "" }},
		{"no link", func(e *Event) { e.Link = "" }},
		{"relative link", func(e *Event) { e.Link = "/tasks/1" }},
		{"javascript link", func(e *Event) { e.Link = "javascript:alert(1)" }},
		{"link with userinfo", func(e *Event) { e.Link = "https://u:p@i.example/" }},
		{"link too long", func(e *Event) { e.Link = "https://i.example/" + strings.Repeat("a", 2048) }},
		{"ping with task", func(e *Event) { e.Type = Ping; e.Run = "" }},
		{"ping with kind only", func(e *Event) {
			*e = Event{ID: "e", Type: Ping, At: eventTime, Owner: "bob.near", Link: "https://i.example/", Kind: "confirm"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := approvedEvent()
			tt.change(&ev)
			if b, err := ev.Encode(); err == nil {
				t.Fatalf("Encode accepted: %s", b)
			}
		})
	}
}

func TestNewEventID(t *testing.T) {
	t.Parallel()
	a, err := NewEventID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewEventID()
	if a == b || len(a) != 30 || !strings.HasPrefix(a, "evt_") {
		t.Fatalf("NewEventID() = %q, %q", a, b)
	}
	ev := approvedEvent()
	ev.ID = a
	if _, err := ev.Encode(); err != nil {
		t.Fatalf("a new event id is refused: %v", err)
	}
}
