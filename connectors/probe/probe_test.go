package probe_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/probe"
)

var ctx = context.Background()

const maxSentence = "invalid_request: `max` is a whole number from 2 to 1000"

// game is a turn's sealed state, read independently of the package.
type game struct {
	Salt     []byte `json:"salt"`
	Secret   int    `json:"secret"`
	Max      int    `json:"max"`
	Attempts int    `json:"attempts"`
}

// turnResult is what guess reports.
type turnResult struct {
	Attempt int             `json:"attempt"`
	Guess   json.RawMessage `json:"guess"`
	Verdict string          `json:"verdict"`
	Max     int             `json:"max"`
	Detail  string          `json:"detail"`
}

func stateOf(t *testing.T, o connectortest.Opened) game {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(o.Spec.State))
	dec.DisallowUnknownFields()
	var g game
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("state %q: %v", o.Spec.State, err)
	}
	return g
}

func resultOf(t *testing.T, b []byte) turnResult {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r turnResult
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("result %s: %v", b, err)
	}
	return r
}

// start plays guess_start with body and returns the task it opened.
func start(t testing.TB, h *connectortest.Harness, body string) connectortest.Opened {
	t.Helper()
	out, err := h.Call(ctx, body)
	if err != nil {
		t.Fatalf("guess_start %s: %v", body, err)
	}
	o, err := h.Awaiting(out)
	if err != nil {
		t.Fatalf("guess_start answered %s: %v", out, err)
	}
	return o
}

// shown lists a task's fields as "label=value", in order, checking each is a
// text field written by the project.
func shown(t *testing.T, o connectortest.Opened) []string {
	t.Helper()
	var out []string
	for _, f := range o.Spec.Display.Fields {
		if f.Kind != countersign.FieldText || f.WrittenBy != countersign.WrittenByProject || len(f.Values) != 1 {
			t.Fatalf("field %+v", f)
		}
		out = append(out, f.Label+"="+f.Values[0])
	}
	return out
}

func TestConnector(t *testing.T) {
	t.Parallel()
	c := newProbe(t)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	name, version := "probe", "1.0.0"
	if os.Getenv(asModule) != "" {
		// The module's build names it and its hash.
		name, version = "probe-wasm", "1.0.0+"+module.m.SHA256[:12]
	}
	if c.Name != name || c.Version != version || c.Build() != name+"@"+version || !c.Tasks ||
		len(c.PolicyKeys) != 0 || len(c.Conditions) != 0 || len(c.Operations) != 2 {
		t.Fatalf("connector %+v", c)
	}
	start, _ := c.Operation("guess_start")
	guess, _ := c.Operation("guess")
	if start == nil || start.Kind != connectors.Write || start.Price != 10_000 ||
		guess == nil || guess.Kind != connectors.Answer || guess.Price != 0 {
		t.Fatalf("operations %+v", c.Operations)
	}
	if s := c.Schema(); len(s.Writes) != 1 || s.Writes[0] != "guess_start" || len(s.Reads) != 0 {
		t.Fatalf("schema %+v", s)
	}
	if _, err := connectors.NewCatalogue(c); err != nil {
		t.Fatal(err)
	}
}

// TestStartRefusals: guess_start's schema refuses every max it does not
// take, before the run starts: nothing is charged, nothing opened.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, members string
		want          string
	}{
		{"zero", `"max": 0`, maxSentence},
		{"one", `"max": 1`, maxSentence},
		{"1001", `"max": 1001`, maxSentence},
		{"a fraction", `"max": 2.5`, maxSentence},
		{"a string", `"max": "10"`, maxSentence},
		{"null", `"max": null`, maxSentence},
		{"negative", `"max": -5`, maxSentence},
		{"minus zero", `"max": -0`, maxSentence},
		{"huge", `"max": 100000000000000000000000000000`, maxSentence},
		{"beyond float", `"max": 1e400`, maxSentence},
		{"true", `"max": true`, maxSentence},
		{"a list", `"max": [10]`, maxSentence},
		{"an object", `"max": {"n": 10}`, maxSentence},
		{"an unknown member", `"min": 1`, "invalid_request: the call has an unknown member `min`"},
		{"max beside an unknown member", `"max": 10, "secret": 3`, "invalid_request: the call has an unknown member `secret`"},
		{"max in another case", `"MAX": 10`, "invalid_request: the call writes `max` in another case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := connectortest.New(t, newProbe(t))
			_, err := h.Call(ctx, `{"operation": "guess_start", `+tc.members+`}`)
			if got := connectortest.Text(err); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if len(h.Tasks()) != 0 {
				t.Fatal("a task was opened")
			}
			if h.Spent() != 0 {
				t.Fatalf("spent %d on a call its schema refuses", h.Spent())
			}
		})
	}
}

// TestStartTakesWholeNumbersAsJSONSchemaDoes: 10.0 and 1e2 are integers to
// JSON Schema, and guess_start takes them as 10 and 100.
func TestStartTakesWholeNumbersAsJSONSchemaDoes(t *testing.T) {
	t.Parallel()
	for members, want := range map[string]string{`"max": 10.0`: "1 to 10.", `"max": 1e2`: "1 to 100.", `"max": 2`: "1 to 2.", `"max": 1000`: "1 to 1000."} {
		h := connectortest.New(t, newProbe(t))
		out, err := h.Call(ctx, `{"operation": "guess_start", `+members+`}`)
		if err != nil {
			t.Fatalf("%s: %v", members, err)
		}
		task, err := h.Awaiting(out)
		if err != nil || !strings.Contains(task.Spec.Display.Fields[0].Values[0], want) {
			t.Fatalf("%s: %+v %v", members, task.Spec.Display, err)
		}
	}
}

func TestStartRefusedByAnUnreadablePolicy(t *testing.T) {
	t.Parallel()
	for _, pol := range []string{`{"confirm": ["guess"]}`, `{"confirm": ["Guess_start"]}`, `{"max_per_day": 3}`, `[]`} {
		h := connectortest.New(t, newProbe(t))
		h.Policy = []byte(pol)
		_, err := h.Call(ctx, `{"operation": "guess_start"}`)
		if countersign.ErrorCode(err) != countersign.PolicyUnreadable || len(h.Tasks()) != 0 || h.Spent() != 0 {
			t.Fatalf("policy %s: %v", pol, err)
		}
	}
}

func TestStartOpensTheFirstTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		members string
		max     int
	}{
		{"", 10},
		{`, "max": 2`, 2},
		{`, "max": 1000`, 1000},
		{`, "max" :  57 `, 57},
	} {
		for _, pol := range []string{`{}`, `{"confirm": ["guess_start"]}`} {
			h := connectortest.New(t, newProbe(t))
			h.Policy = []byte(pol)
			o := start(t, h, `{"operation": "guess_start"`+tc.members+`}`)
			want := []string{fmt.Sprintf("Question=I picked a number from 1 to %d. Your guess?", tc.max)}
			if o.Spec.Display.Title != "Guess my number" || !equal(shown(t, o), want) ||
				o.Spec.Display.Summary != fmt.Sprintf("give the agent your guess of a number from 1 to %d", tc.max) {
				t.Fatalf("display %+v", o.Spec.Display)
			}
			if o.Task.Kind != countersign.KindInput || *o.Spec.AnswerBy != (countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText}) ||
				len(o.Spec.Files) != 0 || o.Task.Thread != o.Task.ID {
				t.Fatalf("task %+v", o)
			}
			g := stateOf(t, o)
			if len(g.Salt) != probe.SaltBytes || g.Max != tc.max || g.Secret < 1 || g.Secret > tc.max || g.Attempts != 0 {
				t.Fatalf("state %+v", g)
			}
			if h.Spent() != probe.StartPrice {
				t.Fatalf("spent %d", h.Spent())
			}
		}
	}
}

func TestSaltsDifferAndHideTheSecret(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, newProbe(t))
	a := start(t, h, `{"operation": "guess_start", "max": 2}`)
	b := start(t, h, `{"operation": "guess_start", "max": 2}`)
	ga, gb := stateOf(t, a), stateOf(t, b)
	if bytes.Equal(ga.Salt, gb.Salt) {
		t.Fatal("two games have the same salt")
	}
	// The owner holds state_hash; without the salt, no candidate state
	// hashes to it.
	env, err := countersign.ParseEnvelope(a.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(a.Spec.State)
	if env.StateHash != hex.EncodeToString(sum[:]) {
		t.Fatal("state_hash is not the state's hash")
	}
	for n := 1; n <= 2; n++ {
		guessed := sha256.Sum256([]byte(fmt.Sprintf(`{"salt":null,"secret":%d,"max":2,"attempts":0}`, n)))
		if hex.EncodeToString(guessed[:]) == env.StateHash {
			t.Fatal("an unsalted candidate names the secret")
		}
	}
}

func TestSecretIsUniform(t *testing.T) {
	t.Parallel()
	maxN, starts := 5, 2000
	if os.Getenv(asModule) != "" {
		starts = 300 // a fresh instance per call: fewer, still far beyond chance
	}
	h := connectortest.New(t, newProbe(t))
	counts := make([]int, maxN+1)
	for range starts {
		g := stateOf(t, start(t, h, `{"operation": "guess_start", "max": 5}`))
		if g.Secret < 1 || g.Secret > maxN {
			t.Fatalf("secret %d out of 1..%d", g.Secret, maxN)
		}
		counts[g.Secret]++
	}
	expected := float64(starts) / float64(maxN)
	chi2 := 0.0
	for n := 1; n <= maxN; n++ {
		if counts[n] == 0 {
			t.Fatalf("%d never drawn: %v", n, counts[1:])
		}
		d := float64(counts[n]) - expected
		chi2 += d * d / expected
	}
	// For 4 degrees of freedom, P(χ² > 47.88) = 1e-9.
	if chi2 > 47.88 {
		t.Fatalf("χ² = %.1f for counts %v", chi2, counts[1:])
	}

	// Both ends of the smallest game.
	seen := map[int]bool{}
	for range 200 {
		seen[stateOf(t, start(t, h, `{"operation": "guess_start", "max": 2}`)).Secret] = true
	}
	if !seen[1] || !seen[2] || len(seen) != 2 {
		t.Fatalf("max 2 drew %v", seen)
	}
}

func TestWholeGameByBinarySearch(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, newProbe(t))
	first := start(t, h, `{"operation": "guess_start", "max": 1000}`)
	g0 := stateOf(t, first)
	secret := g0.Secret
	question := "Question=I picked a number from 1 to 1000. Your guess?"

	turn, lo, hi := first, 1, 1000
	for attempt := 1; ; attempt++ {
		if attempt > 10 {
			t.Fatal("binary search over 1000 numbers took more than 10 attempts")
		}
		mid := (lo + hi) / 2
		out, opened, err := h.Answer(ctx, turn, []byte(strconv.Itoa(mid)), "")
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		r := resultOf(t, out)
		if r.Attempt != attempt || string(r.Guess) != strconv.Itoa(mid) || r.Max != 1000 {
			t.Fatalf("attempt %d: result %s", attempt, out)
		}
		if s, _ := h.Status(turn.Task.ID); s.State != countersign.StateDone || !bytes.Equal(s.Result, out) {
			t.Fatalf("the answered turn is %+v", s)
		}
		if len(opened) != 1 || opened[0].Task.Thread != first.Task.ID {
			t.Fatalf("attempt %d opened %+v", attempt, opened)
		}
		next := opened[0]

		if mid == secret {
			if r.Verdict != probe.Right || r.Detail != fmt.Sprintf("%d is right, in %s.", secret, plural(attempt)) {
				t.Fatalf("win: %s", out)
			}
			wantTitle := fmt.Sprintf("You guessed it: %d, in %s", secret, plural(attempt))
			if next.Task.Kind != countersign.KindNotice || next.Spec.AnswerBy != nil || next.Spec.Display.Title != wantTitle ||
				!equal(shown(t, next), []string{"Number=" + strconv.Itoa(secret), "Attempts=" + strconv.Itoa(attempt)}) {
				t.Fatalf("notice %+v", next.Spec)
			}
			if _, _, err := h.Answer(ctx, next, nil, ""); countersign.ErrorCode(err) != countersign.InvalidRequest {
				t.Fatalf("answering the notice: %v", err)
			}
			return
		}

		verdict, answer := probe.Higher, "Higher"
		if mid > secret {
			verdict, answer = probe.Lower, "Lower"
		}
		if r.Verdict != verdict || r.Detail != fmt.Sprintf("The number is %s than %d.", verdict, mid) {
			t.Fatalf("attempt %d: %s for secret %d", attempt, out, secret)
		}
		if next.Task.Kind != countersign.KindInput || next.Spec.Display.Title != "Guess my number" ||
			next.Spec.Display.Summary != fmt.Sprintf("give the agent your next guess (attempt %d) of a number from 1 to 1000", attempt+1) ||
			*next.Spec.AnswerBy != (countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText}) {
			t.Fatalf("next turn %+v", next.Spec)
		}
		want := []string{"Your guess=" + strconv.Itoa(mid), "Answer=" + answer, "Attempts=" + strconv.Itoa(attempt), question}
		if got := shown(t, next); !equal(got, want) {
			t.Fatalf("next turn shows %q, want %q", got, want)
		}
		g := stateOf(t, next)
		if !bytes.Equal(g.Salt, g0.Salt) || g.Secret != secret || g.Max != 1000 || g.Attempts != attempt {
			t.Fatalf("next state %+v", g)
		}
		if verdict == probe.Higher {
			lo = mid + 1
		} else {
			hi = mid - 1
		}
		turn = next
	}
}

func TestNotANumberIsAnAttempt(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, newProbe(t))
	first := start(t, h, `{"operation": "guess_start", "max": 3}`)
	secret := stateOf(t, first).Secret

	out, opened, err := h.Answer(ctx, first, []byte("  three  "), "a note")
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, out)
	if r.Attempt != 1 || string(r.Guess) != `"three"` || r.Verdict != probe.NotANumber || r.Max != 3 ||
		r.Detail != "That is not a whole number." {
		t.Fatalf("result %s", out)
	}
	want := []string{"Your guess=three", "Answer=Not a number", "Attempts=1", "Question=I picked a number from 1 to 3. Your guess?"}
	if len(opened) != 1 || !equal(shown(t, opened[0]), want) || stateOf(t, opened[0]).Attempts != 1 {
		t.Fatalf("next turn %+v", opened)
	}

	out, opened, err = h.Answer(ctx, opened[0], []byte(strconv.Itoa(secret)), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := resultOf(t, out); r.Verdict != probe.Right || r.Attempt != 2 {
		t.Fatalf("result %s", out)
	}
	if len(opened) != 1 || opened[0].Spec.Display.Title != fmt.Sprintf("You guessed it: %d, in 2 attempts", secret) ||
		opened[0].Task.Thread != first.Task.ID {
		t.Fatalf("notice %+v", opened)
	}
}

func TestRightFirstTime(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, newProbe(t))
	first := start(t, h, `{"operation": "guess_start"}`)
	secret := stateOf(t, first).Secret
	out, opened, err := h.Answer(ctx, first, []byte("\n+0"+strconv.Itoa(secret)+" "), "")
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, out)
	if r.Verdict != probe.Right || r.Attempt != 1 || string(r.Guess) != strconv.Itoa(secret) ||
		r.Detail != fmt.Sprintf("%d is right, in 1 attempt.", secret) {
		t.Fatalf("result %s", out)
	}
	if opened[0].Spec.Display.Title != fmt.Sprintf("You guessed it: %d, in 1 attempt", secret) ||
		!equal(shown(t, opened[0]), []string{"Number=" + strconv.Itoa(secret), "Attempts=1"}) {
		t.Fatalf("notice %+v", opened[0].Spec.Display)
	}
}

func TestGuessReading(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text    string
		verdict string
		guess   string // the result's guess, as JSON
		detail  string
		shown   string // the next turn's "Your guess"
	}{
		{"0", probe.Higher, `0`, "The number is higher than 0.", "0"},
		{"-0", probe.Higher, `0`, "The number is higher than 0.", "-0"},
		{"+000", probe.Higher, `0`, "The number is higher than 0.", "+000"},
		{"-5", probe.Higher, `-5`, "The number is higher than -5.", "-5"},
		{"1001", probe.Lower, `1001`, "The number is lower than 1001.", "1001"},
		{"\t+1001\n", probe.Lower, `1001`, "The number is lower than 1001.", "+1001"},
		{"\u00a01001\u3000", probe.Lower, `1001`, "The number is lower than 1001.", "1001"},
		{"999999999999999", probe.Lower, `999999999999999`, "The number is lower than 999999999999999.", "999999999999999"},
		{"0001000000000000000", probe.Lower, `"0001000000000000000"`, "The number is lower than your guess.", "0001000000000000000"},
		{"99999999999999999999999", probe.Lower, `"99999999999999999999999"`, "The number is lower than your guess.", "99999999999999999999999"},
		{"-99999999999999999999999", probe.Higher, `"-99999999999999999999999"`, "The number is higher than your guess.", "-99999999999999999999999"},
		{"1 000", probe.NotANumber, `"1 000"`, "That is not a whole number.", "1 000"},
		{"1.0", probe.NotANumber, `"1.0"`, "That is not a whole number.", "1.0"},
		{"1e3", probe.NotANumber, `"1e3"`, "That is not a whole number.", "1e3"},
		{"0x10", probe.NotANumber, `"0x10"`, "That is not a whole number.", "0x10"},
		{"1_000", probe.NotANumber, `"1_000"`, "That is not a whole number.", "1_000"},
		{"١٢", probe.NotANumber, `"١٢"`, "That is not a whole number.", "١٢"},
		{"½", probe.NotANumber, `"½"`, "That is not a whole number.", "½"},
		{"+", probe.NotANumber, `"+"`, "That is not a whole number.", "+"},
		{"-", probe.NotANumber, `"-"`, "That is not a whole number.", "-"},
		{"--1", probe.NotANumber, `"--1"`, "That is not a whole number.", "--1"},
		{"+-1", probe.NotANumber, `"+-1"`, "That is not a whole number.", "+-1"},
		{"", probe.NotANumber, `""`, "That is not a whole number.", "(empty)"},
		{" \n\t ", probe.NotANumber, `""`, "That is not a whole number.", "(empty)"},
		{"<b>7</b>", probe.NotANumber, `"<b>7</b>"`, "That is not a whole number.", "<b>7</b>"},
		{"5\u202e", probe.NotANumber, `"5\u202e"`, "That is not a whole number.", "(not shown)"},
		{"\xff5", probe.NotANumber, `"\ufffd5"`, "That is not a whole number.", "(not shown)"},
		{"a\x00b", probe.NotANumber, `"a\u0000b"`, "That is not a whole number.", "(not shown)"},
		{strings.Repeat("x", 500), probe.NotANumber, `"` + strings.Repeat("x", 64) + `"`, "That is not a whole number.", strings.Repeat("x", 500)},
		{strings.Repeat("x", 501), probe.NotANumber, `"` + strings.Repeat("x", 64) + `"`, "That is not a whole number.", "(not shown)"},
		{strings.Repeat("é", 70), probe.NotANumber, `"` + strings.Repeat("é", 64) + `"`, "That is not a whole number.", strings.Repeat("é", 70)},
	} {
		t.Run(tc.text, func(t *testing.T) {
			h := connectortest.New(t, newProbe(t))
			first := start(t, h, `{"operation": "guess_start", "max": 1000}`)
			out, opened, err := h.Answer(ctx, first, []byte(tc.text), "")
			if err != nil {
				t.Fatal(err)
			}
			r := resultOf(t, out)
			var want, got any
			_ = json.Unmarshal([]byte(tc.guess), &want)
			_ = json.Unmarshal(r.Guess, &got)
			if r.Verdict != tc.verdict || got != want || r.Detail != tc.detail || r.Attempt != 1 {
				t.Fatalf("result %s; want %s, guess %s, %q", out, tc.verdict, tc.guess, tc.detail)
			}
			if len(opened) != 1 || opened[0].Spec.Display.Fields[0].Values[0] != tc.shown {
				t.Fatalf("next turn %+v", opened)
			}
		})
	}
}

func TestHostileGuess(t *testing.T) {
	t.Parallel()
	bidi := strings.Repeat("\u202e\u2066", 10) + "42"
	long := strings.Repeat("\u202eA\u200d\u2067\x1b[2J", 1250) // 10,000 characters
	if n := utf8.RuneCountInString(long); n != 10_000 {
		t.Fatalf("%d characters", n)
	}

	h := connectortest.New(t, newProbe(t))
	first := start(t, h, `{"operation": "guess_start", "max": 1000}`)
	// The inbox bounds a supply at 8 KiB sealed: the long text never reaches
	// the run, and the turn stays open.
	if _, _, err := h.Answer(ctx, first, []byte(long), ""); countersign.ErrorCode(err) != countersign.InvalidRequest {
		t.Fatalf("got %v", err)
	}
	out, opened, err := h.Answer(ctx, first, []byte(bidi), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := resultOf(t, out); r.Verdict != probe.NotANumber || r.Attempt != 1 {
		t.Fatalf("result %s", out)
	}
	if len(opened) != 1 || opened[0].Spec.Display.Fields[0].Values[0] != "(not shown)" {
		t.Fatalf("next turn %+v", opened)
	}

	// Beyond what the inbox lets through, the game holds too.
	h.SupplyLimit = 64 << 10
	out, opened, err = h.Answer(ctx, opened[0], []byte(long), long)
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, out)
	var g string
	if err := json.Unmarshal(r.Guess, &g); err != nil || utf8.RuneCountInString(g) != 64 || !strings.HasPrefix(long, g) {
		t.Fatalf("guess %s", r.Guess)
	}
	if r.Verdict != probe.NotANumber || r.Attempt != 2 || len(out) > countersign.MaxResultBytes {
		t.Fatalf("result %s", out)
	}
	next := opened[0]
	if err := countersign.ValidateDisplay(next.Spec.Display); err != nil || next.Spec.Display.Fields[0].Values[0] != "(not shown)" {
		t.Fatalf("next turn %+v: %v", next.Spec.Display, err)
	}
	if _, err := countersign.ParseEnvelope(next.Envelope); err != nil {
		t.Fatal(err)
	}
	if stateOf(t, next).Attempts != 2 {
		t.Fatal("attempts not counted")
	}
}

func TestGuessRefusesAStateThatDoesNotRead(t *testing.T) {
	t.Parallel()
	good := game{Salt: make([]byte, 32), Secret: 3, Max: 10, Attempts: 2}
	mutate := func(f func(g *game)) []byte {
		g := good
		f(&g)
		b, _ := json.Marshal(g)
		return b
	}
	guess, _ := newProbe(t).Operation("guess")
	for _, tc := range []struct {
		name  string
		state []byte
	}{
		{"empty", nil},
		{"not JSON", []byte("{")},
		{"a list", []byte("[]")},
		{"null", []byte("null")},
		{"no salt", []byte(`{"secret":3,"max":10,"attempts":0}`)},
		{"no secret", []byte(`{"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","max":10,"attempts":0}`)},
		{"no attempts", []byte(`{"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","secret":3,"max":10}`)},
		{"short salt", mutate(func(g *game) { g.Salt = g.Salt[:31] })},
		{"secret 0", mutate(func(g *game) { g.Secret = 0 })},
		{"secret over max", mutate(func(g *game) { g.Secret = 11 })},
		{"max 1", mutate(func(g *game) { g.Max, g.Secret = 1, 1 })},
		{"max 1001", mutate(func(g *game) { g.Max = 1001 })},
		{"negative attempts", mutate(func(g *game) { g.Attempts = -1 })},
		{"unknown member", []byte(`{"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","secret":3,"max":10,"attempts":0,"v":1}`)},
		{"trailing data", append(mutate(func(*game) {}), []byte(" {}")...)},
		{"a string secret", []byte(`{"salt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","secret":"3","max":10,"attempts":0}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := guess.Answer(ctx, &connectors.AnswerCall{Operation: "guess", State: tc.state, Supplied: []byte("3")})
			var r *connectors.Refusal
			if !errors.As(err, &r) || r.Code != countersign.InvalidRequest || r.Wrote {
				t.Fatalf("got %v", err)
			}
		})
	}
	// The good state reads: the refusals above are the state's.
	_, err := guess.Answer(ctx, &connectors.AnswerCall{Operation: "guess", State: mutate(func(*game) {})})
	var r *connectors.Refusal
	if !errors.As(err, &r) || r.Error() != "invalid_request: A guess is text, and none was supplied. Nothing was written." {
		t.Fatalf("no supply: %v", err)
	}
}

func TestGuessWhenTheThreadCannotGoOn(t *testing.T) {
	t.Parallel()
	for _, right := range []bool{false, true} {
		h := connectortest.New(t, newProbe(t))
		first := start(t, h, `{"operation": "guess_start"}`)
		secret := stateOf(t, first).Secret
		h.FailOpen = func(connectors.TaskSpec) error {
			return connectors.Refuse(countersign.InboxFull, "the owner has 20 tasks waiting")
		}
		text := strconv.Itoa(secret)
		what := "the notice of the win"
		if !right {
			text, what = "nope", "the next turn"
		}
		_, opened, err := h.Answer(ctx, first, []byte(text), "")
		want := "inbox_full: The guess was judged, but " + what + " could not be opened (inbox_full: the owner has 20 tasks waiting). Nothing was written."
		if connectortest.Text(err) != want || len(opened) != 0 {
			t.Fatalf("got %q, want %q", connectortest.Text(err), want)
		}
		if s, _ := h.Status(first.Task.ID); s.State != countersign.StateFailed || s.FailureReason != "run_refused:inbox_full" {
			t.Fatalf("status %+v", s)
		}
	}
}

func TestStartWhenTheTaskCannotOpen(t *testing.T) {
	t.Parallel()
	h := connectortest.New(t, newProbe(t))
	h.FailOpen = func(connectors.TaskSpec) error {
		return connectors.Refuse(countersign.Muted, "the owner muted this agent")
	}
	_, err := h.Call(ctx, `{"operation": "guess_start"}`)
	if connectortest.Text(err) != "muted: the owner muted this agent" {
		t.Fatalf("got %v", err)
	}
}

func plural(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
