package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := a.main(context.Background(), args)
	return result{code, out.String(), errb.String()}
}

func TestWalletSignVerify(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "w.json")
	r := runIn(t, "", "wallet", "new", "--out", file)
	if r.code != 0 || !strings.Contains(r.stdout, "account:") || !strings.Contains(r.stdout, "public key: ed25519:") {
		t.Fatalf("wallet new: %+v", r)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", info, err)
	}
	if r := runIn(t, "", "wallet", "new", "--out", file); r.code == 0 {
		t.Fatal("wallet new overwrote an existing key file")
	}
	sentence := "Confirm in Countersign as alice.near: remove the webhook. At 2026-11-29T12:00:00Z."
	if r := runIn(t, sentence+"\n", "wallet", "sign", "--wallet", file); r.code == 0 || !strings.Contains(r.stderr, "--recipient: say which deployment") {
		t.Fatalf("wallet sign without a recipient: %+v", r)
	}
	signed := runIn(t, sentence+"\n", "wallet", "sign", "--wallet", file, "--recipient", "inbox.example")
	if signed.code != 0 {
		t.Fatalf("wallet sign: %+v", signed)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(signed.stdout), &m); err != nil || m["message"] != sentence || m["recipient"] != "inbox.example" {
		t.Fatalf("signed JSON %s (%v)", signed.stdout, err)
	}
	if r := runIn(t, signed.stdout, "nep413", "verify"); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("nep413 verify of a good signature: %+v", r)
	}
	for name, edit := range map[string]func(map[string]any){
		"message":   func(m map[string]any) { m["message"] = sentence + " " },
		"recipient": func(m map[string]any) { m["recipient"] = "other" },
		"callback":  func(m map[string]any) { m["callbackUrl"] = "https://x.example" },
		"nonce":     func(m map[string]any) { m["nonce"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
	} {
		bad := map[string]any{}
		for k, v := range m {
			bad[k] = v
		}
		edit(bad)
		b, _ := json.Marshal(bad)
		if r := runIn(t, string(b), "nep413", "verify"); r.code != 1 || !strings.HasPrefix(r.stdout, "invalid: ") {
			t.Errorf("nep413 verify with another %s: %+v", name, r)
		}
	}
	if r := runIn(t, "not json", "nep413", "verify"); r.code != 1 || !strings.HasPrefix(r.stdout, "invalid: ") {
		t.Errorf("nep413 verify of garbage: %+v", r)
	}
}

// TestNEP413VerifyContractVectors checks the contract's signed sentences
// (signed by an independent implementation) through the command.
func TestNEP413VerifyContractVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../approval/testdata/sealing-and-signing.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		NEP413 struct {
			Signed []struct {
				Message, Nonce, PublicKey, Recipient, Signature string
				PublicKeyJSON                                   string `json:"public_key"`
			} `json:"signed"`
		} `json:"nep413"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || len(v.NEP413.Signed) != 4 {
		t.Fatalf("vectors: %v", err)
	}
	for _, s := range v.NEP413.Signed {
		in, _ := json.Marshal(map[string]string{"publicKey": s.PublicKeyJSON, "signature": s.Signature,
			"message": s.Message, "recipient": s.Recipient, "nonce": s.Nonce})
		if r := runIn(t, string(in), "nep413", "verify"); r.code != 0 || r.stdout != "ok\n" {
			t.Errorf("vector %q: %+v", s.Message[:20], r)
		}
	}
}
