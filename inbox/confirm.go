package inbox

import (
	"context"
	"time"

	"countersign"
	"countersign/approval"
)

// Confirmation is an owner's signature of a confirmation sentence, as it
// travels in request bodies: at is unix seconds.
type Confirmation struct {
	At          int64   `json:"at"`
	PublicKey   string  `json:"public_key"`
	Signature   string  `json:"signature"`
	Nonce       string  `json:"nonce"`
	CallbackURL *string `json:"callback_url,omitempty"`
}

func (c Confirmation) signed() approval.Signed {
	return approval.Signed{PublicKey: c.PublicKey, Signature: c.Signature, Nonce: c.Nonce, CallbackURL: c.CallbackURL}
}

// confirmed checks the owner's confirmation of action and, in one
// transaction, spends its nonce and runs apply with the key that signed. A confirmation that does not
// verify is confirmation_required and spends nothing.
func (s *Service) confirmed(ctx context.Context, account string, action approval.Action, c Confirmation, apply func(doorTx, approval.PublicKey) error) error {
	now := s.clock()
	at := time.Unix(c.At, 0).UTC()
	if err := approval.CheckConfirmation(now, at); err != nil {
		return countersign.Errorf(countersign.ConfirmationRequired, "the confirmation is older than 10 minutes or from the future; sign it again")
	}
	sentence, err := approval.Confirmation{Account: account, Action: action, At: at}.Sentence()
	if err != nil {
		return countersign.Errorf(countersign.InvalidRequest, "the confirmation cannot be built for this action")
	}
	v, err := approval.Verify(ctx, s.keys, s.claim(account, sentence, c.signed()))
	if err != nil {
		return signatureRefusal(err, countersign.ConfirmationRequired)
	}
	err = s.store.Tx(ctx, func(tx doorTx) error {
		if err := tx.SpendNonce(ctx, account, v.Nonce[:], at.Add(approval.ConfirmationMaxAge+time.Minute)); err != nil {
			return err
		}
		return apply(tx, v.Key)
	})
	return storeErr(usedAlready(err, countersign.ConfirmationRequired, "this confirmation was used already; sign a new one"))
}
