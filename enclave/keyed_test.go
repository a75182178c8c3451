package enclave_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/connectors/probe"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// game is what a probe game played end to end sent and got: every request
// body an agent call and an answer run was given, and every result.
type game struct {
	max      int
	requests [][]byte
	results  [][]byte
	tasks    []string // every task the game opened, in order
}

// playProbe plays a guessing game of max on w to the end, the owner
// guessing by halves, with an Idempotency-Key on the start (so its body
// hash is kept), and closes the winning notice.
func playProbe(t *testing.T, w *servicetest.World, max int) game {
	t.Helper()
	g := game{max: max}
	agent := w.AgentClient()
	start := []byte(`{"operation":"guess_start","max":` + strconv.Itoa(max) + `}`)
	raw, err := agent.CallRaw(ctx, w.Owner.Account, "probe", start, &client.CallOptions{IdempotencyKey: "game-1"})
	if err != nil {
		t.Fatal(err)
	}
	g.requests = append(g.requests, start)
	g.results = append(g.results, raw)
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("guess_start: %s %v", raw, err)
	}
	id, low, high := a.TaskID, 1, max
	for attempt := 1; ; attempt++ {
		if attempt > 12 {
			t.Fatal("the game did not end")
		}
		g.tasks = append(g.tasks, id)
		guess := (low + high) / 2
		run := w.Approve(id, []byte(strconv.Itoa(guess)))
		// The answer run's input, as the service writes it.
		g.requests = append(g.requests, []byte(`{"operation":"guess","task_id":"`+id+`"}`))
		if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
			t.Fatal(err)
		}
		status := []byte(`{"operation":"task_status","task_id":"` + id + `"}`)
		raw, err := agent.CallRaw(ctx, w.Owner.Account, "probe", status, nil)
		if err != nil {
			t.Fatal(err)
		}
		g.requests = append(g.requests, status)
		var st client.TaskStatus
		if err := json.Unmarshal(raw, &st); err != nil || st.State != string(countersign.StateDone) {
			t.Fatalf("turn %d: %s %v", attempt, raw, err)
		}
		g.results = append(g.results, st.Result)
		var res struct{ Verdict string }
		_ = json.Unmarshal(st.Result, &res)
		switch res.Verdict {
		case probe.Higher:
			low, id = guess+1, st.NextTaskID
		case probe.Lower:
			high, id = guess-1, st.NextTaskID
		case probe.Right:
			g.tasks = append(g.tasks, st.NoticeTaskID)
			if _, err := w.Owner.Client.Acknowledge(ctx, st.NoticeTaskID); err != nil {
				t.Fatal(err)
			}
			return g
		default:
			t.Fatalf("turn %d: %s", attempt, st.Result)
		}
	}
}

// candidates are what someone who reads the database would hash to test
// guesses of a game of max whose task ids they read: every guess 1..max as
// the owner types it, every result the probe can report for it (verdict,
// attempt and detail, as the service serializes it), every start request
// for every max, and every answer run's and task_status's request for each
// task id; and the game's own requests and results, byte for byte.
func (g game) candidates() [][]byte {
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	for _, b := range g.requests {
		add(b)
	}
	for _, b := range g.results {
		add(b)
	}
	for n := probe.MinMax; n <= probe.MaxMax; n++ {
		add([]byte(`{"operation":"guess_start","max":` + strconv.Itoa(n) + `}`))
		add([]byte(`{"max":` + strconv.Itoa(n) + `,"operation":"guess_start"}`))
	}
	add([]byte(`{"operation":"guess_start"}`))
	for _, id := range g.tasks {
		add([]byte(`{"operation":"guess","task_id":"` + id + `"}`))
		add([]byte(`{"operation":"task_status","task_id":"` + id + `"}`))
		add([]byte(`{"task_id":"` + id + `","operation":"task_status"}`))
	}
	attempts := func(n int) string {
		if n == 1 {
			return "1 attempt"
		}
		return strconv.Itoa(n) + " attempts"
	}
	for guess := 1; guess <= g.max; guess++ {
		s := strconv.Itoa(guess)
		add([]byte(s))
		for attempt := 1; attempt <= len(g.tasks); attempt++ {
			for verdict, detail := range map[string]string{
				probe.Higher: "The number is higher than " + s + ".",
				probe.Lower:  "The number is lower than " + s + ".",
				probe.Right:  s + " is right, in " + attempts(attempt) + ".",
			} {
				add(fmt.Appendf(nil, `{"attempt":%d,"guess":%d,"verdict":%q,"max":%d,"detail":%q}`, attempt, guess, verdict, g.max, detail))
			}
		}
	}
	return out
}

// TestNoBareHashOfAGameIsStored: after a guessing game played end to end,
// no value of any column of any table (PostgreSQL) and no byte of any file
// (SQLite) holds the bare SHA-256 of anything the game's guesses, verdicts,
// secret or max could be tested with (SPEC §11, amended): receipts,
// run rows and idempotency rows hold keyed hashes only.
func TestNoBareHashOfAGameIsStored(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		g := playProbe(t, w, 10)
		cands := g.candidates()
		// The generated candidates hold every result the game reported: the
		// guesses are the ones an attacker would try.
		for _, r := range g.results[1:] {
			if !containsBytes(cands[len(g.requests)+len(g.results):], r) {
				t.Fatalf("the candidates miss the result %s", r)
			}
		}
		if found := storetest.FindBareHashes(t, db, cands...); len(found) > 0 {
			t.Fatalf("the database holds bare hashes of a game's values:\n%s", strings.Join(found, "\n"))
		}
	})
}

// TestBareHashScanFindsAHash proves the scan above can fail: the bare
// SHA-256 of a request, put into any table, is found in each form.
func TestBareHashScanFindsAHash(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		id := w.Pay()
		forms := storetest.Forms(string(make([]byte, 32)))
		for i := range forms {
			// Each form of the hash of another request, so that each one
			// must be found on its own.
			request := fmt.Appendf(nil, `{"operation":"guess_start","max":%d}`, i+2)
			sum := sha256.Sum256(request)
			form := storetest.Forms(string(sum[:]))[i]
			if err := db.Tx(ctx, func(tx store.Tx) error {
				return tx.PutDeviceCopy(ctx, id, fmt.Sprintf("dev-%d", i), append(append([]byte("prefix "), form...), " suffix"...))
			}); err != nil {
				t.Fatal(err)
			}
			found := storetest.FindBareHashes(t, db, []byte("7"), request)
			if !strings.Contains(strings.Join(found, "\n"), strconv.Quote(string(request))) {
				t.Fatalf("form %d of a bare hash stored in a table was not found: %q", i, found)
			}
		}
	})
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}
