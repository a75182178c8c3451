package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"countersign/client"
	"countersign/device"
	"countersign/httpapi"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// serverGoroutines counts this process's goroutines that serve HTTP
// connections or run the httpapi package's code (the test's clients are
// neither).
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "countersign/httpapi.") {
			count++
		}
	}
	return count
}

// settled waits (five seconds at most) until f says yes.
func settled(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freshStream opens d's event stream on a connection of its own (a client
// with no idle connections to reuse), on the server at url.
func freshStream(t *testing.T, ctx context.Context, url string, d *device.Device) <-chan client.TaskEvent {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ch, err := (&client.Client{BaseURL: url, Session: d.Client.Session, HTTP: &http.Client{Transport: tr}, EventsIdle: time.Hour}).Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestEventStreamsHoldNoGoroutine: an open event stream holds no goroutine
// of the server (sixteen of them add at most the one that watches all of
// their sockets), and still carries its owner's events, ends when its
// client hangs up, and ends when the HTTP server shuts down.
//
// It counts the goroutines of the whole process, so it does not run beside
// the package's parallel tests.
func TestEventStreamsHoldNoGoroutine(t *testing.T) {
	db := storetest.Postgres(t)
	w := servicetest.New(t, db, servicetest.WithHeartbeat(time.Hour))
	api := httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Inbox: w.Inbox, Heartbeat: time.Hour})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	t.Cleanup(api.Close)

	// Four devices of the owner, four streams each: the owner's limit.
	devices := []*device.Device{w.Owner}
	for range 3 {
		devices = append(devices, signedIn(t, w))
	}
	before := quiet(t)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var open []<-chan client.TaskEvent
	for _, d := range devices {
		for range 4 {
			open = append(open, freshStream(t, sctx, srv.URL, d))
		}
	}
	settled(t, "sixteen open streams hold no goroutine of the server", func() bool { return serverGoroutines() <= before+1 })

	task := w.Pay()
	for _, ch := range open {
		hears(t, "an open stream", ch, task)
	}

	// A client that hangs up ends its stream at once: its owner's last
	// stream here gone, nothing here listens for its events.
	other := w.NewOwner()
	octx, hangUp := context.WithCancel(ctx)
	freshStream(t, octx, srv.URL, other)
	settled(t, "the other owner's stream listens", func() bool { return w.DB.Subscribers(other.Account) == 1 })
	hangUp()
	settled(t, "the hung-up stream ended", func() bool { return w.DB.Subscribers(other.Account) == 0 })

	// Shutdown ends every stream, and the server's goroutines go with
	// them.
	sdctx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if err := srv.Config.Shutdown(sdctx); err != nil {
		t.Fatal(err)
	}
	for _, ch := range open {
		ended(t, "a stream after the server's shutdown", ch)
	}
	settled(t, "nothing listens after the shutdown", func() bool { return w.DB.Subscribers(w.Owner.Account) == 0 })
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	settled(t, "no goroutine of the streams is left", func() bool { return serverGoroutines() <= before })
}

// quiet closes the idle connections of the default client and returns the
// count of server goroutines once it stops falling.
func quiet(t *testing.T) int {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	last := serverGoroutines()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		n := serverGoroutines()
		if n == last {
			return n
		}
		last = n
	}
	return last
}

// TestEventStreamHeartbeats: a handed-over stream still beats, looking at
// its session each time, and the session's end at a heartbeat (a signal
// lost) ends it.
func TestEventStreamHeartbeats(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t), servicetest.WithHeartbeat(100*time.Millisecond))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.URL+"/inbox/events", nil)
	req.Header.Set("Authorization", "Bearer "+w.Owner.Client.Session)
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	beats := 0
	timeout := time.After(10 * time.Second)
	for beats < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended after %d heartbeats", beats)
			}
			if l == ": heartbeat" {
				beats++
			}
		case <-timeout:
			t.Fatalf("%d heartbeats in 10 s", beats)
		}
	}
	// The session ends behind the stream's back (no signal reaches this
	// process's account of streams): the next heartbeat's look ends it.
	w.Clock.Add(30 * 24 * time.Hour)
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the stream of an ended session goes on")
		}
	}
}
