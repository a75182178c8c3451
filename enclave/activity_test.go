package enclave_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// historyWorld is the whole service with the notes connector, whose writes
// are carried out at once.
func historyWorld(t *testing.T, db *sqlstore.DB) (*servicetest.World, *servicetest.Effects) {
	fx := &servicetest.Effects{}
	return servicetest.New(t, db, servicetest.WithConnector(servicetest.Notes(fx))), fx
}

// history lists every page of the owner's history as d reads it and opens
// each entry on d.
func history(t *testing.T, d *device.Device, q client.ActivityQuery) map[string]*device.Entry {
	t.Helper()
	out := map[string]*device.Entry{}
	for {
		page, err := d.Client.Activity(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			if out[e.ID] != nil {
				t.Fatalf("entry %s is listed twice", e.ID)
			}
			o, err := d.OpenEntry(e)
			if err != nil {
				t.Fatalf("entry %s does not open on the device: %v", e.ID, err)
			}
			out[e.ID] = o
		}
		if !page.More {
			return out
		}
		q.Before = page.Entries[len(page.Entries)-1].ID
	}
}

// call has the agent call an operation and returns its answer.
func call(t *testing.T, w *servicetest.World, project, operation string, args map[string]any) map[string]any {
	t.Helper()
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, project, operation, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// pay opens a ledger task with a title and summary and returns its id.
func pay(t *testing.T, w *servicetest.World, title, summary string) string {
	t.Helper()
	a := call(t, w, "ledger", "pay", map[string]any{"amount": 1, "title": title, "summary": summary})
	id, _ := a["task_id"].(string)
	if id == "" {
		t.Fatalf("pay answered %v", a)
	}
	return id
}

// approveAndRun approves a task at the door and runs its answer.
func approveAndRun(t *testing.T, w *servicetest.World, id string) {
	t.Helper()
	run := w.Approve(id, nil)
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryTellsEachEnd: every write carried out and every task that
// ended is one entry of the owner's history, with its state in clear and
// its title, summary and outcome sealed, opened by the owner's device.
func TestHistoryTellsEachEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w, fx := historyWorld(t, db)
		const link = "https://ledger.example/payments/tx-1"

		// A write carried out at once, telling what it did; one telling
		// nothing; a read, which the history does not keep.
		call(t, w, "notes", "note", map[string]any{"title": "Note to self", "summary": "write a note in the notebook",
			"outcome": "Noted on page 3", "url": "https://notes.example/3"})
		call(t, w, "notes", "plain", nil)
		call(t, w, "notes", "look", nil)
		if fx.Total() != 2 {
			t.Fatalf("%d direct writes happened, want 2", fx.Total())
		}

		// An approved write that was done, with its outcome.
		w.SetAnswer(func(_ context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]any{"ok": true}, Outcome: connectors.Outcome{Text: "Payment sent: transaction tx-1", URL: link}}, nil
		})
		done := pay(t, w, "Pay Acme", "pay $1 to Acme Corp; it cannot be undone")
		approveAndRun(t, w, done)

		// An approved write refused after the approval.
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, connectors.Refused(countersign.Conflict, false, "README.md changed after you saw it.")
		})
		failed := pay(t, w, "Commit to octo/app", "commit 2 files to main of octo/app")
		approveAndRun(t, w, failed)

		// Tasks that ended without running: rejected, cancelled, expired,
		// approved but never run, and a notice read.
		rejected := pay(t, w, "Pay Bob", "pay $1 to Bob")
		if _, err := w.Owner.Client.Reject(ctx, rejected, nil); err != nil {
			t.Fatal(err)
		}
		cancelled := pay(t, w, "Pay Carol", "pay $1 to Carol")
		if _, err := w.Owner.Client.Cancel(ctx, cancelled); err != nil {
			t.Fatal(err)
		}
		notice := w.Tell()
		if _, err := w.Owner.Client.Acknowledge(ctx, notice); err != nil {
			t.Fatal(err)
		}
		stranded := pay(t, w, "Pay Dave", "pay $1 to Dave")
		w.Approve(stranded, nil)
		expired := pay(t, w, "Pay Erin", "pay $1 to Erin")
		// What ended so far is listed; a task still open or approved is not.
		for id := range history(t, w.Owner, client.ActivityQuery{}) {
			if id == expired || id == stranded {
				t.Errorf("task %s is listed before it ended", id)
			}
		}
		w.Clock.Add(countersign.MaxTaskLife + time.Minute)
		if _, err := w.Enclave.Sweeps.Sweep(ctx); err != nil {
			t.Fatal(err)
		}

		got := history(t, w.Owner, client.ActivityQuery{})
		var direct []*device.Entry
		for _, e := range got {
			if e.Via == client.ViaDirect {
				direct = append(direct, e)
			}
		}
		if len(got) != 9 || len(direct) != 2 {
			t.Fatalf("the history holds %d entries (%d direct), want 9 (2 direct)", len(got), len(direct))
		}
		noted, plain := direct[0], direct[1]
		if plain.Operation == "note" {
			noted, plain = plain, noted
		}
		type want struct {
			e                               *device.Entry
			via, op, state, reason          string
			title, summary, text, url, told string
			failed                          bool
		}
		for _, c := range []want{
			{noted, "direct", "note", "done", "", "Note to self", "write a note in the notebook", "Noted on page 3", "https://notes.example/3", "Noted on page 3", false},
			{plain, "direct", "plain", "done", "", "", "", "", "", "Done.", false},
			{got[done], "task", "pay", "done", "", "Pay Acme", "pay $1 to Acme Corp; it cannot be undone", "Payment sent: transaction tx-1", link, "Payment sent: transaction tx-1", false},
			{got[failed], "task", "pay", "failed", "run_refused:conflict", "Commit to octo/app", "commit 2 files to main of octo/app",
				"README.md changed after you saw it. Nothing was written.", "", "README.md changed after you saw it. Nothing was written.", true},
			{got[rejected], "task", "pay", "rejected", "", "Pay Bob", "pay $1 to Bob", "", "", "You rejected it. Nothing was written.", false},
			{got[cancelled], "task", "pay", "cancelled", "", "Pay Carol", "pay $1 to Carol", "", "", "Cancelled before it was answered. Nothing was written.", false},
			{got[notice], "task", "tell", "done", "", "Paid", "", "", "", "Done.", false},
			{got[stranded], "task", "pay", "failed", "run_not_started", "Pay Dave", "pay $1 to Dave", "", "", "Approved, but the write did not start within 30 minutes. Nothing was written.", true},
			{got[expired], "task", "pay", "expired", "", "Pay Erin", "pay $1 to Erin", "", "", "It expired before it was answered. Nothing was written.", false},
		} {
			e := c.e
			if e == nil {
				t.Errorf("an entry (%s %s) is missing", c.op, c.state)
				continue
			}
			taskID := e.ID
			if c.via == "direct" {
				taskID = ""
			}
			if e.Via != c.via || e.Operation != c.op || e.State != c.state || e.FailureReason != c.reason || e.TaskID != taskID ||
				e.Project == "" || e.Connector != e.Project || e.Preparer != w.Agent {
				t.Errorf("entry %s in clear: %+v, want %s %s %s %s", e.ID, e.ActivityEntry, c.via, c.op, c.state, c.reason)
			}
			if e.Title != c.title || e.Summary != c.summary || e.Result.Text != c.text || e.Result.URL != c.url {
				t.Errorf("entry %s opens to %q %q %+v, want %q %q %q %q", e.ID, e.Title, e.Summary, e.Result, c.title, c.summary, c.text, c.url)
			}
			if e.Told() != c.told || e.Failed() != c.failed {
				t.Errorf("entry %s tells %q (failed %v), want %q (%v)", e.ID, e.Told(), e.Failed(), c.told, c.failed)
			}
		}
	})
}

// TestHistoryOnLaterDevices: a device signed in after entries were made
// opens them (its sign-in's unlock wraps their keys), an entry of a task
// that was open then too; a withdrawn device's copies go with it.
func TestHistoryOnLaterDevices(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, _ := historyWorld(t, db)
	call(t, w, "notes", "note", map[string]any{"title": "Before", "outcome": "Written before"})
	waiting := pay(t, w, "Pay later", "")

	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	later := w.Device(wallet)
	if _, err := later.SignIn(ctx, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Owner.Client.Reject(ctx, waiting, nil); err != nil {
		t.Fatal(err)
	}
	call(t, w, "notes", "note", map[string]any{"title": "After", "outcome": "Written after"})
	for name, d := range map[string]*device.Device{"the first device": w.Owner, "the later device": later} {
		got := history(t, d, client.ActivityQuery{})
		titles := map[string]bool{}
		for _, e := range got {
			titles[e.Title] = true
		}
		if len(got) != 3 || !titles["Before"] || !titles["After"] || !titles["Pay later"] {
			t.Errorf("%s opens %v", name, titles)
		}
	}

	// A third device, withdrawn: its copies go with it.
	third := w.Device(wallet)
	sess, err := third.SignIn(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	copiesOf := func(device string) int {
		var n int
		if err := db.Postgres().QueryRow(ctx, "SELECT count(*) FROM activity_copies WHERE device_id = $1", device).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := copiesOf(sess.DeviceID); n != 3 {
		t.Fatalf("the third device holds %d copies, want 3", n)
	}
	conf, err := w.Owner.Confirm(approval.ActionWithdrawDevice(sess.DeviceID))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Owner.Client.WithdrawDevice(ctx, sess.DeviceID, conf); err != nil {
		t.Fatal(err)
	}
	if n := copiesOf(sess.DeviceID); n != 0 {
		t.Errorf("a withdrawn device keeps %d copies", n)
	}
}

// TestHistoryPages: pages newest first with before, and the filters by
// project and by agent.
func TestHistoryPages(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, _ := historyWorld(t, db)
	for i := range 5 {
		call(t, w, "notes", "note", map[string]any{"title": fmt.Sprintf("Note %d", i)})
		w.Clock.Add(time.Second)
	}
	other := w.NewAgent("other.near", "ak_other-agent-key-0123456789abcdefghijklmnop")
	if _, err := other.Call(ctx, w.Owner.Account, "notes", "note", map[string]any{"title": "By another"}, nil); err != nil {
		t.Fatal(err)
	}
	w.Clock.Add(time.Second)
	rejected := pay(t, w, "Pay", "")
	if _, err := w.Owner.Client.Reject(ctx, rejected, nil); err != nil {
		t.Fatal(err)
	}

	var titles []string
	before := ""
	for pages := 0; ; pages++ {
		page, err := w.Owner.Client.Activity(ctx, client.ActivityQuery{Before: before, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			o, err := w.Owner.OpenEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			titles = append(titles, o.Title)
		}
		if !page.More {
			if len(page.Entries) == 0 || pages != 2 {
				t.Errorf("page %d is the last with %d entries", pages, len(page.Entries))
			}
			break
		}
		before = page.Entries[len(page.Entries)-1].ID
	}
	if want := "Pay,By another,Note 4,Note 3,Note 2,Note 1,Note 0"; strings.Join(titles, ",") != want {
		t.Errorf("pages of 3 list %s, want %s", strings.Join(titles, ","), want)
	}
	for _, c := range []struct {
		q    client.ActivityQuery
		want int
	}{
		{client.ActivityQuery{Project: "notes"}, 6},
		{client.ActivityQuery{Project: "ledger"}, 1},
		{client.ActivityQuery{Preparer: "other.near"}, 1},
		{client.ActivityQuery{Preparer: w.Agent, Project: "notes"}, 5},
		{client.ActivityQuery{Project: "probe"}, 0},
	} {
		if got := history(t, w.Owner, c.q); len(got) != c.want {
			t.Errorf("%+v lists %d entries, want %d", c.q, len(got), c.want)
		}
	}
	// Each malformed query is refused with its sentence, before the store
	// is asked.
	for q, sentence := range map[string]string{
		"limit=0":                "limit is a number from 1 to 100",
		"limit=101":              "limit is a number from 1 to 100",
		"limit=x":                "limit is a number from 1 to 100",
		"limit=07":               "limit is a number from 1 to 100",
		"limit=1&limit=2":        "limit is a number from 1 to 100",
		"before=NOT-AN-ID":       "before is malformed",
		"before=" + rejected[:5]: "before names no entry of yours",
		"project=%00":            "project is malformed",
		"preparer=UPPER.near":    "preparer is malformed",
		"project=a&project=b":    "project is given more than once",
	} {
		req, err := http.NewRequest(http.MethodGet, w.URL+"/inbox/activity?"+q, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+w.Owner.Client.Session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error, Reason string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body.Reason != "invalid_request" || body.Error != sentence {
			t.Errorf("%s: %d %+v, want 400 %q", q, resp.StatusCode, body, sentence)
		}
	}
}

// TestHistoryPurged: entries go 30 days after they ended, with the
// copies of their keys.
func TestHistoryPurged(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, _ := historyWorld(t, db)
	entries := func() []string {
		var ids []string
		err := db.Tx(ctx, func(tx store.Tx) error {
			list, err := tx.OwnerActivity(ctx, store.ActivityQuery{Owner: w.Owner.Account, Limit: 10})
			for _, a := range list {
				ids = append(ids, a.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	copiesOf := func(entry string) int {
		var n int
		if err := db.Postgres().QueryRow(ctx, "SELECT count(*) FROM activity_copies WHERE entry_id = $1", entry).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	call(t, w, "notes", "note", map[string]any{"title": "Old"})
	old := entries()
	if len(old) != 1 || copiesOf(old[0]) != 1 {
		t.Fatalf("the old entry: %v", old)
	}
	w.Clock.Add(countersign.OutcomeKept - time.Hour)
	call(t, w, "notes", "note", map[string]any{"title": "Recent"})
	w.Clock.Add(2 * time.Hour)
	if _, err := w.Enclave.Sweeps.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if left := entries(); len(left) != 1 || left[0] == old[0] {
		t.Errorf("after 30 days the history holds %v, want only the recent entry", left)
	}
	if n := copiesOf(old[0]); n != 0 {
		t.Errorf("the purged entry's %d copies are left", n)
	}
}

// TestHistoryCiphertextOnly: titles, summaries, outcome texts and links,
// and a refusal's sentence reach the owner's devices, and no clear column,
// no file of the embedded store and no log line.
func TestHistoryCiphertextOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w, _ := historyWorld(t, db)
		var canaries []string
		c := func(what string) string {
			s := canary(t, what)
			canaries = append(canaries, s)
			return s
		}
		call(t, w, "notes", "note", map[string]any{"title": "Note " + c("didtitle"), "summary": "write " + c("didsummary"),
			"outcome": "Noted " + c("didoutcome"), "url": "https://notes.example/" + c("didurl")})
		outcome, url, sentence := c("outcome"), c("url"), c("sentence")
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]any{"ok": true}, Outcome: connectors.Outcome{Text: "Sent " + outcome, URL: "https://ledger.example/" + url}}, nil
		})
		approveAndRun(t, w, pay(t, w, "Pay "+c("title1"), "pay "+c("summary1")))
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{}, connectors.Refused(countersign.Conflict, false, "Refused %s.", sentence)
		})
		approveAndRun(t, w, pay(t, w, "Pay "+c("title2"), "pay "+c("summary2")))
		rejected := pay(t, w, "Pay "+c("title3"), "pay "+c("summary3"))
		if _, err := w.Owner.Client.Reject(ctx, rejected, nil); err != nil {
			t.Fatal(err)
		}
		pay(t, w, "Pay "+c("title4"), "pay "+c("summary4")) // still open

		// Every canary reached the device (so the scan below looks for
		// what was really there).
		var opened strings.Builder
		for _, e := range history(t, w.Owner, client.ActivityQuery{}) {
			fmt.Fprintln(&opened, e.Title, e.Summary, e.Result.Text, e.Result.URL)
		}
		for _, s := range canaries {
			if !strings.Contains(opened.String(), s) && !strings.Contains(s, "title4") && !strings.Contains(s, "summary4") {
				t.Errorf("%s does not reach the device", s)
			}
		}
		if found := storetest.Find(t, db, canaries...); len(found) > 0 {
			t.Errorf("the history is stored in clear:\n%s", strings.Join(found, "\n"))
		}
		logs := w.Logs.String()
		for _, s := range canaries {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds %s", s)
			}
		}
	})
}

// TestHistoryLeavesOutWhatIsNotShownText: a connector's words that are
// not shown text (a line break, a bidi control, a link that is not https)
// are left out of the entry; the write is still in the history.
func TestHistoryLeavesOutWhatIsNotShownText(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, _ := historyWorld(t, db)
	call(t, w, "notes", "note", map[string]any{"title": "Two\nlines", "summary": "right\u202eleft",
		"outcome": "Noted", "url": "http://notes.example/1"})
	w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
		return connectors.Report{}, connectors.Refused(countersign.Conflict, true, "It went\nhalf way\u200b.")
	})
	id := pay(t, w, "Pay", "")
	approveAndRun(t, w, id)
	got := history(t, w.Owner, client.ActivityQuery{})
	if len(got) != 2 {
		t.Fatalf("%d entries", len(got))
	}
	for _, e := range got {
		switch e.Via {
		case client.ViaDirect:
			if e.Title != "" || e.Summary != "" || e.Result.Text != "Noted" || e.Result.URL != "" {
				t.Errorf("the direct entry keeps %q %q %+v", e.Title, e.Summary, e.Result)
			}
		default:
			// A sentence's line breaks become spaces; one it cannot show
			// at all is left to the state's words.
			if e.Result.Text != "" || e.Told() != "The write failed after your approval (conflict); whether it happened is not known." {
				t.Errorf("the failed entry tells %q (%q)", e.Told(), e.Result.Text)
			}
		}
	}
	if strings.Contains(w.Logs.String(), "half way") {
		t.Error("the log holds the sentence")
	}
}

// TestHistoryUnlockPastOneBatch: a device signed in later gets the keys of
// every entry of the last 30 days, past one transaction's batch, and none
// of older ones.
func TestHistoryUnlockPastOneBatch(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, _ := historyWorld(t, db)
	now := w.Clock.Now()
	err := db.Tx(ctx, func(tx store.Tx) error {
		p, err := tx.Project(ctx, w.Owner.Account, "notes")
		if err != nil {
			return err
		}
		for i := range 1203 {
			at := now.Add(-time.Duration(i) * time.Hour)
			a := store.Activity{ID: fmt.Sprintf("%026d", i), Owner: w.Owner.Account, Project: "notes", ProjectUUID: p.UUID,
				Connector: "notes", Operation: "note", Preparer: w.Agent, Via: store.ViaDirect, State: countersign.StateDone,
				At: at, KeyID: w.Keys.Current(), Sealed: []byte("x")}
			if err := tx.InsertActivity(ctx, a, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	later := w.Device(w.Owner.Signer.(device.WalletSigner).Wallet)
	sess, err := later.SignIn(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var n, newest int
	if err := db.Postgres().QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE entry_id = $2) FROM activity_copies WHERE device_id = $1",
		sess.DeviceID, fmt.Sprintf("%026d", 0)).Scan(&n, &newest); err != nil {
		t.Fatal(err)
	}
	// Entries are an hour apart: those of the last 30 days are 721.
	if n != 30*24+1 || newest != 1 {
		t.Errorf("the later device holds %d copies (the newest entry's: %d), want %d", n, newest, 30*24+1)
	}
}

// TestHistoryDirectWriteOnce: a write retried with its Idempotency-Key is
// answered again without running, and is one entry.
func TestHistoryDirectWriteOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w, fx := historyWorld(t, db)
	for range 3 {
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "notes", "note", map[string]any{"title": "Once"},
			&client.CallOptions{IdempotencyKey: "note-1"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := history(t, w.Owner, client.ActivityQuery{}); len(got) != 1 || fx.Total() != 1 {
		t.Errorf("a write retried twice: %d entries, %d writes", len(got), fx.Total())
	}
}
