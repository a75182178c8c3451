package gmail_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors/gmail"
	"countersign/connectors/gmail/gmailtest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

func world(t *testing.T, pol string) (*servicetest.World, *gmailtest.Fake) {
	t.Helper()
	f := gmailtest.New().Start()
	t.Cleanup(f.Close)
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(gmail.New(gmail.Config{BaseURL: f.URL(), TokenURL: f.TokenURL(), Egress: egress.Options{AllowPrivate: true}})))
	w.PutProject("mail", "gmail", pol, creds(f, gmailtest.RefreshToken))
	w.StartJobs()
	return w, f
}

func TestSendEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["send"], "recipient_domains": ["example.com", "example.org"]}`)
	raw, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", []byte(sendBody("dana@example.com")), nil)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Status string `json:"status"`
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(raw, &a)
	if a.Status != "awaiting_owner" {
		t.Fatalf("send: %s", raw)
	}
	view, err := w.Owner.Client.Task(ctx, a.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	o, err := w.Owner.Open(view)
	if err != nil {
		t.Fatal(err)
	}
	// Every file downloads, opens, and matches the hash the task names.
	var eml []byte
	for n, fm := range o.Envelope.Files {
		blob, err := w.Owner.Client.File(ctx, a.TaskID, n)
		if err != nil {
			t.Fatal(err)
		}
		data, err := w.Owner.OpenFile(o, n, blob)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != fm.SHA256 || int64(len(data)) != fm.Size {
			t.Fatalf("file %d (%s) does not match its hash", n, fm.Name)
		}
		if fm.Name == "message.eml" {
			eml = data
		}
	}
	if len(o.Envelope.Files) != 3 || eml == nil {
		t.Fatalf("files %v", o.Envelope.Files)
	}
	shown := map[string]string{}
	for _, fl := range o.Envelope.Display.Fields {
		shown[fl.Label] = strings.Join(fl.Values, "; ")
	}
	if shown["To"] != "dana@example.com" || shown["Cc"] != "lee@example.com" || shown["Bcc"] != "audit@example.org" || shown["Subject"] != "Отчёт за ноябрь" ||
		shown["Body"] != "Hello,\nthe report is attached.\n" || shown["Attachments"] != "report.txt; данные 2026.csv" {
		t.Fatalf("shown %v", shown)
	}
	if s := o.Envelope.Display.Summary; s != `send "Отчёт за ноябрь" to 3 recipients with 2 attachments` {
		t.Fatalf("summary %q", s)
	}
	if _, err := w.Owner.Approve(ctx, o, nil, ""); err != nil {
		t.Fatal(err)
	}
	w.WaitState(a.TaskID, countersign.StateDone, countersign.StateFailed)
	st := w.Status("mail", a.TaskID)
	sent := f.Sent()
	if st.State != "done" || len(sent) != 1 || !bytes.Equal(sent[0], eml) {
		t.Fatalf("state %s, %d sent: %s", st.State, len(sent), st.Result)
	}
	for _, secret := range []string{gmailtest.RefreshToken, gmailtest.ClientSecret} {
		if strings.Contains(w.Logs.String(), secret) || strings.Contains(string(st.Result), secret) {
			t.Fatal("a credential reached a log or a result")
		}
	}
}

func TestExpiredRefreshTokenEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"confirm": ["send"]}`)
	raw, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", []byte(`{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(raw, &a)
	f.Revoke(gmailtest.RefreshToken)
	w.Approve(a.TaskID, nil)
	w.WaitState(a.TaskID, countersign.StateDone, countersign.StateFailed)
	st := w.Status("mail", a.TaskID)
	if st.State != "failed" || st.FailureReason != "run_refused:credentials_expired" || !strings.Contains(string(st.Result), "nothing was sent") || len(f.Sent()) != 0 {
		t.Fatalf("%+v %s", st, st.Result)
	}
}

func TestRecipientOutsideDomainsEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"recipient_domains": ["example.com"]}`)
	_, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", []byte(`{"operation": "send", "to": ["eve@elsewhere.example"], "subject": "Hi", "body": "Hello"}`), nil)
	if err == nil || err.Error() != "policy_denied: the owner's policy does not allow the recipient eve@elsewhere.example (recipient_domains, recipients)" || len(f.Sent()) != 0 {
		t.Fatalf("%v", err)
	}
}

// max_per_day bounds direct sends and confirmed sends, each on its own, in
// the store's daily counts.
func TestMaxPerDayEndToEnd(t *testing.T) {
	t.Parallel()
	w, f := world(t, `{"max_per_day": 1}`)
	one := []byte(`{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`)
	if _, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", one, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", one, nil); err == nil ||
		err.Error() != "policy_denied: the owner's max_per_day of 1 messages sent at once is reached today" {
		t.Fatalf("a second direct send: %v", err)
	}
	w.PutProject("mail", "gmail", `{"max_per_day": 1, "confirm": ["send"]}`, creds(f, gmailtest.RefreshToken))
	var ids []string
	for range 2 {
		raw, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "mail", one, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			TaskID string `json:"task_id"`
		}
		_ = json.Unmarshal(raw, &a)
		ids = append(ids, a.TaskID)
	}
	var states []string
	for _, id := range ids {
		w.Approve(id, nil)
		w.WaitState(id, countersign.StateDone, countersign.StateFailed)
		st := w.Status("mail", id)
		states = append(states, st.State+" "+st.FailureReason)
	}
	if states[0] != "done " || states[1] != "failed run_refused:policy_denied" || len(f.Sent()) != 2 {
		t.Fatalf("confirmed sends: %v, %d sent", states, len(f.Sent()))
	}
}
