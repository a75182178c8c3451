package delivery

import (
	"context"
	"errors"
	"time"

	"countersign/store"
	"countersign/webhook"
)

// SealWebhook seals an owner's webhook URL and secret under the master
// key, for the door (inbox.WebhookKeeper).
func (s *Service) SealWebhook(owner, url, secret string) (uint32, []byte, error) {
	return s.keys.SealWebhook(owner, url, secret)
}

// WebhookURL returns the URL of an owner's webhook ("" when there is none),
// for the owner's own view.
func (s *Service) WebhookURL(ctx context.Context, owner string) (string, error) {
	var w store.Webhook
	err := s.store.Tx(ctx, func(tx deliveryTx) (err error) {
		w, err = tx.Webhook(ctx, owner)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	url, _, err := s.keys.OpenWebhook(w)
	return url, err
}

// Deliver makes one delivery attempt of an outbox event to the webhook it
// was written for, logs it, and says whether to try again and when. A
// webhook renamed or removed since the event stops its deliveries.
func (s *Service) Deliver(ctx context.Context, eventID, webhookID string) (time.Duration, bool, error) {
	var ev store.WebhookEvent
	var w store.Webhook
	attempts := 0
	err := s.store.Tx(ctx, func(tx deliveryTx) (err error) {
		if ev, err = tx.WebhookEvent(ctx, eventID); err != nil {
			return err
		}
		// The owner's webhook, or the approver's the event was written
		// for (a shared task's events reach every approver's own).
		if w, err = tx.Webhook(ctx, ev.Account()); err != nil {
			return err
		}
		attempts, err = tx.AttemptCount(ctx, eventID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || err == nil && w.ID != webhookID {
		return 0, false, nil // the event is gone, or the owner named another URL since
	}
	if err != nil {
		return 0, false, err
	}
	if attempts >= webhook.MaxAttempts {
		return 0, false, nil
	}
	attempt := attempts + 1
	a, err := s.send(ctx, w, webhook.Event{ID: ev.ID, Type: ev.Type, At: ev.At, Owner: ev.Owner,
		Preparer: ev.Preparer, Project: ev.Project, TaskID: ev.TaskID, Kind: string(ev.Kind), Run: ev.Run,
		FailureReason: ev.FailureReason, Link: s.link(ev.TaskID)}, attempt)
	if err != nil {
		return 0, false, err
	}
	delay, again := webhook.NextAttempt(attempt, a, s.jitter)
	return delay, again, nil
}

// send signs and sends one event to an account's webhook (the task's
// owner's, or an approver's) and logs the attempt for that account.
func (s *Service) send(ctx context.Context, w store.Webhook, ev webhook.Event, attempt int) (webhook.Attempt, error) {
	var a webhook.Attempt
	unusable := true
	url, secret, err := s.keys.OpenWebhook(w)
	if err != nil {
		a = webhook.Attempt{Number: attempt, Error: "the webhook's secret cannot be opened", At: s.now().UTC(), Final: true}
		s.log.Error("a webhook's sealed secret does not open", "owner", w.Owner, "err", err)
	} else {
		key, kerr := webhook.DecodeSecret(secret)
		target, uerr := webhook.ValidateURL(url, s.webhookPrivate)
		switch {
		case kerr != nil || uerr != nil:
			a = webhook.Attempt{Number: attempt, Error: "the webhook URL or secret is no longer usable; name the webhook again", At: s.now().UTC(), Final: true}
		default:
			a = s.webhooks.Deliver(ctx, target, key, ev, attempt)
			unusable = false
		}
	}
	s.metrics.webhookAttempts.WithLabelValues(attemptOutcome(a, unusable)).Inc()
	bg := context.WithoutCancel(ctx)
	err = s.store.Tx(bg, func(tx deliveryTx) error {
		return tx.RecordAttempt(bg, store.WebhookAttempt{Owner: w.Owner, EventID: ev.ID, Type: string(ev.Type), TaskID: ev.TaskID,
			Attempt: attempt, StatusCode: a.StatusCode, Error: a.Error, At: a.At})
	})
	s.log.Info("webhook attempt", "owner", w.Owner, "event", ev.ID, "type", ev.Type, "attempt", attempt,
		"status", a.StatusCode, "delivered", a.Delivered())
	return a, err
}

// Ping sends a ping to an owner's webhook now and returns its event id and
// the attempt.
func (s *Service) Ping(ctx context.Context, owner string) (string, webhook.Attempt, error) {
	var w store.Webhook
	err := s.store.Tx(ctx, func(tx deliveryTx) (err error) {
		w, err = tx.Webhook(ctx, owner)
		return err
	})
	if err != nil {
		return "", webhook.Attempt{}, err
	}
	id, err := webhook.NewEventID()
	if err != nil {
		return "", webhook.Attempt{}, err
	}
	a, err := s.send(ctx, w, webhook.Event{ID: id, Type: webhook.Ping, At: s.now().UTC(), Owner: owner, Link: s.publicURL + "/"}, 1)
	return id, a, err
}

// attemptOutcome names how an attempt ended, for the metrics.
func attemptOutcome(a webhook.Attempt, unusable bool) string {
	switch {
	case unusable:
		return "unusable"
	case a.Delivered():
		return "delivered"
	case a.StatusCode != 0:
		return "refused"
	}
	return "unreachable"
}
