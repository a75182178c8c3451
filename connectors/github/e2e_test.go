package github_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"countersign"
	"countersign/client"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// service is the whole service on PostgreSQL with a github project over
// the fake, both on loopback HTTP.
type service struct {
	t    *testing.T
	w    *servicetest.World
	fake *githubtest.Server
	repo string
}

func newService(t *testing.T, policy string) *service {
	t.Helper()
	fake := githubtest.New(token, "octocat").Start()
	t.Cleanup(fake.Close)
	recorded(t, fake)
	repo := fake.Seed()
	conn := github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true}})
	checked(t, conn)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(conn))
	w.PutProject("gh", "github", policy, []byte(`{"token": "`+token+`"}`))
	w.StartJobs()
	return &service{t: t, w: w, fake: fake, repo: repo}
}

// call calls the github project as the agent: its answer, or its refusal.
func (s *service) call(body string) (map[string]any, error) {
	s.t.Helper()
	var args map[string]any
	if err := json.Unmarshal([]byte(body), &args); err != nil {
		s.t.Fatal(err)
	}
	op := args["operation"].(string)
	delete(args, "operation")
	raw, err := s.w.AgentClient().Call(ctx, s.w.Owner.Account, "gh", op, args, nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m, nil
}

func (s *service) must(body string) map[string]any {
	s.t.Helper()
	m, err := s.call(body)
	if err != nil {
		s.t.Fatalf("%.200s: %v", body, err)
	}
	return m
}

// approve has the owner read the task, and approve it; it returns what the
// owner was shown and the task's end.
func (s *service) approve(id string) (countersign.Envelope, client.TaskStatus) {
	s.t.Helper()
	view, err := s.w.Owner.Client.Task(ctx, id)
	if err != nil {
		s.t.Fatal(err)
	}
	o, err := s.w.Owner.Open(view)
	if err != nil {
		s.t.Fatal(err)
	}
	// The owner approves what the summary says: the device signs the
	// sentence naming it, the door and the answer run check it.
	if sum := o.Envelope.Display.Summary; sum == "" || countersign.ValidateSummary(sum) != nil {
		s.t.Fatalf("task %s shows the summary %q", id, sum)
	}
	if _, err := s.w.Owner.Approve(ctx, o, nil, ""); err != nil {
		s.t.Fatal(err)
	}
	s.w.WaitState(id, countersign.StateDone, countersign.StateFailed, countersign.StateVoid)
	return o.Envelope, s.w.Status("gh", id)
}

func (s *service) open(id string) countersign.Envelope {
	s.t.Helper()
	view, err := s.w.Owner.Client.Task(ctx, id)
	if err != nil {
		s.t.Fatal(err)
	}
	o, err := s.w.Owner.Open(view)
	if err != nil {
		s.t.Fatal(err)
	}
	return o.Envelope
}

func shownValue(env countersign.Envelope, label string) string {
	for _, f := range env.Display.Fields {
		if f.Label == label {
			return strings.Join(f.Values, "\n")
		}
	}
	return ""
}

func refusalCode(err error) string {
	var r *client.Refusal
	if errors.As(err, &r) {
		return r.Code + ": " + r.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// Every write, direct and then approved, over HTTP on PostgreSQL; the fake
// shows each as the task showed it.
func TestEveryWriteDirectAndApproved(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": `+allWrites+`}`)
	gist := s.must(`{"operation": "gist_create", "files": {"a.md": "first\n"}}`)["id"].(string)
	writes := func(round string) []string {
		return []string{
			`{"operation": "branch_create", "repo": "` + s.repo + `", "branch": "topic-` + round + `"}`,
			`{"operation": "file_put", "repo": "` + s.repo + `", "path": "` + round + `.md", "content": "` + round + `\n", "message": "Add ` + round + `"}`,
			`{"operation": "commit", "repo": "` + s.repo + `", "branch": "topic-` + round + `", "message": "Two files", "changes": [{"path": "x/` + round + `.txt", "content": "x\n"}, {"path": "y.txt", "content": "` + round + `\n"}]}`,
			`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "Issue ` + round + `", "body": "Body"}`,
			`{"operation": "issue_comment", "repo": "` + s.repo + `", "number": 2, "body": "Comment ` + round + `"}`,
			`{"operation": "issue_update", "repo": "` + s.repo + `", "number": 2, "title": "Renamed ` + round + `"}`,
			`{"operation": "pr_create", "repo": "` + s.repo + `", "title": "PR ` + round + `", "head": "topic-` + round + `"}`,
			`{"operation": "pr_review", "repo": "` + s.repo + `", "number": 1, "event": "COMMENT", "body": "Review ` + round + `"}`,
			`{"operation": "gist_update", "gist_id": "` + gist + `", "files": {"a.md": "` + round + `\n"}}`,
			`{"operation": "repo_star", "repo": "` + s.repo + `"}`,
			`{"operation": "repo_unstar", "repo": "` + s.repo + `"}`,
			`{"operation": "gist_create", "files": {"` + round + `.md": "gist ` + round + `\n"}}`,
		}
	}
	for _, body := range writes("direct") {
		if r := s.must(body); r["ok"] != true || r["status"] != nil {
			t.Fatalf("%s: %v", body, r)
		}
	}
	if got, _ := s.fake.File(s.repo, "topic-direct", "y.txt"); got != "direct\n" {
		t.Fatalf("commit: y.txt %q", got)
	}
	s.w.PutProject("gh", "github", `{"actions": `+allWrites+`, "confirm": `+allWrites+`}`, []byte(`{"token": "`+token+`"}`))
	for _, body := range writes("approved") {
		r := s.must(body)
		if r["status"] != "awaiting_owner" {
			t.Fatalf("%s: %v", body, r)
		}
		env, st := s.approve(r["task_id"].(string))
		if st.State != "done" {
			t.Fatalf("%s: %+v", body, st)
		}
		if strings.Contains(string(env.Display.Title), "file") && shownValue(env, "Diff") == "" && shownValue(env, "Diff, whole files") == "" {
			t.Errorf("%s: no diff shown", body)
		}
	}
	if got, _ := s.fake.File(s.repo, "main", "approved.md"); got != "approved\n" {
		t.Fatalf("file_put approved: %q", got)
	}
	if got, _ := s.fake.File(s.repo, "topic-approved", "x/approved.txt"); got != "x\n" {
		t.Fatalf("commit approved: %q", got)
	}
	if g, _ := s.fake.Gist(gist); g["a.md"] != "approved\n" {
		t.Fatalf("gist: %v", g)
	}
	// pr_merge last: approved, with the head the owner was shown.
	r := s.must(`{"operation": "pr_merge", "repo": "` + s.repo + `", "number": 1}`)
	env, st := s.approve(r["task_id"].(string))
	if st.State != "done" || shownValue(env, "Head commit") == "" {
		t.Fatalf("merge: %+v %v", st, env.Display)
	}
	if !strings.Contains(string(st.Result), s.fake.Head(s.repo, "main")) {
		t.Fatalf("merge result %s, main at %s", st.Result, s.fake.Head(s.repo, "main"))
	}
	// The token is in no log, no task and no result.
	if strings.Contains(s.w.Logs.String(), token) {
		t.Fatal("the token was logged")
	}
}

// The head moved between the task and the approval: the merge is refused
// by GitHub and the task fails with nothing merged; an approving review
// is a conflict naming both heads.
func TestHeadMoved(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": ["pr_merge", "pr_review"], "confirm": ["pr_merge", "pr_review"]}`)
	merge := s.must(`{"operation": "pr_merge", "repo": "` + s.repo + `", "number": 1}`)["task_id"].(string)
	review := s.must(`{"operation": "pr_review", "repo": "` + s.repo + `", "number": 1, "event": "APPROVE"}`)["task_id"].(string)
	shown := shownValue(s.open(merge), "Head commit")
	moved := s.fake.Push(s.repo, "add-greeting", "Another change", map[string]string{"greeting.txt": "Hi!\n"})
	_, st := s.approve(merge)
	if st.State != "failed" || st.FailureReason != "run_refused:conflict" || !strings.Contains(string(st.Result), "so GitHub merged nothing") {
		t.Fatalf("merge: %+v %s", st, st.Result)
	}
	if s.fake.Head(s.repo, "main") == moved {
		t.Fatal("merged")
	}
	_, st = s.approve(review)
	if st.State != "failed" || !strings.Contains(string(st.Result), "conflict: the pull request's head moved from "+shown+" to "+moved) {
		t.Fatalf("review: %+v %s", st, st.Result)
	}
}

// A file changed after the task was made: the write fails, nothing
// written; a commit whose branch moved fails too, its branch unmoved.
func TestFileMoved(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": ["file_put", "commit"], "confirm": ["file_put", "commit"]}`)
	put := s.must(`{"operation": "file_put", "repo": "` + s.repo + `", "path": "README.md", "content": "mine\n", "message": "Mine"}`)["task_id"].(string)
	commit := s.must(`{"operation": "commit", "repo": "` + s.repo + `", "message": "Mine", "changes": [{"path": "new.txt", "content": "n\n"}]}`)["task_id"].(string)
	head := s.fake.Push(s.repo, "main", "Theirs", map[string]string{"README.md": "theirs\n"})
	_, st := s.approve(put)
	if st.State != "failed" || st.FailureReason != "run_refused:conflict" || !strings.Contains(string(st.Result), "Nothing was written") {
		t.Fatalf("file_put: %+v %s", st, st.Result)
	}
	if got, _ := s.fake.File(s.repo, "main", "README.md"); got != "theirs\n" {
		t.Fatalf("README %q", got)
	}
	_, st = s.approve(commit)
	if st.State != "failed" || st.FailureReason != "run_refused:conflict" || s.fake.Head(s.repo, "main") != head {
		t.Fatalf("commit: %+v %s", st, st.Result)
	}
}

// A policy edited after the task was made voids it; branches and paths
// refusals name the branch and path; the daily number counts direct and
// confirmed writes; a confirm list naming a read is unreadable.
func TestPolicy(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": ["issue_create"], "confirm": ["issue_create"]}`)
	id := s.must(`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "T"}`)["task_id"].(string)
	s.w.PutProject("gh", "github", `{"actions": ["issue_create"], "confirm": ["issue_create"], "max_writes_per_day": 5}`, []byte(`{"token": "`+token+`"}`))
	if _, st := s.approve(id); st.State != "void" {
		t.Fatalf("%+v", st)
	}
	s.w.PutProject("gh", "github", `{"actions": ["file_put", "commit", "branch_create"], "branches": ["topic/*"], "paths": ["docs/**"]}`, []byte(`{"token": "`+token+`"}`))
	for body, want := range map[string]string{
		`{"operation": "file_put", "repo": "` + s.repo + `", "path": "docs/a.md", "content": "a", "message": "m"}`:                                                                         "policy_denied: the owner's policy does not allow writes to the branch main (not in `branches`)",
		`{"operation": "commit", "repo": "` + s.repo + `", "branch": "topic/x", "message": "m", "changes": [{"path": "docs/a.md", "content": "a"}, {"path": "src/b.go", "content": "b"}]}`: "policy_denied: the owner's policy does not allow writes to the path src/b.go (not in `paths`)",
		`{"operation": "branch_create", "repo": "` + s.repo + `", "branch": "feature"}`:                                                                                                    "policy_denied: the owner's policy does not allow writes to the branch feature (not in `branches`)",
		`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "T"}`:                                                                                                            "policy_denied: the owner's policy does not allow issue_create (it is not in `actions`)",
	} {
		if _, err := s.call(body); refusalCode(err) != want {
			t.Errorf("%s: %v, want %s", body, refusalCode(err), want)
		}
	}
	// Two a day: one direct, one confirmed, each bounded on its own.
	s.w.PutProject("gh", "github", `{"actions": ["issue_comment", "issue_create"], "confirm": ["issue_create"], "max_writes_per_day": 1}`, []byte(`{"token": "`+token+`"}`))
	s.must(`{"operation": "issue_comment", "repo": "` + s.repo + `", "number": 2, "body": "one"}`)
	if _, err := s.call(`{"operation": "issue_comment", "repo": "` + s.repo + `", "number": 2, "body": "two"}`); !strings.HasPrefix(refusalCode(err), "policy_denied: the day's 1 direct writes") {
		t.Fatal(refusalCode(err))
	}
	a := s.must(`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "A"}`)["task_id"].(string)
	b := s.must(`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "B"}`)["task_id"].(string)
	if _, st := s.approve(a); st.State != "done" {
		t.Fatalf("%+v", st)
	}
	if _, st := s.approve(b); st.State != "failed" || st.FailureReason != "run_refused:policy_denied" {
		t.Fatalf("%+v %s", st, st.Result)
	}
	s.w.PutProject("gh", "github", `{"actions": ["issue_create"], "confirm": ["issue_get"]}`, []byte(`{"token": "`+token+`"}`))
	if _, err := s.call(`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "T"}`); !strings.HasPrefix(refusalCode(err), "policy_unreadable: ") {
		t.Fatal(refusalCode(err))
	}
}

// A 60,000-character file goes as a file, the diff shown; 21 changed files
// are refused.
func TestLargeContent(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": ["file_put", "commit"], "confirm": ["file_put", "commit"]}`)
	big := strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW\n", 1000) // 60,000 characters
	body, _ := json.Marshal(map[string]any{"operation": "file_put", "repo": s.repo, "path": "big.txt", "content": big, "message": "Big"})
	id := s.must(string(body))["task_id"].(string)
	env := s.open(id)
	if len(env.Files) != 2 || env.Files[1].Size != int64(len(big)) || !strings.Contains(shownValue(env, "New content"), "in the file 2-big.txt") {
		t.Fatalf("%+v %+v", env.Files, env.Display)
	}
	if !strings.Contains(shownValue(env, "Diff"), "in the file 1-big.txt.diff") {
		t.Fatalf("diff: %q", shownValue(env, "Diff"))
	}
	if _, st := s.approve(id); st.State != "done" {
		t.Fatalf("%+v", st)
	}
	if got, _ := s.fake.File(s.repo, "main", "big.txt"); got != big {
		t.Fatal("big.txt is not the content")
	}
	var changes []map[string]string
	for i := range 21 {
		changes = append(changes, map[string]string{"path": "f" + string(rune('a'+i)) + ".txt", "content": "x"})
	}
	body, _ = json.Marshal(map[string]any{"operation": "commit", "repo": s.repo, "message": "m", "changes": changes})
	if _, err := s.call(string(body)); !strings.HasPrefix(refusalCode(err), "task_too_large: this write changes 21 files") {
		t.Fatal(refusalCode(err))
	}
	body, _ = json.Marshal(map[string]any{"operation": "commit", "repo": s.repo, "message": "m", "changes": changes[:20]})
	if r := s.must(string(body)); r["status"] != "awaiting_owner" {
		t.Fatal(r)
	}
}

// The service's OpenAPI document, with the github connector in it, loads
// and validates as OpenAPI 3.1, and a call body validates against the
// github operations' schemas as the platform reads them.
func TestTheServiceDocumentHoldsGitHub(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t), servicetest.WithConnector(github.New(github.Options{})))
	resp, err := http.Get(w.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the document does not validate: %v", err)
	}
	for _, op := range []string{"file_put", "commit", "pr_merge", "gist_update", "file_get"} {
		if doc.Components.Schemas["call.github."+op] == nil {
			t.Errorf("no call schema for %s", op)
		}
	}
	commit := doc.Components.Schemas["call.github.commit"].Value
	for body, ok := range map[string]bool{
		`{"operation":"commit","repo":"a/b","message":"m","changes":[{"path":"x","content":"y"}]}`:        true,
		`{"operation":"commit","repo":"a/b","message":"m","changes":[{"path":"x","delete":false}]}`:       false,
		`{"operation":"commit","repo":"not a repo","message":"m","changes":[{"path":"x","content":"y"}]}`: false,
	} {
		var v any
		_ = json.Unmarshal([]byte(body), &v)
		if err := commit.VisitJSON(v, openapi3.EnableJSONSchema2020()); (err == nil) != ok {
			t.Errorf("%s: valid %v, want %v (%v)", body, err == nil, ok, err)
		}
	}
}

// GitHub's rate limit reaches the agent as a refusal (HTTP 200), with the
// wait GitHub asked for, never as the service's own 429.
func TestRateLimitIsARefusal(t *testing.T) {
	t.Parallel()
	s := newService(t, `{"actions": ["issue_create"]}`)
	s.fake.FailNext("POST", "/repos/"+s.repo+"/issues", 429, http.Header{"Retry-After": {"42"}}, "API rate limit exceeded for user ID 1.")
	_, err := s.call(`{"operation": "issue_create", "repo": "` + s.repo + `", "title": "T"}`)
	var r *client.Refusal
	if !errors.As(err, &r) || r.Code != "rate_limited" || !strings.Contains(r.Message, "GitHub asks to wait 42s") {
		t.Fatalf("%T %v", err, err)
	}
}
