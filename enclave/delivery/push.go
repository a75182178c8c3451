package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"countersign"
	"countersign/store"
	"countersign/webhook"
	"countersign/webpush"
)

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
func (s *Service) pushKey(ctx context.Context) (*webpush.Key, error) {
	s.vapid.mu.Lock()
	defer s.vapid.mu.Unlock()
	if s.vapid.key != nil {
		return s.vapid.key, nil
	}
	var row store.PushKey
	err := s.store.Tx(ctx, func(tx deliveryTx) (err error) {
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
		keyID, blob, gerr := s.keys.SealVAPID(raw)
		if gerr != nil {
			return nil, gerr
		}
		err = s.store.Tx(ctx, func(tx deliveryTx) error {
			made, err := tx.InsertPushKey(ctx, store.PushKey{PublicKey: fresh.PublicKey(), KeyID: keyID, Sealed: blob, CreatedAt: s.clock()})
			if err != nil {
				return err
			}
			if made {
				s.log.Info("push key made", "public_key", fresh.PublicKey())
			}
			row, err = tx.PushKey(ctx)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	raw, err := s.keys.OpenVAPID(row)
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
	s.vapid.key = k
	return k, nil
}

// PushPublicKey is the service's VAPID public key, the applicationServerKey
// browsers subscribe with (GET /inbox/push/key).
func (s *Service) PushPublicKey(ctx context.Context) (string, error) {
	k, err := s.pushKey(ctx)
	if err != nil {
		return "", err
	}
	return k.PublicKey(), nil
}

// SealPush seals a device's push subscription under the master key, bound
// to the device, for the door (inbox.PushKeeper).
func (s *Service) SealPush(deviceID string, sub []byte) (uint32, []byte, error) {
	return s.keys.SealPush(deviceID, sub)
}

// openPush opens a device's subscription.
func (s *Service) openPush(d store.Device) (webpush.Subscription, error) {
	var sub webpush.Subscription
	plain, err := s.keys.OpenPush(d)
	if err != nil {
		return sub, err
	}
	return sub, json.Unmarshal(plain, &sub)
}

// DeliverPush makes one attempt of a task's push to one device, and says
// whether to try again and when. A push goes only while the task waits and
// the device's session and subscription last: a task that left open or
// expired, a device that ended and a subscription deleted all end the
// delivery. The push service's end of the subscription (404, 410, another
// 4xx) deletes it; a 5xx, 408, 413, 429 or no answer is tried again on the
// webhooks' schedule, within the task's life.
func (s *Service) DeliverPush(ctx context.Context, taskID, deviceID string) (time.Duration, bool, error) {
	var (
		d    store.PushDelivery
		task store.Task
		dev  store.Device
		// theirs: the device's account is the task's owner or, for a
		// shared task, still one of its approvers.
		theirs bool
	)
	err := s.store.Tx(ctx, func(tx deliveryTx) (err error) {
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
			return 0, false, s.pushDone(ctx, taskID, deviceID, "gone")
		}
		return 0, false, nil // done already
	}
	if err != nil {
		return 0, false, err
	}
	now := s.now()
	switch {
	case task.State != countersign.StateOpen || !now.Before(task.ExpiresAt):
		return 0, false, s.pushDone(ctx, taskID, deviceID, "task_closed")
	case !dev.EndedAt.IsZero() || !now.Before(dev.ValidUntil) || dev.Push == nil || !theirs:
		return 0, false, s.pushDone(ctx, taskID, deviceID, "no_subscription")
	case d.Attempts >= webhook.MaxAttempts:
		return 0, false, s.pushDone(ctx, taskID, deviceID, "attempts_spent")
	}
	var claimed bool
	err = s.store.Tx(ctx, func(tx deliveryTx) (err error) {
		claimed, err = tx.ClaimPushAttempt(ctx, taskID, deviceID, d.Attempts)
		return err
	})
	if err != nil || !claimed {
		return 0, false, err // another worker holds this attempt
	}
	attempt := d.Attempts + 1
	sub, err := s.openPush(dev)
	if err != nil {
		s.log.Error("a device's sealed push subscription does not open", "device", deviceID, "err", err)
		s.metrics.pushAttempts.WithLabelValues(webpush.Unsendable.String()).Inc()
		return 0, false, s.pushDone(ctx, taskID, deviceID, "unopened")
	}
	key, err := s.pushKey(ctx)
	if err != nil {
		return 0, false, err
	}
	urgency := webpush.UrgencyHigh
	if task.Kind == countersign.KindNotice {
		urgency = webpush.UrgencyNormal
	}
	r := s.push.Send(ctx, sub, key, s.pushContact, webpush.Message{Payload: PushPayload, TTL: task.ExpiresAt.Sub(now),
		Urgency: urgency, Topic: PushTopic})
	s.metrics.pushAttempts.WithLabelValues(r.Outcome.String()).Inc()
	s.log.Info("push attempt", "owner", task.Owner, "device", deviceID, "task", taskID, "attempt", attempt,
		"status", r.StatusCode, "outcome", r.Outcome.String(), "error", r.Error)
	switch r.Outcome {
	case webpush.Gone:
		bg := context.WithoutCancel(ctx)
		err := s.store.Tx(bg, func(tx deliveryTx) error {
			if ended, err := tx.DeletePush(bg, deviceID, dev.Push); err != nil {
				return err
			} else if ended {
				s.log.Info("push subscription ended by its push service", "owner", task.Owner, "device", deviceID, "status", r.StatusCode)
			}
			return tx.DeletePushDelivery(bg, taskID, deviceID)
		})
		return 0, false, err
	case webpush.Retry:
		delay, again := webhook.NextAttempt(attempt, webhook.Attempt{Number: attempt, StatusCode: r.StatusCode, Error: r.Error,
			RetryAfter: r.RetryAfter}, s.jitter)
		if again && s.now().Add(delay).Before(task.ExpiresAt) {
			return delay, true, nil
		}
		return 0, false, s.pushDone(ctx, taskID, deviceID, "given_up")
	}
	return 0, false, s.pushDone(ctx, taskID, deviceID, r.Outcome.String())
}

// pushDone deletes a delivery that is over.
func (s *Service) pushDone(ctx context.Context, taskID, deviceID, why string) error {
	bg := context.WithoutCancel(ctx)
	s.log.Debug("push delivery over", "task", taskID, "device", deviceID, "why", why)
	return s.store.Tx(bg, func(tx deliveryTx) error { return tx.DeletePushDelivery(bg, taskID, deviceID) })
}
