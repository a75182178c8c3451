package httpapi_test

import (
	"context"
	"crypto/hmac"
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
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/connectors"
	"countersign/inbox"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
	"countersign/webhook"
)

// receiver is an owner's webhook endpoint on loopback that checks both
// signatures of every request it gets.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	bodies []map[string]any
	raw    []string
	// status answers each request (default 200).
	status func(n int) int
	n      int
	// heard is closed and replaced each time a request has been taken
	// down, so a test can wait for the next one.
	heard chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, status: func(int) int { return 200 }, heard: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.secret == "" {
		r.t.Errorf("a delivery before the secret was known")
		w.WriteHeader(500)
		return
	}
	// The Standard Webhooks library, with the secret it is given (never
	// empty here).
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err != nil {
		r.t.Errorf("standard webhooks: %v", err)
	} else if err := wh.Verify(body, req.Header); err != nil {
		r.t.Errorf("the Standard Webhooks signature does not verify: %v", err)
	}
	// A plain HMAC of the body with the 32 decoded secret bytes.
	key, _ := webhook.DecodeSecret(r.secret)
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	if got := req.Header.Get("X-Webhook-Signature"); got != hex.EncodeToString(mac.Sum(nil)) {
		r.t.Errorf("X-Webhook-Signature does not verify")
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Errorf("a body that is not JSON: %s", body)
	}
	if req.Header.Get("X-Event-Type") != m["type"] || req.Header.Get("X-Wallet-Id") != "owner:"+fmt.Sprint(m["owner"]) {
		r.t.Errorf("headers %v for %v", req.Header, m)
	}
	r.bodies = append(r.bodies, m)
	r.raw = append(r.raw, string(body))
	w.WriteHeader(r.status(r.n))
	close(r.heard)
	r.heard = make(chan struct{})
}

func (r *receiver) events() []map[string]any {
	ev, _ := r.eventsAndNext()
	return ev
}

// eventsAndNext is the events so far and a channel closed at the next one.
func (r *receiver) eventsAndNext() ([]map[string]any, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.bodies...), r.heard
}

func nameWebhook(t *testing.T, w *servicetest.World, url string) client.Webhook {
	t.Helper()
	wh, err := putWebhook(w, url)
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

// putWebhook names the owner's webhook, confirmed by its wallet.
func putWebhook(w *servicetest.World, url string) (client.Webhook, error) {
	conf, err := w.Owner.Confirm(approval.ActionNameWebhook(url))
	if err != nil {
		return client.Webhook{}, err
	}
	return w.Owner.Client.PutWebhook(ctx, url, conf)
}

// waitEvents waits until the receiver has n events.
func waitEvents(t *testing.T, r *receiver, n int) []map[string]any {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		ev, next := r.eventsAndNext()
		if len(ev) >= n {
			return ev
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("%d of %d events arrived: %v", len(ev), n, ev)
		}
	}
}

// TestWebhookJourney: a receiver on loopback hears of a probe turn —
// created, approved, answered, and the next turn created — each signed both
// ways, in the task's order of time, with nothing the task shows.
func TestWebhookJourney(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		w.StartJobs()
		r := newReceiver(t)
		wh := nameWebhook(t, w, r.srv.URL+"/hooks/countersign")
		if !strings.HasPrefix(wh.Secret, "whsec_") || wh.URL == nil || wh.SetByKey == "" {
			t.Fatalf("naming answered %+v", wh)
		}
		r.mu.Lock()
		r.secret = wh.Secret
		r.mu.Unlock()
		shown, err := w.Owner.Client.Webhook(ctx)
		if err != nil || shown.Secret != "" || *shown.URL != *wh.URL {
			t.Fatalf("the webhook as shown: %+v %v", shown, err)
		}
		if found := storetest.Find(t, db, wh.Secret, "/hooks/countersign"); len(found) > 0 {
			t.Fatalf("the webhook is stored in clear: %v", found)
		}

		first := w.Guess()
		if _, err := w.Owner.Approve(ctx, w.Open(first), []byte("5"), ""); err != nil {
			t.Fatal(err)
		}
		w.WaitState(first, countersign.StateDone)
		events := waitEvents(t, r, 4)
		// Delivery order across events is not promised (each is its own
		// job); each event's "at" is the time of its change.
		byType := map[string][]map[string]any{}
		for _, e := range events {
			byType[fmt.Sprint(e["type"])] = append(byType[fmt.Sprint(e["type"])], e)
		}
		if len(byType["task_created"]) != 2 || len(byType["task_approved"]) != 1 || len(byType["task_answered"]) != 1 {
			t.Fatalf("events %v", events)
		}
		created, approved, answered := byType["task_created"][0], byType["task_approved"][0], byType["task_answered"][0]
		if created["task_id"] != first {
			created = byType["task_created"][1]
		}
		for _, e := range []map[string]any{created, approved, answered} {
			if e["task_id"] != first || e["kind"] != "input" || e["preparer"] != w.Agent || e["project"] != "probe" {
				t.Errorf("event %v", e)
			}
		}
		at := func(e map[string]any) time.Time {
			t, _ := time.Parse(countersign.TimeFormat, fmt.Sprint(e["at"]))
			return t
		}
		if at(approved).Before(at(created)) || at(answered).Before(at(approved)) {
			t.Errorf("event times do not follow the task's life: %v %v %v", created["at"], approved["at"], answered["at"])
		}
		if approved["run"] == nil || approved["run"] != answered["run"] || approved["state"] != "approved" || answered["state"] != "done" {
			t.Errorf("approved/answered: %v %v", approved, answered)
		}

		// Nothing a task shows reaches a webhook.
		canary := "canary-memo-" + hex.EncodeToString([]byte(t.Name()))[:12]
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1, "memo": canary}, nil); err != nil {
			t.Fatal(err)
		}
		waitEvents(t, r, 5)
		r.mu.Lock()
		for _, raw := range r.raw {
			if strings.Contains(raw, canary) || strings.Contains(raw, "Guess my number") || strings.Contains(raw, "Pay") {
				t.Errorf("a body shows the task: %s", raw)
			}
		}
		r.mu.Unlock()

		// An attempt is written down once the receiver has answered it, so
		// the log may trail what the receiver already heard by a moment.
		var log []client.Delivery
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			log, err = w.Owner.Client.Deliveries(ctx)
			if err != nil || len(log) >= 5 || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || len(log) < 5 || log[0].StatusCode != 200 || log[0].Error != "" {
			t.Fatalf("delivery log %+v %v", log, err)
		}
		ping, err := w.Owner.Client.TestWebhook(ctx)
		if err != nil || ping.StatusCode != 200 || ping.Type != "ping" {
			t.Fatalf("test ping %+v %v", ping, err)
		}
	})
}

// TestWebhookRetries: a receiver that answers 500 then 200 gets the event
// on the second attempt, 5 s (the schedule, jitter at its middle) later;
// both attempts are in the log. A renamed webhook stops the old one's
// deliveries.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	r := newReceiver(t)
	r.status = func(n int) int {
		if n == 1 {
			return 500
		}
		return 200
	}
	wh := nameWebhook(t, w, r.srv.URL)
	r.secret = wh.Secret
	task := w.Pay()
	eventID, webhookID := pendingDelivery(t, w, task)

	delay, again, err := w.Enclave.Delivery.Deliver(ctx, eventID, webhookID)
	if err != nil || !again || delay != 5*time.Second {
		t.Fatalf("after a 500: retry %v in %s (%v)", again, delay, err)
	}
	delay, again, err = w.Enclave.Delivery.Deliver(ctx, eventID, webhookID)
	if err != nil || again {
		t.Fatalf("after a 200: retry %v in %s (%v)", again, delay, err)
	}
	log, _ := w.Owner.Client.Deliveries(ctx)
	if len(log) != 2 || log[0].Attempt != 2 || log[0].StatusCode != 200 || log[1].Attempt != 1 || log[1].StatusCode != 500 || log[1].Error == "" {
		t.Fatalf("log %+v", log)
	}
	// The owner names another URL: the old one's pending deliveries stop.
	other := w.Pay()
	oldEvent, oldWebhook := pendingDelivery(t, w, other)
	r2 := newReceiver(t)
	wh2 := nameWebhook(t, w, r2.srv.URL)
	r2.secret = wh2.Secret
	before := len(r.events())
	if _, again, err := w.Enclave.Delivery.Deliver(ctx, oldEvent, oldWebhook); err != nil || again || len(r.events()) != before {
		t.Fatalf("a delivery to a renamed webhook went on (%v, %v)", again, err)
	}
	rm, _ := w.Owner.Confirm(approval.ActionRemoveWebhook())
	if err := w.Owner.Client.DeleteWebhook(ctx, rm); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.Owner.Client.Webhook(ctx); got.URL != nil {
		t.Fatalf("a removed webhook shows %+v", got)
	}
}

// pendingDelivery finds the task_created event written for a task.
func pendingDelivery(t *testing.T, w *servicetest.World, task string) (string, string) {
	t.Helper()
	var eventID, webhookID string
	err := w.DB.SQLite().QueryRowContext(ctx, "SELECT id, webhook_id FROM webhook_events WHERE task_id = ? AND type = 'task_created'", task).Scan(&eventID, &webhookID)
	if err != nil {
		t.Fatal(err)
	}
	return eventID, webhookID
}

// TestWebhookURLRefused: outside development, URLs that are not https on a
// public host are refused at once (400), and nothing is named.
func TestWebhookURLRefused(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	strict := inbox.NewService(inbox.Config{Store: w.DB, Keeper: w.Enclave.Unlock, Tokens: w.Enclave.Keys, Webhooks: w.Enclave.Delivery, Catalogue: w.Catalogue,
		Keys: approval.OffChecker{}, PublicURL: w.URL, Now: w.Clock.Now, Logger: quiet})
	sess, err := strict.Authenticate(ctx, w.Owner.Client.Session)
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{
		"http://hooks.example.com/x", "https://127.0.0.1/x", "https://localhost/x", "https://user:pw@hooks.example.com/x",
		"https://10.0.0.1/x", "https://169.254.169.254/latest", "https://0x7f000001/", "https://[::1]/x",
		"https://hooks.example.com/" + strings.Repeat("a", 2048), "not a url",
	} {
		conf, _ := w.Owner.Confirm(approval.ActionNameWebhook(url))
		_, err := strict.PutWebhook(ctx, sess, url, inbox.Confirmation{At: conf.At, PublicKey: conf.PublicKey, Signature: conf.Signature, Nonce: conf.Nonce})
		if code := errCode(err); code != "invalid_request" {
			t.Errorf("%.60s: %v", url, err)
		}
	}
	if got, _ := strict.Webhook(ctx, sess); got.URL != nil {
		t.Fatalf("a refused URL was named: %+v", got)
	}
}

// TestConfirmationUsedOnce: an owner's confirmation sent again is refused
// with its sentence, on either database.
func TestConfirmationUsedOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		url := "https://hooks.example.com/countersign"
		conf, err := w.Owner.Confirm(approval.ActionNameWebhook(url))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Owner.Client.PutWebhook(ctx, url, conf); err != nil {
			t.Fatal(err)
		}
		_, err = w.Owner.Client.PutWebhook(ctx, url, conf)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Reason != "confirmation_required" || ce.Message != "this confirmation was used already; sign a new one" {
			t.Fatalf("the confirmation sent again: %v", err)
		}
	})
}

// seenTx is a transaction of the owner's service that notes when it read a
// task with what a later move needs (TaskSeen, and with a session at the
// door, DeviceWithTask).
type seenTx struct {
	store.Tx
	saw *bool
}

func (s seenTx) TaskSeen(ctx context.Context, id string) (store.Task, store.Seen, error) {
	*s.saw = true
	return s.Tx.TaskSeen(ctx, id)
}

func (s seenTx) DeviceWithTask(ctx context.Context, hash []byte, id string) (store.Device, store.Task, store.Seen, error) {
	*s.saw = true
	return s.Tx.DeviceWithTask(ctx, hash, id)
}

func (s seenTx) TasksSeen(ctx context.Context, ids []string) ([]store.Task, []store.Seen, error) {
	*s.saw = true
	return s.Tx.TasksSeen(ctx, ids)
}

// afterSeen runs then, once, right after a read of the owner's service
// that read a task for a later move.
type afterSeen struct {
	store.Store
	then *atomic.Pointer[func()]
}

func (a afterSeen) Read(ctx context.Context, fn func(store.Tx) error) error {
	saw := false
	err := a.Store.Read(ctx, func(tx store.Tx) error { return fn(seenTx{tx, &saw}) })
	if f := a.then.Load(); saw && f != nil && a.then.CompareAndSwap(f, nil) {
		(*f)()
	}
	return err
}

// TestWebhookRenamedMeanwhile: a move is made from the task and the owner's
// webhook as a read before its transaction found them. When the owner names
// another webhook in between — after an approval's read of the task, or a
// batch approval's of its tasks, or while the answer run runs — the event
// of the move goes to the webhook named now: the move is made again from
// the task as it is.
func TestWebhookRenamedMeanwhile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		var then atomic.Pointer[func()]
		w := servicetest.New(t, db, servicetest.WithInboxStore(func(s store.Store) store.Store { return afterSeen{s, &then} }))
		w.StartJobs()
		first, second, third := newReceiver(t), newReceiver(t), newReceiver(t)
		// name names r the owner's webhook; it may run outside the test's
		// goroutine, so it reports what fails rather than stopping.
		name := func(r *receiver) error {
			wh, err := putWebhook(w, r.srv.URL+"/hooks/countersign")
			if err != nil {
				return err
			}
			r.mu.Lock()
			r.secret = wh.Secret
			r.mu.Unlock()
			return nil
		}
		mustName := func(r *receiver) {
			if err := name(r); err != nil {
				t.Fatal(err)
			}
		}
		mustName(first)
		id := w.Pay()
		waitEvents(t, first, 1)
		// renameTo is what then runs: r named right after the read.
		renameTo := func(r *receiver) *func() {
			f := func() {
				if err := name(r); err != nil {
					t.Error(err)
				}
			}
			return &f
		}
		then.Store(renameTo(second))
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			// The approval's event first, while its webhook is named: a
			// webhook named anew drops what its predecessor had still to
			// deliver.
			deadline := time.After(30 * time.Second)
			for ev, next := second.eventsAndNext(); len(ev) == 0; ev, next = second.eventsAndNext() {
				select {
				case <-next:
				case <-deadline:
					return connectors.Report{}, errors.New("the approval's event did not arrive")
				}
			}
			if err := name(third); err != nil {
				return connectors.Report{}, err
			}
			return connectors.Report{Result: map[string]any{"ok": true}}, nil
		})
		w.Approve(id, nil)
		w.WaitState(id, countersign.StateDone)
		if then.Load() != nil {
			t.Fatal("the approval did not read its task for its move")
		}
		types := func(r *receiver, n int) string {
			var got []string
			for _, e := range waitEvents(t, r, n) {
				got = append(got, fmt.Sprint(e["type"]))
			}
			return strings.Join(got, " ")
		}
		if got := types(second, 1); got != "task_approved" {
			t.Errorf("the webhook named after the approval's read heard %q, want task_approved", got)
		}
		if got := types(third, 1); got != "task_answered" {
			t.Errorf("the webhook named while the answer ran heard %q, want task_answered", got)
		}
		if got := types(first, 1); got != "task_created" {
			t.Errorf("the first webhook heard %q, want only task_created", got)
		}

		// A batch of two, the webhook renamed after the batch's read.
		w.SetAnswer(func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
			return connectors.Report{Result: map[string]any{"ok": true}}, nil
		})
		ids := []string{payIn(t, w, "ledger", "pay $1.00 to Acme Corp"), payIn(t, w, "ledger", "pay $2.00 to Acme Corp")}
		fourth := newReceiver(t)
		then.Store(renameTo(fourth))
		if _, err := w.Owner.BatchApprove(ctx, openAll(t, w.Owner, ids...)); err != nil {
			t.Fatal(err)
		}
		if then.Load() != nil {
			t.Fatal("the batch approval did not read its tasks for their moves")
		}
		// Both approvals, and both answers.
		heard := map[string]bool{}
		for _, e := range waitEvents(t, fourth, 4) {
			heard[fmt.Sprint(e["type"], " ", e["task_id"])] = true
		}
		for _, id := range ids {
			if !heard["task_approved "+id] || !heard["task_answered "+id] {
				t.Errorf("the webhook named after the batch's read heard %v", heard)
			}
		}
	})
}
