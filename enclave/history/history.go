// Package history seals the owner's history (SPEC §6, GET /inbox/activity)
// on the enclave side: an entry per write carried out and per task that
// ended, which only the owner's devices open.
package history

import (
	"bytes"
	"crypto/ecdh"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/sealing"
	"countersign/store"
)

// The owner's history (SPEC §6, GET /inbox/activity): one entry per write
// carried out, asked or not, and per task that ended. Only this side can
// seal an entry, so:
//
//   - a task's entry is made when the task opens, in the same transaction:
//     its title and summary sealed under the entry's key, the key wrapped
//     to each of the owner's devices; it is listed once the task ends.
//     Whoever ends the task (the door rejecting, cancelling or
//     acknowledging; the sweep; an answer run) moves the entry with it, in
//     the store's move (store.Move): a door never needs the key.
//   - an answer run's end, and an approved task that ends before its run
//     begins with a sentence, seal the entry again with the result: the key
//     is derived from the master key, so nothing of it is kept.
//   - a write carried out at once gets its entry when its run ends, from
//     what the connector told (connectors.Call.Did) or, when it told
//     nothing, with an empty body.
//   - unlock wraps the keys of the last 30 days' entries to devices that
//     signed in since (package unlock, with Writer.Copies).
//
// An entry's words come from the connector; they reach the owner only as
// shown text (SPEC §12): a title, summary or outcome that is not is left
// out, a refusal's sentence is put on one line and cut to fit.

// Writer seals the history's entries with the key-holder's keys.
type Writer struct {
	keys *enclave.Keys
	log  *slog.Logger
}

// New returns a Writer.
func New(keys *enclave.Keys, log *slog.Logger) *Writer { return &Writer{keys: keys, log: log} }

// entryBody is the plaintext of an entry's sealed body.
type entryBody struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Result  Result `json:"result"`
}

// Result is what the write did, in the owner's words: the connector's
// outcome, or the sentence of a failure.
type Result struct {
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
}

// Bounds of an entry's words beyond SPEC §12's: a refusal's sentence is
// cut to maxSentenceChars, and a link is at most maxLinkBytes.
const (
	maxSentenceChars = 500
	maxLinkBytes     = 2048
)

// sealEntry derives entry id's key and seals body under it.
func (h *Writer) seal(keyID uint32, projectUUID, owner, id string, body entryBody) (*sealing.EntryKey, []byte, error) {
	ek, err := h.keys.EntryKey(keyID, projectUUID, owner, id)
	if err != nil {
		return nil, nil, err
	}
	plain, err := marshal(body)
	if err != nil {
		return nil, nil, err
	}
	sealed, err := ek.Seal(plain)
	return ek, sealed, err
}

// wrapEntry wraps an entry's key to each device.
func (h *Writer) wrapEntry(ek *sealing.EntryKey, devices map[string]*ecdh.PublicKey) (map[string][]byte, error) {
	copies := make(map[string][]byte, len(devices))
	for id, pub := range devices {
		blob, err := h.keys.WrapEntryKey(pub, ek)
		if err != nil {
			return nil, err
		}
		copies[id] = blob
	}
	return copies, nil
}

// Task is the entry of a task being opened by a run of operation, with its
// key wrapped to the devices its content key is.
func (h *Writer) Task(operation string, t store.Task, d countersign.Display, devices map[string]*ecdh.PublicKey) (store.Activity, map[string][]byte, error) {
	ek, sealed, err := h.seal(t.KeyID, t.ProjectUUID, t.Owner, t.ID, entryBody{Title: d.Title, Summary: d.Summary})
	if err != nil {
		return store.Activity{}, nil, err
	}
	copies, err := h.wrapEntry(ek, devices)
	if err != nil {
		return store.Activity{}, nil, err
	}
	return store.Activity{ID: t.ID, Owner: t.Owner, Project: t.Project, ProjectUUID: t.ProjectUUID, Connector: t.Connector,
		Operation: operation, Preparer: t.Preparer, Via: store.ViaTask, State: t.State, At: t.CreatedAt,
		KeyID: t.KeyID, Sealed: sealed}, copies, nil
}

// Ended is a task's entry sealed again with how it ended; nil (the body
// sealed at opening stays) when it cannot be sealed.
func (h *Writer) Ended(t store.Task, d countersign.Display, result Result) []byte {
	_, sealed, err := h.seal(t.KeyID, t.ProjectUUID, t.Owner, t.ID, entryBody{Title: d.Title, Summary: d.Summary, Result: result})
	if err != nil {
		h.log.Error("cannot seal a task's history entry with its result", "task", t.ID, "err", err)
		return nil
	}
	return sealed
}

// Write names a write carried out at once: the run that did it, and the
// project, operation and agent it ran as.
type Write struct {
	Run, Owner, Project, ProjectUUID, Connector, Operation, Agent string
}

// Direct is the history entry of a write carried out at once, at now,
// with its key wrapped to devices (the owner's current ones).
func (h *Writer) Direct(w Write, d connectors.Did, now time.Time, devices map[string]*ecdh.PublicKey) (store.Activity, map[string][]byte, error) {
	body := entryBody{Title: shownTitle(d.Title), Summary: shownSummary(d.Summary), Result: h.Outcome(w.Connector, d.Outcome)}
	if body.Title != d.Title || body.Summary != d.Summary {
		h.log.Warn("a write's title or summary for the history is not shown text; it is left out", "connector", w.Connector, "run", w.Run)
	}
	keyID := h.keys.Current()
	ek, sealed, err := h.seal(keyID, w.ProjectUUID, w.Owner, w.Run, body)
	if err != nil {
		return store.Activity{}, nil, err
	}
	copies, err := h.wrapEntry(ek, devices)
	if err != nil {
		return store.Activity{}, nil, err
	}
	return store.Activity{ID: w.Run, Owner: w.Owner, Project: w.Project,
		ProjectUUID: w.ProjectUUID, Connector: w.Connector, Operation: w.Operation, Preparer: w.Agent,
		Via: store.ViaDirect, State: countersign.StateDone, At: now, KeyID: keyID, Sealed: sealed}, copies, nil
}

// shownTitle is a title as a task's, or "".
func shownTitle(s string) string {
	if s == "" || countersign.ValidateDisplay(countersign.Display{Title: s}) != nil {
		return ""
	}
	return s
}

// shownSummary is a summary as a task's (one line of at most 200
// characters), or "".
func shownSummary(s string) string {
	if s == "" || countersign.ValidateSummary(s) != nil {
		return ""
	}
	return s
}

// Outcome is a connector's outcome as the owner reads it: its text one
// line of shown text (as a summary), its link https; what is not is left
// out.
func (h *Writer) Outcome(conn string, o connectors.Outcome) Result {
	r := Result{Text: shownSummary(o.Text), URL: shownLink(o.URL)}
	if r.Text != o.Text || r.URL != o.URL {
		h.log.Warn("a connector's outcome for the history is not shown text or an https link; it is left out", "connector", conn)
	}
	return r
}

// shownLink is an absolute https URL with a host and no credentials, or "".
func shownLink(s string) string {
	if s == "" || len(s) > maxLinkBytes {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	return s
}

// Sentence is a refusal's sentence for the owner: its whitespace made
// single spaces, cut to maxSentenceChars, and shown text (as a field of
// text), or "".
func Sentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxSentenceChars {
		s = string([]rune(s)[:maxSentenceChars-1]) + "…"
	}
	d := countersign.Display{Title: "t", Fields: []countersign.Field{{Kind: countersign.FieldText, Label: "l",
		Values: []string{s}, WrittenBy: countersign.WrittenByProject}}}
	if s == "" || countersign.ValidateDisplay(d) != nil {
		return ""
	}
	return s
}

// Copies wraps the keys of the owner's entries listed in todo to the
// devices each names (devices: by id). An entry whose key cannot be
// derived is logged and left out.
func (h *Writer) Copies(owner string, todo []store.EntryToWrap, devices map[string]*ecdh.PublicKey) ([]store.ActivityCopy, error) {
	var copies []store.ActivityCopy
	for _, w := range todo {
		ek, err := h.keys.EntryKey(w.KeyID, w.ProjectUUID, owner, w.ID)
		if err != nil {
			h.log.Error("cannot derive a history entry's key to unlock it", "entry", w.ID, "err", err)
			continue
		}
		blob, err := h.keys.WrapEntryKey(devices[w.Device], ek)
		if err != nil {
			return nil, err
		}
		copies = append(copies, store.ActivityCopy{EntryID: w.ID, Device: w.Device, Blob: blob})
	}
	return copies, nil
}

// marshal writes JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
