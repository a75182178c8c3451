// Package delivery delivers, on the enclave side, what tells owners a
// task moved: webhook events from the outbox, signed with each owner's
// secret (SPEC §9), and Web Push messages to their devices (SPEC §10),
// signed with the VAPID key. Both secrets and the subscriptions are sealed
// under the master key; only the key-holder opens them.
package delivery

import (
	"log/slog"
	"strings"
	"time"

	"countersign/enclave"
	"countersign/store"
	"countersign/webhook"
	"countersign/webpush"
)

// Service delivers webhooks and pushes.
type Service struct {
	keys      *enclave.Keys
	store     store.Port[deliveryTx]
	publicURL string
	now       func() time.Time
	log       *slog.Logger
	// webhooks sends owners' webhooks; webhookPrivate lets them reach
	// loopback and private addresses (development and tests only).
	webhooks       *webhook.Sender
	webhookPrivate bool
	// push sends owners' devices their pushes (SPEC §10), signed with the
	// VAPID key (made once, kept in vapid) naming pushContact.
	push        *webpush.Sender
	pushContact string
	vapid       vapidCache
	// jitter picks the retry schedule's jitter (nil: random).
	jitter func() float64
	// metrics count webhook and push attempts.
	metrics metrics
}

// Config is what a Service is built from.
type Config struct {
	enclave.Deps
	// PublicURL is the service's origin, for the links events carry.
	PublicURL string
	// WebhookAllowPrivate lets webhooks reach loopback and private
	// addresses (development and tests only).
	WebhookAllowPrivate bool
	// WebhookSender sends webhooks (nil: a sender under the rule above).
	WebhookSender *webhook.Sender
	// PushAllowAnyEndpoint lets pushes reach endpoints on any host, over
	// http and to loopback and private addresses too (development and
	// tests only; SPEC §10).
	PushAllowAnyEndpoint bool
	// PushSender sends pushes (nil: a sender under the rule above).
	PushSender *webpush.Sender
	// PushContact is the VAPID JWT's sub: mailto: or an https URL (empty:
	// the public URL).
	PushContact string
	// Jitter picks retry jitter (nil: random).
	Jitter func() float64
}

// New returns the delivery service.
func New(c Config) *Service {
	c.Deps = c.Deps.WithDefaults()
	if c.WebhookSender == nil {
		c.WebhookSender = webhook.NewSender(c.WebhookAllowPrivate)
	}
	if c.PushSender == nil {
		c.PushSender = webpush.NewSender(c.PushAllowAnyEndpoint)
	}
	if c.PushContact == "" {
		c.PushContact = strings.TrimSuffix(c.PublicURL, "/")
	}
	return &Service{keys: c.Keys, store: port(c.Store), publicURL: strings.TrimSuffix(c.PublicURL, "/"), now: c.Now, log: c.Logger,
		webhooks: c.WebhookSender, webhookPrivate: c.WebhookAllowPrivate, push: c.PushSender, pushContact: c.PushContact,
		jitter: c.Jitter, metrics: newMetrics()}
}

// clock is the time in whole seconds, UTC.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Second) }

// link is where the owner reads a task.
func (s *Service) link(taskID string) string { return s.publicURL + "/#/tasks/" + taskID }

// Attempts of webhooks and pushes are bounded by their senders' own
// 15-second bound; a job that works one is given 15 seconds more.
const (
	WebhookTimeout = webhook.DefaultTimeout + 15*time.Second
	PushTimeout    = webpush.DefaultTimeout + 15*time.Second
)

// deliveryTx is everything delivering may read and change in one of the
// store's transactions: these aggregates and no other. It reads the
// outbox's events and the pushes queued, the webhooks, tasks and devices
// they are for, records attempts, deletes what is over, and makes the
// VAPID key once.
type deliveryTx interface {
	store.Tasks
	store.Approvals
	store.Devices
	store.Webhooks
	store.Outbox
	store.PushSubscriptions
	store.Pushes
}

// port gives the delivery service the store's transactions as deliveryTx.
func port(s store.Store) store.Port[deliveryTx] {
	return store.Narrow(s, func(tx store.Tx) deliveryTx { return tx })
}
