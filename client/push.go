package client

import (
	"context"
	"net/http"
)

// PushSubscription is a browser's Web Push subscription, as
// PushSubscription.toJSON gives it: the endpoint and its keys, unpadded
// base64url.
type PushSubscription struct {
	Endpoint string   `json:"endpoint"`
	Keys     PushKeys `json:"keys"`
}

// PushKeys are a subscription's keys.
type PushKeys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// PushKey is the service's VAPID public key, the applicationServerKey a
// browser subscribes with.
func (c *Client) PushKey(ctx context.Context) (string, error) {
	var out struct {
		Key string `json:"key"`
	}
	err := c.do(ctx, http.MethodGet, "/inbox/push/key", c.Session, nil, &out)
	return out.Key, err
}

// PutPush sets this device's push subscription; it reports whether the
// device has one now.
func (c *Client) PutPush(ctx context.Context, sub PushSubscription) (bool, error) {
	var out struct {
		Push bool `json:"push"`
	}
	err := c.do(ctx, http.MethodPut, "/inbox/push", c.Session, sub, &out)
	return out.Push, err
}

// DeletePush removes this device's push subscription; it reports whether
// the device has one now (false).
func (c *Client) DeletePush(ctx context.Context) (bool, error) {
	var out struct {
		Push bool `json:"push"`
	}
	err := c.do(ctx, http.MethodDelete, "/inbox/push", c.Session, nil, &out)
	return out.Push, err
}
