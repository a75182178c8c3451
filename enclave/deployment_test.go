package enclave_test

import (
	"io"
	"log/slog"
	"testing"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// callbackSigner signs as a wallet with a callback URL in the payload.
type callbackSigner struct {
	wallet   *approval.Wallet
	callback string
}

func (s callbackSigner) Sign(message, recipient string) (client.Signed, error) {
	m, err := s.wallet.Sign(approval.SignRequest{Message: message, Recipient: recipient, CallbackURL: &s.callback})
	if err != nil {
		return client.Signed{}, err
	}
	return client.Signed{PublicKey: m.PublicKey, Signature: m.Signature, Nonce: m.Nonce, CallbackURL: m.CallbackURL}, nil
}

// TestAnswerRunChecksTheDeployment: the answer run re-verifies an approval
// for its own recipient (the public origin's host) and public origin, as
// the door does (SPEC §7): an approval the door accepted is refused by a
// run of a deployment with another recipient, or with another origin when
// the approval signed a callback URL; the deployment it was made for
// carries it out.
func TestAnswerRunChecksTheDeployment(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	elsewhere := func(c servicetest.EnclaveConfig) *servicetest.Enclave {
		c.Keys, c.Store, c.Connectors, c.Now, c.Logger = w.Keys, w.DB, w.Catalogue, w.Clock.Now, quiet
		return servicetest.NewEnclave(c)
	}
	approveWith := func(callback string) (string, string) {
		t.Helper()
		id := w.Pay()
		d := *w.Owner
		if callback != "" {
			d.Signer = callbackSigner{wallet: w.Owner.Signer.(device.WalletSigner).Wallet, callback: callback}
		}
		view, err := d.Client.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		o, err := d.Open(view)
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.Approve(ctx, o, nil, "")
		if err != nil {
			t.Fatalf("the door refused the approval: %v", err)
		}
		return id, st.Run
	}
	ended := func(name, id string, want countersign.State, reason string) {
		t.Helper()
		got := w.Task(id)
		if got.State != want || string(got.FailureReason) != reason {
			t.Errorf("%s: ended %s %q, want %s %q", name, got.State, got.FailureReason, want, reason)
		}
		if n := w.Effects.Count(id); (want == countersign.StateDone) != (n == 1) {
			t.Errorf("%s: written %d times", name, n)
		}
	}

	id, run := approveWith("")
	_ = elsewhere(servicetest.EnclaveConfig{PublicURL: "https://other.example"}).Answers.Answer(ctx, id, run)
	ended("another deployment's run", id, countersign.StateFailed, "run_refused:confirmation_required")

	id, run = approveWith("")
	_ = elsewhere(servicetest.EnclaveConfig{PublicURL: w.URL, Recipient: "countersign"}).Answers.Answer(ctx, id, run)
	ended("a run for the recipient every deployment once had", id, countersign.StateFailed, "run_refused:confirmation_required")

	id, run = approveWith(w.URL + "/#/tasks")
	_ = elsewhere(servicetest.EnclaveConfig{PublicURL: "https://other.example", Recipient: w.Inbox.Recipient()}).Answers.Answer(ctx, id, run)
	ended("a callback outside the run's origin", id, countersign.StateFailed, "run_refused:confirmation_required")

	id, run = approveWith(w.URL + "/#/tasks")
	if err := w.Enclave.Answers.Answer(ctx, id, run); err != nil {
		t.Fatal(err)
	}
	ended("this deployment's run", id, countersign.StateDone, "")
}
