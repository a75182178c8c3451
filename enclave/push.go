package enclave

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"countersign"
	"countersign/sealing"
	"countersign/store"
	"countersign/webhook"
	"countersign/webpush"
)

// Purposes of the Web Push secrets sealed under the master key.
const (
	// pushSubscription seals a device's subscription (endpoint and keys),
	// bound to the device id.
	pushSubscription = sealing.SecretPurpose("push-subscription")
	// vapidKey seals the VAPID private key, bound to its row id "vapid".
	vapidKey = sealing.SecretPurpose("vapid-key")
)

// vapidRow is the row id the VAPID key is sealed for.
const vapidRow = "vapid"

// PushPayload is all a push carries (SPEC §10): a version byte, nothing of
// the task; the service worker shows its fixed sentence whatever arrives.
var PushPayload = []byte{0x01}

// PushTopic makes a push replace an undelivered earlier one rather than
// stack (RFC 8030 §5.4).
const PushTopic = "tasks-waiting"

// vapidCache holds the VAPID key once it is read or made: it changes
// never (rotation seals the same key again).
type vapidCache struct {
	mu  sync.Mutex
	key *webpush.Key
}

// pushKey returns the service's VAPID key pair, making and storing it the
// first time any process asks: of processes making one at once, the first
// stored wins and every one uses it.
func (e *Enclave) pushKey(ctx context.Context) (*webpush.Key, error) {
	e.vapid.mu.Lock()
	defer e.vapid.mu.Unlock()
	if e.vapid.key != nil {
		return e.vapid.key, nil
	}
	var row store.PushKey
	err := e.store.Tx(ctx, func(tx enclaveTx) (err error) {
		row, err = tx.PushKey(ctx)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		fresh, gerr := webpush.GenerateKey()
		if gerr != nil {
			return nil, gerr
		}
		raw, gerr := fresh.Bytes()
		if gerr != nil {
			return nil, gerr
		}
		keyID, blob, gerr := e.keys.Seal(vapidKey, vapidRow, raw)
		if gerr != nil {
			return nil, gerr
		}
		err = e.store.Tx(ctx, func(tx enclaveTx) error {
			made, err := tx.InsertPushKey(ctx, store.PushKey{PublicKey: fresh.PublicKey(), KeyID: keyID, Sealed: blob, CreatedAt: e.clock()})
			if err != nil {
				return err
			}
			if made {
				e.log.Info("push key made", "public_key", fresh.PublicKey())
			}
			row, err = tx.PushKey(ctx)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	raw, err := e.keys.Open(row.KeyID, vapidKey, vapidRow, row.Sealed)
	if err != nil {
		return nil, fmt.Errorf("the push key does not open: %w", err)
	}
	k, err := webpush.ParseKey(raw)
	if err != nil {
		return nil, err
	}
	if k.PublicKey() != row.PublicKey {
		return nil, errors.New("the push key does not match its public key")
	}
	e.vapid.key = k
	return k, nil
}

// PushPublicKey is the service's VAPID public key, the applicationServerKey
// browsers subscribe with (GET /inbox/push/key).
func (e *Enclave) PushPublicKey(ctx context.Context) (string, error) {
	k, err := e.pushKey(ctx)
	if err != nil {
		return "", err
	}
	return k.PublicKey(), nil
}

// SealPush seals a device's push subscription under the master key, bound
// to the device.
func (e *Enclave) SealPush(deviceID string, sub []byte) (uint32, []byte, error) {
	return e.keys.Seal(pushSubscription, deviceID, sub)
}

// openPush opens a device's subscription.
func (e *Enclave) openPush(d store.Device) (webpush.Subscription, error) {
	var s webpush.Subscription
	plain, err := e.keys.Open(d.PushKeyID, pushSubscription, d.ID, d.Push)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(plain, &s)
}

// pushDevices are the devices of an opening task's owner that get its
// push: those with a subscription, among those the task is wrapped to.
func pushDevices(all []store.Device, checked map[string]*ecdh.PublicKey) []string {
	var out []string
	for _, d := range all {
		if _, ok := checked[d.ID]; ok && d.Push != nil {
			out = append(out, d.ID)
		}
	}
	return out
}

// DeliverPush makes one attempt of a task's push to one device, and says
// whether to try again and when. A push goes only while the task waits and
// the device's session and subscription last: a task that left open or
// expired, a device that ended and a subscription deleted all end the
// delivery. The push service's end of the subscription (404, 410, another
// 4xx) deletes it; a 5xx, 408, 413, 429 or no answer is tried again on the
// webhooks' schedule, within the task's life.
func (e *Enclave) DeliverPush(ctx context.Context, taskID, deviceID string) (time.Duration, bool, error) {
	var (
		d    store.PushDelivery
		task store.Task
		dev  store.Device
		// theirs: the device's account is the task's owner or, for a
		// shared task, still one of its approvers.
		theirs bool
	)
	err := e.store.Tx(ctx, func(tx enclaveTx) (err error) {
		if d, err = tx.PushDelivery(ctx, taskID, deviceID); err != nil {
			return err
		}
		if task, err = tx.Task(ctx, taskID); err != nil {
			return err
		}
		if dev, err = tx.Device(ctx, deviceID); err != nil {
			return err
		}
		theirs = dev.Account == task.Owner
		if !theirs && task.Shared() {
			approvers, err := tx.TaskApprovers(ctx, taskID)
			if err != nil {
				return err
			}
			theirs = slices.Contains(approvers, dev.Account)
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		if d.TaskID != "" { // the task or the device is gone
			return 0, false, e.pushDone(ctx, taskID, deviceID, "gone")
		}
		return 0, false, nil // done already
	}
	if err != nil {
		return 0, false, err
	}
	now := e.now()
	switch {
	case task.State != countersign.StateOpen || !now.Before(task.ExpiresAt):
		return 0, false, e.pushDone(ctx, taskID, deviceID, "task_closed")
	case !dev.EndedAt.IsZero() || !now.Before(dev.ValidUntil) || dev.Push == nil || !theirs:
		return 0, false, e.pushDone(ctx, taskID, deviceID, "no_subscription")
	case d.Attempts >= webhook.MaxAttempts:
		return 0, false, e.pushDone(ctx, taskID, deviceID, "attempts_spent")
	}
	var claimed bool
	err = e.store.Tx(ctx, func(tx enclaveTx) (err error) {
		claimed, err = tx.ClaimPushAttempt(ctx, taskID, deviceID, d.Attempts)
		return err
	})
	if err != nil || !claimed {
		return 0, false, err // another worker holds this attempt
	}
	attempt := d.Attempts + 1
	sub, err := e.openPush(dev)
	if err != nil {
		e.log.Error("a device's sealed push subscription does not open", "device", deviceID, "err", err)
		e.metrics.pushAttempts.WithLabelValues(webpush.Unsendable.String()).Inc()
		return 0, false, e.pushDone(ctx, taskID, deviceID, "unopened")
	}
	key, err := e.pushKey(ctx)
	if err != nil {
		return 0, false, err
	}
	urgency := webpush.UrgencyHigh
	if task.Kind == countersign.KindNotice {
		urgency = webpush.UrgencyNormal
	}
	r := e.push.Send(ctx, sub, key, e.pushContact, webpush.Message{Payload: PushPayload, TTL: task.ExpiresAt.Sub(now),
		Urgency: urgency, Topic: PushTopic})
	e.metrics.pushAttempts.WithLabelValues(r.Outcome.String()).Inc()
	e.log.Info("push attempt", "owner", task.Owner, "device", deviceID, "task", taskID, "attempt", attempt,
		"status", r.StatusCode, "outcome", r.Outcome.String(), "error", r.Error)
	switch r.Outcome {
	case webpush.Gone:
		bg := context.WithoutCancel(ctx)
		err := e.store.Tx(bg, func(tx enclaveTx) error {
			if ended, err := tx.DeletePush(bg, deviceID, dev.Push); err != nil {
				return err
			} else if ended {
				e.log.Info("push subscription ended by its push service", "owner", task.Owner, "device", deviceID, "status", r.StatusCode)
			}
			return tx.DeletePushDelivery(bg, taskID, deviceID)
		})
		return 0, false, err
	case webpush.Retry:
		delay, again := webhook.NextAttempt(attempt, webhook.Attempt{Number: attempt, StatusCode: r.StatusCode, Error: r.Error,
			RetryAfter: r.RetryAfter}, e.jitter)
		if again && e.now().Add(delay).Before(task.ExpiresAt) {
			return delay, true, nil
		}
		return 0, false, e.pushDone(ctx, taskID, deviceID, "given_up")
	}
	return 0, false, e.pushDone(ctx, taskID, deviceID, r.Outcome.String())
}

// pushDone deletes a delivery that is over.
func (e *Enclave) pushDone(ctx context.Context, taskID, deviceID, why string) error {
	bg := context.WithoutCancel(ctx)
	e.log.Debug("push delivery over", "task", taskID, "device", deviceID, "why", why)
	return e.store.Tx(bg, func(tx enclaveTx) error { return tx.DeletePushDelivery(bg, taskID, deviceID) })
}

// pushWorker sends pushes from the job queue, snoozing the job between
// attempts.
type pushWorker struct {
	river.WorkerDefaults[store.PushJob]
	e *Enclave
}

func (w *pushWorker) Work(ctx context.Context, job *river.Job[store.PushJob]) error {
	delay, again, err := w.e.DeliverPush(ctx, job.Args.TaskID, job.Args.DeviceID)
	if err != nil {
		return unavailableSnoozes(err)
	}
	if again {
		return river.JobSnooze(delay)
	}
	return nil
}

// Timeout covers the sender's own 15-second bound.
func (w *pushWorker) Timeout(*river.Job[store.PushJob]) time.Duration {
	return webpush.DefaultTimeout + 15*time.Second
}
