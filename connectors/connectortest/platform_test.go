package connectortest_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/policy"
)

func TestOpenTaskRecordsARealTask(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	h.Now = func() time.Time { return t0.Add(1500 * time.Millisecond) }
	h.Policy = []byte(`{"max_per_day": 2}`)
	spec := confirmSpec("Pay Bob")
	spec.Life = 2 * time.Hour
	spec.Files = []connectors.File{{Name: "invoice.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7")}}
	o := openOne(t, h, hk, spec)

	id := o.Task.ID
	runID, n, ok := strings.Cut(id, "-")
	if !ok || !countersign.ValidRunID(runID) || n != "1" || o.Run != runID || o.Operation != "open" || o.Preparer != h.Agent {
		t.Fatalf("task %q opened by run %q (%s)", id, o.Run, o.Operation)
	}
	if o.Task.Thread != id || o.Task.Kind != countersign.KindConfirm || o.Task.Link != "http://127.0.0.1:8080/#/tasks/"+id {
		t.Fatalf("task: %+v", o.Task)
	}
	created := t0.Add(time.Second) // truncated to the second
	if !o.Task.ExpiresAt.Equal(created.Add(2 * time.Hour)) {
		t.Fatalf("expires %v", o.Task.ExpiresAt)
	}
	sum := sha256.Sum256(o.Envelope)
	if o.Task.Hash != hex.EncodeToString(sum[:]) {
		t.Fatal("the task hash is not the envelope's SHA-256")
	}
	env, err := countersign.ParseEnvelope(o.Envelope)
	if err != nil {
		t.Fatalf("the envelope is not canonical: %v", err)
	}
	policySum := sha256.Sum256(h.Policy)
	stateSum := sha256.Sum256(spec.State)
	fileSum := sha256.Sum256(spec.Files[0].Data)
	switch {
	case env.ID != id, env.Thread != id, env.Kind != countersign.KindConfirm, env.Build != "hook@0.1.0",
		env.Owner != connectortest.DefaultOwner, env.Preparer != connectortest.DefaultAgent,
		env.Project != "hook", env.ProjectUUID != connectortest.DefaultProjectUUID,
		!env.CreatedAt.Equal(created), !env.ExpiresAt.Equal(o.Task.ExpiresAt),
		env.PolicyHash != hex.EncodeToString(policySum[:]), env.StateHash != hex.EncodeToString(stateSum[:]),
		*env.AnswerBy != *spec.AnswerBy, env.Display.Title != "Pay Bob",
		len(env.Files) != 1, env.Files[0] != (countersign.File{ContentType: "application/pdf", Name: "invoice.pdf", SHA256: hex.EncodeToString(fileSum[:]), Size: 8}):
		t.Fatalf("envelope: %+v", env)
	}
	point, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(env.ReplyPubkey, "p256:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ecdh.P256().NewPublicKey(point); err != nil {
		t.Fatalf("reply key: %v", err)
	}
	if !bytes.Equal(o.Spec.State, spec.State) || o.Spec.Life != 2*time.Hour || !bytes.Equal(o.Spec.Files[0].Data, []byte("%PDF-1.7")) {
		t.Fatalf("spec: %+v", o.Spec)
	}
	if s, ok := h.Status(id); !ok || s.State != countersign.StateOpen {
		t.Fatalf("status %+v", s)
	}
	if got, ok := h.Task(id); !ok || got.Task != o.Task {
		t.Fatal("Task(id) does not find it")
	}
	if _, ok := h.Task("nope"); ok {
		t.Fatal("Task found an unknown id")
	}
	if _, ok := h.Status("nope"); ok {
		t.Fatal("Status found an unknown id")
	}
}

func TestOpenTaskCopiesWhatTheConnectorHolds(t *testing.T) {
	t.Parallel()
	state := []byte("state")
	spec := confirmSpec("Copy")
	spec.State = state
	spec.Files = []connectors.File{{Name: "a.txt", ContentType: "text/plain", Data: []byte("file")}}
	hk := &hooks{}
	hk.run = func(ctx context.Context, c *connectors.Call) (any, error) {
		task, err := c.OpenTask(ctx, spec)
		state[0] = 'X'
		spec.Display.Fields[0].Values[0] = "changed"
		spec.Files[0].Data[0] = 'X'
		return connectors.AwaitingOwner(task), err
	}
	h := newHook(t, hk)
	if _, err := h.Call(ctx, `{"operation":"open"}`); err != nil {
		t.Fatal(err)
	}
	o := h.Tasks()[0]
	if string(o.Spec.State) != "state" || o.Spec.Display.Fields[0].Values[0] != "a test" || string(o.Spec.Files[0].Data) != "file" {
		t.Fatalf("the record changed with the connector's values: %+v", o.Spec)
	}
	// Nor does a test's copy reach the record.
	o.Spec.State[0] = 'Y'
	if string(h.Tasks()[0].Spec.State) != "state" {
		t.Fatal("Tasks hands out the record itself")
	}
}

func TestOpenTaskRefusals(t *testing.T) {
	t.Parallel()
	withSpec := func(change func(s *connectors.TaskSpec)) connectors.TaskSpec {
		s := confirmSpec("Refused")
		change(&s)
		return s
	}
	file := func(name string, size int) connectors.File {
		return connectors.File{Name: name, ContentType: "text/plain", Data: make([]byte, size)}
	}
	manyFields := make([]countersign.Field, countersign.MaxFields+1)
	for i := range manyFields {
		manyFields[i] = field(fmt.Sprintf("F%d", i), "v")
	}
	for _, tc := range []struct {
		name  string
		specs []connectors.TaskSpec // all but the last are opened
		code  countersign.Code
	}{
		{"a sixth task of one run", []connectors.TaskSpec{confirmSpec("1"), confirmSpec("2"), confirmSpec("3"),
			noticeSpec("4"), noticeSpec("5"), noticeSpec("6")}, countersign.TaskRunLimit},
		{"life over 24 hours", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Life = 24*time.Hour + time.Second })},
			countersign.TaskLifeTooLong},
		{"negative life", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Life = -time.Minute })},
			countersign.TaskLifeTooLong},
		{"state over 256 KiB", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.State = make([]byte, countersign.MaxSealedStateBytes+1)
		})}, countersign.TaskTooLarge},
		{"no kind", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Kind = "" })}, countersign.InvalidRequest},
		{"unknown kind", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Kind = "question" })}, countersign.InvalidRequest},
		{"confirm without answer", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.AnswerBy = nil })}, countersign.InvalidRequest},
		{"notice with answer", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Kind = countersign.KindNotice })}, countersign.InvalidRequest},
		{"confirm without a summary", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Display.Summary = "" })}, countersign.DisplayInvalid},
		{"input without a summary", []connectors.TaskSpec{func() connectors.TaskSpec {
			s := inputSpec("Type it", countersign.SuppliesText)
			s.Display.Summary = ""
			return s
		}()}, countersign.DisplayInvalid},
		{"summary with a line break", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Display.Summary = "pay\n$1" })}, countersign.DisplayInvalid},
		{"summary over 200 characters", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Display.Summary = strings.Repeat("x", countersign.MaxSummaryChars+1)
		})}, countersign.DisplayInvalid},
		{"answer operation unknown", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.AnswerBy.Operation = "confirm" })},
			countersign.InvalidRequest},
		{"answer operation is a write", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.AnswerBy.Operation = "open" })},
			countersign.InvalidRequest},
		{"answer operation is a read", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.AnswerBy.Operation = "read" })},
			countersign.InvalidRequest},
		{"confirm supplying text", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.AnswerBy.Supplies = countersign.SuppliesText })},
			countersign.InvalidRequest},
		{"input supplying none", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Kind = countersign.KindInput
		})}, countersign.InvalidRequest},
		{"supplies unknown", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Kind, s.AnswerBy.Supplies = countersign.KindInput, "voice"
		})}, countersign.InvalidRequest},
		{"empty title", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Display.Title = "" })}, countersign.DisplayInvalid},
		{"bidi in the title", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Display.Title = "Pay \u202eboB" })},
			countersign.DisplayInvalid},
		{"13 fields", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Display.Fields = manyFields })}, countersign.DisplayInvalid},
		{"control character in a value", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Display.Fields[0].Values[0] = "a\rb"
		})}, countersign.DisplayInvalid},
		{"file name with a path", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) { s.Files = []connectors.File{file("../a", 1)} })},
			countersign.DisplayInvalid},
		{"file names equal ignoring case", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Files = []connectors.File{file("A.txt", 1), file("a.TXT", 1)}
		})}, countersign.DisplayInvalid},
		{"eleven files", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			for i := range 11 {
				s.Files = append(s.Files, file(fmt.Sprintf("f%d", i), 1))
			}
		})}, countersign.DisplayInvalid},
		{"files over 6 MiB", []connectors.TaskSpec{withSpec(func(s *connectors.TaskSpec) {
			s.Files = []connectors.File{file("a", countersign.MaxFilesBytes), file("b", 1)}
		})}, countersign.TaskTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hk := &hooks{run: opener(tc.specs...)}
			h := newHook(t, hk)
			_, err := h.Call(ctx, `{"operation":"open"}`)
			wantRefusal(t, err, tc.code, openSentences[tc.name])
			if got := len(h.Tasks()); got != len(tc.specs)-1 {
				t.Fatalf("%d tasks recorded, want %d", got, len(tc.specs)-1)
			}
		})
	}
}

// openSentences are the sentences the platform itself writes, as the service
// does; the others are the inbox package's.
var openSentences = map[string]string{
	"a sixth task of one run":     "a run opens at most 5 tasks",
	"life over 24 hours":          "a task waits at most 24 hours",
	"negative life":               "a task waits at most 24 hours",
	"state over 256 KiB":          "the sealed state is larger than 256 KiB",
	"confirm without answer":      "a confirm task needs an answer operation",
	"notice with answer":          "a notice task has no answer operation",
	"confirm without a summary":   "a confirm task needs a summary: one line of what approving does",
	"input without a summary":     "an input task needs a summary: one line of what approving does",
	"answer operation unknown":    `hook has no answer operation "confirm"`,
	"answer operation is a write": `hook has no answer operation "open"`,
	"answer operation is a read":  `hook has no answer operation "read"`,
}

func TestOpenTaskAtTheLimits(t *testing.T) {
	t.Parallel()
	longest := confirmSpec("Longest")
	longest.Life = 24 * time.Hour
	longest.State = make([]byte, countersign.MaxSealedStateBytes)
	longest.Files = []connectors.File{{Name: "all", ContentType: "application/octet-stream", Data: make([]byte, countersign.MaxFilesBytes)}}
	hk := &hooks{run: opener(longest, confirmSpec("2"), inputSpec("3", countersign.SuppliesText), inputSpec("4", countersign.SuppliesFile), noticeSpec("5"))}
	h := newHook(t, hk)
	if _, err := h.Call(ctx, `{"operation":"open"}`); err != nil {
		t.Fatal(err)
	}
	tasks := h.Tasks()
	if len(tasks) != 5 || !tasks[0].Task.ExpiresAt.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("%d tasks", len(tasks))
	}
	for i, o := range tasks {
		if !strings.HasSuffix(o.Task.ID, fmt.Sprintf("-%d", i+1)) || o.Task.Thread != o.Task.ID {
			t.Fatalf("task %d: %+v", i, o.Task)
		}
	}
	env, err := countersign.ParseEnvelope(tasks[4].Envelope)
	if err != nil || env.ReplyPubkey != "" || env.AnswerBy != nil {
		t.Fatalf("notice envelope: %+v, %v", env, err)
	}
}

func TestOpenTaskWithoutTasksDeclared(t *testing.T) {
	t.Parallel()
	c := &connectors.Connector{Name: "quiet", Version: "1", Operations: []connectors.Operation{
		{Name: "write", Kind: connectors.Write, Description: "write in a test.", Schema: anyArgs, Run: opener(noticeSpec("Hello"))},
	}}
	h := connectortest.New(t, c)
	_, err := h.Call(ctx, `{"operation":"write"}`)
	wantRefusal(t, err, countersign.TasksNotDeclared, "quiet does not declare tasks")
}

func TestOpenTaskFailOpen(t *testing.T) {
	t.Parallel()
	hk := &hooks{run: opener(confirmSpec("Full"))}
	h := newHook(t, hk)
	var asked string
	h.FailOpen = func(s connectors.TaskSpec) error {
		asked = s.Display.Title
		return connectors.Refuse(countersign.InboxFull, "the owner has 20 tasks waiting")
	}
	_, err := h.Call(ctx, `{"operation":"open"}`)
	wantRefusal(t, err, countersign.InboxFull, "the owner has 20 tasks waiting")
	if asked != "Full" || len(h.Tasks()) != 0 {
		t.Fatalf("asked %q, %d tasks", asked, len(h.Tasks()))
	}
}

func TestOpenTaskCancelledContext(t *testing.T) {
	t.Parallel()
	hk := &hooks{run: func(ctx context.Context, c *connectors.Call) (any, error) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := c.OpenTask(cctx, confirmSpec("Never"))
		return nil, err
	}}
	h := newHook(t, hk)
	if _, err := h.Call(ctx, `{"operation":"open"}`); err == nil || countersign.ErrorCode(err) != countersign.Internal {
		t.Fatalf("got %v", err)
	}
}

func TestOpenTaskThreads(t *testing.T) {
	t.Parallel()
	hk := &hooks{}
	h := newHook(t, hk)
	first := openOne(t, h, hk, confirmSpec("First"))

	openIn := func(thread string) (connectors.Task, error) {
		var task connectors.Task
		var err error
		hk.run = func(ctx context.Context, c *connectors.Call) (any, error) {
			task, err = c.Platform.OpenTask(ctx, noticeSpec("More"), thread)
			return map[string]bool{"ok": true}, nil
		}
		if _, cerr := h.Call(ctx, `{"operation":"open"}`); cerr != nil {
			t.Fatal(cerr)
		}
		return task, err
	}
	task, err := openIn(first.Task.ID)
	if err != nil || task.Thread != first.Task.ID {
		t.Fatalf("same preparer: %+v, %v", task, err)
	}
	// A later task of the thread names the same thread.
	again, err := openIn(task.ID)
	if err != nil || again.Thread != first.Task.ID {
		t.Fatalf("through a later task: %+v, %v", again, err)
	}
	_, err = openIn("nope")
	wantRefusal(t, err, countersign.InvalidRequest, "no such thread for this preparer")

	h.Agent = "other.near"
	_, err = openIn(first.Task.ID)
	wantRefusal(t, err, countersign.InvalidRequest, "no such thread for this preparer")
	h.Agent = connectortest.DefaultAgent
	h.Owner = "bob.near"
	_, err = openIn(first.Task.ID)
	wantRefusal(t, err, countersign.InvalidRequest, "no such thread for this preparer")
}

func TestReserve(t *testing.T) {
	t.Parallel()
	hk := &hooks{run: func(ctx context.Context, c *connectors.Call) (any, error) {
		ok, err := c.Reserve(ctx, policy.Direct, 2)
		return map[string]bool{"ok": ok}, err
	}}
	h := newHook(t, hk)
	for i, want := range []string{`{"ok":true}`, `{"ok":true}`, `{"ok":false}`} {
		out, err := h.Call(ctx, `{"operation":"open"}`)
		if err != nil || string(out) != want {
			t.Fatalf("reservation %d: %s, %v", i+1, out, err)
		}
	}
	if h.Count(policy.Direct) != 2 || h.Count(policy.Confirmed) != 0 {
		t.Fatalf("counts %d, %d", h.Count(policy.Direct), h.Count(policy.Confirmed))
	}
	// Another agent, and another day, count apart.
	h.Agent = "other.near"
	if out, _ := h.Call(ctx, `{"operation":"open"}`); string(out) != `{"ok":true}` {
		t.Fatalf("another agent: %s", out)
	}
	h.Agent = connectortest.DefaultAgent
	h.Now = func() time.Time { return t0.Add(24 * time.Hour) }
	if out, _ := h.Call(ctx, `{"operation":"open"}`); string(out) != `{"ok":true}` {
		t.Fatalf("the next day: %s", out)
	}
	// A limit no counter accepts is the run's error.
	hk.run = func(ctx context.Context, c *connectors.Call) (any, error) {
		_, err := c.Reserve(ctx, policy.Direct, -1)
		return nil, err
	}
	if _, err := h.Call(ctx, `{"operation":"open"}`); err == nil {
		t.Fatal("a negative limit was accepted")
	}
}
