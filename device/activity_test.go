package device

import (
	"errors"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/sealing"
)

const entryID = "r7k2m9q4x1z8c3v6b5n0p2w4s6-1"

// sealedEntry is an entry of alice.near's history as the enclave seals it
// for device d, with body as its plaintext.
func sealedEntry(t testing.TB, d *Device, id, body string) client.ActivityEntry {
	t.Helper()
	kr := sealing.GenerateKeyring()
	ek, err := kr.EntryKey(1, "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", "alice.near", id)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := ek.Seal([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := sealing.WrapEntryKey(d.Key.PublicKey(), ek)
	if err != nil {
		t.Fatal(err)
	}
	return client.ActivityEntry{ID: id, At: "2026-11-29T12:00:00Z", Project: "ledger", Connector: "ledger", Operation: "pay",
		Preparer: "bot.near", Via: client.ViaTask, TaskID: id, State: "done", Sealed: sealed, DeviceCopy: cp}
}

const goodBody = `{"title":"Pay Acme","summary":"pay $1 to Acme Corp; it cannot be undone","result":{"text":"Payment sent: transaction tx-1","url":"https://ledger.example/tx-1"}}`

func TestOpenEntry(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	e := sealedEntry(t, d, entryID, goodBody)
	got, err := d.OpenEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Pay Acme" || got.Summary != "pay $1 to Acme Corp; it cannot be undone" ||
		got.Result != (EntryResult{Text: "Payment sent: transaction tx-1", URL: "https://ledger.example/tx-1"}) ||
		got.ID != entryID || got.Told() != "Payment sent: transaction tx-1" || got.Failed() {
		t.Errorf("opened %+v", got)
	}
	// An entry with nothing told opens to its state's words.
	empty, err := d.OpenEntry(sealedEntry(t, d, entryID, `{"title":"","summary":"","result":{"text":""}}`))
	if err != nil || empty.Told() != "Done." {
		t.Errorf("an empty entry: %+v %v", empty, err)
	}
}

// TestOpenEntryRefusals: every entry a device must not show is refused,
// with the error that says why.
func TestOpenEntryRefusals(t *testing.T) {
	t.Parallel()
	d, _ := newDevice(t)
	other, _ := newDevice(t)
	good := sealedEntry(t, d, entryID, goodBody)
	second := sealedEntry(t, d, "r7k2m9q4x1z8c3v6b5n0p2w4s6-2", goodBody)
	body := func(b string) client.ActivityEntry { return sealedEntry(t, d, entryID, b) }
	edit := func(f func(*client.ActivityEntry)) client.ActivityEntry {
		e := good
		f(&e)
		return e
	}
	for _, c := range []struct {
		name string
		e    client.ActivityEntry
		want error
	}{
		{"no copy for this device", edit(func(e *client.ActivityEntry) { e.DeviceCopy = nil }), ErrNoEntryCopy},
		{"a malformed id", edit(func(e *client.ActivityEntry) { e.ID = "R7/1" }), ErrUnreadable},
		{"another device's copy", sealedEntry(t, other, entryID, goodBody), sealing.ErrDecrypt},
		{"another entry's copy", edit(func(e *client.ActivityEntry) { e.DeviceCopy = second.DeviceCopy }), sealing.ErrDecrypt},
		{"another entry's body", edit(func(e *client.ActivityEntry) { e.Sealed = second.Sealed }), sealing.ErrDecrypt},
		{"a body cut short", edit(func(e *client.ActivityEntry) { e.Sealed = e.Sealed[:len(e.Sealed)-1] }), sealing.ErrDecrypt},
		{"an id the body is not sealed for", edit(func(e *client.ActivityEntry) { e.ID = second.ID }), sealing.ErrDecrypt},
		{"a body that is not JSON", body(`title`), ErrUnreadable},
		{"a member it does not know", body(`{"title":"t","summary":"","result":{"text":""},"html":"<b>"}`), ErrUnreadable},
		{"a member written twice", body(`{"title":"t","Title":"u","summary":"","result":{"text":""}}`), ErrUnreadable},
		{"a title over 80 characters", body(`{"title":"` + strings.Repeat("x", 81) + `","summary":"","result":{"text":""}}`), ErrUnreadable},
		{"a title of blanks", body(`{"title":"   ","summary":"","result":{"text":""}}`), ErrUnreadable},
		{"a summary of two lines", body(`{"title":"t","summary":"a\nb","result":{"text":""}}`), ErrUnreadable},
		{"a summary with a bidi control", body(`{"title":"t","summary":"pay \u202e$1","result":{"text":""}}`), ErrUnreadable},
		{"a result with a control character", body(`{"title":"t","summary":"","result":{"text":"done\u001b[31m"}}`), ErrUnreadable},
		{"a result over 500 characters", body(`{"title":"t","summary":"","result":{"text":"` + strings.Repeat("x", 501) + `"}}`), ErrUnreadable},
		{"an http link", body(`{"title":"t","summary":"","result":{"text":"x","url":"http://ledger.example/1"}}`), ErrUnreadable},
		{"a link with credentials", body(`{"title":"t","summary":"","result":{"text":"x","url":"https://u:p@ledger.example/1"}}`), ErrUnreadable},
		{"a javascript link", body(`{"title":"t","summary":"","result":{"text":"x","url":"javascript:alert(1)"}}`), ErrUnreadable},
		{"a link without a host", body(`{"title":"t","summary":"","result":{"text":"x","url":"https:///path"}}`), ErrUnreadable},
	} {
		got, err := d.OpenEntry(c.e)
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestEnding: every end a task or write can have is said in words, a
// failure as one; the words say whether anything was written.
func TestEnding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ state, reason, want string }{
		{"done", "", "Done."},
		{"rejected", "", "You rejected it. Nothing was written."},
		{"cancelled", "", "Cancelled before it was answered. Nothing was written."},
		{"expired", "", "It expired before it was answered. Nothing was written."},
		{"void", "", "Not carried out: the project changed (its policy, its connector or its agents) after the task was made, or the approval did not match what was shown. Nothing was written."},
		{"failed", "run_unfinished", "The write began but did not report back: it may or may not have happened."},
		{"failed", "run_not_started", "Approved, but the write did not start within 30 minutes. Nothing was written."},
		{"failed", "preparer_key_unavailable", "Approved, but the agent no longer has a key, so nothing ran. Nothing was written."},
		{"failed", "operation_unknown", "Approved, but the connector no longer has the operation that carries it out. Nothing was written."},
		{"failed", "operation_priced", "Approved, but the operation that carries it out has a price, which an answer may not. Nothing was written."},
		{"failed", "operation_limit_reached", "Approved, but the operation's limit was reached. Nothing was written."},
		{"failed", "queue_unavailable", "Approved, but the write could not be queued. Nothing was written."},
		{"failed", "run_refused:conflict", "The write failed after your approval (conflict); whether it happened is not known."},
		{"failed", "", "It failed."},
		{"failed", "something_new", "It failed (something_new)."},
		{"open", "", "It is open."},
	} {
		if got := Ending(c.state, c.reason); got != c.want {
			t.Errorf("Ending(%s, %s) = %q, want %q", c.state, c.reason, got, c.want)
		}
	}
	for _, r := range []countersign.FailureReason{countersign.FailPreparerKeyUnavailable, countersign.FailOperationPriced,
		countersign.FailOperationUnknown, countersign.FailOperationLimitReached, countersign.FailQueueUnavailable,
		countersign.FailRunNotStarted, countersign.FailRunUnfinished} {
		if w := Ending("failed", string(r)); strings.HasPrefix(w, "It failed") {
			t.Errorf("the platform's reason %s has no words of its own", r)
		}
	}
	e := Entry{ActivityEntry: client.ActivityEntry{State: "failed", FailureReason: "run_unfinished"}}
	if !e.Failed() || e.Told() != Ending("failed", "run_unfinished") {
		t.Errorf("a failed entry with nothing told: %v %q", e.Failed(), e.Told())
	}
}

// FuzzOpenEntry: whatever a service sends as an entry, a device opens it
// or refuses it, never panics; what it opens obeys the rules of shown
// text.
func FuzzOpenEntry(f *testing.F) {
	d, _ := newDevice(f)
	good := sealedEntry(f, d, entryID, goodBody)
	f.Add(entryID, good.DeviceCopy, good.Sealed, []byte(goodBody))
	f.Add("x", []byte{1}, []byte{}, []byte(`{"title":"a\u202e"}`))
	kr := sealing.GenerateKeyring()
	ek, err := kr.EntryKey(1, "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", "alice.near", entryID)
	if err != nil {
		f.Fatal(err)
	}
	cp, err := sealing.WrapEntryKey(d.Key.PublicKey(), ek)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string, copyBlob, sealed, plain []byte) {
		// Bytes from the service as they come...
		_, _ = d.OpenEntry(client.ActivityEntry{ID: id, DeviceCopy: copyBlob, Sealed: sealed})
		// ...and any body sealed under a key the device holds.
		blob, err := ek.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.OpenEntry(client.ActivityEntry{ID: entryID, DeviceCopy: cp, Sealed: blob})
		if err != nil {
			return
		}
		if entryProblem(got.Title, got.Summary, got.Result) != "" {
			t.Errorf("opened an entry it may not show: %+v", got)
		}
	})
}
