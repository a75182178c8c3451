package enclave

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"countersign/sealing"
	"countersign/store"
	"countersign/webhook"
)

// sealedWebhook is what an owner's webhook row seals: a URL's path may
// itself be a secret, so the URL is sealed with the signing secret.
type sealedWebhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// SealWebhook seals an owner's webhook URL and secret under the master key.
func (e *Enclave) SealWebhook(owner, url, secret string) (uint32, []byte, error) {
	b, err := json.Marshal(sealedWebhook{URL: url, Secret: secret})
	if err != nil {
		return 0, nil, err
	}
	return e.keys.Seal(sealing.WebhookSecret, owner, b)
}

// openWebhook opens an owner's webhook row.
func (e *Enclave) openWebhook(w store.Webhook) (sealedWebhook, error) {
	plain, err := e.keys.Open(w.KeyID, sealing.WebhookSecret, w.Owner, w.Sealed)
	if err != nil {
		return sealedWebhook{}, err
	}
	var s sealedWebhook
	return s, json.Unmarshal(plain, &s)
}

// WebhookURL returns the URL of an owner's webhook ("" when there is none),
// for the owner's own view.
func (e *Enclave) WebhookURL(ctx context.Context, owner string) (string, error) {
	var w store.Webhook
	err := e.store.Tx(ctx, func(tx enclaveTx) (err error) {
		w, err = tx.Webhook(ctx, owner)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	s, err := e.openWebhook(w)
	return s.URL, err
}

// Deliver makes one delivery attempt of an outbox event to the webhook it
// was written for, logs it, and says whether to try again and when. A
// webhook renamed or removed since the event stops its deliveries.
func (e *Enclave) Deliver(ctx context.Context, eventID, webhookID string) (time.Duration, bool, error) {
	var ev store.WebhookEvent
	var w store.Webhook
	attempts := 0
	err := e.store.Tx(ctx, func(tx enclaveTx) (err error) {
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
	a, err := e.send(ctx, w, webhook.Event{ID: ev.ID, Type: ev.Type, At: ev.At, Owner: ev.Owner,
		Preparer: ev.Preparer, Project: ev.Project, TaskID: ev.TaskID, Kind: string(ev.Kind), Run: ev.Run,
		FailureReason: ev.FailureReason, Link: e.link(ev.TaskID)}, attempt)
	if err != nil {
		return 0, false, err
	}
	delay, again := webhook.NextAttempt(attempt, a, e.jitter)
	return delay, again, nil
}

// send signs and sends one event to an account's webhook (the task's
// owner's, or an approver's) and logs the attempt for that account.
func (e *Enclave) send(ctx context.Context, w store.Webhook, ev webhook.Event, attempt int) (webhook.Attempt, error) {
	var a webhook.Attempt
	unusable := true
	s, err := e.openWebhook(w)
	if err != nil {
		a = webhook.Attempt{Number: attempt, Error: "the webhook's secret cannot be opened", At: e.now().UTC(), Final: true}
		e.log.Error("a webhook's sealed secret does not open", "owner", w.Owner, "err", err)
	} else {
		key, kerr := webhook.DecodeSecret(s.Secret)
		target, uerr := webhook.ValidateURL(s.URL, e.webhookPrivate)
		switch {
		case kerr != nil || uerr != nil:
			a = webhook.Attempt{Number: attempt, Error: "the webhook URL or secret is no longer usable; name the webhook again", At: e.now().UTC(), Final: true}
		default:
			a = e.webhooks.Deliver(ctx, target, key, ev, attempt)
			unusable = false
		}
	}
	e.metrics.webhookAttempts.WithLabelValues(attemptOutcome(a, unusable)).Inc()
	bg := context.WithoutCancel(ctx)
	err = e.store.Tx(bg, func(tx enclaveTx) error {
		return tx.RecordAttempt(bg, store.WebhookAttempt{Owner: w.Owner, EventID: ev.ID, Type: string(ev.Type), TaskID: ev.TaskID,
			Attempt: attempt, StatusCode: a.StatusCode, Error: a.Error, At: a.At})
	})
	e.log.Info("webhook attempt", "owner", w.Owner, "event", ev.ID, "type", ev.Type, "attempt", attempt,
		"status", a.StatusCode, "delivered", a.Delivered())
	return a, err
}

// Ping sends a ping to an owner's webhook now and returns its event id and
// the attempt.
func (e *Enclave) Ping(ctx context.Context, owner string) (string, webhook.Attempt, error) {
	var w store.Webhook
	err := e.store.Tx(ctx, func(tx enclaveTx) (err error) {
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
	a, err := e.send(ctx, w, webhook.Event{ID: id, Type: webhook.Ping, At: e.now().UTC(), Owner: owner, Link: e.publicURL + "/"}, 1)
	return id, a, err
}

// deliveryWorker delivers outbox events from the job queue, snoozing the
// job between attempts by the webhook schedule.
type deliveryWorker struct {
	river.WorkerDefaults[store.DeliveryJob]
	e *Enclave
}

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[store.DeliveryJob]) error {
	delay, again, err := w.e.Deliver(ctx, job.Args.EventID, job.Args.WebhookID)
	if err != nil {
		return unavailableSnoozes(err)
	}
	if again {
		return river.JobSnooze(delay)
	}
	return nil
}

// Timeout covers the sender's own 15-second bound.
func (w *deliveryWorker) Timeout(*river.Job[store.DeliveryJob]) time.Duration {
	return webhook.DefaultTimeout + 15*time.Second
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
