package inbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"countersign"
	"countersign/approval"
	"countersign/store"
	"countersign/webhook"
)

// WebhookKeeper is what the door asks of the part of the service that holds
// the master key for webhooks: it seals the URL and secret, opens the URL
// for its owner's view, and sends a test ping (only it can sign one).
type WebhookKeeper interface {
	SealWebhook(owner, url, secret string) (keyID uint32, blob []byte, err error)
	WebhookURL(ctx context.Context, owner string) (string, error)
	Ping(ctx context.Context, owner string) (eventID string, a webhook.Attempt, err error)
}

// WebhookView is an owner's webhook; Secret is set only in the answer that
// named it.
type WebhookView struct {
	URL      *string `json:"url"`
	SetAt    string  `json:"set_at,omitempty"`
	SetByKey string  `json:"set_by_key,omitempty"`
	Secret   string  `json:"secret,omitempty"`
}

// PutWebhook names the owner's webhook with their confirmation ("name the
// webhook {sha256hex(url)}") and makes a new secret, shown once. Pending
// deliveries to a previous URL stop.
func (s *Service) PutWebhook(ctx context.Context, sess Session, url string, c Confirmation) (WebhookView, error) {
	if _, err := webhook.ValidateURL(url, s.webhookPrivate); err != nil {
		return WebhookView{}, countersign.Errorf(countersign.InvalidRequest, "%s", err.Error())
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return WebhookView{}, err
	}
	keyID, sealed, err := s.webhooks.SealWebhook(sess.AccountID, url, secret)
	if err != nil {
		return WebhookView{}, err
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return WebhookView{}, err
	}
	now := s.clock()
	var signer string
	err = s.confirmed(ctx, sess.AccountID, approval.ActionNameWebhook(url), c, func(tx doorTx, key approval.PublicKey) error {
		signer = key.String()
		return tx.PutWebhook(ctx, store.Webhook{Owner: sess.AccountID, ID: "wh_" + hex.EncodeToString(id[:]), SetAt: now,
			SetByKey: signer, KeyID: keyID, Sealed: sealed})
	})
	if err != nil {
		return WebhookView{}, err
	}
	s.log.Info("webhook named", "owner", sess.AccountID)
	return WebhookView{URL: &url, SetAt: now.Format(countersign.TimeFormat), SetByKey: signer, Secret: secret}, nil
}

// Webhook shows the owner's webhook, never its secret.
func (s *Service) Webhook(ctx context.Context, sess Session) (WebhookView, error) {
	var w store.Webhook
	err := s.store.Tx(ctx, func(tx doorTx) (err error) {
		w, err = tx.Webhook(ctx, sess.AccountID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return WebhookView{}, nil
	}
	if err != nil {
		return WebhookView{}, storeErr(err)
	}
	url, err := s.webhooks.WebhookURL(ctx, sess.AccountID)
	if err != nil {
		return WebhookView{}, storeErr(err)
	}
	return WebhookView{URL: &url, SetAt: w.SetAt.Format(countersign.TimeFormat), SetByKey: w.SetByKey}, nil
}

// DeleteWebhook removes the owner's webhook with their confirmation
// ("remove the webhook"); pending deliveries stop.
func (s *Service) DeleteWebhook(ctx context.Context, sess Session, c Confirmation) error {
	err := s.mustExist(ctx, "no webhook is named", func(tx doorTx) error {
		_, err := tx.Webhook(ctx, sess.AccountID)
		return err
	})
	if err != nil {
		return err
	}
	return s.confirmed(ctx, sess.AccountID, approval.ActionRemoveWebhook(), c, func(tx doorTx, _ approval.PublicKey) error {
		_, err := tx.DeleteWebhook(ctx, sess.AccountID)
		return err
	})
}

// DeliveryView is one delivery attempt in the owner's log.
type DeliveryView struct {
	EventID    string `json:"event_id"`
	Type       string `json:"type"`
	TaskID     string `json:"task_id,omitempty"`
	Attempt    int    `json:"attempt"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	At         string `json:"at"`
}

// MaxDeliveries is how many attempts the log shows.
const MaxDeliveries = 100

// Deliveries lists the owner's last delivery attempts, newest first.
func (s *Service) Deliveries(ctx context.Context, sess Session) ([]DeliveryView, error) {
	out := []DeliveryView{}
	err := s.store.Tx(ctx, func(tx doorTx) error {
		list, err := tx.Attempts(ctx, sess.AccountID, MaxDeliveries)
		for _, a := range list {
			out = append(out, DeliveryView{EventID: a.EventID, Type: a.Type, TaskID: a.TaskID, Attempt: a.Attempt,
				StatusCode: a.StatusCode, Error: a.Error, At: a.At.UTC().Format(countersign.TimeFormat)})
		}
		return err
	})
	return out, storeErr(err)
}

// TestWebhook sends a ping to the owner's webhook now and returns the
// attempt.
func (s *Service) TestWebhook(ctx context.Context, sess Session) (DeliveryView, error) {
	id, a, err := s.webhooks.Ping(ctx, sess.AccountID)
	if errors.Is(err, store.ErrNotFound) {
		return DeliveryView{}, countersign.Errorf(countersign.InvalidRequest, "no webhook is named")
	}
	if err != nil {
		return DeliveryView{}, storeErr(err)
	}
	return DeliveryView{EventID: id, Type: string(webhook.Ping), Attempt: a.Number, StatusCode: a.StatusCode, Error: a.Error,
		At: a.At.UTC().Format(countersign.TimeFormat)}, nil
}
