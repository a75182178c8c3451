package client

import (
	"context"
	"net/http"
	"net/url"
)

// Signed are the signed pieces of an owner's NEP-413 signature.
type Signed struct {
	PublicKey   string  `json:"public_key"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url,omitempty"`
}

// SignInRequest is a signed sign-in statement.
type SignInRequest struct {
	AccountID    string `json:"account_id"`
	DevicePubkey string `json:"device_pubkey"`
	ValidUntil   string `json:"valid_until"`
	Signed
}

// Session is the answer to a sign-in.
type Session struct {
	Token      string `json:"token"`
	DeviceID   string `json:"device_id"`
	AccountID  string `json:"account_id"`
	ValidUntil string `json:"valid_until"`
}

// Confirmation is a signed confirmation sentence; At is unix seconds.
type Confirmation struct {
	At int64 `json:"at"`
	Signed
}

// Device is one of the owner's signed-in devices.
type Device struct {
	ID           string `json:"id"`
	DevicePubkey string `json:"device_pubkey"`
	SignerPubkey string `json:"signer_pubkey"`
	CreatedAt    string `json:"created_at"`
	ValidUntil   string `json:"valid_until"`
	This         bool   `json:"this"`
	// Push says whether the device has a Web Push subscription.
	Push bool `json:"push"`
}

// SignIn opens a session and, on success, keeps its token in c.Session.
func (c *Client) SignIn(ctx context.Context, req SignInRequest) (Session, error) {
	var s Session
	if err := c.do(ctx, http.MethodPost, "/inbox/session", "", req, &s); err != nil {
		return Session{}, err
	}
	c.Session = s.Token
	return s, nil
}

// SignOut ends this device's session.
func (c *Client) SignOut(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/inbox/session", c.Session, nil, nil)
}

// Devices lists the owner's signed-in devices.
func (c *Client) Devices(ctx context.Context) ([]Device, error) {
	var out struct {
		Devices []Device `json:"devices"`
	}
	err := c.do(ctx, http.MethodGet, "/inbox/devices", c.Session, nil, &out)
	return out.Devices, err
}

// WithdrawDevice ends a device's session with the owner's confirmation.
func (c *Client) WithdrawDevice(ctx context.Context, id string, conf Confirmation) error {
	body := map[string]Confirmation{"confirmation": conf}
	return c.do(ctx, http.MethodDelete, "/inbox/devices/"+url.PathEscape(id), c.Session, body, nil)
}
