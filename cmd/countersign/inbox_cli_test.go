package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/client"
	"countersign/origin"
)

// owner is one terminal of an owner: an inbox directory, the wallet key
// file `wallet new` made, and the service it talks to.
type owner struct {
	t       *testing.T
	env     map[string]string
	dir     string
	wallet  string
	account string
}

var accountLine = regexp.MustCompile(`(?m)^account:\s+(\S+)$`)

// newOwner makes a wallet with `wallet new` and a terminal for it.
func newOwner(t *testing.T, s *service) *owner {
	t.Helper()
	wallet := filepath.Join(t.TempDir(), "wallet.json")
	r := run(t, context.Background(), nil, "wallet", "new", "--out", wallet)
	m := accountLine.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("wallet new: %+v", r)
	}
	return &owner{t: t, wallet: wallet, account: m[1], dir: filepath.Join(t.TempDir(), "inbox"),
		env: map[string]string{"COUNTERSIGN_SERVER": s.base}}
}

// terminal is another terminal (directory) of the same owner and wallet.
func (o *owner) terminal() *owner {
	other := *o
	other.dir = filepath.Join(o.t.TempDir(), "inbox")
	return &other
}

// run runs `countersign inbox ARGS` in this terminal.
func (o *owner) run(args ...string) result {
	o.t.Helper()
	full := append([]string{"inbox"}, args...)
	return run(o.t, context.Background(), o.env, append(full, "--dir", o.dir)...)
}

// ok runs the command and fails the test unless it succeeds.
func (o *owner) ok(args ...string) string {
	o.t.Helper()
	r := o.run(args...)
	if r.code != 0 {
		o.t.Fatalf("countersign inbox %s: %+v", strings.Join(args, " "), r)
	}
	return r.stdout
}

// fails runs the command, expects exit 1 with one line on stderr holding
// every want, and returns that line.
func (o *owner) fails(args []string, want ...string) string {
	o.t.Helper()
	r := o.run(args...)
	if r.code != 1 {
		o.t.Fatalf("countersign inbox %s succeeded: %+v", strings.Join(args, " "), r)
	}
	if strings.Count(r.stderr, "\n") != 1 {
		o.t.Errorf("countersign inbox %s: not one line: %q", strings.Join(args, " "), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			o.t.Errorf("countersign inbox %s: %q does not say %q", strings.Join(args, " "), r.stderr, w)
		}
	}
	return r.stderr
}

func (o *owner) login() string {
	o.t.Helper()
	return o.ok("login", "--wallet", o.wallet)
}

// session reads the terminal's session file.
func (o *owner) session() session {
	o.t.Helper()
	b, err := os.ReadFile(filepath.Join(o.dir, sessionFile))
	if err != nil {
		o.t.Fatal(err)
	}
	var s session
	if err := json.Unmarshal(b, &s); err != nil {
		o.t.Fatal(err)
	}
	return s
}

// startGame has the agent start a game and returns its first task.
func startGame(t *testing.T, agent *client.Client, account, project string) client.Awaiting {
	t.Helper()
	raw, err := agent.Call(context.Background(), account, project, "guess_start", map[string]any{"max": 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "awaiting_owner" {
		t.Fatalf("guess_start answered %s", raw)
	}
	return a
}

func runOf(t *testing.T, taskID string) string {
	t.Helper()
	run, ok := preparingRun(taskID)
	if !ok {
		t.Fatalf("%s names no run", taskID)
	}
	return run
}

func containsAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, text)
		}
	}
}

var runLine = regexp.MustCompile(`(?m)^run: (\S+)$`)

// TestInboxTerminalGame plays a whole guessing game from the terminal inbox
// against the service on PostgreSQL: login with a wallet file, list, show
// (preview, raw bytes, request), approve --text turn after turn, the winning
// notice acknowledged.
func TestInboxTerminalGame(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	ctx := context.Background()

	out := o.login()
	sess := o.session()
	containsAll(t, "login", out, "signed in as "+o.account, "device:      "+sess.DeviceID, "valid until: "+sess.ValidUntil, "run keys:    1 pinned")
	until, err := time.Parse(time.RFC3339, sess.ValidUntil)
	if err != nil || time.Until(until) < 29*24*time.Hour || time.Until(until) > 30*24*time.Hour+time.Minute {
		t.Fatalf("valid until %s (%v): not 30 days", sess.ValidUntil, err)
	}
	if sess.Server != s.base || sess.Account != o.account || !strings.HasPrefix(sess.Token, "os_") || sess.Recipient != strings.TrimPrefix(s.base, "http://") ||
		sess.Wallet != o.wallet || len(sess.RunKeys) != 1 {
		t.Fatalf("session file: %+v", sess)
	}
	for _, f := range []string{sessionFile, deviceKeyFile} {
		if info, err := os.Stat(filepath.Join(o.dir, f)); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, info, err)
		}
	}
	if info, err := os.Stat(o.dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("inbox directory: %v %v", info, err)
	}
	if strings.Contains(out, sess.Token) {
		t.Fatal("login printed the session token")
	}

	if out := o.ok("list"); strings.TrimSpace(out) != "no waiting tasks" {
		t.Fatalf("an empty inbox lists %q", out)
	}
	first := startGame(t, agent, o.account, "probe")
	list := o.ok("list")
	if !regexp.MustCompile(`(?m)^` + first.TaskID + `\s+input\s+open\s+bot\.near\s+probe\s+` + first.ExpiresAt + `\s+no$`).MatchString(list) {
		t.Fatalf("list:\n%s", list)
	}

	show := o.ok("show", first.TaskID)
	if !strings.HasPrefix(show, "If you approve: give the agent your guess of a number from 1 to 100\nGuess my number\n") {
		t.Errorf("show does not start with what approving does:\n%s", show)
	}
	containsAll(t, "show", show, "Guess my number\n", "task: "+first.TaskID+" (input, open)\n",
		"from: bot.near in project probe (probe@", "receipt: verified (run "+runOf(t, first.TaskID)+")\n",
		"\n  Question: I picked a number from 1 to 100. Your guess?\n", "files: none\n", "expires: "+first.ExpiresAt+" (in 2",
		"answer: text (guess)", "hash: "+first.TaskHash+"\n")
	if strings.Contains(show, agentMark) {
		t.Errorf("the project's fields are marked as the agent's:\n%s", show)
	}
	raw := o.ok("show", first.TaskID, "--raw")
	if sum := sha256.Sum256([]byte(raw)); hex.EncodeToString(sum[:]) != first.TaskHash {
		t.Fatalf("show --raw does not hash to the task hash: %q", raw)
	}
	if req := o.ok("show", "--request", first.TaskID); req != `{"max":100,"operation":"guess_start"}`+"\n" {
		t.Fatalf("show --request printed %q", req)
	}

	// Play by halves; every turn is shown, verified and approved from the
	// terminal.
	low, high := 1, 100
	id := first.TaskID
	for attempt := 1; ; attempt++ {
		if attempt > 7 {
			t.Fatal("seven guesses by halves did not find a number from 1 to 100")
		}
		guess := (low + high) / 2
		if attempt > 1 {
			show := o.ok("show", id)
			containsAll(t, "a later turn", show, "receipt: verified (run "+runOf(t, id)+")", "  Your guess: ", "  Answer: ", "  Attempts: ", "  Question: ")
			if strings.Contains(show, agentMark) {
				t.Errorf("a turn whose fields the project wrote shows the agent's mark:\n%s", show)
			}
		}
		args := []string{"approve", id, "--text", strconv.Itoa(guess), "--note", "turn " + strconv.Itoa(attempt)}
		if attempt == 1 {
			// The first answer comes from a file, pinned to the hash show
			// printed.
			file := filepath.Join(t.TempDir(), "guess.txt")
			if err := os.WriteFile(file, []byte(strconv.Itoa(guess)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args = []string{"approve", id, "--file", file, "--hash", first.TaskHash}
		}
		out := o.ok(args...)
		m := runLine.FindStringSubmatch(out)
		if m == nil || !strings.HasPrefix(out, "approved task "+id+" (Guess my number)") || !strings.Contains(out, "\nyou approved: give the agent your ") {
			t.Fatalf("approve printed %q", out)
		}
		st := waitState(t, agent, o.account, "probe", id, string(countersign.StateDone), string(countersign.StateFailed))
		var res guessResult
		if st.State != string(countersign.StateDone) || json.Unmarshal(st.Result, &res) != nil || string(res.Guess) != strconv.Itoa(guess) || st.Run != m[1] {
			t.Fatalf("turn %d ended %+v", attempt, st)
		}
		if res.Verdict == "right" {
			notice := st.NoticeTaskID
			if !strings.HasPrefix(notice, m[1]+"-") {
				t.Fatalf("the notice %s was not prepared by the answer run %s", notice, m[1])
			}
			show := o.ok("show", notice)
			containsAll(t, "the notice", show, "You guessed it: "+strconv.Itoa(guess), "task: "+notice+" (notice, open)",
				"receipt: verified (run "+m[1]+")", "answer: nothing, it is a notice (countersign inbox ack "+notice+")")
			o.fails([]string{"approve", notice}, "is a notice and asks nothing")
			if out := o.ok("ack", notice); out != "task "+notice+": done\n" {
				t.Fatalf("ack printed %q", out)
			}
			if ns, err := agent.Status(ctx, o.account, "probe", notice, 0); err != nil || ns.State != string(countersign.StateDone) {
				t.Fatalf("the acknowledged notice is %+v %v", ns, err)
			}
			break
		}
		if !strings.HasPrefix(st.NextTaskID, m[1]+"-") {
			t.Fatalf("the next turn %s was not prepared by the answer run %s", st.NextTaskID, m[1])
		}
		if res.Verdict == "higher" {
			low = guess + 1
		} else {
			high = guess - 1
		}
		id = st.NextTaskID
	}
	closed := o.ok("list", "--closed")
	containsAll(t, "list --closed", closed, first.TaskID, string(countersign.StateDone))
	if out := o.ok("list"); strings.TrimSpace(out) != "no waiting tasks" {
		t.Fatalf("after the game the inbox lists %q", out)
	}
	show = o.ok("show", first.TaskID)
	containsAll(t, "a closed task", show, "task: "+first.TaskID+" (input, done)", "shows nothing any more")
	o.fails([]string{"show", first.TaskID, "--raw"}, "is done and shows nothing any more")
}

// TestInboxTerminalRefusals: every refusal is one line saying why, and a
// task whose receipt does not verify against the pinned run keys is shown as
// NOT VERIFIED and never approved.
func TestInboxTerminalRefusals(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	ctx := context.Background()

	o.fails([]string{"list"}, "not signed in", "run `countersign inbox login`")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"login"}, "--wallet FILE"},
		{[]string{"login", "--wallet", o.wallet, "--external"}, "not both"},
		{[]string{"login", "--wallet", o.wallet, "--days", "31"}, "--days: a session lasts 1 to 30 days"},
		{[]string{"login", "--wallet", o.wallet, "--days", "0"}, "--days"},
		{[]string{"login", "--wallet", o.wallet, "--account", "bob.near"}, "is for " + o.account + ", not bob.near"},
		{[]string{"login", "--wallet", filepath.Join(t.TempDir(), "none.json")}, "cannot load the wallet"},
		{[]string{"login", "--external", "--account", "Not An Account"}, "--account"},
		{[]string{"login", "--wallet", o.wallet, "--server", "ftp://x"}, "--server"},
		{[]string{"login", "--wallet", o.wallet, "--server", "http://127.0.0.1:1"}, "cannot reach the service"},
		{[]string{"nosuch"}, `unknown inbox command "nosuch"`},
	} {
		o.fails(tc.args, tc.want)
	}
	o.login()

	a1 := startGame(t, agent, o.account, "probe")
	a2 := startGame(t, agent, o.account, "probe")
	a3 := startGame(t, agent, o.account, "probe")

	// Refusals before anything is signed.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "usage: countersign inbox show ID"},
		{[]string{"show", "Not/A/Task"}, "is not a task id"},
		{[]string{"show", "nosuch-1"}, "task_not_found"},
		{[]string{"show", a1.TaskID, "--raw", "--request"}, "not both"},
		{[]string{"approve", a1.TaskID}, "needs a text answer: --text T or --file F"},
		{[]string{"approve", a1.TaskID, "--text", "1", "--file", "x"}, "--text or --file, not both"},
		{[]string{"approve", a1.TaskID, "--file", filepath.Join(t.TempDir(), "none")}, "--file"},
		{[]string{"approve", a1.TaskID, "--text", "1", "--hash", strings.Repeat("0", 64)}, "has the hash " + a1.TaskHash + ", not"},
		{[]string{"approve", "nosuch-1", "--text", "1"}, "task_not_found"},
		{[]string{"ack", a1.TaskID}, "invalid_request"},
		{[]string{"mute", "someone", "bot.near"}, "usage"},
		{[]string{"mute", "agent", "Bot"}, "not an agent's NEAR account id"},
		{[]string{"projects", "put", "p", "--connector", "probe"}, "--policy"},
		{[]string{"devices", "withdraw"}, "usage"},
	} {
		o.fails(tc.args, tc.want)
	}

	// reject --reason: the agent reads the reason.
	if out := o.ok("reject", a1.TaskID, "--reason", "not now, thank you"); out != "task "+a1.TaskID+": rejected\n" {
		t.Fatalf("reject printed %q", out)
	}
	st, err := agent.Status(ctx, o.account, "probe", a1.TaskID, 0)
	if err != nil || st.State != string(countersign.StateRejected) || st.Reason == nil || *st.Reason != "not now, thank you" {
		t.Fatalf("the agent sees %+v %v", st, err)
	}
	o.fails([]string{"approve", a1.TaskID, "--text", "5"}, "task "+a1.TaskID+" is rejected: there is nothing to approve")
	o.fails([]string{"reject", a1.TaskID}, "task_closed")

	// cancel.
	if out := o.ok("cancel", a2.TaskID); out != "task "+a2.TaskID+": cancelled\n" {
		t.Fatalf("cancel printed %q", out)
	}
	if st, _ := agent.Status(ctx, o.account, "probe", a2.TaskID, 0); st.State != string(countersign.StateCancelled) {
		t.Fatalf("a cancelled task is %+v", st)
	}

	// A forged receipt: the session pins a run key the service does not
	// sign with. show says NOT VERIFIED, approve refuses and signs nothing.
	good := o.session()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	forged := good
	forged.RunKeys = map[string]string{}
	for id := range good.RunKeys {
		forged.RunKeys[id] = origin.FormatKey(pub)
	}
	if err := saveSession(o.dir, &forged); err != nil {
		t.Fatal(err)
	}
	show := o.ok("show", a3.TaskID)
	containsAll(t, "show with a wrong pinned key", show, "receipt: NOT VERIFIED: the receipt's signature does not verify\n")
	if strings.Contains(show, "receipt: verified") {
		t.Fatalf("a forged receipt verified:\n%s", show)
	}
	o.fails([]string{"approve", a3.TaskID, "--text", "50"}, "refusing to approve task "+a3.TaskID, "NOT VERIFIED", "signature does not verify")
	// A key id that was never pinned.
	forged.RunKeys = map[string]string{"77": origin.FormatKey(pub)}
	if err := saveSession(o.dir, &forged); err != nil {
		t.Fatal(err)
	}
	containsAll(t, "show with another key id pinned", o.ok("show", a3.TaskID), "receipt: NOT VERIFIED: the receipt is signed with run key 1, which was not pinned at login")
	o.fails([]string{"approve", a3.TaskID, "--text", "50"}, "NOT VERIFIED")
	if st, _ := agent.Status(ctx, o.account, "probe", a3.TaskID, 0); st.State != string(countersign.StateOpen) {
		t.Fatalf("a task with a forged receipt was approved: %+v", st)
	}
	if err := saveSession(o.dir, &good); err != nil {
		t.Fatal(err)
	}
	containsAll(t, "show with the right key", o.ok("show", a3.TaskID), "receipt: verified")

	// A session file others may read is refused; so is a garbled one.
	path := filepath.Join(o.dir, sessionFile)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	o.fails([]string{"list"}, "may be read by others", "chmod 600")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"server":"http://x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o.fails([]string{"list"}, "run `countersign inbox login` again")

	// A session the service ended: logged in again, then signed out
	// behind this terminal's back.
	o.login()
	old := o.session()
	o.ok("logout")
	o.fails([]string{"list"}, "not signed in")
	if err := saveSession(o.dir, &old); err != nil {
		t.Fatal(err)
	}
	o.fails([]string{"list"}, "has ended (session_required): run `countersign inbox login` again")
}

// TestInboxTerminalOwner covers devices and their withdrawal, mutes and
// owner-signed projects.
func TestInboxTerminalOwner(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	ctx := context.Background()
	laptop := o.terminal()
	o.login()
	laptop.login()
	// Logging in again ends the directory's old session: still two devices.
	laptop.login()
	mine, theirs := o.session().DeviceID, laptop.session().DeviceID

	devs := o.ok("devices")
	if !regexp.MustCompile(`(?m)^\*\s+`+mine+`\s`).MatchString(devs) || !regexp.MustCompile(`(?m)^\s+`+theirs+`\s`).MatchString(devs) ||
		strings.Count(devs, "\n") != 4 {
		t.Fatalf("devices:\n%s", devs)
	}
	if out := o.ok("devices", "withdraw", theirs); out != "device "+theirs+" withdrawn\n" {
		t.Fatalf("withdraw printed %q", out)
	}
	laptop.fails([]string{"list"}, "run `countersign inbox login` again")
	if devs := o.ok("devices"); strings.Contains(devs, theirs) {
		t.Fatalf("a withdrawn device is listed:\n%s", devs)
	}
	// Withdrawing this terminal's own device signs it out.
	laptop.login()
	out := laptop.ok("devices", "withdraw", laptop.session().DeviceID)
	containsAll(t, "withdrawing this device", out, "this terminal is signed out")
	laptop.fails([]string{"list"}, "not signed in")

	// Mutes.
	waiting := startGame(t, agent, o.account, "probe")
	if out := o.ok("mute", "agent", "bot.near", "--delete-waiting"); out != "muted agent bot.near: its new tasks are refused; 1 waiting task(s) cancelled\n" {
		t.Fatalf("mute printed %q", out)
	}
	if st, _ := agent.Status(ctx, o.account, "probe", waiting.TaskID, 0); st.State != string(countersign.StateCancelled) {
		t.Fatalf("--delete-waiting left %+v", st)
	}
	if _, err := agent.Call(ctx, o.account, "probe", "guess_start", nil, nil); refusalCode(err) != "muted" {
		t.Fatalf("a muted agent's call: %v", err)
	}
	o.ok("mute", "project", "probe")
	mutes := o.ok("mutes")
	if !regexp.MustCompile(`(?m)^agent\s+bot\.near\s+\d{4}-`).MatchString(mutes) || !regexp.MustCompile(`(?m)^project\s+probe\s+`).MatchString(mutes) {
		t.Fatalf("mutes:\n%s", mutes)
	}
	if out := o.ok("unmute", "agent", "bot.near"); out != "unmuted agent bot.near\n" {
		t.Fatalf("unmute printed %q", out)
	}
	if out := o.ok("unmute", "agent", "bot.near"); out != "agent bot.near was not muted\n" {
		t.Fatalf("a second unmute printed %q", out)
	}
	o.ok("unmute", "project", "probe")
	if out := o.ok("mutes"); out != "nothing is muted\n" {
		t.Fatalf("mutes after unmute: %q", out)
	}
	startGame(t, agent, o.account, "probe")
	if out := o.ok("unlock"); out != "1 waiting task(s), now readable on every signed-in device of "+o.account+"\n" {
		t.Fatalf("unlock printed %q", out)
	}

	// Projects, signed by the wallet.
	dir := t.TempDir()
	okPolicy, badPolicy := filepath.Join(dir, "ok.json"), filepath.Join(dir, "bad.json")
	_ = os.WriteFile(okPolicy, []byte("{}\n"), 0o600)
	_ = os.WriteFile(badPolicy, []byte(`{"confirm": ["guess"]}`), 0o600)
	out = o.ok("projects", "put", "game2", "--connector", "probe", "--policy", okPolicy, "--agent", "bot.near")
	if !regexp.MustCompile(`^project game2 \(probe, uuid [0-9a-f-]{36}\): policy ok; granted to bot\.near\n$`).MatchString(out) {
		t.Fatalf("projects put printed %q", out)
	}
	startGame(t, agent, o.account, "game2")
	out = o.ok("projects", "put", "broken", "--connector", "probe", "--policy", badPolicy, "--agent", "bot.near")
	containsAll(t, "a policy naming no write", out, "policy unreadable: ")
	list := o.ok("projects", "list")
	for _, re := range []string{`(?m)^game2\s+probe\s+bot\.near\s+no\s+\S+\s+ok$`, `(?m)^probe\s+probe\s+bot\.near\s+no\s+\S+\s+ok$`, `(?m)^broken\s+probe\s+bot\.near\s+no\s+\S+\s+unreadable: \S`,
		// What each policy does, per write, as the policy reader says it.
		`(?m)^game2:\n  guess_start: runs at once\.$`, `(?m)^broken:\n  guess_start: refused, because the policy cannot be applied \(`} {
		if !regexp.MustCompile(re).MatchString(list) {
			t.Errorf("projects list does not match %s:\n%s", re, list)
		}
	}
	if _, err := agent.Call(ctx, o.account, "broken", "guess_start", nil, nil); refusalCode(err) != "policy_unreadable" {
		t.Fatalf("a call to a project with an unreadable policy: %v", err)
	}
	if out := o.ok("projects", "rm", "broken"); out != "project broken removed\n" {
		t.Fatalf("projects rm printed %q", out)
	}
	if list := o.ok("projects", "list"); strings.Contains(list, "broken") {
		t.Fatalf("a removed project is listed:\n%s", list)
	}
	o.fails([]string{"projects", "rm", "broken"}, "invalid_request: no such project")
	o.fails([]string{"projects", "put", "p2", "--connector", "nosuch", "--policy", okPolicy}, "there is no such connector")
	if _, err := agent.Call(ctx, o.account, "broken", "guess_start", nil, nil); refusalCode(err) != "not_granted" {
		t.Fatalf("a call to a removed project: %v", err)
	}

	// Five more terminals: the sixth sign-in retires this one, the oldest.
	// Sign-in times are whole seconds, so let one pass first.
	time.Sleep(1100 * time.Millisecond)
	for i := 0; i < 5; i++ {
		o.terminal().login()
	}
	o.fails([]string{"list"}, "this terminal was signed out by a newer sign-in of "+o.account+" (session_replaced): run `countersign inbox login` again")
}

// TestInboxTerminalWatch: watch prints the event an agent's call causes,
// says loudly when an approved task is not carried out, and stops cleanly
// when interrupted.
func TestInboxTerminalWatch(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	o.login()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return o.env[k] }}
	done := make(chan int, 1)
	go func() { done <- a.main(ctx, []string{"inbox", "watch", "--dir", o.dir}) }()
	waitFor(t, &errb, func(s string) bool { return strings.Contains(s, "watching the inbox of "+o.account) }, "watch to connect: %s")

	task := startGame(t, agent, o.account, "probe")
	line := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ` + task.TaskID + ` open$`)
	waitFor(t, &out, line.MatchString, "the open event: %s")
	if _, err := agent.Call(context.Background(), o.account, "probe", "task_cancel", map[string]any{"task_id": task.TaskID}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, func(s string) bool { return strings.Contains(s, " "+task.TaskID+" cancelled\n") }, "the cancel event: %s")

	// A turn approved over another summary than its own is not carried
	// out, and watch says so loudly.
	task = startGame(t, agent, o.account, "probe")
	term, err := openTerminal(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := term.device(a, true, false)
	if err != nil {
		t.Fatal(err)
	}
	_, opened, err := term.openTask(ctx, d, task.TaskID)
	if err != nil || opened == nil {
		t.Fatalf("open the turn: %v", err)
	}
	opened.Envelope.Display.Summary = "give the agent your guess of a number from 1 to 2"
	if _, err := d.Approve(ctx, opened, []byte("1"), ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, func(s string) bool {
		return strings.Contains(s, " "+task.TaskID+" VOID, not carried out (countersign inbox activity says why)\n")
	},
		"the void event: %s")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("watch exited %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop")
	}
}

// waitFor waits until cond holds of what buf holds; what says what for,
// with a %s for the buffer.
func waitFor(t *testing.T, buf *syncBuffer, cond func(string) bool, what string) {
	t.Helper()
	if !buf.await(cond, 20*time.Second) {
		t.Fatalf("waited for "+what, buf.String())
	}
}

// interactive runs `countersign inbox ARGS` with standard input fed by the
// test: sign answers the sentence the command prints with whatever the
// test's wallet returns.
func (o *owner) interactive(sign func(message, recipient string) string, args ...string) result {
	o.t.Helper()
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb syncBuffer
	a := &app{stdin: pr, stdout: &out, stderr: &errb, getenv: func(k string) string { return o.env[k] }}
	done := make(chan int, 1)
	go func() {
		done <- a.main(context.Background(), append(append([]string{"inbox"}, args...), "--dir", o.dir))
	}()
	prompt := regexp.MustCompile(`(?m)^  message:   (.*)\n  recipient: (.*)\nthen paste`)
	deadline := time.After(30 * time.Second)
	for {
		// Look at the prompt again at every write to standard error.
		text, wrote := errb.next()
		if m := prompt.FindStringSubmatch(text); m != nil && pw != nil {
			answer := sign(m[1], m[2])
			go func(w *io.PipeWriter) { _, _ = io.WriteString(w, answer); w.Close() }(pw)
			pw = nil
		}
		select {
		case code := <-done:
			return result{code, out.String(), errb.String()}
		case <-deadline:
			o.t.Fatalf("countersign inbox %v did not finish: %s", args, errb.String())
		case <-wrote:
		}
	}
}

// walletSign signs with `countersign wallet sign`, as an owner would in
// another terminal.
func (o *owner) walletSign(message, recipient string) string {
	o.t.Helper()
	r := run(o.t, context.Background(), nil, "wallet", "sign", "--wallet", o.wallet, "--message", message, "--recipient", recipient)
	if r.code != 0 {
		o.t.Fatalf("wallet sign: %+v", r)
	}
	return r.stdout
}

// TestInboxTerminalExternalWallet signs in and approves with a wallet
// elsewhere: the terminal prints the sentence, `countersign wallet sign`
// signs it, its JSON is pasted on standard input. An answer that signs
// another message is refused.
func TestInboxTerminalExternalWallet(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")

	other := func(message, recipient string) string {
		return o.walletSign(strings.Replace(message, "Valid until", "Valid until about", 1), recipient)
	}
	r := o.interactive(other, "login", "--external", "--account", o.account)
	if r.code != 1 || !strings.Contains(r.stderr, "the wallet signed another message than the one asked for") {
		t.Fatalf("login with a signature of another message: %+v", r)
	}
	// The same signature without the message it echoes: it does not
	// verify over the sentence asked for.
	stripped := func(message, recipient string) string {
		var m map[string]any
		_ = json.Unmarshal([]byte(other(message, recipient)), &m)
		delete(m, "message")
		b, _ := json.Marshal(m)
		return string(b)
	}
	r = o.interactive(stripped, "login", "--external", "--account", o.account)
	if r.code != 1 || !strings.Contains(r.stderr, "does not verify over the message asked for") {
		t.Fatalf("login with a signature of another message, not echoed: %+v", r)
	}
	r = o.interactive(func(m, rc string) string { return o.walletSign(m, "other") }, "login", "--external", "--account", o.account)
	if r.code != 1 || !strings.Contains(r.stderr, "another recipient than "+strings.TrimPrefix(s.base, "http://")) {
		t.Fatalf("login with a signature for another recipient: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(o.dir, sessionFile)); err == nil {
		t.Fatal("a refused login saved a session")
	}

	var asked string
	r = o.interactive(func(m, rc string) string { asked = m; return o.walletSign(m, rc) }, "login", "--external", "--account", o.account, "--days", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "signed in as "+o.account) {
		t.Fatalf("external login: %+v", r)
	}
	sess := o.session()
	if sess.Wallet != "" || !strings.HasPrefix(asked, "Sign in to Countersign as "+o.account+". Device key: p256:") ||
		!strings.HasSuffix(asked, "Valid until "+sess.ValidUntil+".") {
		t.Fatalf("asked to sign %q; session %+v", asked, sess)
	}

	// Approving signs externally too: the session names no wallet file.
	task := startGame(t, agent, o.account, "probe")
	r = o.interactive(func(m, rc string) string { asked = m; return o.walletSign(m, rc) }, "approve", task.TaskID, "--text", "50")
	// The wallet's sentence names what approving does, and so does the
	// prompt before it.
	const summary = "give the agent your guess of a number from 1 to 100"
	if r.code != 0 || !strings.HasPrefix(asked, "Approve in Countersign as "+o.account+": "+summary+". Task "+task.TaskID+" with hash "+task.TaskHash+" and supply ") ||
		!strings.Contains(r.stderr, "Approving task "+task.TaskID+": "+summary+"\n") {
		t.Fatalf("external approve: %+v (asked %q)", r, asked)
	}
	if st := waitState(t, agent, o.account, "probe", task.TaskID, string(countersign.StateDone), string(countersign.StateFailed)); st.State != string(countersign.StateDone) {
		t.Fatalf("the externally approved turn ended %+v", st)
	}
}

// TestInboxTerminalAnswerShape: a text that does not fit the shape the
// answer operation declares (a guess is a whole number) is told before the
// wallet is asked, and nothing is signed or sent; show says what is
// expected; a text that fits is signed once and the game goes on.
func TestInboxTerminalAnswerShape(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	// A wallet elsewhere: every sentence it is asked to sign is seen here.
	var asked []string
	sign := func(m, rc string) string { asked = append(asked, m); return o.walletSign(m, rc) }
	if r := o.interactive(sign, "login", "--external", "--account", o.account); r.code != 0 {
		t.Fatalf("external login: %+v", r)
	}
	asked = nil

	task := startGame(t, agent, o.account, "probe")
	containsAll(t, "show", o.ok("show", task.TaskID), "answer: text (guess): approve with --text\nexpected: a whole number in digits, such as 7\nhash: ")

	file := filepath.Join(t.TempDir(), "guess.txt")
	if err := os.WriteFile(file, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"approve", task.TaskID, "--text", "abc"},
		{"approve", task.TaskID, "--text", "4 2", "--note", "a note"},
		{"approve", task.TaskID, "--text", ""},
		{"approve", task.TaskID, "--file", file},
	} {
		r := o.interactive(sign, args...)
		if r.code != 1 || r.stderr != "countersign inbox: the answer does not fit task "+task.TaskID+": expected a whole number in digits, such as 7; nothing was signed, and the task still waits\n" {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	if len(asked) != 0 {
		t.Fatalf("the wallet was asked to sign %q", asked)
	}
	if st, err := agent.Status(context.Background(), o.account, "probe", task.TaskID, 0); err != nil || st.State != string(countersign.StateOpen) {
		t.Fatalf("after the refused answers the task is %+v %v", st, err)
	}

	r := o.interactive(sign, "approve", task.TaskID, "--text", "42")
	if r.code != 0 || len(asked) != 1 || !strings.HasPrefix(asked[0], "Approve in Countersign as "+o.account+": ") {
		t.Fatalf("approve 42: %+v (asked %q)", r, asked)
	}
	st := waitState(t, agent, o.account, "probe", task.TaskID, string(countersign.StateDone), string(countersign.StateFailed))
	var res guessResult
	if st.State != string(countersign.StateDone) || json.Unmarshal(st.Result, &res) != nil || string(res.Guess) != "42" || res.Attempt != 1 ||
		(st.NextTaskID == "") == (st.NoticeTaskID == "") {
		t.Fatalf("the guess 42 ended %+v", st)
	}
}
