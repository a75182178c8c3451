package device

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/sealing"
)

// vectors is the part of the contract's vectors a device reproduces.
type vectors struct {
	Content struct {
		Blob       string `json:"blob"`
		ContentKey string `json:"content_key"`
		Plaintext  string `json:"plaintext"`
	} `json:"content"`
	DeviceCopy struct {
		Blob                string `json:"blob"`
		DevicePrivateScalar string `json:"device_private_scalar"`
		DevicePubkey        string `json:"device_pubkey"`
	} `json:"device_copy"`
	Envelope struct {
		Text     string `json:"text"`
		TaskHash string `json:"task_hash"`
	} `json:"envelope"`
	Derivation struct {
		TaskID             string `json:"task_id"`
		Owner              string `json:"owner"`
		ProjectUUID        string `json:"project_uuid"`
		ReplyPrivateScalar string `json:"reply_private_scalar"`
		ReplyPubkey        string `json:"reply_pubkey"`
	} `json:"derivation"`
	Answer struct {
		Blob      string `json:"blob"`
		Plaintext string `json:"plaintext"`
	} `json:"answer"`
	File struct {
		Blob string `json:"blob"`
	} `json:"file"`
	NEP413 struct {
		WalletSeed string `json:"wallet_seed"`
		PublicKey  string `json:"public_key"`
	} `json:"nep413"`
	SupplyHash []struct {
		Hash string `json:"hash"`
	} `json:"supply_hash"`
	Receipt struct {
		Request     string `json:"request"`
		InputSHA256 string `json:"input_sha256"`
		Bare        string `json:"bare_sha256_of_request_must_not_appear"`
	} `json:"receipt"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/sealing-and-signing.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func p256Key(t testing.TB, scalarHex string) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().NewPrivateKey(unhex(t, scalarHex))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testNow is the devices' clock in these tests: five minutes after the
// vector task was created.
var testNow = time.Date(2026, 11, 29, 12, 5, 0, 0, time.UTC)

// countingSigner counts the signatures it makes.
type countingSigner struct {
	Signer
	n atomic.Int32
}

func (s *countingSigner) Sign(message, recipient string) (client.Signed, error) {
	s.n.Add(1)
	return s.Signer.Sign(message, recipient)
}

type failingSigner struct{}

func (failingSigner) Sign(string, string) (client.Signed, error) {
	return client.Signed{}, errors.New("the wallet said no")
}

// vectorDevice is the vectors' device: alice.near's device key, and her
// wallet key from the vectors' seed.
func vectorDevice(t testing.TB, v vectors) (*Device, *countingSigner) {
	t.Helper()
	key, err := approval.NewEd25519Key(unhex(t, v.NEP413.WalletSeed))
	if err != nil {
		t.Fatal(err)
	}
	if key.PublicKey().String() != v.NEP413.PublicKey {
		t.Fatalf("the wallet seed gives %s, the vectors say %s", key.PublicKey(), v.NEP413.PublicKey)
	}
	s := &countingSigner{Signer: WalletSigner{Wallet: &approval.Wallet{AccountID: v.Derivation.Owner, Key: key}}}
	d := &Device{
		Account:   v.Derivation.Owner,
		Key:       p256Key(t, v.DeviceCopy.DevicePrivateScalar),
		Signer:    s,
		Recipient: testRecipient,
		Now:       func() time.Time { return testNow },
	}
	if d.Pubkey() != v.DeviceCopy.DevicePubkey {
		t.Fatalf("the device scalar gives %s, the vectors say %s", d.Pubkey(), v.DeviceCopy.DevicePubkey)
	}
	return d, s
}

// vectorView is the task of the vectors as the inbox lists it.
func vectorView(t testing.TB, v vectors) client.TaskView {
	t.Helper()
	return client.TaskView{
		ID: v.Derivation.TaskID, Project: "probe", ProjectUUID: v.Derivation.ProjectUUID, Connector: "probe",
		Preparer: "bot.near", Kind: "input", State: string(countersign.StateOpen), Thread: v.Derivation.TaskID,
		CreatedAt: "2026-11-29T12:00:00Z", ExpiresAt: "2026-11-30T12:00:00Z",
		ReplyPubkey: v.Derivation.ReplyPubkey, TaskHash: v.Envelope.TaskHash,
		Content: unhex(t, v.Content.Blob), DeviceCopy: unhex(t, v.DeviceCopy.Blob),
		Files: []client.TaskFile{},
	}
}

func TestOpenVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	d, _ := vectorDevice(t, v)
	o, err := d.Open(vectorView(t, v))
	if err != nil {
		t.Fatal(err)
	}
	if string(o.EnvelopeBytes) != v.Envelope.Text {
		t.Errorf("envelope bytes\n got %s\nwant %s", o.EnvelopeBytes, v.Envelope.Text)
	}
	if o.TaskHash != v.Envelope.TaskHash || countersign.TaskHash(o.EnvelopeBytes) != v.Envelope.TaskHash {
		t.Errorf("task hash %s, want %s", o.TaskHash, v.Envelope.TaskHash)
	}
	var content struct{ Request string }
	if err := json.Unmarshal([]byte(v.Content.Plaintext), &content); err != nil {
		t.Fatal(err)
	}
	if string(o.Request) != content.Request {
		t.Errorf("request %s, want %s", o.Request, content.Request)
	}
	if !bytes.Equal(o.key.Bytes(), unhex(t, v.Content.ContentKey)) {
		t.Error("the content key is not the vectors'")
	}
	e := o.Envelope
	if e.ID != v.Derivation.TaskID || e.Owner != "alice.near" || e.Kind != countersign.KindInput ||
		e.AnswerBy == nil || *e.AnswerBy != (countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText}) ||
		e.Display.Title != "Guess my number" || e.ReplyPubkey != v.Derivation.ReplyPubkey {
		t.Errorf("parsed envelope %+v", e)
	}
	// The vectors' file is sealed under the same key, but the vector
	// envelope names no file, so no file may be taken for one of its own.
	if _, err := d.OpenFile(o, 0, unhex(t, v.File.Blob)); !errors.Is(err, ErrFileMismatch) {
		t.Errorf("OpenFile of a file the envelope does not name: %v", err)
	}
}

// TestReceiptInputVector: the device recomputes a task receipt's keyed
// input hash over the raw request it decrypted, with the task's content key,
// and gets the contract's vector (SPEC §11, amended); a bare SHA-256 of the
// request, or the hash of another request, does not match.
func TestReceiptInputVector(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	d, _ := vectorDevice(t, v)
	o, err := d.Open(vectorView(t, v))
	if err != nil {
		t.Fatal(err)
	}
	if string(o.Request) != v.Receipt.Request {
		t.Fatalf("the vector task's request is %s, the receipt vector's %s", o.Request, v.Receipt.Request)
	}
	if !o.ReceiptInputMatches(v.Receipt.InputSHA256) {
		t.Fatal("the contract's keyed input hash does not match the request the device decrypted")
	}
	other := *o
	other.Request = append([]byte(nil), o.Request...)
	other.Request[len(other.Request)-2] = '1' // "max":11
	for name, c := range map[string]struct {
		o   *Opened
		sum string
	}{
		"the bare SHA-256 of the request": {o, v.Receipt.Bare},
		"another request":                 {&other, v.Receipt.InputSHA256},
		"upper case":                      {o, strings.ToUpper(v.Receipt.InputSHA256)},
		"nothing":                         {o, ""},
		"no opened task":                  {&Opened{Request: o.Request}, v.Receipt.InputSHA256},
	} {
		if c.o.ReceiptInputMatches(c.sum) {
			t.Errorf("%s matches", name)
		}
	}
}

func TestSealedRepliesOpenWithTheReplyKey(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	d, _ := vectorDevice(t, v)
	o, err := d.Open(vectorView(t, v))
	if err != nil {
		t.Fatal(err)
	}
	reply := p256Key(t, v.Derivation.ReplyPrivateScalar)
	if sealing.FormatP256PublicKey(reply.PublicKey()) != v.Derivation.ReplyPubkey {
		t.Fatal("the reply scalar does not give the vectors' reply_pubkey")
	}
	// The vectors' own answer opens with that key: the key is right.
	if got, err := sealing.OpenWith(reply, sealing.Answer, o.Envelope.ID, unhex(t, v.Answer.Blob)); err != nil || string(got) != v.Answer.Plaintext {
		t.Fatalf("the vectors' answer: %q, %v", got, err)
	}

	seal := map[sealing.Purpose]func() ([]byte, error){
		sealing.Answer:    func() ([]byte, error) { return SealAnswer(o, []byte(v.Answer.Plaintext)) },
		sealing.Note:      func() ([]byte, error) { return SealNote(o, "my guess ✓") },
		sealing.Rejection: func() ([]byte, error) { return SealRejection(o, "no more guesses") },
	}
	want := map[sealing.Purpose]string{sealing.Answer: v.Answer.Plaintext, sealing.Note: "my guess ✓", sealing.Rejection: "no more guesses"}
	for p, f := range seal {
		blob, err := f()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := sealing.OpenWith(reply, p, o.Envelope.ID, blob)
		if err != nil || string(got) != want[p] {
			t.Errorf("%s opened to %q, %v", p, got, err)
		}
		// Bound to its purpose: it opens as nothing else.
		for other := range seal {
			if other != p {
				if _, err := sealing.OpenWith(reply, other, o.Envelope.ID, blob); !errors.Is(err, sealing.ErrDecrypt) {
					t.Errorf("a %s opened as a %s", p, other)
				}
			}
		}
	}
}

// fullAccess is the chain as the door's verifier asks it: key is a
// full-access key of every account.
type fullAccess struct{ key approval.PublicKey }

func (f fullAccess) CheckKey(_ context.Context, _ string, key approval.PublicKey) (approval.KeyStatus, error) {
	if key == f.key {
		return approval.KeyFullAccess, nil
	}
	return approval.KeyUnknown, nil
}

// checkedApproval is what the door reads from an approval body.
type checkedApproval struct {
	TaskHash string
	Summary  string
	Supplied []byte
	Note     []byte
	At       time.Time
}

// checkAsTheService reads an approval body as the service does and checks
// its signature over the sentence the service rebuilds from the task and the
// body: supply hash over the bytes the body carries, time from "at".
func checkAsTheService(t testing.TB, body []byte, account, taskID string, key approval.PublicKey) checkedApproval {
	t.Helper()
	var in struct {
		TaskHash string `json:"task_hash"`
		Summary  string `json:"summary"`
		Approval struct {
			At int64 `json:"at"`
			approval.Signed
		} `json:"approval"`
		Supplied []byte `json:"supplied"`
		Note     []byte `json:"note"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("approval body %s: %v", body, err)
	}
	at := time.Unix(in.Approval.At, 0).UTC()
	if err := approval.CheckConfirmation(testNow, at); err != nil {
		t.Errorf("approval time: %v", err)
	}
	sentence, err := approval.Approval{
		Account: account, Summary: in.Summary, TaskID: taskID, TaskHash: in.TaskHash,
		SupplyHash: countersign.SupplyHash(in.Note, in.Supplied), At: at,
	}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	// The signature itself, as the contract's vectors check it.
	pub, err := approval.ParsePublicKey(in.Approval.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := approval.ParseNonce(in.Approval.Nonce)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := approval.ParseSignature(in.Approval.Signature, pub.Type())
	if err != nil {
		t.Fatal(err)
	}
	payload := approval.Payload{Message: sentence, Nonce: nonce, Recipient: testRecipient, CallbackURL: in.Approval.CallbackURL}
	if err := payload.VerifySignature(pub, sig); err != nil {
		t.Errorf("the approval does not verify over %q: %v", sentence, err)
	}
	// And the door's whole check.
	if _, err := approval.Verify(context.Background(), fullAccess{key}, approval.Claim{
		Account: account, Sentence: sentence, Recipient: testRecipient, Signed: in.Approval.Signed,
	}); err != nil {
		t.Errorf("approval.Verify: %v", err)
	}
	return checkedApproval{TaskHash: in.TaskHash, Summary: in.Summary, Supplied: in.Supplied, Note: in.Note, At: at}
}

// TestApproveRequestNamesTheSummary: a task whose envelope names a
// summary is approved with the sentence naming it (SPEC §7), and the body
// carries that summary for the door; a task without one is approved with
// the sentence without one, and the body carries none.
func TestApproveRequestNamesTheSummary(t *testing.T) {
	t.Parallel()
	d, signer := newDevice(t)
	pub := signer.Signer.(WalletSigner).Wallet.Key.PublicKey()
	const summary = `send "Quarterly numbers" to 3 recipients with 2 attachments`
	task := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, nil, func(e *countersign.Envelope) {
		e.Display.Summary = summary
	})
	o, err := d.Open(task.view)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.ApproveRequest(o, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkAsTheService(t, body, d.Account, task.view.ID, pub); got.Summary != summary {
		t.Errorf("the body carries the summary %q", got.Summary)
	}
	want, err := approval.Approval{Account: d.Account, Summary: summary, TaskID: task.view.ID, TaskHash: task.view.TaskHash,
		SupplyHash: countersign.SupplyHash(nil, nil), At: testNow}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(want, "Approve in Countersign as "+d.Account+": "+summary+". Task "+task.view.ID+" with hash ") {
		t.Fatalf("the sentence reads %q", want)
	}
	nonce, _ := approval.ParseNonce(req.Approval.Nonce)
	sig, _ := approval.ParseSignature(req.Approval.Signature, approval.ED25519)
	if err := (approval.Payload{Message: want, Nonce: nonce, Recipient: testRecipient}).VerifySignature(pub, sig); err != nil {
		t.Errorf("not signed over %q: %v", want, err)
	}

	plain := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, nil, nil)
	o, err = d.Open(plain.view)
	if err != nil {
		t.Fatal(err)
	}
	req, err = d.ApproveRequest(o, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(req)
	if bytes.Contains(body, []byte(`"summary"`)) {
		t.Errorf("the body of a task without a summary names one: %s", body)
	}
	checkAsTheService(t, body, d.Account, plain.view.ID, pub)
}

func TestApproveRequestVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	d, signer := vectorDevice(t, v)
	o, err := d.Open(vectorView(t, v))
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.ApproveRequest(o, []byte("7"), "lucky number")
	if err != nil {
		t.Fatal(err)
	}
	if signer.n.Load() != 1 {
		t.Errorf("%d signatures, want 1", signer.n.Load())
	}
	if req.TaskHash != v.Envelope.TaskHash || req.Approval.At != testNow.Unix() {
		t.Errorf("task hash %s at %d", req.TaskHash, req.Approval.At)
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := checkAsTheService(t, body, "alice.near", v.Derivation.TaskID, signer.Signer.(WalletSigner).Wallet.Key.PublicKey())
	if !bytes.Equal(got.Supplied, req.Supplied) || !bytes.Equal(got.Note, req.Note) {
		t.Error("the wire did not carry the sealed bytes exactly")
	}
	reply := p256Key(t, v.Derivation.ReplyPrivateScalar)
	if a, err := sealing.OpenWith(reply, sealing.Answer, v.Derivation.TaskID, got.Supplied); err != nil || string(a) != "7" {
		t.Errorf("supplied opens to %q, %v", a, err)
	}
	if n, err := sealing.OpenWith(reply, sealing.Note, v.Derivation.TaskID, got.Note); err != nil || string(n) != "lucky number" {
		t.Errorf("note opens to %q, %v", n, err)
	}
}

func TestApproveRequestWithNothingSupplied(t *testing.T) {
	t.Parallel()
	d, signer := newDevice(t)
	task := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, nil, nil)
	o, err := d.Open(task.view)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.ApproveRequest(o, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if req.Supplied != nil || req.Note != nil {
		t.Errorf("supplied %x, note %x; want none", req.Supplied, req.Note)
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte(`"supplied"`)) || bytes.Contains(body, []byte(`"note"`)) {
		t.Errorf("body %s carries absent members", body)
	}
	checkAsTheService(t, body, d.Account, task.view.ID, signer.Signer.(WalletSigner).Wallet.Key.PublicKey())
	// The sentence names the contract's supply hash of nothing.
	sentence, err := approval.Approval{Account: d.Account, TaskID: task.view.ID, TaskHash: task.view.TaskHash,
		SupplyHash: loadVectors(t).SupplyHash[0].Hash, At: testNow}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	nonce, _ := approval.ParseNonce(req.Approval.Nonce)
	sig, _ := approval.ParseSignature(req.Approval.Signature, approval.ED25519)
	pub := signer.Signer.(WalletSigner).Wallet.Key.PublicKey()
	if err := (approval.Payload{Message: sentence, Nonce: nonce, Recipient: testRecipient}).VerifySignature(pub, sig); err != nil {
		t.Errorf("not signed over the supply hash of nothing: %v", err)
	}

	// With a note only.
	req, err = d.ApproveRequest(o, nil, "thanks")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(req)
	got := checkAsTheService(t, body, d.Account, task.view.ID, pub)
	if got.Supplied != nil || got.Note == nil {
		t.Errorf("supplied %x, note %x", got.Supplied, got.Note)
	}
	if n, err := sealing.OpenWith(task.reply, sealing.Note, task.view.ID, got.Note); err != nil || string(n) != "thanks" {
		t.Errorf("note %q, %v", n, err)
	}
}

func TestApproveFileAndEmptyAnswers(t *testing.T) {
	t.Parallel()
	d, signer := newDevice(t)
	pub := signer.Signer.(WalletSigner).Wallet.Key.PublicKey()
	for _, tt := range []struct {
		name     string
		supplies countersign.Supplies
		answer   []byte
	}{
		{"binary file", countersign.SuppliesFile, []byte{0, 0xff, 0xfe, '\n'}},
		{"empty file", countersign.SuppliesFile, []byte{}},
		{"empty text", countersign.SuppliesText, []byte{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			task := newTask(t, d, countersign.KindInput, tt.supplies, nil, nil)
			o, err := d.Open(task.view)
			if err != nil {
				t.Fatal(err)
			}
			req, err := d.ApproveRequest(o, tt.answer, "")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(req)
			got := checkAsTheService(t, body, d.Account, task.view.ID, pub)
			a, err := sealing.OpenWith(task.reply, sealing.Answer, task.view.ID, got.Supplied)
			if err != nil || !bytes.Equal(a, tt.answer) {
				t.Errorf("answer %x, %v; want %x", a, err, tt.answer)
			}
		})
	}
}

func TestApproveOverHTTP(t *testing.T) {
	t.Parallel()
	d, signer := newDevice(t)
	task := newTask(t, d, countersign.KindInput, countersign.SuppliesText, nil, nil)
	pub := signer.Signer.(WalletSigner).Wallet.Key.PublicKey()
	var answered atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/inbox/tasks/"+task.view.ID+"/approve" || r.Header.Get("Authorization") != "Bearer os_token" {
			t.Errorf("sent %s %s with %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		body, _ := io.ReadAll(r.Body)
		got := checkAsTheService(t, body, d.Account, task.view.ID, pub)
		if got.TaskHash != task.view.TaskHash {
			t.Errorf("task hash %s", got.TaskHash)
		}
		if a, err := sealing.OpenWith(task.reply, sealing.Answer, task.view.ID, got.Supplied); err != nil || string(a) != "42" {
			t.Errorf("answer %q, %v", a, err)
		}
		answered.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"`+task.view.ID+`","state":"approved","run":"run-2"}`)
	}))
	defer srv.Close()
	d.Client = &client.Client{BaseURL: srv.URL, Session: "os_token"}
	o, err := d.Open(task.view)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Approve(context.Background(), o, []byte("42"), "")
	if err != nil {
		t.Fatal(err)
	}
	if st != (client.TaskState{ID: task.view.ID, State: string(countersign.StateApproved), Run: "run-2"}) || answered.Load() != 1 {
		t.Errorf("answer %+v after %d requests", st, answered.Load())
	}
}

// newDevice is alice.near's device with a fresh device key and wallet key.
func newDevice(t testing.TB) (*Device, *countingSigner) {
	t.Helper()
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	wk, err := approval.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s := &countingSigner{Signer: WalletSigner{Wallet: &approval.Wallet{AccountID: "alice.near", Key: wk}}}
	return &Device{Account: "alice.near", Key: key, Signer: s, Recipient: testRecipient, Now: func() time.Time { return testNow }}, s
}

// testRecipient is the recipient test devices sign for.
const testRecipient = "inbox.example"

// TestRecipientDefaultsToTheServicesHost: a device given no recipient signs
// for its service's host, with the port unless it is the scheme's default
// (SPEC §7), and one with neither signs nothing.
func TestRecipientDefaultsToTheServicesHost(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"http://127.0.0.1:8080":       "127.0.0.1:8080",
		"https://Inbox.Example":       "inbox.example",
		"https://inbox.example:443":   "inbox.example",
		"https://inbox.example:8443/": "inbox.example:8443",
		"https://inbox.example/api":   "inbox.example",
	} {
		d, s := newDevice(t)
		d.Recipient = ""
		d.Client = &client.Client{BaseURL: base}
		var got string
		s.Signer = recipientSpy{&got}
		if _, err := d.Confirm(approval.ActionRemoveWebhook()); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("a device of %s signed for %q, want %q", base, got, want)
		}
	}
	d, s := newDevice(t)
	d.Recipient = ""
	if _, err := d.Confirm(approval.ActionRemoveWebhook()); err == nil || s.n.Load() != 0 {
		t.Errorf("a device with no recipient and no service signed: %v", err)
	}
}

// recipientSpy records the recipient it is asked to sign for.
type recipientSpy struct{ got *string }

func (r recipientSpy) Sign(_, recipient string) (client.Signed, error) {
	*r.got = recipient
	return client.Signed{}, nil
}

// testTask is a task as the enclave would open it for a device.
type testTask struct {
	env   countersign.Envelope
	view  client.TaskView
	reply *ecdh.PrivateKey
	key   *sealing.ContentKey
	files [][]byte // plaintexts
	blobs [][]byte // sealed files
}

// newTask opens a task of alice.near's for device d, with the given files;
// edit, if set, changes the envelope before it is sealed.
func newTask(t testing.TB, d *Device, kind countersign.Kind, supplies countersign.Supplies, files [][]byte, edit func(*countersign.Envelope)) *testTask {
	t.Helper()
	id, err := countersign.TaskID(countersign.NewRunID(), 1)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	policy, state := sha256.Sum256([]byte("{}")), sha256.Sum256([]byte("state"))
	env := countersign.Envelope{
		Build: "probe@1.0.0", CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour),
		Display: countersign.Display{Title: "Send the report", Fields: []countersign.Field{
			{Kind: countersign.FieldText, Label: "To", Values: []string{"bob@example.com"}, WrittenBy: countersign.WrittenByAgent},
		}},
		Files: []countersign.File{}, ID: id, Kind: kind, Owner: "alice.near", PolicyHash: hex.EncodeToString(policy[:]),
		Preparer: "bot.near", Project: "probe", ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
		StateHash: hex.EncodeToString(state[:]), Thread: id,
	}
	tt := &testTask{key: sealing.NewContentKey(), files: files}
	if kind.Asks() {
		if tt.reply, err = ecdh.P256().GenerateKey(rand.Reader); err != nil {
			t.Fatal(err)
		}
		env.AnswerBy = &countersign.AnswerBy{Operation: "confirm", Supplies: supplies}
		env.ReplyPubkey = sealing.FormatP256PublicKey(tt.reply.PublicKey())
	}
	for i, f := range files {
		sum := sha256.Sum256(f)
		env.Files = append(env.Files, countersign.File{ContentType: "text/plain", Name: "file-" + string(rune('a'+i)) + ".txt", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f))})
	}
	if edit != nil {
		edit(&env)
	}
	envelope, err := env.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	tt.env = env
	content := tt.seal(t, contentJSON(t, string(envelope), `{"operation":"send"}`))
	dc, err := sealing.WrapContentKey(d.Key.PublicKey(), id, tt.key)
	if err != nil {
		t.Fatal(err)
	}
	tt.view = client.TaskView{
		ID: id, Project: env.Project, ProjectUUID: env.ProjectUUID, Connector: "probe", Preparer: env.Preparer,
		Kind: string(kind), State: string(countersign.StateOpen), Thread: env.Thread,
		CreatedAt: env.CreatedAt.Format(countersign.TimeFormat), ExpiresAt: env.ExpiresAt.Format(countersign.TimeFormat),
		ReplyPubkey: env.ReplyPubkey, TaskHash: countersign.TaskHash(envelope), Content: content, DeviceCopy: dc,
		Files: []client.TaskFile{},
	}
	for i, f := range files {
		blob, err := tt.key.SealFile(id, i, f)
		if err != nil {
			t.Fatal(err)
		}
		tt.blobs = append(tt.blobs, blob)
		tt.view.Files = append(tt.view.Files, client.TaskFile{N: i, Size: int64(len(blob))})
	}
	return tt
}

func contentJSON(t testing.TB, envelope, request string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]string{"envelope": envelope, "request": request})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seal seals plain as the task's content.
func (tt *testTask) seal(t testing.TB, plain []byte) []byte {
	t.Helper()
	blob, err := tt.key.SealContent(tt.env.ID, plain)
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	other, _ := newDevice(t)
	canonical := func(t *testing.T, e countersign.Envelope) []byte {
		b, err := e.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		// change returns the view to open, from a fresh input task.
		change func(t *testing.T, tt *testTask) client.TaskView
		want   []error
	}{
		{"locked", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Locked, tt.view.DeviceCopy = true, nil
			return tt.view
		}, []error{ErrLocked}},
		{"locked even with a copy", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Locked = true
			return tt.view
		}, []error{ErrLocked}},
		{"no device copy", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.DeviceCopy = nil
			return tt.view
		}, []error{ErrLocked}},
		{"not waiting", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.State, tt.view.Content, tt.view.DeviceCopy = string(countersign.StateDone), nil, nil
			return tt.view
		}, []error{ErrNotWaiting}},
		{"an id that is not a task id", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.ID = "../x"
			return tt.view
		}, []error{ErrUnreadable}},
		{"content with a flipped byte", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content[len(tt.view.Content)/2] ^= 1
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"content cut short", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.view.Content[:len(tt.view.Content)-1]
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"device copy with a flipped byte", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.DeviceCopy[70] ^= 0x80
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"device copy for another task id", func(t *testing.T, tt *testTask) client.TaskView {
			c, err := sealing.WrapContentKey(d.Key.PublicKey(), tt.view.ID+"0", tt.key)
			if err != nil {
				t.Fatal(err)
			}
			tt.view.DeviceCopy = c
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"device copy for another device", func(t *testing.T, tt *testTask) client.TaskView {
			c, err := sealing.WrapContentKey(other.Key.PublicKey(), tt.view.ID, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			tt.view.DeviceCopy = c
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"content of another task under the same key", func(t *testing.T, tt *testTask) client.TaskView {
			blob, err := tt.key.SealContent(tt.view.ID+"0", contentJSON(t, string(canonical(t, tt.env)), "{}"))
			if err != nil {
				t.Fatal(err)
			}
			tt.view.Content = blob
			return tt.view
		}, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"a task_hash that differs", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.TaskHash = countersign.TaskHash([]byte("another envelope"))
			return tt.view
		}, []error{ErrHashMismatch}},
		{"a task_hash in upper case", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.TaskHash = strings.ToUpper(tt.view.TaskHash)
			return tt.view
		}, []error{ErrHashMismatch}},
		{"an envelope of another owner", func(t *testing.T, tt *testTask) client.TaskView {
			tt.env.Owner = "mallory.near"
			env := canonical(t, tt.env)
			tt.view.Content = tt.seal(t, contentJSON(t, string(env), "{}"))
			tt.view.TaskHash = countersign.TaskHash(env)
			return tt.view
		}, []error{ErrMismatch}},
		{"an envelope that is not canonical", func(t *testing.T, tt *testTask) client.TaskView {
			env := append(canonical(t, tt.env), '\n')
			tt.view.Content = tt.seal(t, contentJSON(t, string(env), "{}"))
			tt.view.TaskHash = countersign.TaskHash(env)
			return tt.view
		}, []error{ErrUnreadable}},
		{"an envelope that is not JSON", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.seal(t, contentJSON(t, "hello", "{}"))
			tt.view.TaskHash = countersign.TaskHash([]byte("hello"))
			return tt.view
		}, []error{ErrUnreadable}},
		{"content that is not JSON", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.seal(t, []byte("envelope"))
			return tt.view
		}, []error{ErrUnreadable}},
		{"content without the request", func(t *testing.T, tt *testTask) client.TaskView {
			b, _ := json.Marshal(map[string]string{"envelope": string(canonical(t, tt.env))})
			tt.view.Content = tt.seal(t, b)
			return tt.view
		}, []error{ErrUnreadable}},
		{"content with another member", func(t *testing.T, tt *testTask) client.TaskView {
			b, _ := json.Marshal(map[string]string{"envelope": string(canonical(t, tt.env)), "request": "{}", "extra": ""})
			tt.view.Content = tt.seal(t, b)
			return tt.view
		}, []error{ErrUnreadable}},
		{"content with the envelope twice", func(t *testing.T, tt *testTask) client.TaskView {
			e, _ := json.Marshal(string(canonical(t, tt.env)))
			tt.view.Content = tt.seal(t, []byte(`{"envelope":"x","request":"{}","envelope":`+string(e)+`}`))
			return tt.view
		}, []error{ErrUnreadable}},
		{"content with an envelope object", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.seal(t, []byte(`{"envelope":`+string(canonical(t, tt.env))+`,"request":"{}"}`))
			return tt.view
		}, []error{ErrUnreadable}},
		{"content with trailing data", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.seal(t, append(contentJSON(t, string(canonical(t, tt.env)), "{}"), []byte(" {}")...))
			return tt.view
		}, []error{ErrUnreadable}},
		{"content that is not UTF-8", func(t *testing.T, tt *testTask) client.TaskView {
			tt.view.Content = tt.seal(t, append(contentJSON(t, string(canonical(t, tt.env)), "{}"), 0xff))
			return tt.view
		}, []error{ErrUnreadable}},
	}
	for _, member := range []string{"id", "kind", "preparer", "project", "project_uuid", "thread", "reply_pubkey", "created_at", "expires_at"} {
		tests = append(tests, struct {
			name   string
			change func(t *testing.T, tt *testTask) client.TaskView
			want   []error
		}{"a listed " + member + " that differs", func(t *testing.T, tt *testTask) client.TaskView {
			v := &tt.view
			switch member {
			case "id":
				v.ID += "0" // the device copy does not open for another id
			case "kind":
				v.Kind = "confirm"
			case "preparer":
				v.Preparer = "other.near"
			case "project":
				v.Project = "probe2"
			case "project_uuid":
				v.ProjectUUID = "5f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60"
			case "thread":
				v.Thread = "abc-1"
			case "reply_pubkey":
				v.ReplyPubkey = other.Pubkey()
			case "created_at":
				v.CreatedAt = "2026-11-29T12:00:01Z"
			case "expires_at":
				v.ExpiresAt = "2026-11-30T13:00:00Z"
			}
			return *v
		}, map[bool][]error{true: {ErrUnreadable, sealing.ErrDecrypt}, false: {ErrMismatch}}[member == "id"]})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := newTask(t, d, countersign.KindInput, countersign.SuppliesText, nil, nil)
			o, err := d.Open(tt.change(t, task))
			if err == nil {
				t.Fatalf("opened %s", o.Envelope.ID)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q is not %q", err, w)
				}
			}
		})
	}

	t.Run("a device without a key", func(t *testing.T) {
		task := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, nil, nil)
		if _, err := (&Device{Account: "alice.near"}).Open(task.view); err == nil {
			t.Error("opened without a key")
		}
	})
	t.Run("a device of another account", func(t *testing.T) {
		task := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, nil, nil)
		bob := *d
		bob.Account = "bob.near"
		if _, err := bob.Open(task.view); !errors.Is(err, ErrMismatch) {
			t.Errorf("error %v", err)
		}
	})
}

func TestOpenKinds(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	for _, k := range []struct {
		kind     countersign.Kind
		supplies countersign.Supplies
	}{{countersign.KindConfirm, countersign.SuppliesNone}, {countersign.KindInput, countersign.SuppliesText}, {countersign.KindInput, countersign.SuppliesFile}, {countersign.KindNotice, ""}} {
		task := newTask(t, d, k.kind, k.supplies, nil, nil)
		o, err := d.Open(task.view)
		if err != nil {
			t.Fatalf("%s/%s: %v", k.kind, k.supplies, err)
		}
		if o.Envelope.Kind != k.kind || (o.reply != nil) != k.kind.Asks() || string(o.Request) != `{"operation":"send"}` {
			t.Errorf("%s: %+v", k.kind, o.Envelope)
		}
	}
}

func TestOpenFile(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	files := [][]byte{[]byte("%PDF-1.7 stand-in"), {}, bytes.Repeat([]byte{7}, 100_000)}
	task := newTask(t, d, countersign.KindConfirm, countersign.SuppliesNone, files, nil)
	o, err := d.Open(task.view)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range files {
		got, err := d.OpenFile(o, n, task.blobs[n])
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("file %d: %d bytes, %v", n, len(got), err)
		}
	}

	seal := func(n int, b []byte) []byte {
		blob, err := task.key.SealFile(task.view.ID, n, b)
		if err != nil {
			t.Fatal(err)
		}
		return blob
	}
	sameSize := bytes.Clone(files[0])
	sameSize[0] ^= 1
	flipped := bytes.Clone(task.blobs[0])
	flipped[len(flipped)-1] ^= 1
	refusals := []struct {
		name string
		n    int
		blob []byte
		want []error
	}{
		{"a negative number", -1, task.blobs[0], []error{ErrFileMismatch}},
		{"a number past the last file", 3, task.blobs[0], []error{ErrFileMismatch}},
		{"another file's blob", 0, seal(1, files[0]), []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"another task's blob", 0, func() []byte {
			b, _ := task.key.SealFile(task.view.ID+"0", 0, files[0])
			return b
		}(), []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"a flipped byte", 0, flipped, []error{ErrUnreadable, sealing.ErrDecrypt}},
		{"a blob cut short", 0, task.blobs[0][:len(task.blobs[0])-1], []error{ErrFileMismatch}},
		{"the wrong size", 0, seal(0, append(bytes.Clone(files[0]), 'x')), []error{ErrFileMismatch}},
		{"the wrong size for an empty file", 1, seal(1, []byte{0}), []error{ErrFileMismatch}},
		{"the right size and the wrong hash", 0, seal(0, sameSize), []error{ErrFileMismatch}},
		{"nothing", 1, nil, []error{ErrFileMismatch}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.OpenFile(o, tt.n, tt.blob)
			if err == nil {
				t.Fatalf("opened %d bytes", len(got))
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q is not %q", err, w)
				}
			}
		})
	}
	if _, err := d.OpenFile(nil, 0, task.blobs[0]); err == nil {
		t.Error("OpenFile without an opened task")
	}
}

// maxPlain is the largest plaintext whose sealed bytes fit the 8 KiB limit.
const maxPlain = countersign.MaxSuppliedBytes - sealedOverhead

func TestSealLimits(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	task := newTask(t, d, countersign.KindInput, countersign.SuppliesText, nil, nil)
	o, err := d.Open(task.view)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Repeat("a", maxPlain)
	for name, f := range map[string]func(string) ([]byte, error){
		"answer": func(s string) ([]byte, error) { return SealAnswer(o, []byte(s)) },
		"note":   func(s string) ([]byte, error) { return SealNote(o, s) },
		"reason": func(s string) ([]byte, error) { return SealRejection(o, s) },
	} {
		blob, err := f(at)
		if err != nil || len(blob) != countersign.MaxSuppliedBytes {
			t.Errorf("%s at the limit: %d sealed bytes, %v", name, len(blob), err)
		}
		for _, size := range []int{maxPlain + 1, countersign.MaxSuppliedBytes, 1 << 20} {
			if _, err := f(strings.Repeat("a", size)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s of %d bytes: %v", name, size, err)
			}
		}
	}
}

func TestSealAndApproveRefusals(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-plaintext-7731"
	d, signer := newDevice(t)
	open := func(kind countersign.Kind, supplies countersign.Supplies) *Opened {
		task := newTask(t, d, kind, supplies, nil, nil)
		o, err := d.Open(task.view)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	confirm := open(countersign.KindConfirm, countersign.SuppliesNone)
	text := open(countersign.KindInput, countersign.SuppliesText)
	file := open(countersign.KindInput, countersign.SuppliesFile)
	notice := open(countersign.KindNotice, "")
	big := []byte(canary + strings.Repeat("x", maxPlain))

	approve := func(o *Opened, supplied []byte, note string) func() error {
		return func() error { _, err := d.ApproveRequest(o, supplied, note); return err }
	}
	tests := []struct {
		name string
		call func() error
		want error // nil: any error
	}{
		{"an answer to a confirm task", func() error { _, err := SealAnswer(confirm, []byte(canary)); return err }, ErrSupply},
		{"an answer to a notice", func() error { _, err := SealAnswer(notice, []byte(canary)); return err }, ErrNotice},
		{"a text answer that is not UTF-8", func() error { _, err := SealAnswer(text, []byte(canary+"\xff")); return err }, ErrSupply},
		{"an oversized text answer", func() error { _, err := SealAnswer(text, big); return err }, ErrTooLarge},
		{"an oversized file answer", func() error { _, err := SealAnswer(file, big); return err }, ErrTooLarge},
		{"a note on a notice", func() error { _, err := SealNote(notice, canary); return err }, ErrNotice},
		{"a note that is not UTF-8", func() error { _, err := SealNote(confirm, canary+"\xff"); return err }, nil},
		{"an oversized note", func() error { _, err := SealNote(confirm, string(big)); return err }, ErrTooLarge},
		{"rejecting a notice", func() error { _, err := SealRejection(notice, canary); return err }, ErrNotice},
		{"a reason that is not UTF-8", func() error { _, err := SealRejection(text, canary+"\xff"); return err }, nil},
		{"an oversized reason", func() error { _, err := SealRejection(text, string(big)); return err }, ErrTooLarge},
		{"sealing for no task", func() error { _, err := SealAnswer(nil, []byte(canary)); return err }, nil},
		{"approving a notice", approve(notice, nil, ""), ErrNotice},
		{"supplying to a confirm task", approve(confirm, []byte(canary), ""), ErrSupply},
		{"supplying nothing to a text task", approve(text, nil, canary), ErrSupply},
		{"supplying nothing to a file task", approve(file, nil, ""), ErrSupply},
		{"supplying text that is not UTF-8", approve(text, []byte(canary+"\xff"), ""), ErrSupply},
		{"an oversized supply", approve(text, big, ""), ErrTooLarge},
		{"an oversized note", approve(confirm, nil, string(big)), ErrTooLarge},
		{"approving no task", approve(nil, nil, ""), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := signer.n.Load()
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %q is not %q", err, tt.want)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("the error quotes the plaintext: %q", err)
			}
			if signer.n.Load() != before {
				t.Error("something was signed")
			}
		})
	}

	t.Run("a wallet that refuses", func(t *testing.T) {
		dd := *d
		dd.Signer = failingSigner{}
		if _, err := dd.ApproveRequest(confirm, nil, ""); err == nil || !strings.Contains(err.Error(), "the wallet said no") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("no signer", func(t *testing.T) {
		dd := *d
		dd.Signer = nil
		if _, err := dd.ApproveRequest(confirm, nil, ""); err == nil {
			t.Error("no error")
		}
	})
	t.Run("no client", func(t *testing.T) {
		before := signer.n.Load()
		if _, err := d.Approve(context.Background(), confirm, nil, ""); err == nil {
			t.Error("no error")
		}
		if signer.n.Load() != before {
			t.Error("something was signed")
		}
	})
}

func TestReadContent(t *testing.T) {
	t.Parallel()
	good := []struct{ in, env, req string }{
		{`{"envelope":"e","request":"r"}`, "e", "r"},
		{`{"request":"r","envelope":"e"}`, "e", "r"},
		{` {"envelope":"\"q\"\n","request":""} `, "\"q\"\n", ""},
		{`{"envelope":"\u00e9\u2028","request":"{}"}`, "é\u2028", "{}"},
	}
	for _, g := range good {
		env, req, err := readContent([]byte(g.in))
		if err != nil || string(env) != g.env || string(req) != g.req {
			t.Errorf("%s: %q %q %v", g.in, env, req, err)
		}
	}
	for _, bad := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"envelope":"e"}`, `{"request":"r"}`,
		`{"envelope":"e","request":"r","x":"y"}`, `{"envelope":"e","request":"r","envelope":"e"}`,
		`{"envelope":"e","request":null}`, `{"envelope":1,"request":"r"}`, `{"envelope":{},"request":"r"}`,
		`{"envelope":"e","request":"r"}{}`, `{"envelope":"e","request":"r"`, `{"Envelope":"e","request":"r"}`,
		"{\"envelope\":\"e\xff\",\"request\":\"r\"}", `{"envelope":"\ud800","request":"r"`,
	} {
		if env, req, err := readContent([]byte(bad)); err == nil {
			t.Errorf("%q read as %q, %q", bad, env, req)
		}
	}
}

func FuzzReadContent(f *testing.F) {
	v := loadVectors(f)
	f.Add([]byte(v.Content.Plaintext))
	f.Add([]byte(`{"envelope":"e","request":"r"}`))
	f.Add([]byte(`{"envelope":"e","request":"r","envelope":"e"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		env, req, err := readContent(in)
		if err != nil {
			return
		}
		// Whatever it reads, encoding/json reads the same.
		var m map[string]string
		if err := json.Unmarshal(in, &m); err != nil {
			t.Fatalf("read %q, which encoding/json refuses: %v", in, err)
		}
		if len(m) != 2 || m["envelope"] != string(env) || m["request"] != string(req) {
			t.Fatalf("read %q as %q, %q; encoding/json reads %q", in, env, req, m)
		}
	})
}

// FuzzOpen opens the vectors' task with any content plaintext sealed under
// its key, the view's task hash set to the hash of whatever envelope
// encoding/json finds in it: Open must never panic, and whatever it accepts
// must be a task for alice.near that agrees with the view.
func FuzzOpen(f *testing.F) {
	v := loadVectors(f)
	d, _ := vectorDevice(f, v)
	base := vectorView(f, v)
	key, err := sealing.ContentKeyFromBytes(unhex(f, v.Content.ContentKey))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(v.Content.Plaintext))
	f.Add([]byte(`{"envelope":"{}","request":""}`))
	f.Fuzz(func(t *testing.T, plain []byte) {
		view := base
		blob, err := key.SealContent(view.ID, plain)
		if err != nil {
			t.Fatal(err)
		}
		view.Content = blob
		var c struct{ Envelope string }
		if json.Unmarshal(plain, &c) == nil {
			view.TaskHash = countersign.TaskHash([]byte(c.Envelope))
		}
		o, err := d.Open(view)
		if err != nil {
			if !errors.Is(err, ErrUnreadable) && !errors.Is(err, ErrHashMismatch) && !errors.Is(err, ErrMismatch) {
				t.Fatalf("unexpected refusal: %v", err)
			}
			return
		}
		if countersign.TaskHash(o.EnvelopeBytes) != view.TaskHash || o.Envelope.Owner != "alice.near" || o.Envelope.ID != view.ID {
			t.Fatalf("accepted %q", plain)
		}
	})
}

func BenchmarkOpen(b *testing.B) {
	v := loadVectors(b)
	d, _ := vectorDevice(b, v)
	view := vectorView(b, v)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Open(view); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApproveRequest(b *testing.B) {
	v := loadVectors(b)
	d, _ := vectorDevice(b, v)
	o, err := d.Open(vectorView(b, v))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.ApproveRequest(o, []byte("7"), "a note"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenFile(b *testing.B) {
	d, _ := newDevice(b)
	file := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	task := newTask(b, d, countersign.KindConfirm, countersign.SuppliesNone, [][]byte{file}, nil)
	o, err := d.Open(task.view)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.OpenFile(o, 0, task.blobs[0]); err != nil {
			b.Fatal(err)
		}
	}
}
