package probe

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzState reads any bytes as a turn's state: what reads holds the game's
// invariants and reads back the same after writing.
func FuzzState(f *testing.F) {
	good, _ := json.Marshal(state{Salt: make([]byte, SaltBytes), Secret: 3, Max: 10, Attempts: 2})
	f.Add(good)
	f.Add([]byte(`{"salt":"","secret":1,"max":2,"attempts":0}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseState(b)
		if err != nil {
			return
		}
		if len(st.Salt) != SaltBytes || st.Max < MinMax || st.Max > MaxMax || st.Secret < 1 || st.Secret > st.Max || st.Attempts < 0 {
			t.Fatalf("%q read as %+v", b, st)
		}
		again, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseState(again)
		if err != nil || !bytes.Equal(back.Salt, st.Salt) || back.Secret != st.Secret || back.Max != st.Max || back.Attempts != st.Attempts {
			t.Fatalf("%q does not read back: %v", again, err)
		}
	})
}

// FuzzJudge judges any text: a verdict is one of four, and a text the
// judge calls right is the secret.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{"7", "+007", "-0", "", "x", "99999999999999999999"} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, text string, secret int) {
		if secret < 1 || secret > MaxMax {
			return
		}
		j := judge(text, secret)
		switch j.verdict {
		case Higher, Lower, NotANumber:
		case Right:
			if n, ok := j.guess.(json.Number); !ok || n.String() != itoa(secret) {
				t.Fatalf("%q judged right for %d as %v", text, secret, j.guess)
			}
		default:
			t.Fatalf("verdict %q", j.verdict)
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
