package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"countersign"
	"countersign/store"
)

// FuzzNotification: a NOTIFY payload on the store's channel (written by any
// process on the database) is read as a stream signal, task events one to a
// line, or nothing, without panicking; what it reads writes back as itself,
// and the events sent again fit NOTIFYs that read back as them.
func FuzzNotification(f *testing.F) {
	f.Add("alice.near r1-1 open")
	f.Add("alice.near r1-1 bogus")
	f.Add("alice.near r1-1 open extra")
	f.Add("alice.near r1-1 answering\nalice.near r1-1 done\nalice.near r1-2 open")
	f.Add("alice.near r1-1 done\n\nnope\n!session_ended - alice.near dev1 1700000000")
	f.Add("!session_ended - alice.near dev1 1700000000")
	f.Add("!stream_opened s1 alice.near - -")
	f.Add("!session_ended - alice.near dev1 soon")
	f.Add("")
	f.Fuzz(func(t *testing.T, p string) {
		sig, evs, ok := parseNotification(p)
		if ok {
			if back, ok := parseSignal(signalPayload(sig)); !ok || back != sig || evs != nil {
				t.Fatalf("%q read as %+v and %v; the signal writes back as %+v", p, sig, evs, back)
			}
			return
		}
		for _, ev := range evs {
			if !ev.State.Valid() || ev.Owner == "" || ev.TaskID == "" || strings.ContainsAny(ev.Owner+ev.TaskID, " \t\n\v\f\r") {
				t.Fatalf("%q read as %+v", p, ev)
			}
			if back, ok := parseEvent(eventPayload(ev)); !ok || back != ev {
				t.Fatalf("%q read as %+v, which writes back as %+v", p, ev, back)
			}
		}
		var back []store.TaskEvent
		for _, s := range notices("c", evs) {
			if q := s.args[1].(string); len(q) > notifyMax {
				t.Fatalf("a NOTIFY of %d bytes", len(q))
			} else {
				_, got, _ := parseNotification(q)
				back = append(back, got...)
			}
		}
		if fmt.Sprint(back) != fmt.Sprint(evs) {
			t.Fatalf("%q read as %v, sent again as %v", p, evs, back)
		}
	})
}

// TestNotificationPayloads: an event and each kind of stream signal read
// back as written; malformed payloads are nothing.
func TestNotificationPayloads(t *testing.T) {
	ev := store.TaskEvent{Owner: "alice.near", TaskID: "r1-1", State: countersign.StateApproved}
	if got, ok := parseEvent(eventPayload(ev)); !ok || got != ev {
		t.Fatalf("read back %+v (%v)", got, ok)
	}
	for _, sig := range []store.StreamSignal{
		{Kind: store.SessionEnded, Owner: "alice.near", Device: "dev1"},
		{Kind: store.StreamOpened, Stream: "s1", Owner: "alice.near"},
		{Kind: store.StreamClosed, Stream: "s1", Owner: "alice.near"},
	} {
		if got, ok := parseSignal(signalPayload(sig)); !ok || got != sig {
			t.Errorf("%+v read back as %+v (%v)", sig, got, ok)
		}
	}
	for _, bad := range []string{"alice.near r1-1 nope", "alice.near r1-1", "alice.near r1-1 open extra", "!nope - - - -", "!session_ended - alice.near dev1 soon"} {
		if _, ok := parseEvent(bad); ok {
			t.Errorf("%q was read as an event", bad)
		}
		if _, ok := parseSignal(bad); ok {
			t.Errorf("%q was read as a signal", bad)
		}
	}
}
