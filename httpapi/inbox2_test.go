package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/argschema"
	"countersign/client"
	"countersign/connectors/probe"
	"countersign/device"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/sealing"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestTaskListsAndMoves: the waiting list carries ciphertext and pages; the
// closed list carries none; acknowledge, cancel and bulk cancel move tasks
// as the owner says.
func TestTaskListsAndMoves(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		var ids []string
		for i := 0; i < 5; i++ {
			ids = append(ids, w.Pay())
			w.Clock.Add(time.Second)
		}
		notice := w.Tell()
		c := w.Owner.Client
		page, err := c.Tasks(ctx, "waiting", "", 4)
		if err != nil || len(page.Tasks) != 4 || !page.More || page.Tasks[0].ID != notice {
			t.Fatalf("first page: %d more=%v (%v)", len(page.Tasks), page.More, err)
		}
		for _, v := range page.Tasks {
			if v.Content == nil || v.DeviceCopy == nil || v.Locked || v.TaskHash == "" {
				t.Fatalf("a waiting task without its ciphertext: %+v", v)
			}
		}
		rest, _ := c.Tasks(ctx, "waiting", page.Tasks[3].ID, 4)
		if len(rest.Tasks) != 2 || rest.More || rest.Tasks[1].ID != ids[0] {
			t.Fatalf("second page: %+v", rest)
		}
		if _, err := c.Tasks(ctx, "everything", "", 0); reason(err) != "invalid_request" {
			t.Fatalf("show=everything: %v", err)
		}
		if _, err := c.Acknowledge(ctx, ids[0]); reason(err) != "invalid_request" {
			t.Fatalf("acknowledging a confirm task: %v", err)
		}
		if st, err := c.Acknowledge(ctx, notice); err != nil || st.State != string(countersign.StateDone) {
			t.Fatalf("Got it: %+v %v", st, err)
		}
		if st := w.Status("ledger", notice); st.State != string(countersign.StateDone) {
			t.Fatalf("the agent reads the notice as %s", st.State)
		}
		if st, err := c.Cancel(ctx, ids[0]); err != nil || st.State != string(countersign.StateCancelled) {
			t.Fatalf("cancel: %+v %v", st, err)
		}
		if _, err := c.Cancel(ctx, ids[0]); reason(err) != "task_closed" {
			t.Fatalf("cancel twice: %v", err)
		}
		n, err := c.CancelMatching(ctx, w.Agent, "ledger")
		if err != nil || n != 4 {
			t.Fatalf("bulk cancel: %d %v", n, err)
		}
		closed, _ := c.Tasks(ctx, "closed", "", 0)
		if len(closed.Tasks) != 6 {
			t.Fatalf("%d closed tasks", len(closed.Tasks))
		}
		for _, v := range closed.Tasks {
			if v.Content != nil || v.DeviceCopy != nil || len(v.Files) != 0 {
				t.Fatalf("a closed task shows ciphertext: %+v", v)
			}
		}
	})
}

// TestMutes: a muted agent's waiting tasks go at once and its next tasks
// are refused at opening; lifting the mute lets it in again.
func TestMutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		w.Pay()
		w.Pay()
		c := w.Owner.Client
		n, err := c.Mute(ctx, "agent", w.Agent, true)
		if err != nil || n != 2 {
			t.Fatalf("mute with delete_waiting: %d %v", n, err)
		}
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil); refusal(err) != "muted" {
			t.Fatalf("a muted agent's call: %v", err)
		}
		mutes, _ := c.Mutes(ctx)
		if len(mutes) != 1 || mutes[0].Subject != w.Agent || mutes[0].SubjectIs != "agent" {
			t.Fatalf("mutes %+v", mutes)
		}
		if _, err := c.Mute(ctx, "planet", "x", false); reason(err) != "invalid_request" {
			t.Fatalf("a bad subject: %v", err)
		}
		if n, err := c.Unmute(ctx, "agent", w.Agent); err != nil || n != 1 {
			t.Fatalf("unmute: %d %v", n, err)
		}
		w.Pay()
		if _, err := c.Mute(ctx, "project", "probe", false); err != nil {
			t.Fatal(err)
		}
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "probe", "guess_start", nil, nil); refusal(err) != "muted" {
			t.Fatalf("a muted project's call: %v", err)
		}
		w.Pay() // the ledger project is not muted
	})
}

// TestOwnerProjects: an owner sets and removes projects with signed
// confirmations; credentials are sealed and never shown or stored in clear.
func TestOwnerProjects(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		c := w.Owner.Client
		secret := "canary-credential-" + hex.EncodeToString(sha256.New().Sum([]byte(t.Name()))[:8])
		text := `{"connector":"ledger","policy":{"confirm":["pay"]},"credentials":{"token":"` + secret + `"},"agents":["bot.near"]}`
		conf, err := w.Owner.Confirm(approval.ActionSetProject("payments", text))
		if err != nil {
			t.Fatal(err)
		}
		// Refusals first: another text, a bad name, a replay of a spent one.
		if _, err := c.PutProject(ctx, "payments", strings.Replace(text, "pay", "pay\"", 1), conf); reason(err) != "invalid_request" && reason(err) != "confirmation_required" {
			t.Fatalf("another text: %v", err)
		}
		if _, err := c.PutProject(ctx, "payments", strings.Replace(text, `"pay"]`, `"tell"]`, 1), conf); reason(err) != "confirmation_required" {
			t.Fatalf("a text the owner did not sign: %v", err)
		}
		p, err := c.PutProject(ctx, "payments", text, conf)
		if err != nil {
			t.Fatal(err)
		}
		if p.PolicyMode != "ok" || !p.Credentials || p.Connector != "ledger" || strings.Contains(fmt.Sprint(p), secret) {
			t.Fatalf("project %+v", p)
		}
		// The owner is told what the policy does, write by write.
		if ws := p.PolicyExplained.Writes; len(ws) == 0 || ws[0].Op != "pay" || ws[0].Always != "ask" || ws[0].Text != "pay: asks you first." {
			t.Fatalf("the policy explained: %+v", p.PolicyExplained)
		}
		if _, err := c.PutProject(ctx, "payments", text, conf); reason(err) != "confirmation_required" {
			t.Fatalf("a replayed confirmation: %v", err)
		}
		if found := storetest.Find(t, db, secret); len(found) > 0 {
			t.Fatalf("credentials stored in clear: %v", found)
		}
		// A policy naming a read or a misspelling is unreadable, shown so.
		bad := `{"connector":"ledger","policy":{"confirm":["Pay"]},"agents":["bot.near"]}`
		conf, _ = w.Owner.Confirm(approval.ActionSetProject("payments", bad))
		p, err = c.PutProject(ctx, "payments", bad, conf)
		if err != nil || p.PolicyMode != "unreadable" || p.PolicySentence == "" || !p.Credentials {
			t.Fatalf("an unreadable policy: %+v %v", p, err)
		}
		if ws := p.PolicyExplained.Writes; len(ws) == 0 || ws[0].Always != "refuse" {
			t.Fatalf("an unreadable policy explained: %+v", p.PolicyExplained)
		}
		list, _ := c.Projects(ctx)
		if len(list) != 3 {
			t.Fatalf("%d projects", len(list))
		}
		rm, _ := w.Owner.Confirm(approval.ActionRemoveProject("payments"))
		if err := c.DeleteProject(ctx, "payments", rm); err != nil {
			t.Fatal(err)
		}
		if list, _ = c.Projects(ctx); len(list) != 2 {
			t.Fatalf("%d projects after removing one", len(list))
		}
	})
}

// TestConnectorCatalogue is public and names builds, operations and prices.
func TestConnectorCatalogue(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	cs, err := (&client.Client{BaseURL: w.URL}).Connectors(ctx)
	if err != nil || len(cs) != 2 || cs[1].Name != "probe" || cs[1].Build != "probe@1.0.0" {
		t.Fatalf("catalogue %+v %v", cs, err)
	}
	ops := map[string]string{}
	for _, o := range cs[1].Operations {
		ops[o.Name] = fmt.Sprintf("%s %d", o.Kind, o.Price)
	}
	if ops["guess_start"] != "write 10000" || ops["guess"] != "answer 0" {
		t.Fatalf("probe operations %v", ops)
	}
	// Each operation says what it does; a read or a write declares the
	// schema of its arguments.
	for _, o := range cs[1].Operations {
		if o.Description == "" || (o.Kind == "answer") != (o.Schema == nil) {
			t.Fatalf("probe operation %+v", o)
		}
	}
	start := cs[1].Operations[0]
	if !strings.Contains(string(start.Schema), `"max":{"type":"integer","minimum":2,"maximum":1000`) || len(start.Examples) != 2 {
		t.Fatalf("guess_start declares %s %s", start.Schema, start.Examples)
	}
	cat, err := (&client.Client{BaseURL: w.URL}).Catalogue(ctx)
	if err != nil || len(cat.TaskOperations) != 5 || cat.TaskOperations[1].Name != "task_wait" ||
		!strings.Contains(string(cat.TaskOperations[1].Schema), `"timeout_s"`) {
		t.Fatalf("task operations %+v %v", cat.TaskOperations, err)
	}
	// The answer operation guess says what shape of text a guess is, as
	// the probe declares it: what the page and the terminal inbox check
	// an owner's text against. No other operation has one.
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(probe.GuessShape)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		for _, o := range c.Operations {
			switch {
			case c.Name == "probe" && o.Name == "guess":
				if string(o.SuppliedText) != want.String() {
					t.Fatalf("guess's supplied text is %s, want %s", o.SuppliedText, want.String())
				}
				shape, err := argschema.CompileTextShape("guess", o.SuppliedText)
				if err != nil || shape.Description() != "a whole number in digits, such as 7" || shape.Check([]byte("abc")) == nil || shape.Check([]byte("42")) != nil {
					t.Fatalf("the catalogue's shape of a guess: %v", err)
				}
			case o.SuppliedText != nil:
				t.Fatalf("%s %s declares supplied text %s", c.Name, o.Name, o.SuppliedText)
			}
		}
	}
	for _, o := range cat.TaskOperations {
		if o.SuppliedText != nil {
			t.Fatalf("task operation %s declares supplied text", o.Name)
		}
	}
	// The OpenAPI document says what the member is.
	resp, err := http.Get(w.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	get, _ := doc["paths"].(map[string]any)["/connectors"].(map[string]any)["get"].(map[string]any)
	if s, _ := get["summary"].(string); !strings.Contains(s, "an answer operation's shape of the text the owner supplies") {
		t.Errorf("GET /connectors is described %q", s)
	}
	found := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				if p, ok := props["supplied_text"].(map[string]any); ok {
					found++
					if d, _ := p["description"].(string); !strings.Contains(d, "the shape of the text the owner supplies") || !strings.Contains(d, "before the wallet is asked") {
						t.Errorf("supplied_text is described %q", d)
					}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc["components"])
	if found == 0 {
		t.Error("the OpenAPI document has no supplied_text member")
	}
}

// TestRateLimited: too many state changes from one owner are 429 with
// Retry-After and terminal false.
func TestRateLimited(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Inbox: w.Inbox,
		Limits: httpapi.Limits{SignInPerMinute: 1, OwnerWritesPerMinute: 2}}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Session: w.Owner.Client.Session}
	var last error
	for i := 0; i < 3; i++ {
		_, last = c.Unlock(ctx)
	}
	var e *client.Error
	if !errors.As(last, &e) || e.Status != 429 || e.Reason != "rate_limited" || e.Terminal || e.RetryAfter <= 0 {
		t.Fatalf("the third write in a minute: %+v", last)
	}
	if _, err := c.Tasks(ctx, "waiting", "", 0); err != nil {
		t.Fatalf("reads are not limited: %v", err)
	}
	for i := 0; i < 2; i++ {
		_, last = (&client.Client{BaseURL: srv.URL}).SignIn(ctx, client.SignInRequest{AccountID: "x"})
	}
	if reason(last) != "rate_limited" {
		t.Fatalf("the second sign-in in a minute: %v", last)
	}
}

// TestEventsAcrossProcesses: a task's state changes made through one server
// process reach an event stream held by another on the same PostgreSQL
// database, with nothing of what the task shows; a client that never reads
// is dropped without holding up the others.
func TestEventsAcrossProcesses(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	other, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	second := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: other, Logger: quiet, Inbox: inboxOn(w, other, quiet)}))
	defer second.Close()

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := (&client.Client{BaseURL: second.URL, Session: w.Owner.Client.Session}).Events(sctx)
	if err != nil {
		t.Fatal(err)
	}
	// A stream that is never read, on the first process.
	stuck, _ := http.NewRequestWithContext(sctx, http.MethodGet, w.URL+"/inbox/events", nil)
	stuck.Header.Set("Authorization", "Bearer "+w.Owner.Client.Session)
	stuckResp, err := http.DefaultClient.Do(stuck)
	if err != nil {
		t.Fatal(err)
	}
	defer stuckResp.Body.Close()

	task := w.Pay() // through the first process
	got := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for len(got) < 1 {
		select {
		case ev := <-events:
			if ev.TaskID == task {
				got[ev.State] = true
			}
		case <-timeout:
			t.Fatal("no event crossed processes")
		}
	}
	if _, err := w.Owner.Client.Cancel(ctx, task); err != nil {
		t.Fatal(err)
	}
	for !got["cancelled"] {
		select {
		case ev := <-events:
			raw, _ := json.Marshal(ev)
			if strings.Contains(string(raw), "Pay") {
				t.Fatalf("an event shows the task: %s", raw)
			}
			got[ev.State] = true
		case <-timeout:
			t.Fatalf("events %v", got)
		}
	}
	// Many more changes: the stream nobody reads does not hold this one up
	// (once its socket is full the server drops it).
	timeout = time.After(60 * time.Second)
	for i := 0; i < 80; i++ {
		id := w.Pay()
		if _, err := w.Owner.Client.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for n < 160 {
		select {
		case <-events:
			n++
		case <-timeout:
			t.Fatalf("only %d of 160 events reached the reading client", n)
		}
	}
}

func inboxOn(w *servicetest.World, db *sqlstore.DB, log *slog.Logger) *inbox.Service {
	return inbox.NewService(inbox.Config{Store: db, Keeper: w.Enclave.Unlock, Tokens: w.Enclave.Keys, Catalogue: w.Catalogue, Keys: approval.OffChecker{}, PublicURL: w.URL, Now: w.Clock.Now, Logger: log})
}

// TestAgentCallsLimited: one agent key's calls past its limit are 429 with
// Retry-After; another key is not held up.
func TestAgentCallsLimited(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Agents: w.Enclave.Calls,
		Limits: httpapi.Limits{AgentCallsPerMinute: 5}}))
	defer srv.Close()
	bot := &client.Client{BaseURL: srv.URL, AgentKey: w.AgentKey}
	var last error
	for i := 0; i < 2; i++ {
		_, last = bot.Call(ctx, w.Owner.Account, "ledger", "tasks", nil, nil)
	}
	var e *client.Error
	if !errors.As(last, &e) || e.Status != 429 || e.Reason != "rate_limited" || e.RetryAfter <= 0 {
		t.Fatalf("the second call in a burst of one: %v", last)
	}
	other := addAgent(t, w, "other.near")
	other.BaseURL = srv.URL
	if _, err := other.Call(ctx, w.Owner.Account, "ledger", "tasks", nil, nil); refusal(err) != "not_granted" {
		t.Fatalf("another agent was held up: %v", err)
	}
}

// TestEventStreamEndsWithItsSession: a stream whose device signs out stops
// at once, not at the next heartbeat (an hour away here).
func TestEventStreamEndsWithItsSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db, servicetest.WithHeartbeat(time.Hour))
		events := stream(t, w.URL, w.Owner)
		if err := w.Owner.Client.SignOut(ctx); err != nil {
			t.Fatal(err)
		}
		ended(t, "the stream of a signed-out device", events)
	})
}

// slowKeeper seals credentials slowly, holding the window between reading
// a project and writing it open.
type slowKeeper struct{ inbox.Keeper }

func (k slowKeeper) SealCredentials(uuid string, creds []byte) (uint32, []byte, error) {
	time.Sleep(100 * time.Millisecond)
	return k.Keeper.SealCredentials(uuid, creds)
}

// TestConcurrentProjectCreation: signed creations of one new project at
// once agree on its uuid, and its credentials open under it.
func TestConcurrentProjectCreation(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := inbox.NewService(inbox.Config{Store: db, Keeper: slowKeeper{w.Enclave.Unlock}, Tokens: w.Enclave.Keys, Catalogue: w.Catalogue,
		Keys: approval.OffChecker{}, PublicURL: w.URL, Now: w.Clock.Now, Logger: quiet})
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: db, Logger: quiet, Inbox: svc,
		Limits: httpapi.Limits{OwnerWritesPerMinute: 1000}}))
	defer srv.Close()
	owner := &client.Client{BaseURL: srv.URL, Session: w.Owner.Client.Session}
	text := `{"connector":"ledger","policy":{},"credentials":{"token":"t"},"agents":["bot.near"]}`
	var wg sync.WaitGroup
	start := make(chan struct{})
	// As many as the pool has connections, so that all of them overlap
	// (the last to commit would otherwise seal for a uuid the row lost).
	for i := 0; i < 4; i++ {
		conf, err := w.Owner.Confirm(approval.ActionSetProject("payments", text))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := owner.PutProject(ctx, "payments", text, conf); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	var p store.Project
	_ = db.Tx(ctx, func(tx store.Tx) (err error) {
		p, err = tx.Project(ctx, w.Owner.Account, "payments")
		return err
	})
	plain, err := w.Keys.Open(p.CredsKeyID, sealing.ProjectCredentials, p.UUID, p.Creds)
	if err != nil || string(plain) != `{"token":"t"}` {
		t.Fatalf("the credentials do not open under the project's uuid: %q %v", plain, err)
	}
}

// TestUnlockNeverOutlivesOpen: an unlock racing an approval leaves no device
// copy of a task that left open.
func TestUnlockNeverOutlivesOpen(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	late := w.Device(w.Owner.Signer.(device.WalletSigner).Wallet)
	signInWithoutUnlock(t, w, late)
	for i := 0; i < 10; i++ {
		id := w.Pay()
		req, _ := w.Owner.ApproveRequest(w.Open(id), nil, "")
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = late.Client.Unlock(ctx) }()
		go func() { defer wg.Done(); _, _ = w.Owner.Client.Approve(ctx, id, req) }()
		wg.Wait()
		_ = db.Tx(ctx, func(tx store.Tx) error {
			t2, _ := tx.Task(ctx, id)
			copies, _ := tx.DeviceCopies(ctx, id)
			if t2.State != countersign.StateOpen && len(copies) != 0 {
				t.Errorf("task %s is %s and keeps %d device copies", id, t2.State, len(copies))
			}
			return nil
		})
	}
}

// TestTaskFiles: a waiting task's file reaches the owner's device as
// ciphertext that only the device opens; a file the task does not have and
// a file of a task no longer waiting are refused with their sentences.
func TestTaskFiles(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		const invoice = "Invoice 2291: flat 4B, December rent"
		raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1, "invoice": invoice}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a client.Awaiting
		if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
			t.Fatalf("pay answered %s", raw)
		}
		o := open(t, w.Owner, a.TaskID)
		blob, err := w.Owner.Client.File(ctx, a.TaskID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(blob), "flat 4B") {
			t.Fatal("the file travels in clear")
		}
		if got, err := w.Owner.OpenFile(o, 0, blob); err != nil || string(got) != invoice {
			t.Fatalf("the device opened %q, %v", got, err)
		}
		if found := storetest.Find(t, db, "flat 4B"); len(found) > 0 {
			t.Fatalf("the file is stored in clear: %v", found)
		}

		refused := func(name string, err error, status int, reason, sentence string) {
			t.Helper()
			var e *client.Error
			if !errors.As(err, &e) || e.Status != status || e.Reason != reason || e.Message != sentence {
				t.Errorf("%s: %v, want %d %s %q", name, err, status, reason, sentence)
			}
		}
		_, err = w.Owner.Client.File(ctx, a.TaskID, 1)
		refused("a file the task does not have", err, 400, "invalid_request", "the task has no file 1")
		w.Approve(a.TaskID, nil)
		_, err = w.Owner.Client.File(ctx, a.TaskID, 0)
		refused("a file of an approved task", err, 409, "task_closed", "the task is approved")
	})
}

// TestNothingToRemove: removing a project that is not there, and removing
// or testing a webhook that was never named, are refused, and the owner's
// confirmation is not spent on them.
func TestNothingToRemove(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		c := w.Owner.Client
		refused := func(name string, err error, sentence string) {
			t.Helper()
			var e *client.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Reason != "invalid_request" || e.Message != sentence {
				t.Errorf("%s: %v, want 400 invalid_request %q", name, err, sentence)
			}
		}
		rmProject, _ := w.Owner.Confirm(approval.ActionRemoveProject("savings"))
		refused("removing a project that is not there", c.DeleteProject(ctx, "savings", rmProject), "no such project")
		bad, _ := w.Owner.Confirm(approval.ActionRemoveProject("Not A Name"))
		refused("removing a project by a name no project can have", c.DeleteProject(ctx, "Not A Name", bad),
			"the project in the path is not a project name (1–64 of a-z 0-9 . _ -, beginning with a letter or digit)")
		rmHook, _ := w.Owner.Confirm(approval.ActionRemoveWebhook())
		refused("removing a webhook never named", c.DeleteWebhook(ctx, rmHook), "no webhook is named")
		_, err := c.TestWebhook(ctx)
		refused("testing a webhook never named", err, "no webhook is named")

		// The refused removal spent nothing: once the project exists, the
		// same confirmation removes it.
		text := `{"connector":"ledger","policy":{"confirm":["pay"]},"agents":["bot.near"]}`
		put, _ := w.Owner.Confirm(approval.ActionSetProject("savings", text))
		if _, err := c.PutProject(ctx, "savings", text, put); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteProject(ctx, "savings", rmProject); err != nil {
			t.Fatalf("the confirmation a refusal did not spend: %v", err)
		}
	})
}
