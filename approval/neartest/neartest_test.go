package neartest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"countersign/approval/neartest"
)

const (
	keyA = "ed25519:2RM3EotCzEiVobm6aMjaup43k8cFffR4KHFtrqbZ79Qy"
	keyB = "ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe"
)

type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  map[string]any  `json:"result"`
	Error   *struct {
		Name  string `json:"name"`
		Cause struct {
			Name string         `json:"name"`
			Info map[string]any `json:"info"`
		} `json:"cause"`
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"`
	} `json:"error"`
}

func call(t *testing.T, s *neartest.Server, body string) (int, envelope) {
	t.Helper()
	resp, err := http.Post(s.URL(), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("answer is not JSON: %s", b)
	}
	if e.JSONRPC != "2.0" {
		t.Fatalf("answer is not JSON-RPC 2.0: %s", b)
	}
	return resp.StatusCode, e
}

func query(params string) string {
	return `{"jsonrpc":"2.0","id":"dontcare","method":"query","params":` + params + `}`
}

func viewKey(account, key string) string {
	return query(`{"request_type":"view_access_key","finality":"final","account_id":"` + account + `","public_key":"` + key + `"}`)
}

func TestAccessKeyAnswers(t *testing.T) {
	t.Parallel()
	s := neartest.New()
	defer s.Close()
	s.AddKey("alice.near", keyA, neartest.FullAccess())
	s.AddKey("alice.near", keyB, neartest.FunctionCall("app.near", "vote", "add"))

	status, e := call(t, s, viewKey("alice.near", keyA))
	if status != 200 || e.Error != nil || string(e.ID) != `"dontcare"` {
		t.Fatalf("%d %+v", status, e)
	}
	if e.Result["permission"] != "FullAccess" {
		t.Fatalf("permission %v", e.Result["permission"])
	}
	for _, f := range []string{"nonce", "block_height", "block_hash"} {
		if _, ok := e.Result[f]; !ok {
			t.Fatalf("result lacks %s: %v", f, e.Result)
		}
	}
	_, e = call(t, s, viewKey("alice.near", keyB))
	fc, ok := e.Result["permission"].(map[string]any)["FunctionCall"].(map[string]any)
	if !ok || fc["receiver_id"] != "app.near" || len(fc["method_names"].([]any)) != 2 || fc["allowance"] != nil {
		t.Fatalf("function-call permission %v", e.Result["permission"])
	}

	// Missing key, legacy shape.
	s.RemoveKey("alice.near", keyB)
	status, e = call(t, s, viewKey("alice.near", keyB))
	if status != 200 || e.Error != nil || e.Result["error"] != "access key "+keyB+" does not exist while viewing" {
		t.Fatalf("legacy: %d %+v", status, e)
	}
	if _, ok := e.Result["logs"]; !ok {
		t.Fatal("legacy answer lacks logs")
	}
	// Structured shape.
	s.SetMissingShape(neartest.MissingStructured)
	status, e = call(t, s, viewKey("nobody.near", keyB))
	if status != 200 || e.Error == nil || e.Error.Name != "HANDLER_ERROR" || e.Error.Cause.Name != "UNKNOWN_ACCESS_KEY" ||
		e.Error.Cause.Info["public_key"] != keyB || e.Error.Code != -32000 {
		t.Fatalf("structured: %d %+v", status, e.Error)
	}
	// Structured, missing account.
	s.SetMissingShape(neartest.MissingAccountStructured)
	_, e = call(t, s, viewKey("nobody.near", keyB))
	if e.Error == nil || e.Error.Cause.Name != "UNKNOWN_ACCOUNT" || e.Error.Cause.Info["requested_account_id"] != "nobody.near" {
		t.Fatalf("unknown account: %+v", e.Error)
	}
	_, e = call(t, s, viewKey("alice.near", keyB))
	if e.Error == nil || e.Error.Cause.Name != "UNKNOWN_ACCESS_KEY" {
		t.Fatalf("existing account, missing key: %+v", e.Error)
	}
	// Account removal takes its keys.
	s.RemoveAccount("alice.near")
	_, e = call(t, s, viewKey("alice.near", keyA))
	if e.Error == nil || e.Error.Cause.Name != "UNKNOWN_ACCOUNT" {
		t.Fatalf("removed account: %+v", e.Error)
	}
}

func TestViewAccount(t *testing.T) {
	t.Parallel()
	s := neartest.New()
	defer s.Close()
	s.AddAccount("bob.near")
	status, e := call(t, s, query(`{"request_type":"view_account","finality":"final","account_id":"bob.near"}`))
	if status != 200 || e.Error != nil || e.Result["amount"] == nil || e.Result["block_height"] == nil {
		t.Fatalf("%d %+v", status, e)
	}
	_, e = call(t, s, query(`{"request_type":"view_account","finality":"final","account_id":"carol.near"}`))
	if e.Error == nil || e.Error.Cause.Name != "UNKNOWN_ACCOUNT" || e.Error.Data != "account carol.near does not exist while viewing" {
		t.Fatalf("%+v", e.Error)
	}
}

func TestRequestValidation(t *testing.T) {
	t.Parallel()
	s := neartest.New()
	defer s.Close()
	cases := map[string]struct {
		body  string
		cause string
	}{
		"other method":      {`{"jsonrpc":"2.0","id":1,"method":"block","params":{"finality":"final"}}`, "METHOD_NOT_FOUND"},
		"no finality":       {query(`{"request_type":"view_account","account_id":"bob.near"}`), "PARSE_ERROR"},
		"bad finality":      {query(`{"request_type":"view_account","finality":"soon","account_id":"bob.near"}`), "PARSE_ERROR"},
		"bad account":       {query(`{"request_type":"view_account","finality":"final","account_id":"Bob"}`), "PARSE_ERROR"},
		"bad key":           {viewKey("bob.near", "ed25519:xyz"), "PARSE_ERROR"},
		"unknown type":      {query(`{"request_type":"view_state","finality":"final","account_id":"bob.near"}`), "PARSE_ERROR"},
		"not JSON-RPC":      {`{"method":"query"}`, "PARSE_ERROR"},
		"finality and id":   {query(`{"request_type":"view_account","finality":"final","block_id":1,"account_id":"bob.near"}`), "PARSE_ERROR"},
		"secp256k1 too big": {viewKey("bob.near", "secp256k1:"+strings.Repeat("2", 200)), "PARSE_ERROR"},
	}
	for name, c := range cases {
		status, e := call(t, s, c.body)
		if status != http.StatusBadRequest || e.Error == nil || e.Error.Name != "REQUEST_VALIDATION_ERROR" || e.Error.Cause.Name != c.cause {
			t.Errorf("%s: %d %+v", name, status, e.Error)
		}
	}
	// A numeric id is echoed as given.
	_, e := call(t, s, `{"jsonrpc":"2.0","id":7,"method":"query","params":{"request_type":"view_account","block_id":1,"account_id":"bob.near"}}`)
	if string(e.ID) != "7" {
		t.Fatalf("id %s", e.ID)
	}
}

func TestModesAndLog(t *testing.T) {
	t.Parallel()
	s := neartest.New()
	defer s.Close()
	s.SetMode(neartest.Down500)
	status, e := call(t, s, viewKey("alice.near", keyA))
	if status != 500 || e.Error == nil || e.Error.Name != "INTERNAL_ERROR" {
		t.Fatalf("500: %d %+v", status, e)
	}

	s.SetMode(neartest.DownGarbage)
	resp, err := http.Post(s.URL(), "application/json", strings.NewReader(viewKey("alice.near", keyA)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || json.Valid(b) {
		t.Fatalf("garbage: %d %s", resp.StatusCode, b)
	}

	s.SetMode(neartest.DownClose)
	if _, err := http.Post(s.URL(), "application/json", strings.NewReader(viewKey("alice.near", keyA))); err == nil {
		t.Fatal("closed connection answered")
	}

	s.SetMode(neartest.DownHang)
	client := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	if _, err := client.Post(s.URL(), "application/json", strings.NewReader(viewKey("alice.near", keyA))); err == nil {
		t.Fatal("hanging endpoint answered")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the client did not give up")
	}

	if n := s.Requests(); n != 4 {
		t.Fatalf("%d requests counted, want 4", n)
	}
	log := s.Log()
	if log[0].RequestType != "view_access_key" || log[0].AccountID != "alice.near" || log[0].PublicKey != keyA || log[0].Finality != "final" {
		t.Fatalf("log %+v", log[0])
	}
	s.ResetLog()
	if s.Requests() != 0 {
		t.Fatal("ResetLog")
	}
}

func TestCloseReleasesHangingRequests(t *testing.T) {
	t.Parallel()
	s := neartest.New()
	s.SetMode(neartest.DownHang)
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL(), "application/json", bytes.NewReader([]byte(viewKey("alice.near", keyA))))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for s.Requests() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a hanging request")
	}
	<-done
	s.Close() // a second Close is harmless
}
