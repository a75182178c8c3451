package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/device"
)

// owner signs a device of a named account in: its wallet key is a
// full-access key on the fake chain.
func (s *service) owner(account string) *device.Device {
	s.t.Helper()
	w, err := approval.NewWallet()
	if err != nil {
		s.t.Fatal(err)
	}
	w.AccountID = account
	s.rpc.AddAccount(account)
	s.rpc.AddKey(account, w.Key.PublicKey().String(), neartest.FullAccess())
	key, err := device.NewKey()
	if err != nil {
		s.t.Fatal(err)
	}
	d := &device.Device{Account: account, Key: key, Signer: device.WalletSigner{Wallet: w}, Client: &client.Client{BaseURL: s.base}}
	if _, err := d.SignIn(context.Background(), 24*time.Hour); err != nil {
		s.t.Fatal(err)
	}
	return d
}

// waitState asks task_wait until the task reaches one of the states.
func waitState(t *testing.T, agent *client.Client, owner, project, id string, states ...string) client.TaskStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st, err := agent.Status(context.Background(), owner, project, id, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if st.State == s {
				return st
			}
		}
	}
	t.Fatalf("task %s did not reach %v", id, states)
	return client.TaskStatus{}
}

type guessResult struct {
	Attempt int             `json:"attempt"`
	Guess   json.RawMessage `json:"guess"`
	Verdict string          `json:"verdict"`
	Max     int             `json:"max"`
	Detail  string          `json:"detail"`
}

// playGame plays one guessing game to the end, the owner guessing by halves
// from what each turn says, and returns the number of guesses.
func playGame(t *testing.T, s *service, owner *device.Device, agent *client.Client, project string) int {
	t.Helper()
	ctx := context.Background()
	raw, err := agent.Call(ctx, owner.Account, project, "guess_start", map[string]any{"max": 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	_ = json.Unmarshal(raw, &a)
	low, high := 1, 100
	taskID, thread := a.TaskID, a.TaskID
	for attempt := 1; attempt <= 10; attempt++ {
		view, err := owner.Client.Task(ctx, taskID)
		if err != nil {
			t.Fatal(err)
		}
		if view.State != string(countersign.StateOpen) || view.Thread != thread || view.Locked {
			t.Fatalf("turn %d: %+v", attempt, view)
		}
		opened, err := owner.Open(view)
		if err != nil {
			t.Fatal(err)
		}
		if opened.Envelope.Display.Title != "Guess my number" || opened.TaskHash != view.TaskHash {
			t.Fatalf("turn %d shows %+v", attempt, opened.Envelope.Display)
		}
		guess := (low + high) / 2
		if _, err := owner.Approve(ctx, opened, []byte(strconv.Itoa(guess)), "go"); err != nil {
			t.Fatalf("turn %d: approve: %v", attempt, err)
		}
		st := waitState(t, agent, owner.Account, project, taskID, string(countersign.StateDone), string(countersign.StateFailed))
		if st.State != string(countersign.StateDone) || st.OutcomeClass != "claimed" {
			t.Fatalf("turn %d ended %+v", attempt, st)
		}
		var res guessResult
		if err := json.Unmarshal(st.Result, &res); err != nil || res.Attempt != attempt || string(res.Guess) != strconv.Itoa(guess) || res.Max != 100 {
			t.Fatalf("turn %d result %s", attempt, st.Result)
		}
		switch res.Verdict {
		case "higher":
			low = guess + 1
		case "lower":
			high = guess - 1
		case "right":
			if st.NoticeTaskID == "" || st.NextTaskID != "" {
				t.Fatalf("a win without its notice: %+v", st)
			}
			notice, err := owner.Client.Task(ctx, st.NoticeTaskID)
			if err != nil || notice.Kind != "notice" || notice.Thread != thread || notice.State != string(countersign.StateOpen) {
				t.Fatalf("notice %+v %v", notice, err)
			}
			o, err := owner.Open(notice)
			if err != nil || !strings.HasPrefix(o.Envelope.Display.Title, fmt.Sprintf("You guessed it: %d, in %d attempt", guess, attempt)) {
				t.Fatalf("notice shows %+v %v", o, err)
			}
			if _, err := owner.Client.Acknowledge(ctx, notice.ID); err != nil {
				t.Fatal(err)
			}
			// The audit trail of the winning turn: no content, every move.
			h, err := owner.Client.History(ctx, taskID)
			var moves []string
			for _, e := range h {
				moves = append(moves, e.From+">"+e.To+":"+e.Actor)
			}
			if err != nil || strings.Join(moves, " ") != "open>approved:owner approved>answering:platform answering>done:platform" {
				t.Fatalf("history %v %v", moves, err)
			}
			ns, err := agent.Status(ctx, owner.Account, project, notice.ID, 0)
			if err != nil || ns.State != string(countersign.StateDone) {
				t.Fatalf("an acknowledged notice is %+v %v", ns, err)
			}
			return attempt
		default:
			t.Fatalf("verdict %q", res.Verdict)
		}
		if st.NextTaskID == "" {
			t.Fatalf("turn %d: no next turn", attempt)
		}
		taskID = st.NextTaskID
	}
	t.Fatal("ten guesses by halves did not find a number from 1 to 100")
	return 0
}

// TestGuessingGame plays whole games over HTTP on PostgreSQL: approvals are
// answered by runs from the job queue, next turns come in one thread, the
// win arrives as a notice, Got it ends it.
func TestGuessingGame(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	s.project("alice.near", "probe", "{}", "bot.near")
	alice := s.owner("alice.near")
	for game := 0; game < 2; game++ {
		if n := playGame(t, s, alice, agent, "probe"); n < 1 || n > 7 {
			t.Fatalf("game %d took %d guesses", game, n)
		}
	}
}

// TestGuessingGameEmbedded is the same game on the embedded store.
func TestGuessingGameEmbedded(t *testing.T) {
	t.Parallel()
	rpc := neartest.New()
	t.Cleanup(rpc.Close)
	s := &service{t: t, rpc: rpc, env: map[string]string{
		"COUNTERSIGN_DATA_DIR": t.TempDir() + "/data",
		"COUNTERSIGN_NEAR_RPC": rpc.URL(),
	}}
	base, _ := serve(t, s.env, "--dev")
	s.base = base
	agent := s.agent("bot.near", 1_000_000)
	s.project("alice.near", "probe", "{}", "bot.near")
	alice := s.owner("alice.near")
	if n := playGame(t, s, alice, agent, "probe"); n < 1 || n > 7 {
		t.Fatalf("the game took %d guesses", n)
	}
}
