package client

import (
	"context"
	"net/http"
)

// Webhook is the owner's webhook; Secret is set only in the answer that
// named it.
type Webhook struct {
	URL      *string `json:"url"`
	SetAt    string  `json:"set_at,omitempty"`
	SetByKey string  `json:"set_by_key,omitempty"`
	Secret   string  `json:"secret,omitempty"`
}

// Delivery is one delivery attempt in the owner's log.
type Delivery struct {
	EventID    string `json:"event_id"`
	Type       string `json:"type"`
	TaskID     string `json:"task_id,omitempty"`
	Attempt    int    `json:"attempt"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	At         string `json:"at"`
}

// PutWebhook names the webhook with the owner's confirmation of "name the
// webhook {sha256hex(url)}"; the answer holds the new secret, shown once.
func (c *Client) PutWebhook(ctx context.Context, url string, conf Confirmation) (Webhook, error) {
	var w Webhook
	err := c.do(ctx, http.MethodPut, "/inbox/webhook", c.Session, map[string]any{"url": url, "confirmation": conf}, &w)
	return w, err
}

// Webhook shows the owner's webhook (URL nil when none is named).
func (c *Client) Webhook(ctx context.Context) (Webhook, error) {
	var w Webhook
	err := c.do(ctx, http.MethodGet, "/inbox/webhook", c.Session, nil, &w)
	return w, err
}

// DeleteWebhook removes the webhook with the owner's confirmation of
// "remove the webhook".
func (c *Client) DeleteWebhook(ctx context.Context, conf Confirmation) error {
	return c.do(ctx, http.MethodDelete, "/inbox/webhook", c.Session, map[string]any{"confirmation": conf}, nil)
}

// Deliveries lists the last delivery attempts, newest first.
func (c *Client) Deliveries(ctx context.Context) ([]Delivery, error) {
	var out struct {
		Deliveries []Delivery `json:"deliveries"`
	}
	err := c.do(ctx, http.MethodGet, "/inbox/webhook/deliveries", c.Session, nil, &out)
	return out.Deliveries, err
}

// TestWebhook sends a ping now and returns the attempt.
func (c *Client) TestWebhook(ctx context.Context) (Delivery, error) {
	var d Delivery
	err := c.do(ctx, http.MethodPost, "/inbox/webhook/test", c.Session, nil, &d)
	return d, err
}
