// Package probe is the guessing game of SPEC §14, the connector that shows a
// conversation: the agent starts a game, the connector picks a secret number
// and asks the owner to guess it, and each guess the owner approves is judged
// by the answer run, which opens the next turn of the thread or, when the guess
// is right, a notice.
//
// The game's secret travels in the tasks' sealed state, handed from turn to
// turn. The owner holds every state's SHA-256 (the envelope's state_hash), so
// the state also holds 32 random bytes of salt, drawn once per game and never
// shown: without them, hashing each candidate number would name the secret.
//
// # Choices where the contract is silent
//
//   - `max` is checked by guess_start's schema before the run starts (so a
//     refused max costs nothing): an integer as JSON Schema reads one, so
//     10.0 and 1e1 are 10, while 2.5, "10" and null are refused.
//   - guess_start is a write (it is priced) but opens its task whatever the
//     policy's `confirm` says: the task is the game, not a confirmation.
//     The platform still refuses it when the policy cannot be applied. guess
//     writes nothing outside the game and does not consult the policy.
//   - A guess is the supplied text with surrounding white space trimmed. It
//     is a whole number when it is an optional + or - followed by ASCII digits
//     only (other scripts' digits, separators and fractions are not numbers).
//     Its value is compared exactly at any length. The result's guess is a
//     JSON number when the number has at most 15 digits (leading zeros
//     dropped), so that every JSON reader, JavaScript's too, reads it exactly;
//     otherwise, and when it is not a number, guess is the trimmed text cut to
//     64 characters (invalid UTF-8 replaced by U+FFFD).
//   - The next turn shows the owner's trimmed text as "Your guess" when it is
//     valid UTF-8 that a text field may show, "(empty)" when nothing is left
//     after trimming, and "(not shown)" otherwise. All fields are written by
//     the project: the connector relays the owner's own words, never the
//     agent's.
//   - The notice reads "1 attempt" for a first-time win and "N attempts"
//     otherwise.
//   - The state is JSON: {"salt","secret","max","attempts"}, read strictly.
//     It carries no version: a task sealed by another build is void before
//     its answer runs, so a build only ever reads its own states.
//   - guess_start answers only by opening its task (its result is
//     connectors.TaskOnly); guess declares the schema of what it reports,
//     {attempt, guess, verdict, max, detail}, with guess an integer or a
//     string as above.
//   - guess declares the shape of a guess (GuessShape): digits, with white
//     space around them allowed (a file answer ends in a line break), so
//     the page and the terminal inbox tell "abc" before the wallet is
//     asked. It is narrower than what guess reads as a number (no sign):
//     a game's numbers are from 1 up. guess still judges any text that
//     reaches it, "abc" as not_a_number.
//   - When the next turn or the notice cannot be opened (the owner's inbox is
//     full, say), guess refuses with that refusal's code: the game ends there
//     and nothing outside it was written.
package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
)

// The connector's declaration.
const (
	Name    = "probe"
	Version = "1.0.0"
	// StartPrice is guess_start's price in micro-USD.
	StartPrice = 10_000
)

// The game's bounds.
const (
	DefaultMax = 10
	MinMax     = 2
	MaxMax     = 1000
	// SaltBytes is the length of the state's random salt.
	SaltBytes = 32
)

// Verdicts of a guess, as results report them.
const (
	Higher     = "higher" // the secret is higher than the guess
	Lower      = "lower"  // the secret is lower than the guess
	Right      = "right"
	NotANumber = "not_a_number" // still an attempt
)

const (
	title         = "Guess my number"
	notShown      = "(not shown)"
	shownEmpty    = "(empty)"
	maxGuessChars = 64
	// exactDigits is the longest whole number a result reports as a JSON
	// number: below 10^15 every JSON reader holds it exactly.
	exactDigits = 15
	// maxAttempts bounds the count a state may hold, far beyond any game.
	maxAttempts = 1 << 30
)

// startSchema is guess_start's argument schema: {max?}.
const startSchema = `{
  "type": "object",
  "properties": {
    "max": {"type": "integer", "minimum": 2, "maximum": 1000, "default": 10,
      "description": "the highest number the game may pick (default 10)"}
  },
  "additionalProperties": false
}`

// guessResult is the schema of what guess reports (result), which the agent
// reads as task_status's result.
const guessResult = `{
  "type": "object",
  "properties": {
    "attempt": {"type": "integer", "minimum": 1, "description": "which attempt of the game this guess was"},
    "guess": {"type": ["integer", "string"], "maxLength": 64,
      "description": "the owner's guess: a number of at most 15 digits, else their text cut to 64 characters"},
    "verdict": {"enum": ["higher", "lower", "right", "not_a_number"],
      "description": "higher or lower: where the number is from the guess"},
    "max": {"type": "integer", "minimum": 2, "maximum": 1000, "description": "the game's highest number"},
    "detail": {"type": "string", "description": "the verdict in a sentence"}
  },
  "required": ["attempt", "guess", "verdict", "max", "detail"],
  "additionalProperties": false
}`

// GuessShape is the shape of the text an owner supplies to guess: what the
// page and the terminal inbox check a guess against before the wallet is
// asked.
const GuessShape = `{
  "type": "string",
  "pattern": "^[ \\t\\r\\n]*[0-9]+[ \\t\\r\\n]*$",
  "description": "a whole number in digits, such as 7",
  "examples": ["7", "42", "50\n"]
}`

// errMax is guess_start's refusal of a max it does not take.
func errMax() error {
	return connectors.Refuse(countersign.InvalidRequest, "`max` is a whole number from %d to %d", MinMax, MaxMax)
}

// New returns the probe connector: guess_start (a write priced StartPrice)
// and guess (its answer operation, priced 0).
func New() *connectors.Connector {
	return &connectors.Connector{
		Name:    Name,
		Version: Version,
		Tasks:   true,
		Operations: []connectors.Operation{
			{Name: "guess_start", Kind: connectors.Write, Price: StartPrice, Run: start, InProcess: true,
				Description: "Starts a guessing game: picks a number from 1 to max and asks the owner to guess it, turn by turn, in their inbox.",
				Schema:      json.RawMessage(startSchema),
				Examples:    []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"max": 100}`)},
				Result:      connectors.TaskOnly},
			{Name: "guess", Kind: connectors.Answer, Answer: guess, InProcess: true,
				Description:  "Judges the owner's guess and opens the next turn, or the notice of a win.",
				SuppliedText: json.RawMessage(GuessShape),
				Result:       json.RawMessage(guessResult)},
		},
	}
}

// state is the sealed state of one turn.
type state struct {
	Salt     []byte `json:"salt"`
	Secret   int    `json:"secret"`
	Max      int    `json:"max"`
	Attempts int    `json:"attempts"`
}

// result is what a guess reports for the agent.
type result struct {
	Attempt int    `json:"attempt"`
	Guess   any    `json:"guess"` // json.Number or string
	Verdict string `json:"verdict"`
	Max     int    `json:"max"`
	Detail  string `json:"detail"`
}

// start serves guess_start {max?}: it picks the secret and asks the first
// question.
func start(ctx context.Context, c *connectors.Call) (any, error) {
	var args struct {
		Max json.RawMessage `json:"max"`
	}
	if err := c.Decode(&args); err != nil {
		return nil, err
	}
	maxN, err := parseMax(args.Max)
	if err != nil {
		return nil, err
	}
	secret, err := rand.Int(rand.Reader, big.NewInt(int64(maxN)))
	if err != nil {
		return nil, fmt.Errorf("pick the secret: %w", err)
	}
	salt := make([]byte, SaltBytes)
	if _, err := io.ReadFull(rand.Reader, salt); err != nil {
		return nil, fmt.Errorf("draw the salt: %w", err)
	}
	st := state{Salt: salt, Secret: int(secret.Int64()) + 1, Max: maxN}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("write the state: %w", err)
	}
	task, err := c.OpenTask(ctx, connectors.TaskSpec{
		Kind:     countersign.KindInput,
		Display:  countersign.Display{Title: title, Summary: firstTurn(maxN), Fields: []countersign.Field{text("Question", question(maxN))}},
		AnswerBy: &countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText},
		State:    raw,
	})
	if err != nil {
		return nil, fmt.Errorf("open the first turn: %w", err)
	}
	return connectors.AwaitingOwner(task), nil
}

// parseMax reads guess_start's max: absent means DefaultMax; otherwise a
// whole number from MinMax to MaxMax, as the schema says (the platform
// checked it; this is the handler's own guard).
func parseMax(raw json.RawMessage) (int, error) {
	if raw == nil {
		return DefaultMax, nil
	}
	if len(raw) > 32 { // longer than any whole number from 2 to 1000 is written
		return 0, errMax()
	}
	r, ok := new(big.Rat).SetString(string(raw))
	if !ok || !r.IsInt() || r.Cmp(big.NewRat(MinMax, 1)) < 0 || r.Cmp(big.NewRat(MaxMax, 1)) > 0 {
		return 0, errMax()
	}
	return int(r.Num().Int64()), nil
}

// guess serves the answer to a turn: it judges the owner's text and opens the
// next turn, or the notice of a win.
func guess(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	st, err := parseState(a.State)
	if err != nil {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "The game's sealed state does not read.")
	}
	if a.Supplied == nil {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "A guess is text, and none was supplied.")
	}
	st.Attempts++
	typed := strings.TrimSpace(string(a.Supplied))
	j := judge(typed, st.Secret)
	res := result{Attempt: st.Attempts, Guess: j.guess, Verdict: j.verdict, Max: st.Max, Detail: j.detail(st.Attempts)}

	if j.verdict == Right {
		_, err := a.Notice(ctx, connectors.TaskSpec{
			Display: countersign.Display{
				Title: fmt.Sprintf("You guessed it: %d, in %s", st.Secret, attempts(st.Attempts)),
				Fields: []countersign.Field{
					text("Number", strconv.Itoa(st.Secret)),
					text("Attempts", strconv.Itoa(st.Attempts)),
				},
			},
		})
		if err != nil {
			return connectors.Report{}, notOpened("the notice of the win", err)
		}
		return connectors.Report{Result: res}, nil
	}

	raw, err := json.Marshal(st)
	if err != nil {
		return connectors.Report{}, fmt.Errorf("write the state: %w", err)
	}
	answer := map[string]string{Higher: "Higher", Lower: "Lower", NotANumber: "Not a number"}[j.verdict]
	_, err = a.Next(ctx, connectors.TaskSpec{
		Kind: countersign.KindInput,
		Display: countersign.Display{Title: title, Summary: nextTurn(st.Attempts+1, st.Max), Fields: []countersign.Field{
			text("Your guess", shown(typed)),
			text("Answer", answer),
			text("Attempts", strconv.Itoa(st.Attempts)),
			text("Question", question(st.Max)),
		}},
		AnswerBy: &countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText},
		State:    raw,
	})
	if err != nil {
		return connectors.Report{}, notOpened("the next turn", err)
	}
	return connectors.Report{Result: res}, nil
}

// firstTurn is the summary of a game's first turn: what answering it does.
func firstTurn(maxN int) string {
	return fmt.Sprintf("give the agent your guess of a number from 1 to %d", maxN)
}

// nextTurn is the summary of a later turn, the attempt-th.
func nextTurn(attempt, maxN int) string {
	return fmt.Sprintf("give the agent your next guess (attempt %d) of a number from 1 to %d", attempt, maxN)
}

// notOpened is guess's refusal when the thread cannot go on.
func notOpened(what string, err error) error {
	code := countersign.ErrorCode(err)
	return connectors.Refused(code, false, "The guess was judged, but %s could not be opened (%s: %s).", what, code, countersign.ErrorMessage(err))
}

// parseState reads a turn's state strictly.
func parseState(b []byte) (state, error) {
	var st struct {
		Salt     *[]byte `json:"salt"`
		Secret   *int    `json:"secret"`
		Max      *int    `json:"max"`
		Attempts *int    `json:"attempts"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return state{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return state{}, errors.New("data after the state")
	}
	switch {
	case st.Salt == nil || st.Secret == nil || st.Max == nil || st.Attempts == nil:
		return state{}, errors.New("a member is missing")
	case len(*st.Salt) != SaltBytes:
		return state{}, errors.New("the salt is not 32 bytes")
	case *st.Max < MinMax || *st.Max > MaxMax:
		return state{}, errors.New("max is out of range")
	case *st.Secret < 1 || *st.Secret > *st.Max:
		return state{}, errors.New("the secret is out of range")
	case *st.Attempts < 0 || *st.Attempts >= maxAttempts:
		return state{}, errors.New("attempts is out of range")
	}
	return state{Salt: *st.Salt, Secret: *st.Secret, Max: *st.Max, Attempts: *st.Attempts}, nil
}

// judgement is a guess judged against the secret.
type judgement struct {
	verdict string
	guess   any    // what the result reports
	said    string // how the detail names the guess
}

// judge reads the owner's trimmed text and compares it with the secret.
func judge(typed string, secret int) judgement {
	digits, negative, ok := wholeNumber(typed)
	if !ok {
		return judgement{verdict: NotANumber, guess: cut(typed)}
	}
	if len(digits) > exactDigits {
		// Its magnitude is at least 10^15: beyond any secret on either side.
		j := judgement{verdict: Lower, guess: cut(typed), said: "your guess"}
		if negative {
			j.verdict = Higher
		}
		return j
	}
	n, _ := strconv.ParseInt(digits, 10, 64) // at most 15 digits: cannot fail
	if negative {
		n = -n
	}
	j := judgement{guess: json.Number(strconv.FormatInt(n, 10)), said: strconv.FormatInt(n, 10)}
	switch {
	case n < int64(secret):
		j.verdict = Higher
	case n > int64(secret):
		j.verdict = Lower
	default:
		j.verdict = Right
	}
	return j
}

// wholeNumber reads [+-]?[0-9]+, returning the digits without leading zeros
// ("0" for zero) and whether the sign was minus.
func wholeNumber(s string) (digits string, negative, ok bool) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		negative, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return "", false, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false, false
		}
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0", false, true
	}
	return s, negative, true
}

func (j judgement) detail(attempt int) string {
	switch j.verdict {
	case Higher:
		return "The number is higher than " + j.said + "."
	case Lower:
		return "The number is lower than " + j.said + "."
	case Right:
		return j.said + " is right, in " + attempts(attempt) + "."
	}
	return "That is not a whole number."
}

// cut is the owner's text as a result reports it: valid UTF-8, at most
// maxGuessChars characters.
func cut(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= maxGuessChars {
		return s
	}
	n := 0
	for i := range s {
		if n == maxGuessChars {
			return s[:i]
		}
		n++
	}
	return s
}

// shown is the owner's text as the next turn shows it.
func shown(typed string) string {
	if typed == "" {
		return shownEmpty
	}
	if countersign.ValidateDisplay(countersign.Display{Title: title, Fields: []countersign.Field{text("Your guess", typed)}}) != nil {
		return notShown
	}
	return typed
}

func question(maxN int) string {
	return fmt.Sprintf("I picked a number from 1 to %d. Your guess?", maxN)
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

func text(label, value string) countersign.Field {
	return countersign.Field{Kind: countersign.FieldText, Label: label, Values: []string{value}, WrittenBy: countersign.WrittenByProject}
}
