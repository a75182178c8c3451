package gmail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/gmail"
	"countersign/connectors/gmail/gmailtest"
	"countersign/egress"
	"countersign/policy"
)

// recorder keeps what each run of a connector told the owner's history:
// the Did of a write carried out at once, and the Outcome of an answer.
type recorder struct {
	mu       sync.Mutex
	did      []connectors.Did
	outcomes []connectors.Outcome
}

func (r *recorder) dids() []connectors.Did {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.did)
}

func (r *recorder) answered() []connectors.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.outcomes)
}

// recording wraps c's runs so that rec sees what they told the history.
func recording(c *connectors.Connector, rec *recorder) *connectors.Connector {
	for i := range c.Operations {
		op := &c.Operations[i]
		if run := op.Run; run != nil {
			op.Run = func(ctx context.Context, call *connectors.Call) (any, error) {
				out, err := run(ctx, call)
				if d := call.Done(); d != nil {
					rec.mu.Lock()
					rec.did = append(rec.did, *d)
					rec.mu.Unlock()
				}
				return out, err
			}
		}
		if answer := op.Answer; answer != nil {
			op.Answer = func(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
				r, err := answer(ctx, a)
				if err == nil {
					rec.mu.Lock()
					rec.outcomes = append(rec.outcomes, r.Outcome)
					rec.mu.Unlock()
				}
				return r, err
			}
		}
	}
	return c
}

// recorded is setup with a recorder.
func recorded(t *testing.T, pol string) (*connectortest.Harness, *gmailtest.Fake, *recorder) {
	t.Helper()
	f := gmailtest.New().Start()
	t.Cleanup(f.Close)
	rec := &recorder{}
	h := connectortest.New(t, recording(gmail.New(gmail.Config{BaseURL: f.URL(), TokenURL: f.TokenURL(), Egress: egress.Options{AllowPrivate: true}}), rec))
	h.Policy = []byte(pol)
	h.Credentials = creds(f, gmailtest.RefreshToken)
	return h, f, rec
}

// checkResult validates out against the result schema op declares.
func checkResult(t *testing.T, op string, out []byte) {
	t.Helper()
	o, ok := gmail.New(gmail.Config{}).Operation(op)
	if !ok || o.Result == nil {
		t.Fatalf("%s declares no result schema", op)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(o.Result))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:result", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:result")
	if err != nil {
		t.Fatalf("%s's result schema does not compile: %v", op, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s answered %s, which its result schema refuses: %v", op, out, err)
	}
}

// The summary a send's task names: what approving does, the subject quoted
// and cut safely.
func TestSummaries(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Quarterly numbers ", 23)[:400]
	for _, tc := range []struct{ name, policy, body, want string }{
		{"the issue's example", `{"confirm": ["send"]}`, sendWith("Quarterly numbers", `"cc": ["lee@example.com"], "bcc": ["audit@example.org"], "attachments": [`+att("a.txt")+`, `+att("b.txt")+`]`),
			`send "Quarterly numbers" to 3 recipients with 2 attachments`},
		{"one recipient", `{"confirm": ["send"]}`, sendWith("Hi", ""), `send "Hi" to 1 recipient`},
		{"one attachment", `{"confirm": ["send"]}`, sendWith("Hi", `"attachments": [`+att("a.txt")+`]`), `send "Hi" to 1 recipient with 1 attachment`},
		{"no subject", `{"confirm": ["send"]}`, sendWith("", ""), `send a message with no subject to 1 recipient`},
		{"quotes in the subject", `{"confirm": ["send"]}`, sendWith(`He said "yes" \ no`, ""), `send "He said \"yes\" \\ no" to 1 recipient`},
		{"the subject prefix added", `{"confirm": ["send"], "subject_prefix": "[bot] "}`, sendWith("Hi", ""), `send "[bot] Hi" to 1 recipient`},
		{"a long subject cut", `{"confirm": ["send"]}`, sendWith(long, ""), `send "` + long[:177] + `…" to 1 recipient`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := setup(t, tc.policy)
			out, err := h.Call(ctx, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			task, err := h.Awaiting(out)
			if err != nil {
				t.Fatal(err)
			}
			got := task.Spec.Display.Summary
			if got != tc.want {
				t.Fatalf("summary\n got %q\nwant %q", got, tc.want)
			}
			if err := countersign.ValidateSummary(got); err != nil || len([]rune(got)) > 200 {
				t.Fatalf("the summary is not valid: %v", err)
			}
		})
	}
}

func att(name string) string {
	return `{"name": "` + name + `", "content_type": "text/plain", "data_base64": "SGVsbG8="}`
}

// sendWith is a send to dana@example.com with subject and more members.
func sendWith(subject, more string) string {
	b := `{"operation": "send", "to": ["dana@example.com"], "subject": ` + strconv.Quote(subject) + `, "body": "Hello"`
	if more != "" {
		b += ", " + more
	}
	return b + "}"
}

// What each operation answers fits the result schema it declares, and a
// send tells the owner's history what it did: with Did when sent at once,
// in the answer's Outcome when approved.
func TestResultsAndOutcomes(t *testing.T) {
	t.Parallel()
	h, f, rec := recorded(t, `{}`)
	body := sendWith("Quarterly numbers", `"cc": ["lee@example.com"], "attachments": [`+att("a.txt")+`]`)
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "send", out)
	var sent struct {
		MessageID string `json:"message_id"`
	}
	_ = json.Unmarshal(out, &sent)
	did := rec.dids()
	want := connectors.Did{Title: "Send an email: Quarterly numbers", Summary: `send "Quarterly numbers" to 2 recipients with 1 attachment`,
		Outcome: connectors.Outcome{Text: `Sent "Quarterly numbers" to 2 recipients with 1 attachment; Gmail message ` + sent.MessageID}}
	if len(did) != 1 || did[0] != want || sent.MessageID == "" {
		t.Fatalf("the history was told %+v; want %+v", did, want)
	}

	// The same message asked about: the task's title and summary are those
	// the direct send told, and the answer's outcome names the message.
	h.Policy = []byte(`{"confirm": ["send"]}`)
	out, err = h.Call(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	task, err := h.Awaiting(out)
	if err != nil {
		t.Fatal(err)
	}
	if task.Spec.Display.Title != want.Title || task.Spec.Display.Summary != want.Summary {
		t.Fatalf("the task shows %q, %q", task.Spec.Display.Title, task.Spec.Display.Summary)
	}
	res, _, err := h.Answer(ctx, task, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "confirm", res)
	_ = json.Unmarshal(res, &sent)
	if o := rec.answered(); len(o) != 1 || o[0].Text != `Sent "Quarterly numbers" to 2 recipients with 1 attachment; Gmail message `+sent.MessageID || o[0].URL != "" {
		t.Fatalf("the answer's outcome: %+v", o)
	}
	if len(f.Sent()) != 2 || len(rec.dids()) != 1 {
		t.Fatal("the answer told the history as a direct write")
	}
	if err := countersign.ValidateSummary(rec.answered()[0].Text); err != nil {
		t.Fatalf("the outcome is not one line of shown text: %v", err)
	}

	for _, read := range []struct{ op, body string }{
		{"messages_list", `{"operation": "messages_list"}`},
		{"messages_list", `{"operation": "messages_list", "q": "in:nothing"}`},
		{"message_get", `{"operation": "message_get", "id": "18c0000000000001"}`},
		{"message_get", `{"operation": "message_get", "id": "` + sent.MessageID + `", "format": "raw"}`},
		{"message_get", `{"operation": "message_get", "id": "18c0000000000001", "format": "full"}`},
	} {
		out, err := h.Call(ctx, read.body)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, read.op, out)
	}
}

// A long subject is cut in the outcome as in the summary, and the outcome
// stays within 200 characters.
func TestOutcomeOfALongSubject(t *testing.T) {
	t.Parallel()
	h, _, rec := recorded(t, `{}`)
	long := strings.Repeat("q", 400)
	if _, err := h.Call(ctx, sendWith(long, "")); err != nil {
		t.Fatal(err)
	}
	d := rec.dids()[0]
	if n := len([]rune(d.Outcome.Text)); n > 200 || !strings.Contains(d.Outcome.Text, `qq…" to 1 recipient; Gmail message `) {
		t.Fatalf("%d characters: %q", n, d.Outcome.Text)
	}
	if err := countersign.ValidateSummary(d.Summary); err != nil {
		t.Fatal(err)
	}
}

// The policy truth test: for each of Gmail's example policies (the
// README's, the policy package's and those this package's tests use), a
// table of real calls, each checked against what the owner is told the
// policy does. The owner's words for send ("send: asks you first.") give
// the outcome of a call within the limits the explanation lists
// ("max_recipients: 5"); a call outside one of them is refused. What the
// connector then does is that outcome: sent at once, a task opened, or a
// policy refusal with nothing sent.
func TestPolicyTruth(t *testing.T) {
	t.Parallel()
	policies := []string{
		// README, "Use it with Gmail".
		`{"confirm": ["send"], "recipient_domains": ["example.com"], "max_recipients": 5, "max_per_day": 20, "max_attachment_kb": 1024}`,
		// policy/explain_test.go.
		`{"confirm":["send"],"recipient_domains":["example.com"],"max_recipients":5}`,
		// This package's tests.
		`{"confirm": ["send"], "recipient_domains": ["example.com", "example.org"]}`,
		`{"recipient_domains": ["example.com"]}`,
		`{"recipients": ["lee@example.com"]}`,
		`{"max_recipients": 2}`,
		`{"max_attachment_kb": 0}`,
		`{"subject_prefix": "[bot] "}`,
		`{"max_per_day": 1}`,
		`{"max_per_day": 1, "confirm": ["send"]}`,
		`{"confirm": ["send"]}`,
		`{}`,
	}
	type call struct {
		to          []string
		attachments []int // sizes
	}
	var six []string
	for i := range 6 {
		six = append(six, fmt.Sprintf("p%d@example.com", i))
	}
	calls := []call{
		{to: []string{"dana@example.com"}},
		{to: []string{"lee@example.com"}},
		{to: []string{"Lee@example.com"}},
		{to: []string{"audit@example.org"}},
		{to: []string{"x@sub.example.com"}},
		{to: []string{"eve@elsewhere.example"}},
		{to: []string{"dana@example.com", "lee@example.com", "x@example.com"}},
		{to: six},
		{to: []string{"dana@example.com"}, attachments: []int{10}},
		{to: []string{"dana@example.com"}, attachments: []int{2000}},
	}
	conn := gmail.New(gmail.Config{})
	checked := 0
	for _, pol := range policies {
		e := conn.ParsePolicy([]byte(pol)).Explain()
		if e.Mode != policy.OK || len(e.Writes) != 1 {
			t.Fatalf("%s: %+v", pol, e)
		}
		claim := claimedOutcome(t, e.Writes[0].Text)
		limits := map[string]string{}
		for _, l := range e.Limits {
			k, v, ok := strings.Cut(l, ": ")
			if !ok {
				t.Fatalf("the limit %q does not read", l)
			}
			limits[k] = v
		}
		for _, c := range calls {
			want := claim
			if !withinLimits(t, limits, c.to, c.attachments) {
				want = policy.Refuse
			}
			h, f := setup(t, pol)
			args := map[string]any{"operation": "send", "to": c.to, "subject": "Hi", "body": "Hello"}
			var atts []map[string]string
			for i, n := range c.attachments {
				atts = append(atts, map[string]string{"name": fmt.Sprintf("a%d.bin", i), "content_type": "application/octet-stream",
					"data_base64": b64(strings.Repeat("x", n))})
			}
			if atts != nil {
				args["attachments"] = atts
			}
			body, _ := json.Marshal(args)
			out, err := h.Call(ctx, string(body))
			var got policy.Outcome
			switch {
			case err != nil && countersign.ErrorCode(err) == countersign.PolicyDenied && len(f.Sent()) == 0:
				got = policy.Refuse
			case err != nil:
				t.Fatalf("%s, %v: %v", pol, c, err)
			case strings.Contains(string(out), `"status":"awaiting_owner"`) && len(f.Sent()) == 0:
				got = policy.Ask
			case strings.Contains(string(out), `"sent":true`) && len(f.Sent()) == 1:
				got = policy.Allow
			}
			if got != want {
				t.Errorf("policy %s, call to %v with %v: the owner is told %q and %q, which says %s; the connector did %s",
					pol, c.to, c.attachments, e.Writes[0].Text, e.Limits, want, got)
			}
			checked++
		}
	}
	if checked != len(policies)*len(calls) {
		t.Fatalf("%d calls checked", checked)
	}
}

// claimedOutcome reads the owner's words for a write that always has one
// outcome: "send: asks you first." or "send: runs at once.".
func claimedOutcome(t *testing.T, text string) policy.Outcome {
	t.Helper()
	switch {
	case strings.HasPrefix(text, "send: asks you first"):
		return policy.Ask
	case strings.HasPrefix(text, "send: runs at once"):
		return policy.Allow
	case strings.HasPrefix(text, "send: refused"):
		return policy.Refuse
	}
	t.Fatalf("cannot read %q", text)
	return 0
}

// withinLimits reads the limits as the owner is told them and says
// whether a message to recipients with attachments of sizes keeps them.
func withinLimits(t *testing.T, limits map[string]string, recipients []string, sizes []int) bool {
	t.Helper()
	number := func(k string) (int, bool) {
		v, ok := limits[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %q is not a number", k, v)
		}
		return n, true
	}
	if n, ok := number("max_recipients"); ok && len(recipients) > n {
		return false
	}
	if n, ok := number("max_attachment_kb"); ok {
		for _, s := range sizes {
			if s > n*1024 {
				return false
			}
		}
	}
	domains, hasDomains := limits["recipient_domains"]
	addrs, hasAddrs := limits["recipients"]
	if hasDomains || hasAddrs {
		for _, r := range recipients {
			ok := slices.Contains(strings.Split(addrs, ", "), r)
			at := strings.LastIndexByte(r, '@')
			for _, d := range strings.Split(domains, ", ") {
				ok = ok || hasDomains && (d == "any" || r[at+1:] == d || strings.HasSuffix(r[at+1:], "."+d))
			}
			if !ok {
				return false
			}
		}
	}
	return true
}
