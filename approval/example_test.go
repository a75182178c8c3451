package approval_test

import (
	"context"
	"fmt"
	"time"

	"countersign/approval"
)

// A wallet signs a confirmation sentence; the service rebuilds the sentence
// it expects and verifies the signed pieces. With NEAR RPC off only the
// key's own implicit account may act.
func ExampleVerify() {
	w, err := approval.NewWallet()
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sentence, err := approval.Confirmation{Account: w.AccountID, Action: approval.ActionRemoveWebhook(), At: at}.Sentence()
	if err != nil {
		panic(err)
	}
	signed, err := w.Sign(approval.SignRequest{Message: sentence, Recipient: "countersign"})
	if err != nil {
		panic(err)
	}

	v, err := approval.Verify(context.Background(), approval.OffChecker{}, approval.Claim{
		Account:   w.AccountID,
		Sentence:  sentence,
		Recipient: "countersign",
		Signed:    signed.Signed(),
	})
	fmt.Println(err, v.Status, approval.CheckConfirmation(at.Add(time.Minute), at))

	_, err = approval.Verify(context.Background(), approval.OffChecker{}, approval.Claim{
		Account:   w.AccountID,
		Sentence:  sentence,
		Recipient: "another-deployment",
		Signed:    signed.Signed(),
	})
	fmt.Println(approval.KindOf(err), "-", err)
	// Output:
	// <nil> implicit <nil>
	// invalid signature - the signature does not verify
}
