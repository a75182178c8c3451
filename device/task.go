package device

// What a device does with a task (SPEC §8, §9): open what the inbox lists
// with the device key, check it against what the service claims, open its
// files, seal the owner's answer, note and rejection reason to the task's
// reply key, and sign the approval.

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/sealing"
)

// Refusals of a device. Each is returned wrapped, with the task and what was
// wrong; none holds task content, keys or signatures.
var (
	// ErrLocked: this device holds no copy of the task's key. Unlock the
	// inbox (client.Unlock) and fetch the task again.
	ErrLocked = errors.New("device: the task is locked on this device (it holds no copy of the task's key); unlock the inbox and fetch the task again")
	// ErrNotWaiting: the task has left open and shows nothing any more.
	ErrNotWaiting = errors.New("device: the task is not waiting and shows nothing")
	// ErrUnreadable: the device copy, the content or a file does not open
	// (it also wraps sealing.ErrDecrypt then), or what opened is not a
	// well-formed task.
	ErrUnreadable = errors.New("device: the task cannot be read")
	// ErrHashMismatch: the envelope decrypted does not hash to the task
	// hash the service showed. Never approve such a task.
	ErrHashMismatch = errors.New("device: the service showed a task whose hash does not match its content; never approve it")
	// ErrMismatch: the envelope disagrees with what the service listed, or
	// is addressed to another owner.
	ErrMismatch = errors.New("device: the task's envelope does not agree with what the service listed")
	// ErrFileMismatch: a file is not the one the envelope names (number,
	// size or SHA-256).
	ErrFileMismatch = errors.New("device: the file is not the one the task's envelope names")
	// ErrTooLarge: an answer, note or rejection reason is, sealed, larger
	// than the service accepts (8 KiB).
	ErrTooLarge = errors.New("device: too large to send")
	// ErrSupply: what is supplied does not fit what the task asks for.
	ErrSupply = errors.New("device: what is supplied does not fit what the task asks for")
	// ErrNotice: a notice asks nothing: it is not approved, answered,
	// noted or rejected, only acknowledged.
	ErrNotice = errors.New("device: the task is a notice and asks nothing; acknowledge it")
)

// Opened is a task this device opened and checked. Its envelope bytes are
// the exact bytes decrypted, never re-serialized: their SHA-256 is the task
// hash the owner signs.
type Opened struct {
	// Envelope is the parsed envelope: what to show the owner.
	Envelope countersign.Envelope
	// EnvelopeBytes are the envelope's exact bytes as decrypted.
	EnvelopeBytes []byte
	// TaskHash is the lowercase hex SHA-256 of EnvelopeBytes.
	TaskHash string
	// Request is the agent's call body exactly as it was sealed.
	Request []byte

	key   *sealing.ContentKey
	reply *ecdh.PublicKey // nil for a notice
}

// Open opens a task the inbox listed (client.Task, client.Tasks) and checks
// it before anything of it is shown:
//
//   - a locked task (no device copy for this device) is refused ErrLocked,
//     a task without content (no longer waiting) ErrNotWaiting;
//   - the device copy is unwrapped with the device key for the task's id,
//     and the content blob opened with it (AAD = task id); failures are
//     ErrUnreadable wrapping sealing.ErrDecrypt;
//   - the content must be exactly a JSON object of the two strings
//     "envelope" and "request", each once, and valid UTF-8 (ErrUnreadable);
//   - the envelope's exact bytes must hash to the view's task_hash
//     (ErrHashMismatch), and parse strictly and canonically
//     (countersign.ParseEnvelope; ErrUnreadable);
//   - the envelope must be addressed to this device's account (or the
//     service must list the account as an approver of the envelope's
//     owner's task, SPEC §13) and agree with
//     the view on id, kind, preparer, project, project_uuid, thread,
//     reply_pubkey, created_at and expires_at (ErrMismatch).
//
// The view's connector, state, run and file sizes are not checked: the
// envelope names no connector apart from its build, states move, and the
// files are checked against the envelope itself by OpenFile. Whether the task
// has expired is left to the service, whose clock decides.
func (d *Device) Open(view client.TaskView) (*Opened, error) {
	if d.Key == nil {
		return nil, errors.New("device: no device key")
	}
	if d.Account == "" {
		return nil, errors.New("device: no account")
	}
	if !countersign.ValidTaskID(view.ID) {
		return nil, fmt.Errorf("%w: the service listed a task whose id is not a task id", ErrUnreadable)
	}
	id := view.ID
	switch {
	case view.Locked:
		return nil, fmt.Errorf("task %s: %w", id, ErrLocked)
	case view.Content == nil:
		return nil, fmt.Errorf("task %s (%s): %w", id, view.State, ErrNotWaiting)
	case view.DeviceCopy == nil:
		return nil, fmt.Errorf("task %s: %w", id, ErrLocked)
	}

	key, err := sealing.UnwrapContentKey(d.Key, id, view.DeviceCopy)
	if err != nil {
		return nil, fmt.Errorf("%w: task %s: this device's copy of the key does not open: %w", ErrUnreadable, id, err)
	}
	plain, err := key.OpenContent(id, view.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: task %s: the content does not open: %w", ErrUnreadable, id, err)
	}
	envelope, request, err := readContent(plain)
	if err != nil {
		return nil, fmt.Errorf("%w: task %s: %w", ErrUnreadable, id, err)
	}
	hash := countersign.TaskHash(envelope)
	if hash != view.TaskHash {
		return nil, fmt.Errorf("task %s: %w", id, ErrHashMismatch)
	}
	env, err := countersign.ParseEnvelope(envelope)
	if err != nil {
		return nil, fmt.Errorf("%w: task %s: the envelope: %w", ErrUnreadable, id, err)
	}
	if env.Owner != d.Account && !approverOf(view, env, d.Account) {
		return nil, fmt.Errorf("%w: task %s is addressed to another owner than this device's account", ErrMismatch, id)
	}
	for _, c := range []struct {
		member         string
		sealed, listed string
	}{
		{"id", env.ID, view.ID},
		{"kind", string(env.Kind), view.Kind},
		{"preparer", env.Preparer, view.Preparer},
		{"project", env.Project, view.Project},
		{"project_uuid", env.ProjectUUID, view.ProjectUUID},
		{"thread", env.Thread, view.Thread},
		{"reply_pubkey", env.ReplyPubkey, view.ReplyPubkey},
		{"created_at", env.CreatedAt.UTC().Format(countersign.TimeFormat), view.CreatedAt},
		{"expires_at", env.ExpiresAt.UTC().Format(countersign.TimeFormat), view.ExpiresAt},
	} {
		if c.sealed != c.listed {
			return nil, fmt.Errorf("%w: task %s: the listed %s is not the envelope's", ErrMismatch, id, c.member)
		}
	}
	o := &Opened{Envelope: env, EnvelopeBytes: envelope, TaskHash: hash, Request: request, key: key}
	if env.Kind.Asks() {
		if o.reply, err = sealing.ParseP256PublicKey(env.ReplyPubkey); err != nil {
			return nil, fmt.Errorf("%w: task %s: the reply key: %w", ErrUnreadable, id, err)
		}
	}
	return o, nil
}

// approverOf reports whether the service lists account as an approver of
// a task of another owner (SPEC §13 `approvers`): the view names the
// envelope's owner, this account's part as approver, and this account
// among the task's approvers. Whom an owner's policy names is the
// service's word (the device cannot read another owner's project); what
// the device signs is its own account's approval, which counts for
// nothing unless the owner's policy names it.
func approverOf(view client.TaskView, env countersign.Envelope, account string) bool {
	return view.Owner == env.Owner && view.Role == client.RoleApprover && view.Approvals != nil &&
		slices.Contains(view.Approvals.Approvers, account)
}

// ReceiptInputMatches reports whether inputSHA256, the input_sha256 of the
// task's receipt, is the keyed hash of the request this device decrypted,
// its RAW bytes as sealed (SPEC §11, amended): hex HMAC-SHA256 under the
// task's receipt key, HMAC-SHA256(content key, "receipt:v1"). A bare
// SHA-256 of the request does not match. The comparison is in constant time.
func (o *Opened) ReceiptInputMatches(inputSHA256 string) bool {
	if o == nil || o.key == nil {
		return false
	}
	return o.key.ReceiptKey().Verify(o.Request, inputSHA256)
}

// readContent reads a content blob's plaintext: exactly one JSON object
// holding the strings "envelope" and "request", each once, nothing else, in
// valid UTF-8. It returns the two strings' bytes.
func readContent(plain []byte) (envelope, request []byte, err error) {
	errShape := errors.New(`the content is not a JSON object of the strings "envelope" and "request"`)
	if !utf8.Valid(plain) {
		return nil, nil, errors.New("the content is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errShape
	}
	var env, req *string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, errShape
		}
		v, err := dec.Token()
		if err != nil {
			return nil, nil, errShape
		}
		s, ok := v.(string)
		if !ok {
			return nil, nil, errShape
		}
		switch k {
		case "envelope":
			if env != nil {
				return nil, nil, errShape
			}
			env = &s
		case "request":
			if req != nil {
				return nil, nil, errShape
			}
			req = &s
		default:
			return nil, nil, errShape
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, nil, errShape
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errShape
	}
	if env == nil || req == nil {
		return nil, nil, errShape
	}
	return []byte(*env), []byte(*req), nil
}

// gcmOverhead is what AES-256-GCM content and file blobs add to their
// plaintext: the version byte, the 12-byte nonce and the 16-byte tag.
const gcmOverhead = 1 + 12 + 16

// OpenFile opens file n (from 0) of an opened task, as client.File fetched
// it, and checks it is the file the envelope names: its number, size and
// SHA-256 (ErrFileMismatch). A blob that does not open, for instance another
// file's, is ErrUnreadable wrapping sealing.ErrDecrypt.
func (d *Device) OpenFile(o *Opened, n int, blob []byte) ([]byte, error) {
	if o == nil || o.key == nil {
		return nil, errors.New("device: OpenFile needs an opened task")
	}
	id := o.Envelope.ID
	if n < 0 || n >= len(o.Envelope.Files) {
		return nil, fmt.Errorf("%w: task %s has %d files, so no file %d", ErrFileMismatch, id, len(o.Envelope.Files), n)
	}
	f := o.Envelope.Files[n]
	if int64(len(blob)) != f.Size+gcmOverhead {
		return nil, fmt.Errorf("%w: file %d of task %s is not %d bytes", ErrFileMismatch, n, id, f.Size)
	}
	plain, err := o.key.OpenFile(id, n, blob)
	if err != nil {
		return nil, fmt.Errorf("%w: file %d of task %s does not open: %w", ErrUnreadable, n, id, err)
	}
	if int64(len(plain)) != f.Size {
		return nil, fmt.Errorf("%w: file %d of task %s is not %d bytes", ErrFileMismatch, n, id, f.Size)
	}
	sum := sha256.Sum256(plain)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("%w: file %d of task %s does not have the SHA-256 its envelope names", ErrFileMismatch, n, id)
	}
	return plain, nil
}

// asks returns what an opened task asks for, or ErrNotice.
func asks(o *Opened) (*countersign.AnswerBy, error) {
	if o == nil || o.key == nil {
		return nil, errors.New("device: no opened task")
	}
	if !o.Envelope.Kind.Asks() || o.Envelope.AnswerBy == nil || o.reply == nil {
		return nil, fmt.Errorf("task %s: %w", o.Envelope.ID, ErrNotice)
	}
	return o.Envelope.AnswerBy, nil
}

// sealReply seals plain for purpose p to the task's reply key and holds the
// sealed bytes to limit, which is what the service measures.
func sealReply(o *Opened, p sealing.Purpose, what string, plain []byte, limit int) ([]byte, error) {
	tooLarge := func(sealed int) error {
		return fmt.Errorf("%w: task %s: the %s is %d bytes and would be %d sealed; the service takes at most %d sealed bytes (%d bytes of %s)",
			ErrTooLarge, o.Envelope.ID, what, len(plain), sealed, limit, limit-sealedOverhead, what)
	}
	if len(plain) > limit { // sealing only adds to it
		return nil, tooLarge(len(plain) + sealedOverhead)
	}
	blob, err := sealing.SealTo(o.reply, p, o.Envelope.ID, plain)
	if err != nil {
		return nil, fmt.Errorf("device: seal the %s of task %s: %w", what, o.Envelope.ID, err)
	}
	if len(blob) > limit {
		return nil, tooLarge(len(blob))
	}
	return blob, nil
}

// sealedOverhead is what a blob sealed to a P-256 key adds to its plaintext:
// the version byte, the 65-byte ephemeral point, the 12-byte nonce and the
// 16-byte tag. It only words refusals; the limit itself is held on the
// sealed bytes.
const sealedOverhead = 1 + 65 + 12 + 16

// SealAnswer seals the owner's answer to an input task (sealing.Answer, to
// the envelope's reply_pubkey): UTF-8 text for a task that supplies text,
// any bytes for one that supplies a file. It refuses a task that supplies
// nothing (ErrSupply), a notice (ErrNotice), text that is not UTF-8
// (ErrSupply), and an answer whose sealed bytes exceed
// countersign.MaxSuppliedBytes (ErrTooLarge: 8,098 bytes of answer at most).
// An empty answer is sealed like any other.
func SealAnswer(o *Opened, data []byte) ([]byte, error) {
	ab, err := asks(o)
	if err != nil {
		return nil, err
	}
	switch ab.Supplies {
	case countersign.SuppliesText:
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("%w: task %s takes text, and the answer is not UTF-8", ErrSupply, o.Envelope.ID)
		}
	case countersign.SuppliesFile:
	default:
		return nil, fmt.Errorf("%w: task %s asks yes or no and takes no answer", ErrSupply, o.Envelope.ID)
	}
	return sealReply(o, sealing.Answer, "answer", data, countersign.MaxSuppliedBytes)
}

// SealNote seals the owner's note for the agent, sent beside an approval
// (sealing.Note), to the envelope's reply_pubkey. It refuses a notice
// (ErrNotice), text that is not UTF-8, and a note whose sealed bytes exceed
// countersign.MaxNoteBytes (ErrTooLarge).
func SealNote(o *Opened, text string) ([]byte, error) {
	if _, err := asks(o); err != nil {
		return nil, err
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("device: task %s: the note is not UTF-8", o.Envelope.ID)
	}
	return sealReply(o, sealing.Note, "note", []byte(text), countersign.MaxNoteBytes)
}

// SealRejection seals the owner's reason for rejecting a task
// (sealing.Rejection) to the envelope's reply_pubkey, for client.Reject. It
// refuses a notice (ErrNotice), text that is not UTF-8, and a reason whose
// sealed bytes exceed countersign.MaxReasonBytes (ErrTooLarge). To reject without
// a reason, send nil instead.
func SealRejection(o *Opened, text string) ([]byte, error) {
	if _, err := asks(o); err != nil {
		return nil, err
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("device: task %s: the reason is not UTF-8", o.Envelope.ID)
	}
	return sealReply(o, sealing.Rejection, "reason", []byte(text), countersign.MaxReasonBytes)
}

// ApproveRequest builds the signed approval of an opened task. supplied is
// the owner's answer (nil: none; an input task needs one, a confirm task
// takes none, else ErrSupply); note is the owner's note for the agent (""
// for none). Both are sealed to the task's reply key (see SealAnswer and
// SealNote); the supply hash is countersign.SupplyHash over exactly the sealed
// bytes the request carries; the sentence, naming the summary of the
// envelope the device decrypted (SPEC §7),
//
//	Approve in Countersign as {account}: {summary}. Task {id} with hash {task hash} and supply {supply hash}. At {now}.
//
// (or, for a task whose envelope has no summary, `…: task {id} with hash …`)
// is signed by d.Signer for the device's recipient at the device's clock, to
// the second, and the request carries the summary for the door to rebuild
// the sentence.
// Nothing is signed when a check refuses.
func (d *Device) ApproveRequest(o *Opened, supplied []byte, note string) (client.ApproveRequest, error) {
	ab, err := asks(o)
	if err != nil {
		return client.ApproveRequest{}, err
	}
	id := o.Envelope.ID
	switch {
	case ab.Supplies == countersign.SuppliesNone && supplied != nil:
		return client.ApproveRequest{}, fmt.Errorf("%w: task %s asks yes or no; nothing may be supplied", ErrSupply, id)
	case ab.Supplies != countersign.SuppliesNone && supplied == nil:
		return client.ApproveRequest{}, fmt.Errorf("%w: task %s needs a %s supplied", ErrSupply, id, ab.Supplies)
	}
	if d.Signer == nil {
		return client.ApproveRequest{}, errors.New("device: no signer to sign the approval")
	}
	var sealedSupply, sealedNote []byte
	if supplied != nil {
		if sealedSupply, err = SealAnswer(o, supplied); err != nil {
			return client.ApproveRequest{}, err
		}
	}
	if note != "" {
		if sealedNote, err = SealNote(o, note); err != nil {
			return client.ApproveRequest{}, err
		}
	}
	at := d.now()
	summary := o.Envelope.Display.Summary
	sentence, err := approval.Approval{
		Account:    d.Account,
		Summary:    summary,
		TaskID:     id,
		TaskHash:   o.TaskHash,
		SupplyHash: countersign.SupplyHash(sealedNote, sealedSupply),
		At:         at,
	}.Sentence()
	if err != nil {
		return client.ApproveRequest{}, fmt.Errorf("device: the approval of task %s: %w", id, err)
	}
	recipient, err := d.recipient()
	if err != nil {
		return client.ApproveRequest{}, err
	}
	signed, err := d.Signer.Sign(sentence, recipient)
	if err != nil {
		return client.ApproveRequest{}, fmt.Errorf("device: sign the approval of task %s: %w", id, err)
	}
	return client.ApproveRequest{
		TaskHash: o.TaskHash,
		Summary:  summary,
		Approval: client.Confirmation{At: at.Unix(), Signed: signed},
		Supplied: sealedSupply,
		Note:     sealedNote,
	}, nil
}

// Approve builds the approval of an opened task with ApproveRequest and sends
// it with d.Client. The answer names the run that carries the task out.
func (d *Device) Approve(ctx context.Context, o *Opened, supplied []byte, note string) (client.TaskState, error) {
	if d.Client == nil {
		return client.TaskState{}, errors.New("device: no client to send the approval")
	}
	req, err := d.ApproveRequest(o, supplied, note)
	if err != nil {
		return client.TaskState{}, err
	}
	return d.Client.Approve(ctx, o.Envelope.ID, req)
}
