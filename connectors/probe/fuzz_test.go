package probe_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"countersign"
	"countersign/argschema"
	"countersign/connectors/connectortest"
	"countersign/connectors/probe"
)

// FuzzStart calls guess_start with any value of max: it opens a game whose
// max is exactly that whole number (10.0 and 1e1 are 10, as JSON Schema
// reads integers), or refuses invalid_request.
func FuzzStart(f *testing.F) {
	for _, s := range []string{"10", "2", "1000", "0", "1", "1001", "2.5", `"10"`, "null", "-1", "1e3", "[]", "{}", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, max string) {
		h := connectortest.New(t, newProbe(t))
		body := `{"operation":"guess_start","max":` + max + `}`
		out, err := h.Call(ctx, body)
		if err != nil {
			code := countersign.ErrorCode(err)
			if code != countersign.InvalidRequest {
				t.Fatalf("%s: %v", body, err)
			}
			return
		}
		o, err := h.Awaiting(out)
		if err != nil {
			t.Fatal(err)
		}
		g := stateOf(t, o)
		var args struct {
			Max json.RawMessage `json:"max"`
		}
		if err := json.Unmarshal([]byte(body), &args); err != nil {
			t.Fatalf("%s opened a game: %v", body, err)
		}
		r, ok := new(big.Rat).SetString(string(args.Max))
		n := 0
		if ok && r.IsInt() && r.Num().IsInt64() {
			n = int(r.Num().Int64())
		}
		if !ok || !r.IsInt() || strings.HasPrefix(string(args.Max), "+") || n != g.Max ||
			n < probe.MinMax || n > probe.MaxMax || g.Secret < 1 || g.Secret > n {
			t.Fatalf("max %s opened a game of %+v", args.Max, g)
		}
	})
}

// FuzzGuess answers a game with any text: the run never fails, its result is
// one the platform accepts, and the game goes on in a turn the platform
// accepts, or ends with a notice. A text the guess's declared shape
// accepts (what the page and the terminal let through) is a number.
func FuzzGuess(f *testing.F) {
	for _, s := range []string{"5", " +007 ", "-0", "abc", "", "\u202e5", "\xff", "99999999999999999999", "1e3", strings.Repeat("x", 600),
		"42\n", "\t 7 \r\n", "0", "٤٢"} {
		f.Add([]byte(s))
	}
	shape, err := argschema.CompileTextShape("guess", json.RawMessage(probe.GuessShape))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		h := connectortest.New(t, newProbe(t))
		h.SupplyLimit = 1 << 20
		first := start(t, h, `{"operation":"guess_start","max":1000}`)
		out, opened, err := h.Answer(ctx, first, text, "")
		if err != nil {
			t.Fatalf("guess %q: %v", text, err)
		}
		r := resultOf(t, out)
		if r.Attempt != 1 || r.Max != 1000 || len(opened) != 1 || opened[0].Task.Thread != first.Task.ID {
			t.Fatalf("guess %q: %s", text, out)
		}
		switch r.Verdict {
		case probe.Right:
			if opened[0].Task.Kind != countersign.KindNotice {
				t.Fatalf("a win opened %s", opened[0].Task.Kind)
			}
		case probe.Higher, probe.Lower, probe.NotANumber:
			if opened[0].Task.Kind != countersign.KindInput {
				t.Fatalf("a miss opened %s", opened[0].Task.Kind)
			}
		default:
			t.Fatalf("verdict %q", r.Verdict)
		}
		if shape.Check(text) == nil && r.Verdict == probe.NotANumber {
			t.Fatalf("guess %q fits the guess's shape but is not a number", text)
		}
		var s string
		if json.Unmarshal(r.Guess, &s) == nil && utf8.RuneCountInString(s) > 64 {
			t.Fatalf("guess reported at %d characters", utf8.RuneCountInString(s))
		}
	})
}
