package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Record is an approval as the door keeps it, once it checked it, for the
// answer run to check again (SPEC §7): the signed pieces, the recipient
// the door checked them for, the hashes the sentence names, and the
// owner's supply and note sealed to the task's reply key. It holds
// nothing a task shows: no summary (the run rebuilds the sentence with the
// envelope's own), and a batch's summaries only sealed to the task.
//
// The door writes it with Marshal and the answer run reads it with
// ParseRecord; its JSON is the one an approval was always kept in, so a
// task approved before a change of either side is read as it was written.
type Record struct {
	// Account is the account that signed: the task's owner or, for a
	// shared task (SPEC §13 `approvers`), one of its approvers. "" in an
	// approval kept before approvers, which is the owner's.
	Account     string  `json:"account,omitempty"`
	At          int64   `json:"at"`
	PublicKey   string  `json:"public_key"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url,omitempty"`
	// Recipient is the recipient the door checked the signature for, so
	// the run can tell a signature over another summary (the same
	// recipient: void, approval_mismatch) from one made for another
	// deployment; "" in an approval kept before the door named it.
	Recipient  string `json:"recipient,omitempty"`
	TaskHash   string `json:"task_hash"`
	SupplyHash string `json:"supply_hash"`
	Supplied   []byte `json:"supplied,omitempty"`
	Note       []byte `json:"note,omitempty"`
	// Batch is set for a task approved in a batch (SPEC §7, wave 3).
	Batch *BatchRecord `json:"batch,omitempty"`
}

// BatchRecord is what a task approved in a batch keeps beside its
// approval for its run to rebuild the batch sentence: the batch's tasks in
// order (ids and hashes, which the task rows hold in clear anyway), and
// the summaries its sentence names, sealed to this task by the enclave
// side.
type BatchRecord struct {
	Tasks     []BatchLine `json:"tasks"`
	Summaries []byte      `json:"summaries"`
}

// Time is the time the approval is dated (its sentence's), UTC.
func (r Record) Time() time.Time { return time.Unix(r.At, 0).UTC() }

// Signed is the record's signed pieces, to verify with a rebuilt sentence.
func (r Record) Signed() Signed {
	return Signed{PublicKey: r.PublicKey, Signature: r.Signature, Nonce: r.Nonce, CallbackURL: r.CallbackURL}
}

// SignedBy is the account the record's signature is for: Account, or
// owner for a record that names none.
func (r Record) SignedBy(owner string) string {
	if r.Account == "" {
		return owner
	}
	return r.Account
}

// Marshal writes the record as it is kept.
func (r Record) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ErrRecord is ParseRecord's answer to bytes that are not a kept approval.
var ErrRecord = errors.New("approval: the kept approval cannot be read")

// ParseRecord reads a kept approval: a JSON object of Record's members
// (nothing else), with its signed pieces and hashes present.
func ParseRecord(b []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.More() {
		return Record{}, ErrRecord
	}
	if r.PublicKey == "" || r.Signature == "" || r.Nonce == "" || r.TaskHash == "" || r.SupplyHash == "" {
		return Record{}, ErrRecord
	}
	return r, nil
}
