package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/httpapi"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// twoProcesses is the service on PostgreSQL as two processes: the world's
// server and a second one on its own connection to the same schema. Both
// beat once an hour, so nothing a test sees can be the heartbeat's recheck.
func twoProcesses(t *testing.T) (*servicetest.World, string) {
	t.Helper()
	db := storetest.Postgres(t)
	w := servicetest.New(t, db, servicetest.WithHeartbeat(time.Hour))
	other, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), db.SchemaName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	second := httptest.NewServer(httpapi.New(httpapi.Options{Version: "test", Store: other, Logger: quiet,
		Inbox: inboxOn(w, other, quiet), Heartbeat: time.Hour}))
	t.Cleanup(second.Close)
	return w, second.URL
}

// signedIn is another signed-in device of the world's owner.
func signedIn(t *testing.T, w *servicetest.World) *device.Device {
	t.Helper()
	key, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	d := &device.Device{Account: w.Owner.Account, Key: key, Signer: w.Owner.Signer, Client: &client.Client{BaseURL: w.URL}, Now: w.Clock.Now}
	if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return d
}

func deviceID(t *testing.T, d *device.Device) string {
	t.Helper()
	list, err := d.Client.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if v.This {
			return v.ID
		}
	}
	t.Fatal("no device is this one")
	return ""
}

// stream opens an event stream of d's session on the server at url.
func stream(t *testing.T, url string, d *device.Device) <-chan client.TaskEvent {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	ch, err := (&client.Client{BaseURL: url, Session: d.Client.Session, EventsIdle: time.Hour}).Events(sctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// ended waits (ten seconds at most) for a stream to end.
func ended(t *testing.T, name string, ch <-chan client.TaskEvent) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("%s goes on", name)
		}
	}
}

// hears waits for a stream to carry an event of task: it is still open.
func hears(t *testing.T, name string, ch <-chan client.TaskEvent, task string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("%s was closed", name)
			}
			if ev.TaskID == task {
				return
			}
		case <-timeout:
			t.Fatalf("%s heard nothing of task %s", name, task)
		}
	}
}

// TestStreamsEndWithTheirSession: signing out, withdrawing a device and
// retiring it by a sixth sign-in end its event streams at once, on the
// process that ended the session and on the other; other devices' streams
// go on.
func TestStreamsEndWithTheirSession(t *testing.T) {
	t.Parallel()
	w, second := twoProcesses(t)
	first := w.URL
	phone, laptop, tablet := w.Owner, signedIn(t, w), signedIn(t, w)
	phoneHere, phoneThere := stream(t, first, phone), stream(t, second, phone)
	laptopThere := stream(t, second, laptop)
	tabletHere, tabletThere := stream(t, first, tablet), stream(t, second, tablet)

	if err := phone.Client.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	ended(t, "the signed-out phone's stream on the process it signed out on", phoneHere)
	ended(t, "the signed-out phone's stream on the other process", phoneThere)

	laptopID := deviceID(t, laptop)
	conf, err := tablet.Confirm(approval.ActionWithdrawDevice(laptopID))
	if err != nil {
		t.Fatal(err)
	}
	if err := tablet.Client.WithdrawDevice(ctx, laptopID, conf); err != nil {
		t.Fatal(err)
	}
	ended(t, "the withdrawn laptop's stream on the other process", laptopThere)
	task := w.Pay()
	hears(t, "the tablet's stream", tabletHere, task)
	hears(t, "the tablet's stream on the other process", tabletThere, task)

	// The tablet is now the oldest device: four more sign-ins make five,
	// and the next retires it.
	var newer []*device.Device
	for i := 0; i < 4; i++ {
		newer = append(newer, signedIn(t, w))
	}
	newest := stream(t, second, newer[0])
	signedIn(t, w)
	ended(t, "the retired tablet's stream", tabletHere)
	ended(t, "the retired tablet's stream on the other process", tabletThere)
	hears(t, "a newer device's stream", newest, w.Pay())
}

// TestStreamLimits: a session holds at most 4 event streams and an owner 16,
// counted across processes; a fifth stream of a session closes that
// session's oldest, a seventeenth of an owner closes the owner's oldest, on
// whichever process holds it, and every other stream goes on.
func TestStreamLimits(t *testing.T) {
	t.Parallel()
	w, second := twoProcesses(t)
	servers := []string{w.URL, second}
	phone := w.Owner
	var phones []<-chan client.TaskEvent
	for i := 0; i < 5; i++ {
		phones = append(phones, stream(t, servers[i%2], phone))
	}
	ended(t, "the phone's first stream, after its fifth", phones[0])
	phones = append(phones, stream(t, servers[1], phone))
	ended(t, "the phone's second stream, after its sixth", phones[1])
	task := w.Pay()
	for _, ch := range phones[2:] {
		hears(t, "a stream of the phone's last four", ch, task)
	}

	// Three more devices with four streams each: sixteen for the owner.
	open := phones[2:]
	for d := 0; d < 3; d++ {
		dev := signedIn(t, w)
		for i := 0; i < 4; i++ {
			open = append(open, stream(t, servers[(d+i)%2], dev))
		}
	}
	task = w.Pay()
	for _, ch := range open {
		hears(t, "one of the owner's sixteen streams", ch, task)
	}
	// A seventeenth, of a fifth device: the owner's oldest stream closes.
	open = append(open, stream(t, servers[1], signedIn(t, w)))
	ended(t, "the owner's oldest stream, after a seventeenth", open[0])
	task = w.Pay()
	for _, ch := range open[1:] {
		hears(t, "one of the owner's sixteen newest streams", ch, task)
	}
}
