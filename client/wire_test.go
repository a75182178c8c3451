package client_test

// The client re-declares the service's JSON types so that it needs nothing
// but the standard library. These tests hold the copies to the originals:
// a fully populated server value is encoded as the service encodes it,
// decoded into the client's type, encoded again by the client, and the two
// documents must be the same JSON. A member the client drops or names
// otherwise changes the second document; one the client has but the
// service never sends stays zero in the decoded value, which is refused
// too.
//
// Server types the handlers build inline are taken from the handler itself
// where it can run without a store (the connector catalogue, the run-key
// document) and otherwise copied here with a pointer to the handler (the
// sign-in answer and the list wrappers). Bodies the client sends as
// unexported structs (reject, mute, unmute, project and webhook
// confirmations) and the refusal body (httpapi's unexported ownerError,
// read by the client's decodeError) are checked against literal JSON in
// inbox_test.go instead.

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/enclave/calls"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/policy"
	"countersign/store"
)

// anyArgs is a schema that takes any arguments.
var anyArgs = json.RawMessage(`{"type": "object"}`)

// serverJSON encodes v as the service writes its answers (httpapi's
// writeJSON and the enclave's marshal: no HTML escaping).
func serverJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b.Bytes()
}

// served is the body a handler of the service answers to GET path.
func served(t *testing.T, h http.Handler, path string) []byte {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, b, err)
	}
	return b
}

// zeros lists the members of v that are zero: empty strings, zero numbers,
// false, nil pointers and interfaces, empty slices and maps, at any depth.
// Struct fields the JSON encoding skips (json:"-") and names listed in
// allowed (Type.Field) are not looked at.
func zeros(v reflect.Value, path string, allowed map[string]bool) []string {
	if allowed[path] {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []string{path}
		}
		return zeros(v.Elem(), path, allowed)
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" || allowed[v.Type().Name()+"."+f.Name] {
				continue
			}
			out = append(out, zeros(v.Field(i), path+"."+f.Name, allowed)...)
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes: any content will do
		}
		var out []string
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				out = append(out, zeros(it.Value(), path+"["+it.Key().String()+"]", allowed)...)
			}
			return out
		}
		for i := range v.Len() {
			out = append(out, zeros(v.Index(i), path+"[]", allowed)...)
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// canonical is a JSON document with its members sorted and its spacing
// gone, for comparing and showing.
func canonical(t *testing.T, b []byte) (any, string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	c, _ := json.Marshal(v)
	return v, string(c)
}

func str(s string) *string { return &s }

var (
	at        = "2026-11-29T12:00:00Z"
	later     = "2026-11-30T12:00:00Z"
	taskID    = "r7k2m9q4x1z8c3v6b5n0p2w4s6-1"
	nextID    = "s7k2m9q4x1z8c3v6b5n0p2w4s6-1"
	projectID = "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60"
	taskHash  = "0556596a4d022a868cfa6aaa320e9473993dffeec65b84b4943988c18efb76a1"
	edKey     = "ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe"
	edKey2    = "ed25519:8ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe"
	conf      = inbox.Confirmation{At: 1795953600, PublicKey: edKey, Signature: "c2ln",
		Nonce: "4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=", CallbackURL: str("https://wallet.example/cb")}
	taskView = inbox.TaskView{ID: taskID, Project: "probe", ProjectUUID: projectID, Connector: "probe",
		Preparer: "bot.near", Kind: string(countersign.KindInput), State: string(countersign.StateFailed), Thread: taskID,
		CreatedAt: at, ExpiresAt: later, Run: "r8k2m9q4x1z8c3v6b5n0p2w4s6", FailureReason: "run_refused:conflict",
		ReplyPubkey: str("p256:BJ2z"), TaskHash: taskHash, Content: []byte{1, 2, 3}, DeviceCopy: []byte{4, 5, 6},
		Locked: true, Files: []inbox.FileView{{N: 1, Size: 17}, {N: 2, Size: 3}}, Owner: "alice.near", Role: inbox.RoleApprover,
		Approvals: approvals, RejectedBy: "bob.near"}
	approvals = &inbox.ApprovalsView{Have: 1, Need: 2, Approvers: []string{"alice.near", "bob.near"},
		By: []inbox.ApprovalBy{{Account: "bob.near", At: at}}, Approved: true}
	activityView = inbox.ActivityView{ID: taskID, At: at, Project: "ledger", Connector: "ledger", Operation: "pay",
		Preparer: "bot.near", Via: "task", TaskID: taskID, State: string(countersign.StateFailed),
		FailureReason: "run_refused:conflict", Sealed: []byte{1, 2, 3}, DeviceCopy: []byte{4, 5, 6}}
)

func TestWireTypes(t *testing.T) {
	t.Parallel()
	// The catalogue and run-key handlers need no store: they are served
	// by the service's own handler.
	api := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler),
		Connectors: connectors.Catalogue{"ledger": &connectors.Connector{Name: "ledger", Version: "1.2.0", Tasks: true,
			PolicyKeys: map[string]policy.KeyKind{"max_payment_usd": policy.Amount, "actions": policy.WriteList}, Allowed: "actions",
			Operations: []connectors.Operation{{Name: "pay", Kind: connectors.Write, Description: "pay in a test.", Schema: anyArgs, Price: 10_000}, {Name: "confirm", Kind: connectors.Answer, Description: "confirm in a test.", Price: 1,
				SuppliedText: json.RawMessage(`{"type": "string", "pattern": "^[0-9]+$", "description": "a whole number in digits", "examples": ["7"]}`)}}}},
		RunKey: httpapi.RunKeys{Current: 2, Keys: map[uint32]string{1: edKey, 2: edKey2}},
	})
	link := connectors.Task{ID: taskID, Kind: countersign.KindInput, Hash: taskHash, Thread: taskID,
		ExpiresAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Link: "https://inbox.example/#/tasks/" + taskID}

	tests := []struct {
		name   string
		server any    // the service's value, encoded as the service does
		raw    []byte // or the body a handler of the service answers
		client any    // a pointer to the client's type
		// allowed are client fields (Type.Field) this answer leaves zero;
		// serverZeros are members of the service's document that are zero
		// by right (false and 0 in a schema, a price of 0).
		allowed, serverZeros []string
	}{
		{name: "task (inbox.TaskView)", server: taskView, client: &client.TaskView{}},
		{name: "file (inbox.FileView)", server: inbox.FileView{N: 3, Size: 99}, client: &client.TaskFile{}},
		{name: "task list (httpapi tasks: {tasks, more})",
			server: map[string]any{"tasks": []inbox.TaskView{taskView}, "more": true}, client: &client.TaskPage{}},
		{name: "history entry (inbox.ActivityView)", server: activityView, client: &client.ActivityEntry{}},
		{name: "history page (httpapi activity: {entries, more})",
			server: map[string]any{"entries": []inbox.ActivityView{activityView}, "more": true}, client: &client.ActivityPage{}},
		{name: "origin (inbox.Origin)", server: inbox.Origin{Run: "r7k2m9q4x1z8c3v6b5n0p2w4s6", Operation: "guess_start",
			InputSHA256: taskHash, OutputSHA256: taskHash, Receipt: json.RawMessage(`{"receipt":{"run":"r"},"key_id":1,"signature":"x"}`)},
			client: &client.Origin{}},
		{name: "history entry (inbox.HistoryEntry)", server: inbox.HistoryEntry{From: string(countersign.StateApproved), To: string(countersign.StateAnswering),
			Actor: string(countersign.ActorPlatform), Run: "r8k2m9q4x1z8c3v6b5n0p2w4s6", At: at}, client: &client.HistoryEntry{}},
		{name: "approval (inbox.ApproveRequest)", server: inbox.ApproveRequest{TaskHash: taskHash, Summary: "merge pull request #12 of octo/app into main at 3f2a9c1", Approval: conf,
			Supplied: []byte("sup"), Note: []byte("not")}, client: &client.ApproveRequest{}},
		{name: "confirmation (inbox.Confirmation)", server: conf, client: &client.Confirmation{}},
		{name: "always allow (inbox.AllowProposal)", server: inbox.AllowProposal{Project: `{"connector":"mercury","policy":{},"agents":[]}`, Policy: "{}",
			Rule: `{"when":{"op":"pay_invoice"},"then":"allow"}`, Sentence: "Rule 1: pay_invoice runs at once.", Moved: true},
			client: &client.AllowProposal{}},
		{name: "batch approval (inbox.BatchApproveRequest)", server: inbox.BatchApproveRequest{
			Tasks:    []approval.BatchLine{{ID: taskID, TaskHash: taskHash, SupplyHash: taskHash}, {ID: nextID, TaskHash: taskHash, SupplyHash: taskHash}},
			Approval: conf, Summaries: []string{"pay $1.00 to Acme Corp; it cannot be undone", "pay $2.00 to Globex; it cannot be undone"}},
			client: &client.BatchApproveRequest{}},
		{name: "batch approved (inbox.BatchApproved)", server: inbox.BatchApproved{Tasks: []inbox.Approved{
			{ID: taskID, State: string(countersign.StateApproved), Run: "r8k2m9q4x1z8c3v6b5n0p2w4s6", Approvals: approvals}}},
			client: &client.BatchApproved{}},
		{name: "approved (inbox.Approved)", server: inbox.Approved{ID: taskID, State: string(countersign.StateApproved), Run: "r8k2m9q4x1z8c3v6b5n0p2w4s6", Approvals: approvals},
			client: &client.TaskState{}},
		{name: "moved (inbox.Moved)", server: inbox.Moved{ID: taskID, State: string(countersign.StateRejected)}, client: &client.TaskState{},
			allowed: []string{"TaskState.Run", "TaskState.Approvals"}},
		{name: "mute (inbox.MuteView)", server: inbox.MuteView{SubjectIs: "agent", Subject: "bot.near", CreatedAt: at},
			client: &client.Mute{}},
		{name: "project (inbox.ProjectView)", server: inbox.ProjectView{Name: "probe", ProjectUUID: projectID,
			Connector: "probe", Agents: []string{"bot.near"}, Policy: `{"confirm":["guess"]}`, PolicyMode: "unreadable",
			PolicySentence: "guess is not a write of probe", Credentials: true, CreatedAt: at, UpdatedAt: later,
			PolicyExplained: inbox.PolicyExplained{Writes: []inbox.WriteExplained{{Op: "pay", Noun: "payment", Always: "ask", Otherwise: "allow",
				Cases: []inbox.CaseExplain{{When: "the amount is above $5,000.00", Outcome: "refuse", Because: "max_payment_usd"}}, Text: "pay: asks you first."}},
				Rules: []string{"Rule 1: pay refused."}, Limits: []string{"max_per_day: 3"},
				Approvers: &inbox.ApproversExplained{Accounts: []string{"bob.near"}, Threshold: 2, Text: "A write that asks waits for each of you and bob.near to approve it."}}},
			client: &client.Project{}},
		{name: "device (inbox.DeviceView)", server: inbox.DeviceView{ID: "0123456789abcdefghjkmnpqrs",
			DevicePubkey: "p256:BJ2z", SignerPubkey: edKey, CreatedAt: at, ValidUntil: later, This: true, Push: true},
			client: &client.Device{}},
		{name: "webhook (inbox.WebhookView)", server: inbox.WebhookView{URL: str("https://hooks.example/in"),
			SetAt: at, SetByKey: edKey, Secret: "whsec_c2VjcmV0"}, client: &client.Webhook{}},
		{name: "delivery (inbox.DeliveryView)", server: inbox.DeliveryView{EventID: "evt_1", Type: "task_created",
			TaskID: taskID, Attempt: 2, StatusCode: 500, Error: "HTTP 500", At: at}, client: &client.Delivery{}},
		{name: "sign-in (inbox.SignInRequest)", server: inbox.SignInRequest{AccountID: "alice.near",
			DevicePubkey: "p256:BJ2z", ValidUntil: later, PublicKey: edKey, Signature: "c2ln",
			Nonce: "4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=", CallbackURL: str("https://wallet.example/cb")},
			client: &client.SignInRequest{}},
		// httpapi's signIn writes this map (httpapi/session.go).
		{name: "session (httpapi signIn answer)", server: map[string]string{"token": "os_0123456789abcdef",
			"device_id": "0123456789abcdefghjkmnpqrs", "account_id": "alice.near", "valid_until": later},
			client: &client.Session{}},
		{name: "task status (calls.TaskStatus)", server: calls.TaskStatus{TaskID: taskID, Kind: "input",
			State: string(countersign.StateDone), Thread: taskID, CreatedAt: at, ExpiresAt: later, OutcomeClass: string(countersign.OutcomeClaimed),
			Result: json.RawMessage(`{"ok":true}`), Reason: str("not now"), Run: "r8k2m9q4x1z8c3v6b5n0p2w4s6",
			FailureReason: "run_refused:conflict", NextTaskID: nextID, NoticeTaskID: nextID, Status: "awaiting_owner",
			Approvals: &calls.ApprovalsCount{Have: 1, Need: 2}},
			client: &client.TaskStatus{}},
		{name: "awaiting owner (connectors.AwaitingOwner)", server: connectors.AwaitingOwner(link), client: &client.Awaiting{}},
		{name: "notified (connectors.Notified)", server: connectors.Notified(link), client: &client.Awaiting{}},
		// httpapi's events handler writes json.Marshal(store.TaskEvent).
		{name: "task event (store.TaskEvent)", server: store.TaskEvent{Owner: "alice.near", TaskID: taskID,
			State: countersign.StateOpen}, client: &client.TaskEvent{}},
		{name: "connector catalogue (GET /connectors)", raw: served(t, api, "/connectors"),
			client: &client.Catalogue{}, serverZeros: []string{"json[task_operations][][price]",
				"json[task_operations][][schema][additionalProperties]", "json[task_operations][][schema][properties][timeout_s][minimum]",
				"json[task_operations][][examples][]", "json[task_operations][][result][additionalProperties]",
				"json[task_operations][][result][properties][tasks][items][additionalProperties]",
				"json[task_operations][][result][properties][approvals][additionalProperties]",
				"json[task_operations][][result][properties][approvals][properties][have][minimum]"},
			allowed: []string{"ConnectorOperation.Examples", "ConnectorOperation.Schema", "ConnectorOperation.Price", "ConnectorOperation.Result", "ConnectorOperation.SuppliedText"}},
		{name: "granted projects (GET /agent/projects)", server: map[string]any{"projects": []countersign.Grant{{Owner: "alice.near", Project: "probe", Connector: "probe"}}},
			client: &struct {
				Projects []client.Grant `json:"projects"`
			}{}},
		{name: "run keys (GET /.well-known/countersign-run-key)", raw: served(t, api, "/.well-known/countersign-run-key"),
			client: &client.RunKeys{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := tt.raw
			if tt.server != nil {
				if z := zeros(reflect.ValueOf(tt.server), "server", nil); len(z) > 0 {
					t.Fatalf("the server value is not fully populated: %v", z)
				}
				raw = serverJSON(t, tt.server)
			}
			sv, want := canonical(t, raw)
			serverZeros := map[string]bool{}
			for _, a := range tt.serverZeros {
				serverZeros[a] = true
			}
			if z := zeros(reflect.ValueOf(sv), "json", serverZeros); len(z) > 0 {
				t.Fatalf("the service's document has zero members: %v in %s", z, want)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			if err := dec.Decode(tt.client); err != nil {
				t.Fatalf("the client cannot decode %s: %v", want, err)
			}
			allowed := map[string]bool{}
			for _, a := range tt.allowed {
				allowed[a] = true
			}
			if z := zeros(reflect.ValueOf(tt.client), "client", allowed); len(z) > 0 {
				t.Errorf("the service sends nothing for these client fields (misnamed, or the client's own): %v", z)
			}
			again, err := json.Marshal(tt.client)
			if err != nil {
				t.Fatal(err)
			}
			cv, got := canonical(t, again)
			if !reflect.DeepEqual(sv, cv) {
				t.Errorf("the client does not write back what the service wrote\nservice %s\n client %s", want, got)
			}
		})
	}
}

// TestWireTypesSeeEveryMember checks the check: a document with a member
// the client type does not have, or without one it has, fails it.
func TestWireTypesSeeEveryMember(t *testing.T) {
	t.Parallel()
	m := inbox.MuteView{SubjectIs: "agent", Subject: "bot.near", CreatedAt: at}
	raw := serverJSON(t, m)
	extra := strings.Replace(string(raw), "{", `{"muted_by":"alice.near",`, 1)
	sv, _ := canonical(t, []byte(extra))
	var c client.Mute
	if err := json.Unmarshal([]byte(extra), &c); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(c)
	if cv, _ := canonical(t, again); reflect.DeepEqual(sv, cv) {
		t.Error("a member the client drops went unseen")
	}
	var st client.TaskState
	if err := json.Unmarshal(serverJSON(t, inbox.Moved{ID: taskID, State: string(countersign.StateRejected)}), &st); err != nil {
		t.Fatal(err)
	}
	if z := zeros(reflect.ValueOf(st), "client", nil); !reflect.DeepEqual(z, []string{"client.Run", "client.Approvals"}) {
		t.Errorf("a client field the service does not send: zeros %v, want [client.Run client.Approvals]", z)
	}
}
