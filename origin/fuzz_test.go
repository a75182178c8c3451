package origin

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"
)

// FuzzVerify: whatever a service sends as a receipt, Verify never panics and
// accepts only a receipt the key signed for this task.
func FuzzVerify(f *testing.F) {
	seed := make([]byte, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	r := Receipt{Agent: "bot.near", At: "2026-11-29T12:00:00Z", Build: "probe@1.0.0", Connector: "probe", Run: "run1",
		Owner: "alice.near", TaskID: "run1-1", TaskHash: "hh", Operation: "guess_start"}
	good, _ := json.Marshal(Sign(priv, 1, r))
	f.Add(good)
	f.Add([]byte(`null`))
	f.Add([]byte(`{"receipt":{},"key_id":1,"signature":""}`))
	keys := Keys{1: priv.Public().(ed25519.PublicKey)}
	task := Task{ID: "run1-1", Hash: "hh", Owner: "alice.near", Preparer: "bot.near", Build: "probe@1.0.0", Run: "run1"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if keys.Verify(raw, task) != nil {
			return
		}
		var s Signed
		if err := json.Unmarshal(raw, &s); err != nil || s.Receipt != r {
			t.Fatalf("verified a receipt that is not the one signed: %s", raw)
		}
	})
}
