package inbox

import (
	"context"
	"errors"

	"countersign"
	"countersign/store"
)

// ActivityView is an entry of the owner's history as one of the owner's
// devices reads it (SPEC §6, GET /inbox/activity): ids, names, states and
// times in clear; its title, summary and result sealed (Sealed), opened
// with the entry's key wrapped to this device (DeviceCopy, null when this
// device has none).
type ActivityView struct {
	ID            string `json:"id"`
	At            string `json:"at"`
	Project       string `json:"project"`
	Connector     string `json:"connector"`
	Operation     string `json:"operation"`
	Preparer      string `json:"preparer"`
	Via           string `json:"via"`
	TaskID        string `json:"task_id,omitempty"`
	State         string `json:"state"`
	FailureReason string `json:"failure_reason,omitempty"`
	Sealed        []byte `json:"sealed"`
	DeviceCopy    []byte `json:"device_copy"`
}

// ActivityQuery is one page of the history: entries older than Before (an
// entry's id), of one Project or Preparer (an agent) when set, at most
// Limit (DefaultListLimit when 0, up to MaxListLimit).
type ActivityQuery struct {
	Before, Project, Preparer string
	Limit                     int
}

// Activity lists the owner's history, newest first: one entry per write
// carried out, asked or not, and per task that ended, with this device's
// copies of their keys. The door serves the ciphertext as it is; only the
// owner's devices open it.
func (s *Service) Activity(ctx context.Context, sess Session, q ActivityQuery) ([]ActivityView, bool, error) {
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	switch {
	case q.Limit < 1 || q.Limit > MaxListLimit:
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "limit is a number from 1 to %d", MaxListLimit)
	case q.Before != "" && !countersign.ValidTaskID(q.Before):
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "before names no entry of yours")
	case q.Project != "" && !countersign.ValidProjectName(q.Project):
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "project is not a project name")
	case q.Preparer != "" && !countersign.ValidAccountID(q.Preparer):
		return nil, false, countersign.Errorf(countersign.InvalidRequest, "preparer is not an account id")
	}
	out := []ActivityView{}
	more := false
	err := s.store.Read(ctx, func(tx doorTx) error {
		sq := store.ActivityQuery{Owner: sess.AccountID, Device: sess.DeviceID, Project: q.Project, Preparer: q.Preparer, Limit: q.Limit + 1}
		if q.Before != "" {
			// Another owner's entry is as unknown as a missing one.
			b, err := tx.ActivityEntry(ctx, q.Before)
			if errors.Is(err, store.ErrNotFound) || err == nil && b.Owner != sess.AccountID {
				return countersign.Errorf(countersign.InvalidRequest, "before names no entry of yours")
			} else if err != nil {
				return err
			}
			sq.Before = &b
		}
		entries, err := tx.OwnerActivity(ctx, sq)
		if err != nil {
			return err
		}
		if len(entries) > q.Limit {
			entries, more = entries[:q.Limit], true
		}
		for _, a := range entries {
			out = append(out, ActivityView{ID: a.ID, At: a.At.Format(countersign.TimeFormat), Project: a.Project,
				Connector: a.Connector, Operation: a.Operation, Preparer: a.Preparer, Via: a.Via, TaskID: a.TaskID(),
				State: string(a.State), FailureReason: string(a.FailureReason), Sealed: a.Sealed, DeviceCopy: a.DeviceCopy})
		}
		return nil
	})
	return out, more, storeErr(err)
}
