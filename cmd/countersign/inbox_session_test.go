package main

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/origin"
	"countersign/sealing"
)

func runKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func goodSession(t testing.TB) session {
	pub, _ := runKey(t)
	return session{Server: "http://127.0.0.1:8080", Account: "alice.near", Token: "os_" + strings.Repeat("a", 43),
		DeviceID: "0123456789abcdefghjkmnpqrs", ValidUntil: "2030-01-01T00:00:00Z", Recipient: "127.0.0.1:8080",
		Wallet: "/home/alice/wallet.json", RunKeys: map[string]string{"1": origin.FormatKey(pub)}}
}

func TestParseSession(t *testing.T) {
	t.Parallel()
	good := goodSession(t)
	s, err := parseSession(mustJSON(good))
	if err != nil || !reflect.DeepEqual(*s, good) {
		t.Fatalf("a good session: %+v %v", s, err)
	}
	external := good
	external.Wallet = ""
	if _, err := parseSession(mustJSON(external)); err != nil {
		t.Fatalf("a session signed by an external wallet: %v", err)
	}
	edit := func(f func(s *session)) []byte {
		s := good
		s.RunKeys = map[string]string{}
		for k, v := range good.RunKeys {
			s.RunKeys[k] = v
		}
		f(&s)
		return mustJSON(s)
	}
	cases := []struct {
		name string
		raw  []byte
		want string
	}{
		{"not JSON", []byte("{"), "not a session file"},
		{"two values", append(mustJSON(good), mustJSON(good)...), "more than one JSON value"},
		{"an unknown member", []byte(`{"server":"http://x","extra":1}`), "not a session file"},
		{"a server that is not http", edit(func(s *session) { s.Server = "file:///etc/passwd" }), "its server"},
		{"a server with a query", edit(func(s *session) { s.Server = "http://x/?a=b" }), "its server"},
		{"a server with credentials", edit(func(s *session) { s.Server = "http://u:p@x" }), "its server"},
		{"no account", edit(func(s *session) { s.Account = "" }), "its account"},
		{"a token without its prefix", edit(func(s *session) { s.Token = "ak_abc" }), "its token"},
		{"a token with a line break", edit(func(s *session) { s.Token = "os_a\nb" }), "its token"},
		{"no device", edit(func(s *session) { s.DeviceID = "" }), "names no device"},
		{"no recipient", edit(func(s *session) { s.Recipient = "" }), "names no recipient"},
		{"a relative wallet path", edit(func(s *session) { s.Wallet = "wallet.json" }), "not an absolute path"},
		{"no valid_until", edit(func(s *session) { s.ValidUntil = "tomorrow" }), "valid_until"},
		{"no run keys", edit(func(s *session) { s.RunKeys = nil }), "none are pinned"},
		{"a run key id that is not a number", edit(func(s *session) { s.RunKeys["x"] = s.RunKeys["1"] }), "key id is not a number"},
		{"a run key id with a leading zero", edit(func(s *session) { s.RunKeys["01"] = s.RunKeys["1"] }), "key id is not a number"},
		{"a run key that is not ed25519", edit(func(s *session) { s.RunKeys["1"] = "secp256k1:abc" }), "key 1 is not ed25519"},
	}
	for _, tc := range cases {
		if _, err := parseSession(tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSaveSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := goodSession(t)
	if err := saveSession(dir, &good); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, sessionFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v %v", info, err)
	}
	if _, err := loadSession(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("a temporary file was left: %v", entries)
	}
	ended := good
	ended.ValidUntil = "2020-01-01T00:00:00Z"
	if err := saveSession(dir, &ended); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSession(dir); err == nil || !strings.Contains(err.Error(), "ended at 2020-01-01T00:00:00Z: run `countersign inbox login` again") {
		t.Fatalf("an ended session: %v", err)
	}
}

func FuzzParseSession(f *testing.F) {
	f.Add(mustJSON(goodSession(f)))
	f.Add([]byte(`{"server":"https://x","run_keys":{"0":"ed25519:11111111111111111111111111111111"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := parseSession(raw)
		if err != nil {
			return
		}
		// What is accepted writes back to a session that is accepted.
		again, err := parseSession(mustJSON(s))
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%q: accepted, but not after writing it back: %v", raw, err)
		}
		if _, err := pinnedKeys(s.RunKeys); err != nil || !strings.HasPrefix(s.Token, "os_") || approval.ValidateAccountID(s.Account) != nil {
			t.Fatalf("%q: accepted a session with a bad member", raw)
		}
	})
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		pos  []string
		text string
		raw  bool
	}{
		{[]string{"ID"}, []string{"ID"}, "", false},
		{[]string{"ID", "--text", "5"}, []string{"ID"}, "5", false},
		{[]string{"--raw", "ID", "--text=-5"}, []string{"ID"}, "-5", true},
		{[]string{"--text", "-5", "ID"}, []string{"ID"}, "-5", false},
		{[]string{"a", "--raw", "b"}, []string{"a", "b"}, "", true},
		{[]string{"a", "--", "--raw", "b"}, []string{"a", "--raw", "b"}, "", false},
	}
	for _, tc := range cases {
		fset := flag.NewFlagSet("t", flag.ContinueOnError)
		fset.SetOutput(io.Discard)
		text := fset.String("text", "", "")
		raw := fset.Bool("raw", false, "")
		pos, err := parseArgs(fset, tc.args)
		if err != nil || !reflect.DeepEqual(pos, tc.pos) || *text != tc.text || *raw != tc.raw {
			t.Errorf("%q: %q text %q raw %v (%v)", tc.args, pos, *text, *raw, err)
		}
	}
	fset := flag.NewFlagSet("t", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	if _, err := parseArgs(fset, []string{"ID", "--nosuch"}); err == nil {
		t.Error("an unknown flag after an argument was accepted")
	}
}

func TestPreparingRun(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"0123456789abcdefghjkmnpqrs-1":  "0123456789abcdefghjkmnpqrs",
		"0123456789abcdefghjkmnpqrs-12": "0123456789abcdefghjkmnpqrs",
	} {
		if run, ok := preparingRun(id); !ok || run != want {
			t.Errorf("%s: %q %v", id, run, ok)
		}
	}
	for _, id := range []string{"", "-1", "abc-1", "0123456789abcdefghjkmnpqrs", "0123456789abcdefghjkmnpqrs-", "0123456789abcdefghjkmnpqrs-0",
		"0123456789abcdefghjkmnpqrs-01", "0123456789abcdefghjkmnpqrs-x", "0123456789abcdefghjkmnpqru-1", "0123456789abcdefghjkmnpqrs-1-1"} {
		if run, ok := preparingRun(id); ok {
			t.Errorf("%s names run %q", id, run)
		}
	}
}

func TestProjectText(t *testing.T) {
	t.Parallel()
	text, err := projectText("probe", []byte("{\n  \"confirm\": [\"guess_start\"]\n}\n"), nil, nil)
	if err != nil || text != `{"connector":"probe","policy":{"confirm":["guess_start"]},"agents":[]}` {
		t.Fatalf("%s %v", text, err)
	}
	text, err = projectText("gmail", []byte(`{"subject_prefix":"<bot>"}`), []byte(`{"token":"x&y"}`), []string{"a.near", "b.near"})
	if err != nil || text != `{"connector":"gmail","policy":{"subject_prefix":"<bot>"},"credentials":{"token":"x&y"},"agents":["a.near","b.near"]}` {
		t.Fatalf("%s %v", text, err)
	}
	// The action signed names the SHA-256 of exactly this text.
	sum := sha256.Sum256([]byte(text))
	if a := approval.ActionSetProject("mail", text); a.Hash != hex.EncodeToString(sum[:]) {
		t.Fatalf("the action hashes %s", a.Hash)
	}
	for _, bad := range []struct{ policy, creds string }{{"[]", ""}, {"{", ""}, {"", ""}, {"{}", "{"}} {
		var creds []byte
		if bad.creds != "" {
			creds = []byte(bad.creds)
		}
		if _, err := projectText("probe", []byte(bad.policy), creds, nil); err == nil {
			t.Errorf("policy %q, credentials %q accepted", bad.policy, bad.creds)
		}
	}
}

// receiptFixture is a task a device opened (its content sealed under a
// content key and wrapped to the device) and the receipt a run key signed
// for it, whose input is keyed under the task's receipt key.
func receiptFixture(t testing.TB) (*device.Opened, origin.Receipt, ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv := runKey(t)
	e := testEnvelope()
	reply, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	e.ReplyPubkey, e.Thread = sealing.FormatP256PublicKey(reply.PublicKey()), e.ID
	e.PolicyHash, e.StateHash = strings.Repeat("4", 64), strings.Repeat("5", 64)
	envelope, err := e.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	request := []byte(`{"operation":"pr_merge","number":12}`)
	ck := sealing.NewContentKey()
	plain, _ := json.Marshal(map[string]string{"envelope": string(envelope), "request": string(request)})
	content, err := ck.SealContent(e.ID, plain)
	if err != nil {
		t.Fatal(err)
	}
	key, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	dcopy, err := sealing.WrapContentKey(key.PublicKey(), e.ID, ck)
	if err != nil {
		t.Fatal(err)
	}
	d := &device.Device{Account: e.Owner, Key: key}
	o, err := d.Open(client.TaskView{ID: e.ID, Project: e.Project, ProjectUUID: e.ProjectUUID, Connector: "github",
		Preparer: e.Preparer, Kind: string(e.Kind), State: string(countersign.StateOpen), Thread: e.ID,
		CreatedAt: e.CreatedAt.Format(countersign.TimeFormat), ExpiresAt: e.ExpiresAt.Format(countersign.TimeFormat),
		ReplyPubkey: e.ReplyPubkey, TaskHash: countersign.TaskHash(envelope), Content: content, DeviceCopy: dcopy})
	if err != nil {
		t.Fatal(err)
	}
	// The receipt key as SPEC §11 spells it, apart from the code under test.
	m := hmac.New(sha256.New, ck.Bytes())
	m.Write([]byte("receipt:v1"))
	in := hmac.New(sha256.New, m.Sum(nil))
	in.Write(request)
	r := origin.Receipt{Agent: e.Preparer, At: "2026-11-29T12:00:00Z", Build: e.Build, Connector: "github",
		InputSHA256: hex.EncodeToString(in.Sum(nil)), Operation: "pr_merge", OutputSHA256: strings.Repeat("d", 64),
		Owner: e.Owner, Run: "0123456789abcdefghjkmnpqrs", TaskHash: o.TaskHash, TaskID: e.ID}
	return o, r, pub, priv
}

// TestVerifyReceipt: a receipt verifies only when a pinned key signed it for
// this very task, its preparing run and the request it shows.
func TestVerifyReceipt(t *testing.T) {
	t.Parallel()
	o, r, pub, priv := receiptFixture(t)
	otherPub, otherPriv := runKey(t)
	pinned := map[string]string{"3": origin.FormatKey(pub)}
	signed := func(key ed25519.PrivateKey, id uint32, r origin.Receipt) json.RawMessage {
		return mustJSON(origin.Sign(key, id, r))
	}
	if why := verifyReceipt(pinned, signed(priv, 3, r), o); why != "" {
		t.Fatalf("a good receipt: %s", why)
	}
	with := func(f func(r *origin.Receipt)) origin.Receipt {
		c := r
		f(&c)
		return c
	}
	tampered := mustJSON(origin.Signed{Receipt: with(func(r *origin.Receipt) { r.OutputSHA256 = "00" }), KeyID: 3, Signature: origin.Sign(priv, 3, r).Signature})
	otherTask := *o
	otherTask.Envelope.ID = "0123456789abcdefghjkmnpqrt-1"
	sum := sha256.Sum256(o.Request)
	bare := hex.EncodeToString(sum[:])
	cases := []struct {
		name    string
		pinned  map[string]string
		receipt json.RawMessage
		task    *device.Opened
		want    string
	}{
		{"no receipt yet", pinned, json.RawMessage("null"), o, "no receipt yet"},
		{"not a receipt", pinned, json.RawMessage(`{"x":1}`), o, "not a signed receipt"},
		{"a key not pinned", pinned, signed(priv, 4, r), o, "run key 4, which was not pinned at login"},
		{"another key under a pinned id", pinned, signed(otherPriv, 3, r), o, "signature does not verify"},
		{"a tampered receipt", pinned, tampered, o, "signature does not verify"},
		{"another pinned key", map[string]string{"3": origin.FormatKey(otherPub)}, signed(priv, 3, r), o, "signature does not verify"},
		{"another task", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.TaskID = "0123456789abcdefghjkmnpqrs-2" })), o, "another task"},
		{"another hash", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.TaskHash = strings.Repeat("e", 64) })), o, "another task or another hash"},
		{"another owner", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.Owner = "bob.near" })), o, "another owner"},
		{"another agent", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.Agent = "eve.near" })), o, "another owner or agent"},
		{"another build", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.Build = "github@9.9.9" })), o, "another build or run"},
		{"another run", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.Run = "0123456789abcdefghjkmnpqrt" })), o, "another build or run"},
		{"a task id naming another run", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.TaskID = otherTask.Envelope.ID })), &otherTask, "another build or run"},
		{"another request", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.InputSHA256 = strings.Repeat("0", 64) })), o, "not the request the task shows"},
		{"a bare SHA-256 of the request", pinned, signed(priv, 3, with(func(r *origin.Receipt) { r.InputSHA256 = bare })), o, "not the request the task shows"},
		{"nothing pinned", nil, signed(priv, 3, r), o, "no run keys were pinned"},
	}
	for _, tc := range cases {
		why := verifyReceipt(tc.pinned, tc.receipt, tc.task)
		if why == "" || !strings.Contains(why, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, why, tc.want)
		}
	}
	bad := *o
	bad.Envelope.ID = "not-a-run-1"
	if why := verifyReceipt(pinned, signed(priv, 3, r), &bad); !strings.Contains(why, "does not name the run") {
		t.Errorf("a task id naming no run: %q", why)
	}
}

func FuzzVerifyReceipt(f *testing.F) {
	o, r, pub, priv := receiptFixture(f)
	pinned := map[string]string{"1": origin.FormatKey(pub)}
	f.Add(mustJSON(origin.Sign(priv, 1, r)))
	f.Add([]byte(`{"receipt":{},"key_id":1,"signature":""}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if verifyReceipt(pinned, raw, o) != "" {
			return
		}
		// Verified: the receipt is the one the key signed for this task.
		var s origin.Signed
		if err := json.Unmarshal(raw, &s); err != nil || s.Receipt != r {
			t.Fatalf("%q verified as another receipt", raw)
		}
	})
}

func BenchmarkVerifyReceipt(b *testing.B) {
	o, r, pub, priv := receiptFixture(b)
	pinned := map[string]string{"1": origin.FormatKey(pub)}
	raw := mustJSON(origin.Sign(priv, 1, r))
	for b.Loop() {
		if why := verifyReceipt(pinned, raw, o); why != "" {
			b.Fatal(why)
		}
	}
}

// BenchmarkInboxShowHTTP measures `countersign inbox show` end to end
// against the service on PostgreSQL: the session read, the task fetched and
// opened with the device key, the receipt fetched and verified, the preview
// written.
func BenchmarkInboxShowHTTP(b *testing.B) {
	s := newService(b)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	w, err := approval.NewWallet()
	if err != nil {
		b.Fatal(err)
	}
	wallet := filepath.Join(b.TempDir(), "wallet.json")
	if err := w.Save(wallet); err != nil {
		b.Fatal(err)
	}
	s.project(w.AccountID, "probe", "{}", "bot.near")
	env := map[string]string{"COUNTERSIGN_SERVER": s.base, "COUNTERSIGN_INBOX_DIR": filepath.Join(b.TempDir(), "inbox")}
	if r := run(b, context.Background(), env, "inbox", "login", "--wallet", wallet); r.code != 0 {
		b.Fatalf("login: %+v", r)
	}
	raw, err := agent.Call(context.Background(), w.AccountID, "probe", "guess_start", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var task struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(raw, &task)
	start := time.Now()
	for b.Loop() {
		if r := run(b, context.Background(), env, "inbox", "show", task.TaskID); r.code != 0 || !strings.Contains(r.stdout, "receipt: verified") {
			b.Fatalf("show: %+v", r)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "shows/s")
}
