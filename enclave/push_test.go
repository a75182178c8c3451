package enclave_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/enclave/delivery"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
	"countersign/webpush/webpushtest"
)

// subscribe has a device subscribe to the fake push service with the
// service's VAPID key, as a browser does, and returns its subscription and
// its device id.
func subscribe(t *testing.T, d *device.Device, fake *webpushtest.Server) (webpushtest.Subscription, string) {
	t.Helper()
	key, err := d.Client.PushKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := fake.Subscribe(key)
	on, err := d.Client.PutPush(ctx, pushSub(s))
	if err != nil || !on {
		t.Fatalf("PUT /inbox/push: %v %v", on, err)
	}
	return s, thisDevice(t, d)
}

// pushSub is a fake subscription as a browser hands it to the page.
func pushSub(s webpushtest.Subscription) client.PushSubscription {
	return client.PushSubscription{Endpoint: s.Endpoint, Keys: client.PushKeys{P256dh: s.P256dh, Auth: s.Auth}}
}

func thisDevice(t *testing.T, d *device.Device) string {
	t.Helper()
	list, err := d.Client.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.This {
			return x.ID
		}
	}
	t.Fatal("no device is this one")
	return ""
}

// otherDevice signs another device of the world's owner in.
func otherDevice(t *testing.T, w *servicetest.World) *device.Device {
	t.Helper()
	d := w.Device(w.Owner.Signer.(device.WalletSigner).Wallet)
	if _, err := d.SignIn(ctx, 29*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return d
}

// checkPush holds a push to what SPEC §10 asks: it opened, its VAPID JWT
// was good (the fake checks the signature, aud and exp), its payload is the
// version byte alone, and its headers are as the task's kind and life say.
func checkPush(t *testing.T, p webpushtest.Push, sub webpushtest.Subscription, urgency string, ttlAtMost int) {
	t.Helper()
	if p.Problem != "" || p.Status != http.StatusCreated {
		t.Fatalf("the push service refused a push (%d): %s", p.Status, p.Problem)
	}
	if p.Subscription != sub.ID {
		t.Fatalf("a push went to %s, not %s", p.Subscription, sub.ID)
	}
	if !bytes.Equal(p.Plaintext, delivery.PushPayload) || p.BodyBytes != 104 {
		t.Fatalf("the payload is %x in %d bytes; want the version byte alone", p.Plaintext, p.BodyBytes)
	}
	if p.Urgency != urgency || p.Topic != delivery.PushTopic || p.Sub != servicetest.PushContact {
		t.Fatalf("Urgency %q, Topic %q, sub %q", p.Urgency, p.Topic, p.Sub)
	}
	if p.TTL > ttlAtMost || p.TTL < ttlAtMost-120 {
		t.Fatalf("TTL %d, want the task's time left (%d)", p.TTL, ttlAtMost)
	}
	if p.Exp.After(time.Now().Add(24 * time.Hour)) {
		t.Fatalf("the JWT's exp %s is more than 24 hours ahead", p.Exp)
	}
}

// TestPushOncePerDeviceAfterTheTaskCommits: a task opened for an owner with
// two subscribed devices (and one without) sends exactly one push to each
// subscribed device, once the task is stored; another owner's device gets
// nothing; a confirm task is urgent, a notice normal; a task refused
// (muted) sends nothing.
func TestPushOncePerDeviceAfterTheTaskCommits(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	fake := webpushtest.New(t)
	subA, _ := subscribe(t, w.Owner, fake)
	second := otherDevice(t, w)
	subB, _ := subscribe(t, second, fake)
	_ = otherDevice(t, w) // signed in, never subscribed
	stranger := w.NewOwner()
	_, _ = subscribe(t, stranger, fake)
	w.StartJobs()

	start := time.Now()
	id := w.Pay()
	pushes := fake.Wait(2, 15*time.Second)
	if len(pushes) != 2 {
		t.Fatalf("%d pushes for one task to two subscribed devices", len(pushes))
	}
	elapsed := time.Since(start)
	task := w.Task(id)
	left := int(task.ExpiresAt.Sub(w.Clock.Now()) / time.Second)
	bySub := map[string]webpushtest.Push{}
	for _, p := range pushes {
		bySub[p.Subscription] = p
		if p.At.Before(start) {
			t.Fatal("a push left before the call")
		}
	}
	checkPush(t, bySub[subA.ID], subA, "high", left)
	checkPush(t, bySub[subB.ID], subB, "high", left)
	t.Logf("call to both pushes received: %s; %d body bytes and %d header bytes a push", elapsed, pushes[0].BodyBytes, pushes[0].HeaderBytes)

	w.Tell()
	pushes = fake.Wait(4, 15*time.Second)
	if len(pushes) != 4 {
		t.Fatalf("%d pushes after a notice", len(pushes))
	}
	for _, p := range pushes[2:] {
		if p.Urgency != "normal" || p.Problem != "" {
			t.Fatalf("a notice's push: Urgency %q, %s", p.Urgency, p.Problem)
		}
	}

	if _, err := w.Owner.Client.Mute(ctx, "agent", w.Agent, false); err != nil {
		t.Fatal(err)
	}
	raw, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", map[string]any{"amount": 1}, nil)
	if !strings.Contains(string(raw)+reason(err), "muted") {
		t.Fatalf("a muted agent's call: %s %v", raw, err)
	}
	time.Sleep(2 * time.Second)
	if got := fake.Pushes(); len(got) != 4 {
		t.Fatalf("%d pushes: a refused task or the other owner's device got one", len(got))
	}
	var queued int
	_ = w.DB.Tx(ctx, func(tx store.Tx) error {
		g, err := tx.Gauges(ctx)
		queued = g.Queued["push_delivery"]
		return err
	})
	if queued != 0 {
		t.Fatalf("%d pushes still queued", queued)
	}
}

// deliver makes one attempt of a task's push to a device: the job queue
// does not run, so the test makes each attempt itself.
func deliver(t *testing.T, w *servicetest.World, id, deviceID string) (time.Duration, bool) {
	t.Helper()
	delay, again, err := w.Enclave.Delivery.DeliverPush(ctx, id, deviceID)
	if err != nil {
		t.Fatal(err)
	}
	return delay, again
}

// pushShown is what GET /inbox/devices says of a device's subscription.
func pushShown(list []client.Device, id string) bool {
	for _, d := range list {
		if d.ID == id {
			return d.Push
		}
	}
	return false
}

func hasPush(t *testing.T, w *servicetest.World, deviceID string) bool {
	t.Helper()
	var d store.Device
	if err := w.DB.Tx(ctx, func(tx store.Tx) (err error) { d, err = tx.Device(ctx, deviceID); return err }); err != nil {
		t.Fatal(err)
	}
	return d.Push != nil
}

func pending(t *testing.T, w *servicetest.World, id, deviceID string) bool {
	t.Helper()
	err := w.DB.Tx(ctx, func(tx store.Tx) error { _, err := tx.PushDelivery(ctx, id, deviceID); return err })
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestPushAnswers: what each answer of the push service does. 404, 410 and
// other 4xx (not 408, 413, 429) delete the subscription at once and end
// the delivery; 5xx, 408, 413 and 429 are tried again on the webhooks'
// schedule, and the subscription stays; a retry past the task's life is
// not made.
func TestPushAnswers(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	fake := webpushtest.New(t)
	for _, c := range []struct {
		status int
		gone   bool
	}{{404, true}, {410, true}, {400, true}, {401, true}, {403, true}, {408, false}, {413, false}, {429, false}, {500, false}, {503, false}} {
		d := otherDevice(t, w)
		sub, dev := subscribe(t, d, fake)
		fake.Answer(sub.ID, c.status)
		id := w.Pay()
		delay, again := deliver(t, w, id, dev)
		if hasPush(t, w, dev) == c.gone {
			t.Errorf("HTTP %d: the subscription kept is %v", c.status, !c.gone)
		}
		if c.gone {
			if again || pending(t, w, id, dev) {
				t.Errorf("HTTP %d: tried again", c.status)
			}
			if list, _ := d.Client.Devices(ctx); pushShown(list, dev) {
				t.Errorf("HTTP %d: the device still says it is told", c.status)
			}
		} else {
			if !again || delay != 5*time.Second {
				t.Errorf("HTTP %d: again %v after %s; want after 5 s", c.status, again, delay)
			}
			// The next attempt is delivered, and the delivery is over.
			if _, again := deliver(t, w, id, dev); again || pending(t, w, id, dev) {
				t.Errorf("HTTP %d: a delivered push is tried again", c.status)
			}
		}
		if _, err := w.Owner.Client.CancelMatching(ctx, w.Agent, "ledger"); err != nil {
			t.Fatal(err)
		}
		if err := d.Client.SignOut(ctx); err != nil { // five devices at most
			t.Fatal(err)
		}
	}
	total := 0
	for _, p := range fake.Pushes() {
		total++
		if p.Problem != "" {
			t.Errorf("a push the fake refused: %s", p.Problem)
		}
	}
	if total != 15 {
		t.Errorf("%d pushes, want 10 first attempts and 5 retries", total)
	}

	// A retry that would come after the task expired is not made.
	sub, dev := subscribe(t, otherDevice(t, w), fake)
	fake.Answer(sub.ID, 503)
	id := w.Pay()
	w.Clock.Add(w.Task(id).ExpiresAt.Add(-3 * time.Second).Sub(w.Clock.Now()))
	if _, again := deliver(t, w, id, dev); again || pending(t, w, id, dev) {
		t.Error("a retry after the task's expiry is planned")
	}
	if !hasPush(t, w, dev) {
		t.Error("a 503 cost the subscription")
	}
	// Once the task expired, nothing is sent at all.
	id2 := w.Pay()
	w.Clock.Add(w.Task(id2).ExpiresAt.Sub(w.Clock.Now()))
	n := len(fake.Pushes())
	if _, again := deliver(t, w, id2, dev); again || len(fake.Pushes()) != n {
		t.Error("a push for an expired task was sent")
	}
}

// TestPushEndsWithTheDevice: signing out, or being withdrawn, deletes the
// device's subscription at once; a push queued before is not sent, and a
// task opened after queues none.
func TestPushEndsWithTheDevice(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	fake := webpushtest.New(t)
	out := otherDevice(t, w)
	_, outID := subscribe(t, out, fake)
	withdrawn := otherDevice(t, w)
	_, withdrawnID := subscribe(t, withdrawn, fake)
	id := w.Pay() // queued for both
	if !pending(t, w, id, outID) || !pending(t, w, id, withdrawnID) {
		t.Fatal("the task queued no push")
	}
	if err := out.Client.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	conf, err := w.Owner.Confirm(approval.ActionWithdrawDevice(withdrawnID))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Owner.Client.WithdrawDevice(ctx, withdrawnID, conf); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{outID, withdrawnID} {
		if hasPush(t, w, dev) {
			t.Errorf("device %s ended and kept its subscription", dev)
		}
		if _, again := deliver(t, w, id, dev); again || pending(t, w, id, dev) {
			t.Error("a push to an ended device is still planned")
		}
	}
	later := w.Pay()
	for _, dev := range []string{outID, withdrawnID} {
		if pending(t, w, later, dev) {
			t.Error("a task opened after the device ended queued a push to it")
		}
	}
	if n := len(fake.Pushes()); n != 0 {
		t.Fatalf("%d pushes to ended devices", n)
	}
	// Turning it off at the door deletes it too.
	_, dev := subscribe(t, w.Owner, fake)
	if on, err := w.Owner.Client.DeletePush(ctx); err != nil || on || hasPush(t, w, dev) {
		t.Fatalf("DELETE /inbox/push: %v %v", on, err)
	}
}

// TestNoTaskContentInAnyPush: tasks full of canaries (title, summary,
// fields, request, file) go to subscribed devices; no push carries any of
// them, in any form, in its plaintext, body or headers; the subscription's
// endpoint and keys are stored only sealed, and neither they nor the
// canaries reach the log.
func TestNoTaskContentInAnyPush(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	fake := webpushtest.New(t)
	sub, _ := subscribe(t, w.Owner, fake)
	w.StartJobs()
	var canaries []string
	c := func(what string) string {
		s := canary(t, what)
		canaries = append(canaries, s)
		return s
	}
	for i := range 3 {
		args := map[string]any{"amount": 1 + i, "memo": c("memo"), "invoice": c("invoice"), "title": "Pay " + c("t"), "summary": "pay " + c("summary")}
		if _, err := w.AgentClient().Call(ctx, w.Owner.Account, "ledger", "pay", args, nil); err != nil {
			t.Fatal(err)
		}
	}
	pushes := fake.Wait(3, 20*time.Second)
	if len(pushes) != 3 {
		t.Fatalf("%d pushes for 3 tasks", len(pushes))
	}
	for _, p := range pushes {
		if !bytes.Equal(p.Plaintext, delivery.PushPayload) {
			t.Fatalf("a push carries %q", p.Plaintext)
		}
		var seen strings.Builder
		seen.Write(p.Plaintext)
		for k, vs := range p.Header {
			seen.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
		}
		for _, s := range canaries {
			for _, form := range []string{s, hex.EncodeToString([]byte(s)), base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))} {
				if strings.Contains(seen.String(), form) {
					t.Fatalf("a push carries a task's canary %s", s)
				}
			}
		}
	}
	secrets := []string{strings.TrimPrefix(sub.Endpoint, fake.URL), sub.P256dh, sub.Auth}
	if found := storetest.Find(t, db, secrets...); len(found) > 0 {
		t.Fatalf("a subscription is stored in clear:\n%s", strings.Join(found, "\n"))
	}
	logs := w.Logs.String()
	for _, s := range append(secrets, canaries...) {
		if strings.Contains(logs, s) {
			t.Fatalf("the log holds %q", s)
		}
	}
	if !strings.Contains(logs, "push attempt") {
		t.Fatal("no push attempt was logged")
	}
}

// TestPushKeyMadeOnceAndRotated: processes asking for the VAPID key at
// once agree on one; rotating the master key seals it (and the
// subscriptions) again under the new key without changing it, so a push
// after the rotation still verifies under the key the browser subscribed
// with.
func TestPushKeyMadeOnceAndRotated(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db)
	keys := make([]string, 6)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			e := servicetest.NewEnclave(servicetest.EnclaveConfig{Keys: w.Keys, Store: db, PublicURL: w.URL})
			k, err := e.Delivery.PushPublicKey(ctx)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if k != keys[0] || k == "" {
			t.Fatalf("the processes made different keys: %v", keys)
		}
	}
	fake := webpushtest.New(t)
	sub, dev := subscribe(t, w.Owner, fake)
	if sub.ID == "" || keys[0] != mustKey(t, w) {
		t.Fatal("the door gives another key")
	}

	rotated, err := w.Keys.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	after := servicetest.NewEnclave(servicetest.EnclaveConfig{Keys: rotated, Store: db, PublicURL: w.URL, PushAllowAnyEndpoint: true, PushContact: servicetest.PushContact})
	moved, skipped, err := after.Rotation.Rewrap(ctx)
	if err != nil || skipped != 0 || moved < 2 {
		t.Fatalf("rewrap moved %d, skipped %d: %v", moved, skipped, err)
	}
	var row store.PushKey
	var d store.Device
	_ = db.Tx(ctx, func(tx store.Tx) (err error) {
		if row, err = tx.PushKey(ctx); err != nil {
			return err
		}
		d, err = tx.Device(ctx, dev)
		return err
	})
	if row.KeyID != rotated.Current() || d.PushKeyID != rotated.Current() || row.PublicKey != keys[0] {
		t.Fatalf("after rotation: the key under %d, the subscription under %d, public key kept %v", row.KeyID, d.PushKeyID, row.PublicKey == keys[0])
	}
	check, err := after.Rotation.CheckKeyring(ctx)
	if err != nil || check.OpensNone() || len(check.Failed) > 0 {
		t.Fatalf("the rotated keyring's check: %+v %v", check, err)
	}
	if k, err := after.Delivery.PushPublicKey(ctx); err != nil || k != keys[0] {
		t.Fatalf("after rotation the key is %q (%v)", k, err)
	}
	id := w.Pay()
	if _, again, err := after.Delivery.DeliverPush(ctx, id, dev); err != nil || again {
		t.Fatalf("a push after rotation: again %v, %v", again, err)
	}
	if p := fake.Pushes(); len(p) != 1 || p[0].Problem != "" || p[0].Key != keys[0] {
		t.Fatalf("the push after rotation: %+v", p)
	}
}

func mustKey(t *testing.T, w *servicetest.World) string {
	t.Helper()
	k, err := w.Owner.Client.PushKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPushEndsWithARetiredDevice: a sixth sign-in retires the device signed
// in longest ago, and its subscription with it.
func TestPushEndsWithARetiredDevice(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	fake := webpushtest.New(t)
	_, oldest := subscribe(t, w.Owner, fake)
	for range 5 {
		w.Clock.Add(time.Second)
		otherDevice(t, w)
	}
	var d store.Device
	if err := w.DB.Tx(ctx, func(tx store.Tx) (err error) { d, err = tx.Device(ctx, oldest); return err }); err != nil {
		t.Fatal(err)
	}
	if d.EndReason != "replaced" || d.Push != nil {
		t.Fatalf("the oldest device: ended %q, subscription kept %v", d.EndReason, d.Push != nil)
	}
}
