package origin

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
)

func TestSignVerify(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	r := Receipt{Agent: "bot.near", At: "2026-11-29T12:00:00Z", Build: "probe@1.0.0", Connector: "probe",
		InputSHA256: "aa", Operation: "guess_start", OutputSHA256: "bb", Owner: "alice.near", Run: "run1",
		TaskHash: "hh", TaskID: "run1-1"}
	task := Task{ID: "run1-1", Hash: "hh", Owner: "alice.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run1"}
	good, _ := json.Marshal(Sign(priv, 2, r))
	keys := Keys{2: pub}
	if err := keys.Verify(good, task); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(r.Bytes()), `{"agent":"bot.near","at":`) {
		t.Fatalf("receipt bytes not in sorted order: %s", r.Bytes())
	}
	tampered := r
	tampered.OutputSHA256 = "cc"
	forged, _ := json.Marshal(Signed{Receipt: tampered, KeyID: 2, Signature: Sign(priv, 2, r).Signature})
	byOther, _ := json.Marshal(Sign(otherPriv, 2, r))
	unknownID, _ := json.Marshal(Sign(priv, 3, r))
	cases := map[string]struct {
		raw  json.RawMessage
		task Task
	}{
		"no receipt":        {json.RawMessage("null"), task},
		"garbage":           {json.RawMessage(`{"x":1}`), task},
		"tampered receipt":  {forged, task},
		"another key":       {byOther, task},
		"unknown key id":    {unknownID, task},
		"another task":      {good, Task{ID: "run1-2", Hash: "hh", Owner: "alice.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run1"}},
		"another hash":      {good, Task{ID: "run1-1", Hash: "zz", Owner: "alice.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run1"}},
		"another owner":     {good, Task{ID: "run1-1", Hash: "hh", Owner: "bob.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run1"}},
		"another build":     {good, Task{ID: "run1-1", Hash: "hh", Owner: "alice.near", Preparer: "bot.near", Build: "probe@2.0.0", Run: "run1"}},
		"another preparing": {good, Task{ID: "run1-1", Hash: "hh", Owner: "alice.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run9"}},
	}
	// A device checks the keyed input hash of the request it decrypted.
	withInput := func(f func(string) bool) Task { c := task; c.Input = f; return c }
	cases["another request"] = struct {
		raw  json.RawMessage
		task Task
	}{good, withInput(func(h string) bool { return h == "a0" })}
	for name, c := range cases {
		if err := keys.Verify(c.raw, c.task); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	var asked string
	if err := keys.Verify(good, withInput(func(h string) bool { asked = h; return h == "aa" })); err != nil || asked != "aa" {
		t.Fatalf("the receipt's own input: %v (asked %q)", err, asked)
	}
	if k, err := ParseKey(FormatKey(pub)); err != nil || !k.Equal(pub) {
		t.Fatalf("key text round trip: %v", err)
	}
	for _, bad := range []string{"", "ed25519:", "secp256k1:abc", "ed25519:0OIl", "ed25519:" + strings.Repeat("1", 10)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}
