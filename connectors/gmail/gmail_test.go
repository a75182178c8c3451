package gmail_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"

	"countersign/connectors/connectortest"
	"countersign/connectors/gmail"
	"countersign/connectors/gmail/gmailtest"
	"countersign/egress"
	"countersign/policy"
)

var ctx = context.Background()

func creds(f *gmailtest.Fake, refresh string) []byte {
	b, _ := json.Marshal(map[string]string{"client_id": gmailtest.ClientID, "client_secret": gmailtest.ClientSecret, "refresh_token": refresh})
	return b
}

func setup(t *testing.T, pol string) (*connectortest.Harness, *gmailtest.Fake) {
	t.Helper()
	f := gmailtest.New().Start()
	t.Cleanup(f.Close)
	h := connectortest.New(t, gmail.New(gmail.Config{BaseURL: f.URL(), TokenURL: f.TokenURL(), Egress: egress.Options{AllowPrivate: true}}))
	h.Policy = []byte(pol)
	h.Credentials = creds(f, gmailtest.RefreshToken)
	return h, f
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// sendBody is a send call with two attachments.
func sendBody(to string) string {
	return fmt.Sprintf(`{"operation": "send", "to": [%q], "cc": ["lee@example.com"], "bcc": ["audit@example.org"], "subject": "Отчёт за ноябрь", `+
		`"body": "Hello,\nthe report is attached.\n", "attachments": [`+
		`{"name": "report.txt", "content_type": "text/plain", "data_base64": %q}, `+
		`{"name": "данные 2026.csv", "content_type": "text/csv", "data_base64": %q}]}`, to, b64("the report"), b64("a,b\n1,2\n"))
}

func TestSendAsksAndSendsTheSealedBytes(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"confirm": ["send"], "recipient_domains": ["example.com", "example.org"]}`)
	out, err := h.Call(ctx, sendBody("dana@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	task, err := h.Awaiting(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sent()) != 0 {
		t.Fatal("sent before the owner approved")
	}
	files := task.Spec.Files
	if len(files) != 3 || files[0].Name != "report.txt" || files[1].Name != "данные 2026.csv" || files[2].Name != "message.eml" {
		t.Fatalf("files %v", files)
	}
	msg := files[2].Data
	if _, _, err := h.Answer(ctx, task, nil, ""); err != nil {
		t.Fatal(err)
	}
	sent := f.Sent()
	if len(sent) != 1 || !bytes.Equal(sent[0], msg) {
		t.Fatal("Gmail did not receive the sealed bytes")
	}
	// The message reads back as what the owner was shown.
	m, err := mail.ReadMessage(bytes.NewReader(sent[0]))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if subject != "Отчёт за ноябрь" || m.Header.Get("To") != "dana@example.com" || m.Header.Get("Bcc") != "audit@example.org" || m.Header.Get("From") != "" {
		t.Fatalf("headers %v", m.Header)
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	var parts []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(p)
		data, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(raw), "\r\n", ""))
		parts = append(parts, p.FileName()+"="+string(data))
	}
	want := []string{"=Hello,\nthe report is attached.\n", "report.txt=the report", "данные 2026.csv=a,b\n1,2\n"}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("parts %q", parts)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	one := `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`
	for _, tc := range []struct{ name, policy, body, want string }{
		{"outside recipient_domains", `{"recipient_domains": ["example.com"]}`, sendBody("dana@example.com"),
			"policy_denied: the owner's policy does not allow the recipient audit@example.org (recipient_domains, recipients)"},
		{"not in recipients", `{"recipients": ["lee@example.com"]}`, one,
			"policy_denied: the owner's policy does not allow the recipient dana@example.com (recipient_domains, recipients)"},
		{"too many recipients", `{"max_recipients": 2}`, sendBody("dana@example.com"), "policy_denied: the message has 3 recipients, above the owner's max_recipients of 2"},
		{"attachment too large", `{"max_attachment_kb": 0}`, sendBody("dana@example.com"), "policy_denied: attachment 1 is 1 KiB, above the owner's max_attachment_kb of 0"},
		{"display name", `{}`, `{"operation": "send", "to": ["Dana <dana@example.com>"], "subject": "Hi", "body": "Hello"}`,
			"invalid_request: `to` 1 is not one bare email address (such as dana@example.com, without a name)"},
		{"two addresses in one", `{}`, `{"operation": "send", "to": ["a@example.com, b@evil.example"], "subject": "Hi", "body": "Hello"}`,
			"invalid_request: `to` 1 is not one bare email address (such as dana@example.com, without a name)"},
		{"header injection", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi\r\nBcc: x@evil.example", "body": "Hello"}`,
			"invalid_request: the subject holds a line break or a control character"},
		{"repeated recipient", `{}`, `{"operation": "send", "to": ["dana@example.com"], "cc": ["dana@EXAMPLE.com"], "subject": "Hi", "body": "Hello"}`,
			"invalid_request: dana@example.com is named twice among the recipients"},
		{"no to", `{}`, `{"operation": "send", "to": [], "cc": ["lee@example.com"], "subject": "Hi", "body": "Hello"}`, "invalid_request: `to` names no recipient"},
		{"attachment not base64", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello", "attachments": [{"name": "a.txt", "content_type": "text/plain", "data_base64": "SGVsbG8"}]}`,
			"invalid_request: attachment 1's data_base64 is not standard base64"},
		{"body too long to show", `{"confirm": ["send"]}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "` + strings.Repeat("a", 50_001) + `"}`,
			"invalid_request: `body` is a string of at most 50000 characters"},
		{"21 recipients in to, not asked", `{}`, `{"operation": "send", "to": [` + strings.Repeat(`"a@example.com", `, 20) + `"b@example.com"], "subject": "Hi", "body": "Hello"}`,
			"invalid_request: `to` is a list of at most 20 items, each a string of 3 to 200 characters"},
		{"an address of 201 characters", `{}`, `{"operation": "send", "to": ["` + strings.Repeat("a", 189) + `@example.com"], "subject": "Hi", "body": "Hello"}`,
			"invalid_request: `to.0` is a string of 3 to 200 characters"},
		{"a file name of 201 characters", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello", "attachments": [{"name": "` + strings.Repeat("n", 197) + `.txt", "content_type": "text/plain", "data_base64": "SGVsbG8="}]}`,
			"invalid_request: `attachments.0.name` is a string of 1 to 200 characters matching " + fileNamePattern},
		{"a file name that looks like an encoded word", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello", "attachments": [{"name": "=?UTF-8?B?ZXZpbC5leGU=?=", "content_type": "text/plain", "data_base64": "SGVsbG8="}]}`,
			"invalid_request: `attachments.0.name` is a string of 1 to 200 characters matching " + fileNamePattern},
		{"names alike but for case, not asked", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello", "attachments": [` +
			`{"name": "Report.txt", "content_type": "text/plain", "data_base64": "SGVsbG8="}, {"name": "report.TXT", "content_type": "text/plain", "data_base64": "SGVsbG8="}]}`,
			"display_invalid: attachment 2 has the same name as attachment 1, ignoring case"},
		{"a name Windows keeps", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello", "attachments": [{"name": "con.txt", "content_type": "text/plain", "data_base64": "SGVsbG8="}]}`,
			"display_invalid: attachment 1 name is a name Windows keeps for a device"},
		{"a subject with a bidi control, not asked", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi \u202egpj.exe", "body": "Hello"}`,
			"display_invalid: the subject holds a bidirectional control character"},
		{"a body with a zero-width space", `{}`, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "a\u200bb"}`,
			"display_invalid: the body holds a zero-width or formatting character"},
		{"unreadable policy", `{"confirm": ["messages_list"]}`, one, "policy_unreadable: `confirm` names `messages_list`, a read: only writes belong there"},
		{"a rule refusing a domain", `{"rules": [{"when": {"domains": ["Example.com"]}, "then": "refuse"}]}`, one,
			"policy_denied: the owner's rule 1 (domain `Example.com`) refuses this message"},
		{"a rule refusing a recipient among others", `{"rules": [{"when": {"recipients": ["dana@example.com", "eve@example.com"]}, "then": "refuse"}]}`, one,
			"policy_denied: the owner's rule 1 (recipient one of 2 named) refuses this message"},
		{"a rule naming a condition Gmail does not carry", `{"rules": [{"when": {"min_usd": 1}, "then": "refuse"}]}`, one,
			"policy_unreadable: rule 1's `when` has an unknown member `min_usd`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, f := setup(t, tc.policy)
			_, err := h.Call(ctx, tc.body)
			if got := connectortest.Text(err); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if len(f.Sent()) != 0 {
				t.Fatal("a refused message was sent")
			}
		})
	}
}

// fileNamePattern is the pattern an attachment's name matches, as the
// schema says it.
const fileNamePattern = `^[^\s./\\<>:"|?*\x00-\x1f\x7f]([^/\\<>:"|?*\x00-\x1f\x7f]*[^\s./\\<>:"|?*\x00-\x1f\x7f])?$`

func TestSubjectPrefixIsAddedOnce(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"subject_prefix": "[bot] "}`)
	for _, s := range []string{"Hi", "[bot] Hi"} {
		if _, err := h.Call(ctx, `{"operation": "send", "to": ["dana@example.com"], "subject": "`+s+`", "body": "x"}`); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.Sent()) != 2 {
		t.Fatalf("sent %d", len(f.Sent()))
	}
	for _, raw := range f.Sent() {
		m, _ := mail.ReadMessage(bytes.NewReader(raw))
		if m.Header.Get("Subject") != "[bot] Hi" {
			t.Fatalf("subject %q", m.Header.Get("Subject"))
		}
	}
}

func TestMaxPerDayCountsDirectAndConfirmed(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"max_per_day": 1}`)
	one := `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`
	if _, err := h.Call(ctx, one); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, one); connectortest.Text(err) != "policy_denied: the owner's max_per_day of 1 messages sent at once is reached today" {
		t.Fatalf("a second direct send: %v", err)
	}
	h.Policy = []byte(`{"max_per_day": 1, "confirm": ["send"]}`)
	h.NoVoid = true
	var tasks []connectortest.Opened
	for range 2 {
		out, err := h.Call(ctx, one)
		if err != nil {
			t.Fatal(err)
		}
		task, _ := h.Awaiting(out)
		tasks = append(tasks, task)
	}
	if _, _, err := h.Answer(ctx, tasks[0], nil, ""); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Answer(ctx, tasks[1], nil, "")
	if !strings.Contains(connectortest.Text(err), "max_per_day of 1 confirmed messages is reached today") {
		t.Fatalf("a second confirmed send: %v", err)
	}
	if len(f.Sent()) != 2 || h.Count(policy.Direct) != 1 || h.Count(policy.Confirmed) != 1 {
		t.Fatalf("sent %d", len(f.Sent()))
	}
}

func TestExpiredRefreshToken(t *testing.T) {
	t.Parallel()
	h, f := setup(t, `{"confirm": ["send"]}`)
	out, err := h.Call(ctx, `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := h.Awaiting(out)
	f.Revoke(gmailtest.RefreshToken)
	_, _, err = h.Answer(ctx, task, nil, "")
	if got := connectortest.Text(err); !strings.HasPrefix(got, "credentials_expired: Google no longer accepts the project's refresh token") || !strings.Contains(got, "nothing was sent") {
		t.Fatalf("got %s", got)
	}
	if strings.Contains(connectortest.Text(err), gmailtest.RefreshToken) || len(f.Sent()) != 0 {
		t.Fatal("the token was shown, or the message sent")
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	h, _ := setup(t, `{}`)
	out, err := h.Call(ctx, `{"operation": "messages_list", "q": "in:inbox"}`)
	if err != nil || !strings.Contains(string(out), "18c0000000000001") {
		t.Fatalf("list: %s %v", out, err)
	}
	out, err = h.Call(ctx, `{"operation": "message_get", "id": "18c0000000000001"}`)
	if err != nil || !strings.Contains(string(out), "Lunch on Friday?") {
		t.Fatalf("get: %s %v", out, err)
	}
	if _, err := h.Call(ctx, `{"operation": "message_get", "id": "nope"}`); connectortest.Text(err) != "invalid_request: Gmail has no such message" {
		t.Fatalf("get unknown: %v", err)
	}
}

// Refusals of the answer run: each says whether the message was sent.
func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	one := `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`
	for _, tc := range []struct {
		name   string
		before func(h *connectortest.Harness, f *gmailtest.Fake)
		want   string
	}{
		{"Gmail fails", func(_ *connectortest.Harness, f *gmailtest.Fake) { f.FailNextSends(1, 503) },
			"upstream_unavailable: Gmail answered 503 (UNAVAILABLE: The service is currently unavailable.): the message may or may not have been sent; look in the Sent folder before preparing it again. Whether the write happened is not known."},
		{"sending limit", func(_ *connectortest.Harness, f *gmailtest.Fake) { f.FailNextSends(1, 429) },
			"rate_limited: Gmail's sending limit is reached (RESOURCE_EXHAUSTED: The service is currently unavailable.); nothing was sent. Nothing was written."},
		{"client secret changed", func(h *connectortest.Harness, f *gmailtest.Fake) {
			h.Credentials = []byte(`{"client_id": "` + gmailtest.ClientID + `", "client_secret": "old", "refresh_token": "` + gmailtest.RefreshToken + `"}`)
		}, "credentials_rejected: Google refused the project's OAuth client (invalid_client): the owner must store its client id and secret again; nothing was sent. Nothing was written."},
		{"credentials removed", func(h *connectortest.Harness, _ *gmailtest.Fake) { h.Credentials = nil },
			"invalid_request: The project has no Gmail credentials: its owner stores {\"client_id\", \"client_secret\", \"refresh_token\"}; nothing was sent. Nothing was written."},
		{"recipient no longer allowed", func(h *connectortest.Harness, _ *gmailtest.Fake) {
			h.Policy = []byte(`{"confirm": ["send"], "recipients": ["lee@example.com"]}`)
		}, "policy_denied: The owner's policy does not allow the recipient dana@example.com (recipient_domains, recipients); nothing was sent. Nothing was written."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, f := setup(t, `{"confirm": ["send"]}`)
			h.NoVoid = true
			out, err := h.Call(ctx, one)
			if err != nil {
				t.Fatal(err)
			}
			task, _ := h.Awaiting(out)
			tc.before(h, f)
			_, _, err = h.Answer(ctx, task, nil, "")
			if got := connectortest.Text(err); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if len(f.Sent()) != 0 {
				t.Fatal("sent")
			}
		})
	}
}
