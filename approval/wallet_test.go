package approval_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"countersign/approval"
)

func TestWalletSaveLoad(t *testing.T) {
	t.Parallel()
	w, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	if w.AccountID != approval.ImplicitAccountID(w.Key.PublicKey()) || !approval.IsNearImplicit(w.AccountID) {
		t.Fatalf("new wallet's account %s is not its implicit account", w.AccountID)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "key.json")
	if err := w.Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", st.Mode().Perm())
	}
	// near-cli's format, exactly these members.
	var kf map[string]string
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &kf); err != nil {
		t.Fatal(err)
	}
	if len(kf) != 3 || kf["account_id"] != w.AccountID || kf["public_key"] != w.Key.PublicKey().String() ||
		!strings.HasPrefix(kf["private_key"], "ed25519:") || len(decodeBase58(t, kf["private_key"][8:])) != 64 {
		t.Fatalf("key file %v", kf)
	}
	back, err := approval.LoadWallet(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.AccountID != w.AccountID || back.Key.PublicKey() != w.Key.PublicKey() {
		t.Fatal("wallet does not round trip")
	}
	// Never over an existing file.
	if err := w.Save(path); err == nil {
		t.Fatal("Save overwrote a key file")
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Fatal("the refused Save changed the file")
	}
}

func TestLoadWalletRefusals(t *testing.T) {
	t.Parallel()
	w, _ := approval.NewWallet()
	secret := w.Key.SecretText()
	pub := w.Key.PublicKey().String()
	other, _ := approval.GenerateKey()
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goodBody := `{"account_id":"alice.near","public_key":"` + pub + `","private_key":"` + secret + `"}`
	// secret_key instead of private_key, and no public_key, are read.
	if _, err := approval.LoadWallet(write("secret_key.json", `{"account_id":"alice.near","secret_key":"`+secret+`"}`, 0o600)); err != nil {
		t.Fatalf("secret_key file: %v", err)
	}
	cases := map[string]string{}
	if runtime.GOOS != "windows" {
		cases["readable by others"] = write("0644.json", goodBody, 0o644)
		cases["readable by group"] = write("0640.json", goodBody, 0o640)
		cases["writable by group"] = write("0620.json", goodBody, 0o620)
	}
	cases["not JSON"] = write("garbage.json", "account_id=alice", 0o600)
	cases["no private key"] = write("nokey.json", `{"account_id":"alice.near","public_key":"`+pub+`"}`, 0o600)
	cases["public key mismatch"] = write("mismatch.json", `{"account_id":"alice.near","public_key":"`+other.PublicKey().String()+`","private_key":"`+secret+`"}`, 0o600)
	cases["bad public key"] = write("badpub.json", `{"account_id":"alice.near","public_key":"ed25519:xyz","private_key":"`+secret+`"}`, 0o600)
	cases["bad private key"] = write("badpriv.json", `{"account_id":"alice.near","private_key":"ed25519:abc"}`, 0o600)
	cases["bad account"] = write("badacct.json", `{"account_id":"Alice","private_key":"`+secret+`"}`, 0o600)
	cases["no account"] = write("noacct.json", `{"private_key":"`+secret+`"}`, 0o600)
	cases["too large"] = write("large.json", `{"account_id":"alice.near","private_key":"`+secret+`","x":"`+strings.Repeat("x", 70<<10)+`"}`, 0o600)
	cases["missing"] = filepath.Join(dir, "does-not-exist.json")
	cases["a directory"] = dir
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := approval.LoadWallet(path)
			if err == nil {
				t.Fatal("loaded")
			}
			if strings.Contains(err.Error(), strings.TrimPrefix(secret, "ed25519:")) {
				t.Fatal("the error shows the secret")
			}
		})
	}
}

func TestWalletSignJSON(t *testing.T) {
	t.Parallel()
	w, _ := approval.NewWallet()
	cb := "https://example.com/cb"
	m, err := w.Sign(approval.SignRequest{Message: "hello", Recipient: "countersign", CallbackURL: &cb})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accountId", "publicKey", "signature", "nonce", "message", "recipient", "callbackUrl"} {
		if got[k] == "" {
			t.Errorf("member %s missing in %s", k, b)
		}
	}
	if len(got) != 7 {
		t.Errorf("members: %v", got)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature is not std base64 of 64 bytes: %v", err)
	}
	if err := approval.VerifyWalletJSON(bytes.NewReader(b)); err != nil {
		t.Fatalf("own output does not verify: %v", err)
	}
	// Without a callback URL the member is absent.
	m2, _ := w.Sign(approval.SignRequest{Message: "hello", Recipient: "countersign"})
	b2, _ := json.Marshal(m2)
	if strings.Contains(string(b2), "callbackUrl") {
		t.Fatalf("callbackUrl present: %s", b2)
	}
	if m2.Nonce == m.Nonce {
		t.Fatal("two random nonces are equal")
	}
	// A secp256k1 wallet signs too.
	k := secpKey(t, 60)
	sw := &approval.Wallet{AccountID: approval.ImplicitAccountID(k.PublicKey()), Key: k}
	m3, err := sw.Sign(approval.SignRequest{Message: "hello", Recipient: "countersign"})
	if err != nil {
		t.Fatal(err)
	}
	if err := approval.VerifyWalletJSON(jsonReader(t, m3)); err != nil {
		t.Fatalf("secp256k1 output does not verify: %v", err)
	}
	// Refusals of Sign.
	if _, err := (&approval.Wallet{AccountID: "alice.near"}).Sign(approval.SignRequest{}); err == nil {
		t.Fatal("a wallet without a key signed")
	}
	if _, err := (&approval.Wallet{AccountID: "A", Key: k}).Sign(approval.SignRequest{}); err == nil {
		t.Fatal("a wallet with a bad account signed")
	}
	if err := (&approval.Wallet{AccountID: "A", Key: k}).Save(filepath.Join(t.TempDir(), "x.json")); err == nil {
		t.Fatal("a wallet with a bad account was saved")
	}
}

func TestVerifyWalletJSON(t *testing.T) {
	t.Parallel()
	w, _ := approval.NewWallet()
	m, err := w.Sign(approval.SignRequest{Message: "Sign in please", Recipient: "countersign"})
	if err != nil {
		t.Fatal(err)
	}
	base := func() map[string]any {
		return map[string]any{
			"accountId": m.AccountID, "publicKey": m.PublicKey, "signature": m.Signature,
			"message": m.Message, "recipient": m.Recipient, "nonce": m.Nonce,
		}
	}
	nonce, _ := approval.ParseNonce(m.Nonce)
	arr := make([]int, 32)
	for i, b := range nonce {
		arr[i] = int(b)
	}
	accepted := map[string]func(map[string]any){
		"as signed":           func(map[string]any) {},
		"no accountId":        func(d map[string]any) { delete(d, "accountId") },
		"named accountId":     func(d map[string]any) { d["accountId"] = "alice.near" },
		"state member":        func(d map[string]any) { d["state"] = "csrf-123" },
		"null callbackUrl":    func(d map[string]any) { d["callbackUrl"] = nil },
		"nonce as byte array": func(d map[string]any) { d["nonce"] = arr },
	}
	for name, mut := range accepted {
		d := base()
		mut(d)
		if err := approval.VerifyWalletJSON(jsonReader(t, d)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	otherKey, _ := approval.GenerateKey()
	refused := map[string]struct {
		mut func(map[string]any)
		why string
	}{
		"other implicit account": {func(d map[string]any) { d["accountId"] = approval.ImplicitAccountID(otherKey.PublicKey()) }, "accountId is not this key's implicit account"},
		"invalid accountId":      {func(d map[string]any) { d["accountId"] = "Alice" }, "account id"},
		"message changed":        {func(d map[string]any) { d["message"] = "Sign in pleasE" }, "the signature does not verify"},
		"other recipient":        {func(d map[string]any) { d["recipient"] = "other" }, "the signature does not verify"},
		"callback added":         {func(d map[string]any) { d["callbackUrl"] = "" }, "the signature does not verify"},
		"other key":              {func(d map[string]any) { d["publicKey"] = otherKey.PublicKey().String() }, "the signature does not verify"},
		"missing publicKey":      {func(d map[string]any) { delete(d, "publicKey") }, "publicKey is missing"},
		"missing signature":      {func(d map[string]any) { delete(d, "signature") }, "signature is missing"},
		"missing message":        {func(d map[string]any) { delete(d, "message") }, "message is missing"},
		"missing recipient":      {func(d map[string]any) { delete(d, "recipient") }, "recipient is missing"},
		"missing nonce":          {func(d map[string]any) { delete(d, "nonce") }, "nonce is missing"},
		"null nonce":             {func(d map[string]any) { d["nonce"] = nil }, "nonce is missing"},
		"short nonce array":      {func(d map[string]any) { d["nonce"] = arr[:31] }, "nonce"},
		"nonce array over 255":   {func(d map[string]any) { a := append([]int{}, arr...); a[0] = 256; d["nonce"] = a }, "nonce"},
		"nonce array negative":   {func(d map[string]any) { a := append([]int{}, arr...); a[0] = -1; d["nonce"] = a }, "nonce"},
		"nonce number":           {func(d map[string]any) { d["nonce"] = 7 }, "nonce"},
		"bad nonce":              {func(d map[string]any) { d["nonce"] = "AAAA" }, "nonce"},
		"bad public key":         {func(d map[string]any) { d["publicKey"] = "ed25519:abc" }, "public key"},
		"bad signature":          {func(d map[string]any) { d["signature"] = "abc" }, "signature"},
		"unknown member":         {func(d map[string]any) { d["extra"] = 1 }, "member other than"},
		"number message":         {func(d map[string]any) { d["message"] = 5 }, "JSON object of strings"},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			d := base()
			c.mut(d)
			err := approval.VerifyWalletJSON(jsonReader(t, d))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.why) {
				t.Fatalf("why %q does not say %q", err, c.why)
			}
			if strings.Contains(err.Error(), m.Signature) || strings.Contains(err.Error(), m.Nonce) {
				t.Fatal("the why repeats a signed piece")
			}
		})
	}
	good, _ := json.Marshal(base())
	for name, body := range map[string]string{
		"empty":           "",
		"not JSON":        "hello",
		"array":           "[]",
		"two objects":     string(good) + string(good),
		"trailing text":   string(good) + " x",
		"truncated":       string(good[:len(good)-5]),
		"too large":       `{"message":"` + strings.Repeat("a", approval.MaxWalletJSONBytes) + `"}`,
		"null":            "null",
		"string":          `"x"`,
		"duplicate trick": strings.Replace(string(good), `"message":`, `"message":"x","message":`, 1),
	} {
		err := approval.VerifyWalletJSON(strings.NewReader(body))
		if name == "duplicate trick" {
			// encoding/json keeps the last member: this is the genuine
			// message, so it verifies; it must not verify "x".
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Trailing whitespace is fine.
	if err := approval.VerifyWalletJSON(strings.NewReader(string(good) + "\n")); err != nil {
		t.Fatalf("trailing newline: %v", err)
	}
}

func TestLoadSecp256k1KeyFile(t *testing.T) {
	t.Parallel()
	k := secpKey(t, 80)
	w := &approval.Wallet{AccountID: approval.ImplicitAccountID(k.PublicKey()), Key: k}
	path := filepath.Join(t.TempDir(), "secp.json")
	if err := w.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := approval.LoadWallet(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Key.PublicKey() != k.PublicKey() || back.AccountID != w.AccountID {
		t.Fatal("secp256k1 wallet does not round trip")
	}
	m, err := back.Sign(approval.SignRequest{Message: "m", Recipient: "countersign"})
	if err != nil {
		t.Fatal(err)
	}
	if err := approval.VerifyWalletJSON(jsonReader(t, m)); err != nil {
		t.Fatal(err)
	}
}
