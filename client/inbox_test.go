package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

const testToken = "os_0123456789abcdef"

// seen is one request as the fake service received it.
type seen struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// fakeService answers every request with status and body and records it.
type fakeService struct {
	t      *testing.T
	mu     sync.Mutex
	got    []seen
	status int
	body   string
	header map[string]string
}

func newFake(t *testing.T) (*fakeService, *Client) {
	t.Helper()
	f := &fakeService{t: t, status: http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		f.mu.Lock()
		f.got = append(f.got, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), b})
		status, body, header := f.status, f.body, f.header
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return f, &Client{BaseURL: srv.URL + "/", Session: testToken}
}

func (f *fakeService) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

const waitingTaskJSON = `{"id":"r7k2m9q4x1z8c3v6b5n0p2w4s6-1","project":"probe","project_uuid":"4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60","connector":"probe","preparer":"bot.near","kind":"input","state":"open","thread":"r7k2m9q4x1z8c3v6b5n0p2w4s6-1","created_at":"2026-11-29T12:00:00Z","expires_at":"2026-11-30T12:00:00Z","reply_pubkey":"p256:BJ2z","task_hash":"0556596a4d022a868cfa6aaa320e9473993dffeec65b84b4943988c18efb76a1","content":"AQID","device_copy":"BAUG","locked":false,"files":[{"n":0,"size":17},{"n":1,"size":0}]}`

const closedNoticeJSON = `{"id":"abc-2","project":"probe","project_uuid":"4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60","connector":"probe","preparer":"bot.near","kind":"notice","state":"failed","thread":"abc-1","created_at":"2026-11-29T12:00:00Z","expires_at":"2026-11-30T12:00:00Z","run":"run1","failure_reason":"run_refused:conflict","reply_pubkey":null,"task_hash":"00","content":null,"device_copy":null,"locked":false,"files":[]}`

var waitingTask = TaskView{
	ID: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1", Project: "probe", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
	Connector: "probe", Preparer: "bot.near", Kind: "input", State: "open", Thread: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1",
	CreatedAt: "2026-11-29T12:00:00Z", ExpiresAt: "2026-11-30T12:00:00Z", ReplyPubkey: "p256:BJ2z",
	TaskHash: "0556596a4d022a868cfa6aaa320e9473993dffeec65b84b4943988c18efb76a1",
	Content:  []byte{1, 2, 3}, DeviceCopy: []byte{4, 5, 6},
	Files: []TaskFile{{N: 0, Size: 17}, {N: 1, Size: 0}},
}

var closedNotice = TaskView{
	ID: "abc-2", Project: "probe", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
	Connector: "probe", Preparer: "bot.near", Kind: "notice", State: "failed", Thread: "abc-1",
	CreatedAt: "2026-11-29T12:00:00Z", ExpiresAt: "2026-11-30T12:00:00Z", Run: "run1",
	FailureReason: "run_refused:conflict", TaskHash: "00", Files: []TaskFile{},
}

var testConf = Confirmation{At: 1795953600, Signed: Signed{
	PublicKey: "ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe",
	Signature: "c2ln", Nonce: "4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=",
}}

const testConfJSON = `{"at":1795953600,"public_key":"ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe","signature":"c2ln","nonce":"4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8="}`

func TestInboxCalls(t *testing.T) {
	t.Parallel()
	callback := "https://wallet.example/cb"
	withCallback := testConf
	withCallback.CallbackURL = &callback
	projectText := `{"connector":"probe","policy":{"confirm":["guess_start"]},"agents":["bot.near"]}`

	tests := []struct {
		name      string
		call      func(context.Context, *Client) (any, error)
		method    string
		path      string
		query     string
		body      string // "" for none
		noSession bool
		answer    string
		want      any
	}{
		{
			name:   "tasks with every parameter",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Tasks(ctx, ShowWaiting, "abc-9", 50) },
			method: "GET", path: "/inbox/tasks", query: "before=abc-9&limit=50&show=waiting",
			answer: `{"tasks":[` + waitingTaskJSON + `,` + closedNoticeJSON + `],"more":true}`,
			want:   TaskPage{Tasks: []TaskView{waitingTask, closedNotice}, More: true},
		},
		{
			name:   "tasks with the defaults",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Tasks(ctx, "", "", 0) },
			method: "GET", path: "/inbox/tasks",
			answer: `{"tasks":[],"more":false}`,
			want:   TaskPage{Tasks: []TaskView{}},
		},
		{
			name:   "closed tasks",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Tasks(ctx, ShowClosed, "", 1) },
			method: "GET", path: "/inbox/tasks", query: "limit=1&show=closed",
			answer: `{"tasks":[` + closedNoticeJSON + `],"more":false}`,
			want:   TaskPage{Tasks: []TaskView{closedNotice}},
		},
		{
			name:   "one task",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Task(ctx, "r7k2m9q4x1z8c3v6b5n0p2w4s6-1") },
			method: "GET", path: "/inbox/tasks/r7k2m9q4x1z8c3v6b5n0p2w4s6-1",
			answer: waitingTaskJSON, want: waitingTask,
		},
		{
			name:   "a task id is escaped in the path",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Task(ctx, "a/b?c") },
			method: "GET", path: "/inbox/tasks/a%2Fb%3Fc",
			answer: closedNoticeJSON, want: closedNotice,
		},
		{
			name:   "locked task",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Task(ctx, "abc-1") },
			method: "GET", path: "/inbox/tasks/abc-1",
			answer: `{"id":"abc-1","kind":"confirm","state":"open","reply_pubkey":"p256:x","task_hash":"11","content":"AA==","device_copy":null,"locked":true,"files":[]}`,
			want:   TaskView{ID: "abc-1", Kind: "confirm", State: "open", ReplyPubkey: "p256:x", TaskHash: "11", Content: []byte{0}, Locked: true, Files: []TaskFile{}},
		},
		{
			name:   "file",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.File(ctx, "abc-1", 2) },
			method: "GET", path: "/inbox/tasks/abc-1/files/2",
			answer: `{"ciphertext":"AQIDBA=="}`, want: []byte{1, 2, 3, 4},
		},
		{
			name:   "origin with a receipt object",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Origin(ctx, "abc-1") },
			method: "GET", path: "/inbox/tasks/abc-1/origin",
			answer: `{"run":"run1","operation":"guess_start","input_sha256":"aa","output_sha256":"bb","receipt":{"run":"run1","sig":"x"}}`,
			want:   Origin{Run: "run1", Operation: "guess_start", InputSHA256: "aa", OutputSHA256: "bb", Receipt: json.RawMessage(`{"run":"run1","sig":"x"}`)},
		},
		{
			name:   "origin with a receipt string",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Origin(ctx, "abc-1") },
			method: "GET", path: "/inbox/tasks/abc-1/origin",
			answer: `{"run":"run1","operation":"guess_start","input_sha256":"aa","output_sha256":"bb","receipt":"eyJ9"}`,
			want:   Origin{Run: "run1", Operation: "guess_start", InputSHA256: "aa", OutputSHA256: "bb", Receipt: json.RawMessage(`"eyJ9"`)},
		},
		{
			name: "approve with supply and note",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Approve(ctx, "abc-1", ApproveRequest{TaskHash: "ab", Approval: testConf, Supplied: []byte("sup"), Note: []byte("not")})
			},
			method: "POST", path: "/inbox/tasks/abc-1/approve",
			body:   `{"task_hash":"ab","approval":` + testConfJSON + `,"supplied":"c3Vw","note":"bm90"}`,
			answer: `{"id":"abc-1","state":"approved","run":"run2"}`,
			want:   TaskState{ID: "abc-1", State: "approved", Run: "run2"},
		},
		{
			name: "approve with a summary",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Approve(ctx, "abc-1", ApproveRequest{TaskHash: "ab", Summary: "send \"Q3\" to 3 recipients", Approval: testConf})
			},
			method: "POST", path: "/inbox/tasks/abc-1/approve",
			body:   `{"task_hash":"ab","summary":"send \"Q3\" to 3 recipients","approval":` + testConfJSON + `}`,
			answer: `{"id":"abc-1","state":"approved","run":"run2"}`,
			want:   TaskState{ID: "abc-1", State: "approved", Run: "run2"},
		},
		{
			name: "approve with nothing supplied and a callback url",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Approve(ctx, "abc-1", ApproveRequest{TaskHash: "ab", Approval: withCallback})
			},
			method: "POST", path: "/inbox/tasks/abc-1/approve",
			body:   `{"task_hash":"ab","approval":{"at":1795953600,"public_key":"ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe","signature":"c2ln","nonce":"4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=","callback_url":"https://wallet.example/cb"}}`,
			answer: `{"id":"abc-1","state":"approved","run":"run2"}`,
			want:   TaskState{ID: "abc-1", State: "approved", Run: "run2"},
		},
		{
			name: "approve with an empty (not absent) supply",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Approve(ctx, "abc-1", ApproveRequest{TaskHash: "ab", Approval: testConf, Supplied: []byte{}})
			},
			method: "POST", path: "/inbox/tasks/abc-1/approve",
			body:   `{"task_hash":"ab","approval":` + testConfJSON + `,"supplied":""}`,
			answer: `{"id":"abc-1","state":"approved","run":"run2"}`,
			want:   TaskState{ID: "abc-1", State: "approved", Run: "run2"},
		},
		{
			name:   "reject with a reason",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Reject(ctx, "abc-1", []byte{0xff, 0}) },
			method: "POST", path: "/inbox/tasks/abc-1/reject", body: `{"reason":"/wA="}`,
			answer: `{"id":"abc-1","state":"rejected"}`, want: TaskState{ID: "abc-1", State: "rejected"},
		},
		{
			name:   "reject without a reason",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Reject(ctx, "abc-1", nil) },
			method: "POST", path: "/inbox/tasks/abc-1/reject", body: `{}`,
			answer: `{"id":"abc-1","state":"rejected"}`, want: TaskState{ID: "abc-1", State: "rejected"},
		},
		{
			name:   "acknowledge",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Acknowledge(ctx, "abc-2") },
			method: "POST", path: "/inbox/tasks/abc-2/acknowledge",
			answer: `{"id":"abc-2","state":"done"}`, want: TaskState{ID: "abc-2", State: "done"},
		},
		{
			name:   "cancel",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Cancel(ctx, "abc-1") },
			method: "DELETE", path: "/inbox/tasks/abc-1",
			answer: `{"id":"abc-1","state":"cancelled"}`, want: TaskState{ID: "abc-1", State: "cancelled"},
		},
		{
			name:   "cancel matching preparer and project",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.CancelMatching(ctx, "bot.near", "probe") },
			method: "DELETE", path: "/inbox/tasks", query: "preparer=bot.near&project=probe",
			answer: `{"deleted":3}`, want: 3,
		},
		{
			name:   "cancel matching a project",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.CancelMatching(ctx, "", "my project") },
			method: "DELETE", path: "/inbox/tasks", query: "project=my+project",
			answer: `{"deleted":0}`, want: 0,
		},
		{
			name:   "unlock",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Unlock(ctx) },
			method: "POST", path: "/inbox/unlock",
			answer: `{"waiting":7}`, want: 7,
		},
		{
			name:   "mute an agent and delete its tasks",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Mute(ctx, SubjectAgent, "bot.near", true) },
			method: "POST", path: "/inbox/mutes", body: `{"subject_is":"agent","subject":"bot.near","delete_waiting":true}`,
			answer: `{"deleted":2}`, want: 2,
		},
		{
			name:   "mute a project",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Mute(ctx, SubjectProject, "probe", false) },
			method: "POST", path: "/inbox/mutes", body: `{"subject_is":"project","subject":"probe","delete_waiting":false}`,
			answer: `{"deleted":0}`, want: 0,
		},
		{
			name:   "mutes",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Mutes(ctx) },
			method: "GET", path: "/inbox/mutes",
			answer: `{"mutes":[{"subject_is":"agent","subject":"bot.near","created_at":"2026-11-29T12:00:00Z"}]}`,
			want:   []Mute{{SubjectIs: "agent", Subject: "bot.near", CreatedAt: "2026-11-29T12:00:00Z"}},
		},
		{
			name:   "unmute",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Unmute(ctx, SubjectAgent, "bot.near") },
			method: "DELETE", path: "/inbox/mutes", body: `{"subject_is":"agent","subject":"bot.near"}`,
			answer: `{"deleted":1}`, want: 1,
		},
		{
			name:   "projects",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Projects(ctx) },
			method: "GET", path: "/inbox/projects",
			answer: `{"projects":[{"name":"probe","project_uuid":"4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60","connector":"probe","agents":["bot.near"],"policy":"{\"confirm\":[\"guess_start\"]}","policy_mode":"ok","credentials":false,"created_at":"2026-11-29T12:00:00Z","updated_at":"2026-11-29T13:00:00Z"},{"name":"bank","project_uuid":"5f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60","connector":"mercury","agents":[],"policy":"{\"confirm\":[\"pay\"]}","policy_mode":"unreadable","policy_sentence":"pay is not a write of mercury","credentials":true,"created_at":"2026-11-29T12:00:00Z","updated_at":"2026-11-29T12:00:00Z"}]}`,
			want: []Project{
				{Name: "probe", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", Connector: "probe", Agents: []string{"bot.near"}, Policy: `{"confirm":["guess_start"]}`, PolicyMode: "ok", CreatedAt: "2026-11-29T12:00:00Z", UpdatedAt: "2026-11-29T13:00:00Z"},
				{Name: "bank", ProjectUUID: "5f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", Connector: "mercury", Agents: []string{}, Policy: `{"confirm":["pay"]}`, PolicyMode: "unreadable", PolicySentence: "pay is not a write of mercury", Credentials: true, CreatedAt: "2026-11-29T12:00:00Z", UpdatedAt: "2026-11-29T12:00:00Z"},
			},
		},
		{
			name: "put project sends the text as given",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.PutProject(ctx, "probe", projectText, testConf)
			},
			method: "PUT", path: "/inbox/projects/probe",
			body:   `{"project":` + mustJSON(projectText) + `,"confirmation":` + testConfJSON + `}`,
			answer: `{"name":"probe","project_uuid":"4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60","connector":"probe","agents":["bot.near"],"policy":"{\"confirm\":[\"guess_start\"]}","policy_mode":"ok","credentials":false,"created_at":"2026-11-29T12:00:00Z","updated_at":"2026-11-29T12:00:00Z"}`,
			want:   Project{Name: "probe", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", Connector: "probe", Agents: []string{"bot.near"}, Policy: `{"confirm":["guess_start"]}`, PolicyMode: "ok", CreatedAt: "2026-11-29T12:00:00Z", UpdatedAt: "2026-11-29T12:00:00Z"},
		},
		{
			name:   "delete project",
			call:   func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteProject(ctx, "probe", testConf) },
			method: "DELETE", path: "/inbox/projects/probe", body: `{"confirmation":` + testConfJSON + `}`,
			answer: `{"deleted":true}`, want: nil,
		},
		{
			name:   "connectors need no session",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Connectors(ctx) },
			method: "GET", path: "/connectors", noSession: true,
			answer: `{"connectors":[{"name":"probe","version":"1.0.0","build":"probe@1.0.0","operations":[{"name":"guess_start","kind":"write","price":10000},{"name":"guess","kind":"answer","price":0}],"policy_keys":[]}]}`,
			want: []Connector{{Name: "probe", Version: "1.0.0", Build: "probe@1.0.0", PolicyKeys: []string{}, Operations: []ConnectorOperation{
				{Name: "guess_start", Kind: "write", Price: 10000}, {Name: "guess", Kind: "answer", Price: 0},
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c := newFake(t)
			f.body = tt.answer
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded\n got %#v\nwant %#v", got, tt.want)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tt.method || r.Path != tt.path || r.RawQuery != tt.query {
				t.Errorf("sent %s %s?%s, want %s %s?%s", r.Method, r.Path, r.RawQuery, tt.method, tt.path, tt.query)
			}
			wantAuth := "Bearer " + testToken
			if tt.noSession {
				wantAuth = ""
			}
			if got := r.Header.Get("Authorization"); got != wantAuth {
				t.Errorf("Authorization %q, want %q", got, wantAuth)
			}
			if tt.body == "" {
				if len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
					t.Errorf("sent a body %q (Content-Type %q), want none", r.Body, r.Header.Get("Content-Type"))
				}
				return
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if !jsonEqual(t, r.Body, []byte(tt.body)) {
				t.Errorf("body\n got %s\nwant %s", r.Body, tt.body)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestPutProjectKeepsText checks that the project text travels byte for byte
// inside its JSON string, whatever its spacing and member order.
func TestPutProjectKeepsText(t *testing.T) {
	t.Parallel()
	f, c := newFake(t)
	f.body = `{"name":"p"}`
	text := "{ \"policy\":{},\n\t\"connector\":\"probe\", \"agents\":[\"<b>&\"] }"
	if _, err := c.PutProject(context.Background(), "p", text, testConf); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Project string `json:"project"`
	}
	if err := json.Unmarshal(f.requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Project != text {
		t.Errorf("project text changed on the way: %q", body.Project)
	}
}

func TestInboxRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		call      func(context.Context, *Client) error
		status    int
		answer    string
		header    map[string]string
		noRequest bool
		want      *Error // nil: any error that is not an *Error
	}{
		{
			name:      "a negative file number",
			call:      func(ctx context.Context, c *Client) error { _, err := c.File(ctx, "abc-1", -1); return err },
			noRequest: true,
		},
		{
			name:      "cancel matching nothing named",
			call:      func(ctx context.Context, c *Client) error { _, err := c.CancelMatching(ctx, "", ""); return err },
			noRequest: true,
		},
		{
			name:   "task not found",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Task(ctx, "abc-1"); return err },
			status: 404, answer: `{"error":"no such task","reason":"task_not_found","terminal":true}`,
			want: &Error{Status: 404, Reason: "task_not_found", Message: "no such task", Terminal: true},
		},
		{
			name: "a replayed approval",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Approve(ctx, "abc-1", ApproveRequest{})
				return err
			},
			status: 409, answer: `{"error":"the task is approved","reason":"task_closed","terminal":true,"state":"approved"}`,
			want: &Error{Status: 409, Reason: "task_closed", Message: "the task is approved", Terminal: true, State: "approved"},
		},
		{
			name: "an approval that does not verify",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Approve(ctx, "abc-1", ApproveRequest{})
				return err
			},
			status: 403, answer: `{"error":"the approval does not verify","reason":"confirmation_required","terminal":true}`,
			want: &Error{Status: 403, Reason: "confirmation_required", Message: "the approval does not verify", Terminal: true},
		},
		{
			name:   "no session",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Unlock(ctx); return err },
			status: 401, answer: `{"error":"sign in first","reason":"session_required","terminal":true}`,
			want: &Error{Status: 401, Reason: "session_required", Message: "sign in first", Terminal: true},
		},
		{
			name:   "upstream unavailable",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Mutes(ctx); return err },
			status: 503, answer: `{"error":"try again","reason":"upstream_unavailable","terminal":false}`,
			header: map[string]string{"Retry-After": "7"},
			want:   &Error{Status: 503, Reason: "upstream_unavailable", Message: "try again", RetryAfter: 7 * time.Second},
		},
		{
			name:   "rate limited",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Reject(ctx, "abc-1", nil); return err },
			status: 429, answer: `{"error":"slow down","reason":"rate_limited","terminal":false}`,
			header: map[string]string{"Retry-After": "2"},
			want:   &Error{Status: 429, Reason: "rate_limited", Message: "slow down", RetryAfter: 2 * time.Second},
		},
		{
			name:   "a file answer without ciphertext",
			call:   func(ctx context.Context, c *Client) error { _, err := c.File(ctx, "abc-1", 0); return err },
			answer: `{"ciphertext":null}`,
		},
		{
			name:   "a file answer that is not base64",
			call:   func(ctx context.Context, c *Client) error { _, err := c.File(ctx, "abc-1", 0); return err },
			answer: `{"ciphertext":"not base64!"}`,
		},
		{
			name:   "a project removal the service does not confirm",
			call:   func(ctx context.Context, c *Client) error { return c.DeleteProject(ctx, "probe", testConf) },
			answer: `{"deleted":false}`,
		},
		{
			name:   "an answer that is not JSON",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Tasks(ctx, "", "", 0); return err },
			answer: `<html>`,
		},
		{
			name:   "a task list of the wrong shape",
			call:   func(ctx context.Context, c *Client) error { _, err := c.Tasks(ctx, "", "", 0); return err },
			answer: `{"tasks":{"id":"x"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c := newFake(t)
			f.body, f.header = tt.answer, tt.header
			if tt.status != 0 {
				f.status = tt.status
			}
			err := tt.call(context.Background(), c)
			if err == nil {
				t.Fatal("no error")
			}
			if n := len(f.requests()); tt.noRequest && n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
			var e *Error
			if tt.want == nil {
				if errors.As(err, &e) {
					t.Errorf("got a service refusal %v, want a local error", e)
				}
				return
			}
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if *e != *tt.want {
				t.Errorf("refusal\n got %+v\nwant %+v", *e, *tt.want)
			}
			if Reason(err) != tt.want.Reason {
				t.Errorf("Reason = %q", Reason(err))
			}
		})
	}
}

// sseServer serves GET /inbox/events with script: each step writes its text
// and flushes, or, when it is a duration, lets that much time pass (the
// silence some tests are about). written is closed once every step is
// done; with hold the stream then stays open without a word.
func sseServer(t *testing.T, hold bool, steps ...string) (c *Client, got chan *http.Request, written chan struct{}) {
	t.Helper()
	got = make(chan *http.Request, 4)
	written = make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush()
		for _, s := range steps {
			if d, err := time.ParseDuration(s); err == nil {
				time.Sleep(d) // time passing is what the script is about
				continue
			}
			io.WriteString(w, s)
			fl.Flush()
		}
		close(written)
		if hold {
			select {
			case <-r.Context().Done():
			case <-done:
			}
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return &Client{BaseURL: srv.URL, Session: testToken}, got, written
}

func collect(t *testing.T, ch <-chan TaskEvent, limit time.Duration) []TaskEvent {
	t.Helper()
	var out []TaskEvent
	timeout := time.After(limit)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the channel was not closed within %v; got %v so far", limit, out)
		}
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	c, reqs, _ := sseServer(t, false,
		": heartbeat\n\n",
		"event: task\ndata: {\"task_id\":\"abc-1\",\"state\":\"open\"}\n\n",
		": heartbeat\n\n",
		"event: ping\ndata: {}\n\n", // another type: skipped
		"data: {\"task_id\":\"abc-9\",\"state\":\"open\"}\n\n", // a message, not a task event
		"event: task\ndata: not json\n\n",
		"event: task\r\ndata: {\"task_id\":\"abc-1\",\r\ndata: \"state\":\"approved\"}\r\n\r\n",
		"event: task\ndata: {\"task_id\":\"abc-2\",\"state\":\"done\"}\n\n",
		"event: task\ndata: {\"task_id\":\"abc-3\",\"state\":\"done\"}\n", // cut off by the end
	)
	ch, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, ch, 5*time.Second)
	want := []TaskEvent{{"abc-1", "open"}, {"abc-1", "approved"}, {"abc-2", "done"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
	r := <-reqs
	if r.Method != "GET" || r.URL.Path != "/inbox/events" || r.URL.RawQuery != "" {
		t.Errorf("sent %s %s", r.Method, r.URL)
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken || r.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers %v", r.Header)
	}
}

func TestEventsEndWithContext(t *testing.T) {
	t.Parallel()
	c, _, _ := sseServer(t, true, "event: task\ndata: {\"task_id\":\"abc-1\",\"state\":\"open\"}\n\n")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev != (TaskEvent{"abc-1", "open"}) {
			t.Errorf("got %v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	cancel()
	if got := collect(t, ch, 5*time.Second); len(got) != 0 {
		t.Errorf("events after cancel: %v", got)
	}
}

// TestEventsUnreadChannel checks that a stream whose events nobody reads
// still ends with its context and closes the channel.
func TestEventsUnreadChannel(t *testing.T) {
	t.Parallel()
	c, _, written := sseServer(t, true, strings.Repeat("event: task\ndata: {\"task_id\":\"a-1\",\"state\":\"open\"}\n\n", 5))
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-written: // the events are on their way; nobody reads them
	case <-time.After(5 * time.Second):
		t.Fatal("the service did not write its events")
	}
	cancel()
	collect(t, ch, 5*time.Second) // drains whatever was in flight; must close
}

// TestEventsSilentStreamEnds checks that heartbeats keep a stream alive past
// the idle limit and that a stream which then falls silent, without closing,
// is ended.
func TestEventsSilentStreamEnds(t *testing.T) {
	t.Parallel()
	var steps []string
	for range 30 { // 1.5 s of heartbeats, well past the idle limit
		steps = append(steps, ": heartbeat\n\n", "50ms")
	}
	steps = append(steps, "event: task\ndata: {\"task_id\":\"abc-1\",\"state\":\"open\"}\n\n")
	c, _, _ := sseServer(t, true, steps...)
	c.EventsIdle = time.Second
	ch, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, ch, 20*time.Second)
	if want := []TaskEvent{{"abc-1", "open"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestEventsOutliveTheClientTimeout(t *testing.T) {
	t.Parallel()
	// The stream is silent for longer than the client's overall timeout.
	c, _, _ := sseServer(t, false, "300ms", "event: task\ndata: {\"task_id\":\"abc-1\",\"state\":\"open\"}\n\n")
	c.HTTP = &http.Client{Timeout: 100 * time.Millisecond}
	ch, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, ch, 5*time.Second); len(got) != 1 {
		t.Errorf("events %v, want one", got)
	}
}

func TestEventsRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		reason      string
	}{
		{"no session", 401, "application/json", `{"error":"sign in first","reason":"session_required","terminal":true}`, "session_required"},
		{"replaced", 401, "application/json", `{"error":"signed in elsewhere","reason":"session_replaced","terminal":true}`, "session_replaced"},
		{"not an event stream", 200, "application/json", `{"tasks":[]}`, ""},
		{"no content", 204, "text/event-stream", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c := &Client{BaseURL: srv.URL, Session: testToken}
			ch, err := c.Events(context.Background())
			if err == nil || ch != nil {
				t.Fatalf("Events = %v, %v; want a refusal", ch, err)
			}
			if Reason(err) != tt.reason {
				t.Errorf("reason %q, want %q (%v)", Reason(err), tt.reason, err)
			}
		})
	}
}

type sse struct{ Typ, Data string }

func parseAll(r io.Reader) ([]sse, error) {
	var out []sse
	err := readEvents(r, nil, func(typ, data string) bool {
		out = append(out, sse{typ, data})
		return true
	})
	return out, err
}

func TestReadEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []sse
		err  bool
	}{
		{"lf", "event: task\ndata: x\n\n", []sse{{"task", "x"}}, false},
		{"crlf", "event: task\r\ndata: x\r\n\r\n", []sse{{"task", "x"}}, false},
		{"cr", "event: task\rdata: x\r\r", []sse{{"task", "x"}}, false},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", []sse{{"message", "a\nb\nc"}}, false},
		{"default type", "data: x\n\n", []sse{{"message", "x"}}, false},
		{"type resets after dispatch", "event: task\ndata: a\n\ndata: b\n\n", []sse{{"task", "a"}, {"message", "b"}}, false},
		{"comments", ": heartbeat\n\n:\n\ndata: x\n: inside\n\n", []sse{{"message", "x"}}, false},
		{"no data, no event", "event: task\n\n", nil, false},
		{"empty data is an event", "data\n\n", []sse{{"message", ""}}, false},
		{"empty data lines", "data:\ndata:\n\n", []sse{{"message", "\n"}}, false},
		{"no space after colon", "event:task\ndata:x\n\n", []sse{{"task", "x"}}, false},
		{"only one space is dropped", "data:  x \n\n", []sse{{"message", " x "}}, false},
		{"colon in the value", "data: a:b\n\n", []sse{{"message", "a:b"}}, false},
		{"unknown fields", "id: 7\nretry: 100\nfoo: bar\ndata: x\n\n", []sse{{"message", "x"}}, false},
		{"byte order mark", "\uFEFFdata: x\n\n", []sse{{"message", "x"}}, false},
		{"byte order mark only at the start", "data: x\n\n\uFEFFdata: y\n\n", []sse{{"message", "x"}}, false},
		{"cut off event dropped", "data: x\n\ndata: y\n", []sse{{"message", "x"}}, false},
		{"cut off line dropped", "data: x\n\ndata: y", []sse{{"message", "x"}}, false},
		{"empty stream", "", nil, false},
		{"line too long", "data: " + strings.Repeat("a", maxEventLine) + "\n\n", nil, true},
		{"event data too long", strings.Repeat("data: "+strings.Repeat("a", 1000)+"\n", 70) + "\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseAll(strings.NewReader(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events\n got %q\nwant %q", got, tt.want)
			}
			// The same stream arriving a byte at a time gives the same events.
			slow, serr := parseAll(iotest.OneByteReader(strings.NewReader(tt.in)))
			if (serr != nil) != tt.err || !reflect.DeepEqual(slow, got) {
				t.Errorf("byte at a time: %q, %v", slow, serr)
			}
		})
	}
}

func TestReadEventsStopsWhenAsked(t *testing.T) {
	t.Parallel()
	n := 0
	err := readEvents(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"), nil, func(string, string) bool {
		n++
		return n < 2
	})
	if err != nil || n != 2 {
		t.Errorf("n = %d, err = %v; want 2, nil", n, err)
	}
}

func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{
		"event: task\ndata: {\"task_id\":\"a-1\",\"state\":\"open\"}\n\n",
		": heartbeat\r\n\r\n", "data: a\rdata: b\r\r", "\uFEFFdata\n\n", "data: x", "\r\n\r\n\n\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := parseAll(bytes.NewReader(in))
		slow, serr := parseAll(iotest.OneByteReader(bytes.NewReader(in)))
		if (err != nil) != (serr != nil) || !reflect.DeepEqual(got, slow) {
			t.Fatalf("whole %q %v, byte at a time %q %v", got, err, slow, serr)
		}
		for _, e := range got {
			if strings.ContainsAny(e.Typ, "\r\n") || strings.ContainsRune(e.Data, '\r') {
				t.Fatalf("a line end inside %q", e)
			}
			if len(e.Data) > maxEventData {
				t.Fatalf("data of %d bytes", len(e.Data))
			}
		}
	})
}

func BenchmarkReadEvents(b *testing.B) {
	var stream strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&stream, ": heartbeat\n\nevent: task\ndata: {\"task_id\":\"r7k2m9q4x1z8c3v6b5n0p2w4s6-%d\",\"state\":\"open\"}\n\n", i)
	}
	in := stream.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := readEvents(strings.NewReader(in), nil, func(typ, data string) bool {
			var ev TaskEvent
			if json.Unmarshal([]byte(data), &ev) == nil {
				n++
			}
			return true
		}); err != nil || n != 1000 {
			b.Fatalf("%d events, %v", n, err)
		}
	}
}
