package inbox

import (
	"context"

	"countersign"
	"countersign/webpush"
)

// PushKeeper is what the door asks of the side that holds the master key
// for Web Push (SPEC §10): the VAPID public key browsers subscribe with,
// and the sealing of a device's subscription, whose endpoint is a
// capability and whose keys are secrets.
type PushKeeper interface {
	PushPublicKey(ctx context.Context) (string, error)
	SealPush(deviceID string, sub []byte) (keyID uint32, blob []byte, err error)
}

// PushRequest is the body of PUT /inbox/push: a browser's
// PushSubscription as its toJSON gives it. expirationTime is taken and not
// kept (browsers give null; the subscription ends with the device).
type PushRequest struct {
	Endpoint       string   `json:"endpoint"`
	ExpirationTime *float64 `json:"expirationTime,omitempty"`
	Keys           PushKeys `json:"keys"`
}

// PushKeys are a subscription's keys, unpadded base64url.
type PushKeys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// PushView says whether this device has a push subscription.
type PushView struct {
	Push bool `json:"push"`
}

// PushKeyView is the service's VAPID public key: the unpadded base64url of
// its 65-byte point, the applicationServerKey a browser subscribes with.
type PushKeyView struct {
	Key string `json:"key"`
}

// errNoPush refuses push where the service offers none.
var errNoPush = countersign.Errorf(countersign.InvalidRequest, "this service sends no pushes")

// PushKey is the key browsers subscribe with.
func (s *Service) PushKey(ctx context.Context, _ Session) (PushKeyView, error) {
	if s.push == nil {
		return PushKeyView{}, errNoPush
	}
	k, err := s.push.PushPublicKey(ctx)
	if err != nil {
		return PushKeyView{}, storeErr(err)
	}
	return PushKeyView{Key: k}, nil
}

// PutPush sets this device's push subscription, replacing the one it had
// (SPEC §12: one per device). The endpoint must be a known push service's
// (SPEC §10) and the keys a P-256 point and a 16-byte secret; it is sealed
// at once and never logged, shown or returned.
func (s *Service) PutPush(ctx context.Context, sess Session, req PushRequest) (PushView, error) {
	if s.push == nil {
		return PushView{}, errNoPush
	}
	var sub webpush.Subscription
	sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth = req.Endpoint, req.Keys.P256dh, req.Keys.Auth
	if _, err := sub.Check(s.pushAny); err != nil {
		return PushView{}, countersign.Errorf(countersign.InvalidRequest, "%s", err.Error())
	}
	plain, err := sub.Marshal()
	if err != nil {
		return PushView{}, err
	}
	keyID, blob, err := s.push.SealPush(sess.DeviceID, plain)
	if err != nil {
		return PushView{}, err
	}
	var set bool
	err = s.store.Tx(ctx, func(tx doorTx) (err error) {
		set, err = tx.PutPush(ctx, sess.DeviceID, keyID, blob)
		return err
	})
	if err != nil {
		return PushView{}, storeErr(err)
	}
	if !set { // the session ended meanwhile
		return PushView{}, errSessionRequired
	}
	s.log.Info("push subscription set", "owner", sess.AccountID, "device", sess.DeviceID)
	return PushView{Push: true}, nil
}

// DeletePush removes this device's push subscription, if it has one.
func (s *Service) DeletePush(ctx context.Context, sess Session) (PushView, error) {
	var removed bool
	err := s.store.Tx(ctx, func(tx doorTx) (err error) {
		removed, err = tx.DeletePush(ctx, sess.DeviceID, nil)
		return err
	})
	if err != nil {
		return PushView{}, storeErr(err)
	}
	if removed {
		s.log.Info("push subscription removed", "owner", sess.AccountID, "device", sess.DeviceID)
	}
	return PushView{Push: false}, nil
}
