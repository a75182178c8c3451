package enclave

import (
	"context"
	"crypto/ecdh"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
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
//     signed in since.
//
// An entry's words come from the connector; they reach the owner only as
// shown text (SPEC §12): a title, summary or outcome that is not is left
// out, a refusal's sentence is put on one line and cut to fit.

// entryBody is the plaintext of an entry's sealed body.
type entryBody struct {
	Title   string      `json:"title"`
	Summary string      `json:"summary"`
	Result  entryResult `json:"result"`
}

// entryResult is what the write did, in the owner's words: the connector's
// outcome, or the sentence of a failure.
type entryResult struct {
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
}

// Bounds of an entry's words beyond SPEC §12's: a refusal's sentence is
// cut to maxSentenceChars, and a link is at most maxLinkBytes.
const (
	maxSentenceChars = 500
	maxLinkBytes     = 2048
	// unlockBatch bounds the entries one unlock transaction wraps.
	unlockBatch = 500
)

// sealEntry derives entry id's key and seals body under it.
func (e *Enclave) sealEntry(keyID uint32, projectUUID, owner, id string, body entryBody) (*sealing.EntryKey, []byte, error) {
	ek, err := e.keys.EntryKey(keyID, projectUUID, owner, id)
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
func wrapEntry(ek *sealing.EntryKey, devices map[string]*ecdh.PublicKey) (map[string][]byte, error) {
	copies := make(map[string][]byte, len(devices))
	for id, pub := range devices {
		blob, err := sealing.WrapEntryKey(pub, ek)
		if err != nil {
			return nil, err
		}
		copies[id] = blob
	}
	return copies, nil
}

// taskEntry is the entry of a task being opened, with its key wrapped to
// the devices its content key is.
func (e *Enclave) taskEntry(run *Run, t store.Task, d countersign.Display, devices map[string]*ecdh.PublicKey) (store.Activity, map[string][]byte, error) {
	ek, sealed, err := e.sealEntry(t.KeyID, t.ProjectUUID, t.Owner, t.ID, entryBody{Title: d.Title, Summary: d.Summary})
	if err != nil {
		return store.Activity{}, nil, err
	}
	copies, err := wrapEntry(ek, devices)
	if err != nil {
		return store.Activity{}, nil, err
	}
	return store.Activity{ID: t.ID, Owner: t.Owner, Project: t.Project, ProjectUUID: t.ProjectUUID, Connector: t.Connector,
		Operation: run.Operation, Preparer: t.Preparer, Via: store.ViaTask, State: t.State, At: t.CreatedAt,
		KeyID: t.KeyID, Sealed: sealed}, copies, nil
}

// endedEntry is a task's entry sealed again with how it ended; nil (the
// body sealed at opening stays) when it cannot be sealed.
func (e *Enclave) endedEntry(t store.Task, d countersign.Display, result entryResult) []byte {
	_, sealed, err := e.sealEntry(t.KeyID, t.ProjectUUID, t.Owner, t.ID, entryBody{Title: d.Title, Summary: d.Summary, Result: result})
	if err != nil {
		e.log.Error("cannot seal a task's history entry with its result", "task", t.ID, "err", err)
		return nil
	}
	return sealed
}

// didOf is what a run of a write carried out at once tells the owner's
// history: what the connector told with Did, or an empty account of a
// write that ran well without opening a task; nil when it wrote nothing
// the history keeps. A run given up is not read: its handler may still run.
func didOf(run *Run, op *connectors.Operation, call *connectors.Call, runErr error, opened []Opened) *connectors.Did {
	if run.abandoned.Load() {
		return nil
	}
	if d := call.Done(); d != nil {
		return d
	}
	if op.Kind == connectors.Write && runErr == nil && len(opened) == 0 {
		return &connectors.Did{}
	}
	return nil
}

// recordDirect writes, in tx, the history entry of a write carried out at
// once, its key wrapped to the owner's current devices.
func (e *Enclave) recordDirect(ctx context.Context, tx directTx, run *Run, conn string, d connectors.Did) error {
	now := e.clock()
	body := entryBody{Title: shownTitle(d.Title), Summary: shownSummary(d.Summary), Result: e.shownOutcome(conn, d.Outcome)}
	if body.Title != d.Title || body.Summary != d.Summary {
		e.log.Warn("a write's title or summary for the history is not shown text; it is left out", "connector", conn, "run", run.ID)
	}
	keyID := e.keys.Current()
	ek, sealed, err := e.sealEntry(keyID, run.Project.UUID, run.Project.Owner, run.ID, body)
	if err != nil {
		return err
	}
	devices, err := e.deviceKeys(ctx, tx, run.Project.Owner, now)
	if err != nil {
		return err
	}
	copies, err := wrapEntry(ek, devices)
	if err != nil {
		return err
	}
	return tx.InsertActivity(ctx, store.Activity{ID: run.ID, Owner: run.Project.Owner, Project: run.Project.Name,
		ProjectUUID: run.Project.UUID, Connector: run.Project.Connector, Operation: run.Operation, Preparer: run.Agent,
		Via: store.ViaDirect, State: countersign.StateDone, At: now, KeyID: keyID, Sealed: sealed}, copies)
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

// shownOutcome is a connector's outcome as the owner reads it: its text
// one line of shown text (as a summary), its link https; what is not is
// left out.
func (e *Enclave) shownOutcome(conn string, o connectors.Outcome) entryResult {
	r := entryResult{Text: shownSummary(o.Text), URL: shownLink(o.URL)}
	if r.Text != o.Text || r.URL != o.URL {
		e.log.Warn("a connector's outcome for the history is not shown text or an https link; it is left out", "connector", conn)
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

// shownSentence is a refusal's sentence for the owner: its whitespace made
// single spaces, cut to maxSentenceChars, and shown text (as a field of
// text), or "".
func shownSentence(s string) string {
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

// unlockEntries wraps the keys of the owner's entries of the last 30 days
// (ended or not) to each current device that has no copy, a batch per
// transaction, until none is left.
func (e *Enclave) unlockEntries(ctx context.Context, owner string) error {
	for more := true; more; {
		err := e.store.Tx(ctx, func(tx enclaveTx) error {
			now := e.now().UTC()
			devices, err := e.deviceKeys(ctx, tx, owner, now)
			if err != nil {
				return err
			}
			more, err = e.wrapEntries(ctx, tx, owner, devices, now)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// wrapEntries wraps, in tx, the keys of up to unlockBatch entries of the
// owner's last 30 days to the devices that have no copy; more says that a
// next batch may find some (it wrote a full one).
func (e *Enclave) wrapEntries(ctx context.Context, tx store.History, owner string, devices map[string]*ecdh.PublicKey, now time.Time) (more bool, err error) {
	if len(devices) == 0 {
		return false, nil
	}
	ids := make([]string, 0, len(devices))
	for id := range devices {
		ids = append(ids, id)
	}
	todo, err := tx.ActivityToWrap(ctx, owner, ids, now.Add(-countersign.OutcomeKept), unlockBatch)
	if err != nil {
		return false, err
	}
	var copies []store.ActivityCopy
	for _, w := range todo {
		ek, err := e.keys.EntryKey(w.KeyID, w.ProjectUUID, owner, w.ID)
		if err != nil {
			e.log.Error("cannot derive a history entry's key to unlock it", "entry", w.ID, "err", err)
			continue
		}
		blob, err := sealing.WrapEntryKey(devices[w.Device], ek)
		if err != nil {
			return false, err
		}
		copies = append(copies, store.ActivityCopy{EntryID: w.ID, Device: w.Device, Blob: blob})
	}
	// A full batch of which nothing could be wrapped would come back
	// whole: that is where the unlock stops.
	return len(todo) == unlockBatch && len(copies) > 0, tx.PutActivityCopies(ctx, copies)
}
