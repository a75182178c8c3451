package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "Countersign-Webhooks/1"

// Header names. Go sends them in canonical case; HTTP header names are
// case-insensitive, so receivers reading "webhook-id" find them.
const (
	HeaderEventType        = "X-Event-Type"
	HeaderWalletID         = "X-Wallet-Id"
	HeaderBodySignature    = "X-Webhook-Signature" // hex HMAC of the body
	HeaderWebhookID        = "Webhook-Id"          // Standard Webhooks
	HeaderWebhookTimestamp = "Webhook-Timestamp"   // Standard Webhooks
	HeaderWebhookSignature = "Webhook-Signature"   // Standard Webhooks: v1,<base64>
)

// Sign encodes ev and returns its body with the headers of one delivery
// sent at sentAt:
//
//	Content-Type: application/json
//	User-Agent: UserAgent
//	X-Event-Type: <type>
//	X-Wallet-Id: owner:<account>
//	X-Webhook-Signature: <lowercase hex HMAC-SHA256(key, body)>
//	webhook-id: <event id>
//	webhook-timestamp: <sentAt, unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256(key, id "." timestamp "." body)>
//
// key is the 32-byte key DecodeSecret returns; any other length is refused.
func Sign(key []byte, ev Event, sentAt time.Time) ([]byte, http.Header, error) {
	if len(key) != KeySize {
		return nil, nil, fmt.Errorf("webhook: signing key must be %d bytes", KeySize)
	}
	body, err := ev.Encode()
	if err != nil {
		return nil, nil, err
	}
	ts := strconv.FormatInt(sentAt.Unix(), 10)

	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	bodySig := hex.EncodeToString(mac.Sum(nil))

	mac.Reset()
	mac.Write([]byte(ev.ID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	stdSig := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))

	h := make(http.Header, 9)
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderEventType, string(ev.Type))
	h.Set(HeaderWalletID, "owner:"+ev.Owner)
	h.Set(HeaderBodySignature, bodySig)
	h.Set(HeaderWebhookID, ev.ID)
	h.Set(HeaderWebhookTimestamp, ts)
	h.Set(HeaderWebhookSignature, stdSig)
	return body, h, nil
}
