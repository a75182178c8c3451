package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"countersign/client"
	"countersign/device"
	"countersign/origin"
	"countersign/sealing"
)

// TestShowChecksTheKeyedReceiptInput: the receipt the service signs for a
// task names as input_sha256 the HMAC-SHA256 of the raw request under
// HMAC-SHA256(content key, "receipt:v1") (SPEC §11, amended), recomputed
// here from the device side with the terminal's own device key, apart from
// the code under test; it is not the bare SHA-256 of the request, and the
// terminal inbox's show verifies it.
func TestShowChecksTheKeyedReceiptInput(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	o.login()
	first := startGame(t, agent, o.account, "probe")
	containsAll(t, "show", o.ok("show", first.TaskID), "receipt: verified (run "+runOf(t, first.TaskID)+")\n")
	request := strings.TrimSuffix(o.ok("show", "--request", first.TaskID), "\n")

	ctx := context.Background()
	key, err := device.LoadKey(filepath.Join(o.dir, deviceKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	c := &client.Client{BaseURL: s.base, Session: o.session().Token}
	view, err := c.Task(ctx, first.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := sealing.UnwrapContentKey(key, view.ID, view.DeviceCopy)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ck.OpenContent(view.ID, view.Content)
	if err != nil {
		t.Fatal(err)
	}
	var content struct{ Request string }
	if err := json.Unmarshal(plain, &content); err != nil || content.Request != request {
		t.Fatalf("the content's request %q, show --request %q (%v)", content.Request, request, err)
	}
	m := hmac.New(sha256.New, ck.Bytes())
	m.Write([]byte("receipt:v1"))
	in := hmac.New(sha256.New, m.Sum(nil))
	in.Write([]byte(content.Request))
	want := hex.EncodeToString(in.Sum(nil))

	org, err := c.Origin(ctx, first.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	var signed origin.Signed
	if err := json.Unmarshal(org.Receipt, &signed); err != nil {
		t.Fatal(err)
	}
	bare := sha256.Sum256([]byte(content.Request))
	switch got := signed.Receipt.InputSHA256; {
	case got == hex.EncodeToString(bare[:]):
		t.Fatal("the receipt names the bare SHA-256 of the request")
	case got != want:
		t.Fatalf("the receipt's input_sha256 is %s, the device recomputes %s", got, want)
	}
	if org.InputSHA256 == hex.EncodeToString(bare[:]) || org.OutputSHA256 == "" {
		t.Fatalf("the origin shows the run's hashes %q %q", org.InputSHA256, org.OutputSHA256)
	}
}
