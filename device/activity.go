package device

// What a device does with the owner's history (SPEC §6, GET
// /inbox/activity): open an entry's sealed title, summary and result with
// its copy of the entry's key, and say in words how it ended.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"countersign"
	"countersign/client"
	"countersign/sealing"
)

// ErrNoEntryCopy: this device holds no copy of a history entry's key. An
// unlock (client.Unlock, done after each sign-in) wraps the last 30 days'
// entries to every current device.
var ErrNoEntryCopy = errors.New("device: this device holds no copy of the entry's key; unlock the inbox and list the history again")

// Entry is an entry of the owner's history opened on this device: what the
// service lists in clear, and the title, summary and result it sealed.
type Entry struct {
	client.ActivityEntry
	// Title and Summary are the task's (or what the connector told of a
	// write carried out at once); either may be empty.
	Title   string
	Summary string
	// Result is what the write did in the connector's words (an outcome,
	// or the sentence of a failure after the approval); empty when it told
	// nothing, Ending then says how it ended.
	Result EntryResult
}

// EntryResult is what the write did: a sentence and, maybe, where to see it.
type EntryResult struct {
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
}

// Bounds of what an entry shows beyond SPEC §12's: the result is one line
// of at most maxResultChars, the link https and at most maxLinkBytes.
const (
	maxResultChars = 500
	maxLinkBytes   = 2048
)

// OpenEntry opens an entry the history listed (client.Activity) and checks
// it before anything of it is shown: the entry's key is unwrapped from this
// device's copy for the entry's id (ErrNoEntryCopy without one), its body
// opened under it (AAD bound to the id; ErrUnreadable wrapping
// sealing.ErrDecrypt otherwise), read strictly as {title, summary, result:
// {text, url?}}, and held to what a task may show: a title as a task's, a
// summary and a result of one line (the result at most 500 characters), a
// link https (ErrUnreadable otherwise).
func (d *Device) OpenEntry(e client.ActivityEntry) (*Entry, error) {
	fail := func(err error) (*Entry, error) { return nil, fmt.Errorf("history entry %q: %w", e.ID, err) }
	if !countersign.ValidTaskID(e.ID) {
		return fail(fmt.Errorf("%w: the entry's id is malformed", ErrUnreadable))
	}
	if e.DeviceCopy == nil {
		return fail(ErrNoEntryCopy)
	}
	ek, err := sealing.UnwrapEntryKey(d.Key, e.ID, e.DeviceCopy)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrUnreadable, err))
	}
	plain, err := ek.Open(e.Sealed)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrUnreadable, err))
	}
	var body struct {
		Title   string      `json:"title"`
		Summary string      `json:"summary"`
		Result  EntryResult `json:"result"`
	}
	if err := countersign.DecodeStrict(plain, &body); err != nil {
		return fail(fmt.Errorf("%w: the entry is not {title, summary, result}", ErrUnreadable))
	}
	if p := entryProblem(body.Title, body.Summary, body.Result); p != "" {
		return fail(fmt.Errorf("%w: the entry's %s", ErrUnreadable, p))
	}
	return &Entry{ActivityEntry: e, Title: body.Title, Summary: body.Summary, Result: body.Result}, nil
}

// entryProblem says what of an entry's words a device may not show, or "".
func entryProblem(title, summary string, r EntryResult) string {
	switch {
	case title != "" && countersign.ValidateDisplay(countersign.Display{Title: title}) != nil:
		return "title is not a task's title"
	case summary != "" && countersign.ValidateSummary(summary) != nil:
		return "summary is not one line of shown text"
	case r.Text != "" && countersign.ValidateDisplay(countersign.Display{Title: "t", Fields: []countersign.Field{{
		Kind: countersign.FieldText, Label: "l", Values: []string{r.Text}, WrittenBy: countersign.WrittenByProject}}}) != nil:
		return "result is not one line of shown text"
	case r.URL != "" && !httpsLink(r.URL):
		return "link is not an https URL"
	}
	return ""
}

func httpsLink(s string) bool {
	if len(s) > maxLinkBytes {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && u.Opaque == ""
}

// Failed reports whether the entry is a failure after the owner approved
// (or of a write carried out at once): a write that was asked for and did
// not happen as it should, which the owner must see loudly.
func (e *Entry) Failed() bool { return e.State == string(countersign.StateFailed) }

// Told is what the entry says of its end: the connector's words, or, when
// it told nothing, Ending's.
func (e *Entry) Told() string {
	if e.Result.Text != "" {
		return e.Result.Text
	}
	return Ending(e.State, e.FailureReason)
}

// Ending is how an entry ended, in the owner's words, from its state and
// failure reason alone: for ends the service, not the connector, decides
// (the owner's no, a cancel, an expiry, the platform's failures), and for
// ends the connector told nothing of. The web inbox says the same words.
func Ending(state, failureReason string) string {
	switch countersign.State(state) {
	case countersign.StateDone:
		return "Done."
	case countersign.StateRejected:
		return "You rejected it. Nothing was written."
	case countersign.StateCancelled:
		return "Cancelled before it was answered. Nothing was written."
	case countersign.StateExpired:
		return "It expired before it was answered. Nothing was written."
	case countersign.StateVoid:
		return "Not carried out: the project changed (its policy, its connector or its agents) after the task was made, or the approval did not match what was shown. Nothing was written."
	case countersign.StateFailed:
	default:
		return "It is " + state + "."
	}
	r := countersign.FailureReason(failureReason)
	switch r {
	case countersign.FailRunUnfinished:
		return "The write began but did not report back: it may or may not have happened."
	case countersign.FailRunNotStarted:
		return "Approved, but the write did not start within 30 minutes. Nothing was written."
	case countersign.FailPreparerKeyUnavailable:
		return "Approved, but the agent no longer has a key, so nothing ran. Nothing was written."
	case countersign.FailOperationUnknown:
		return "Approved, but the connector no longer has the operation that carries it out. Nothing was written."
	case countersign.FailOperationPriced:
		return "Approved, but the operation that carries it out has a price, which an answer may not. Nothing was written."
	case countersign.FailOperationLimitReached:
		return "Approved, but the operation's limit was reached. Nothing was written."
	case countersign.FailQueueUnavailable:
		return "Approved, but the write could not be queued. Nothing was written."
	}
	if code, ok := r.RefusalCode(); ok {
		return "The write failed after your approval (" + string(code) + "); whether it happened is not known."
	}
	return "It failed" + strings.TrimSuffix(" ("+failureReason+")", " ()") + "."
}
