package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// asWallet signs as a wallet for the recipient it is asked for (or the one
// it is given), with a callback URL when it has one.
type asWallet struct {
	wallet    *approval.Wallet
	recipient string
	callback  *string
}

func (s asWallet) Sign(message, recipient string) (client.Signed, error) {
	if s.recipient != "" {
		recipient = s.recipient
	}
	m, err := s.wallet.Sign(approval.SignRequest{Message: message, Recipient: recipient, CallbackURL: s.callback})
	if err != nil {
		return client.Signed{}, err
	}
	return client.Signed{PublicKey: m.PublicKey, Signature: m.Signature, Nonce: m.Nonce, CallbackURL: m.CallbackURL}, nil
}

func ownerRefusal(err error) string {
	if err == nil {
		return "accepted"
	}
	if r := reason(err); r != "" {
		return r
	}
	return err.Error()
}

// TestStatementsAreBoundToThisDeployment: SPEC §7. The recipient
// is the public origin's host, so a sign-in, a confirmation or an approval
// signed for another deployment (or for the recipient every deployment once
// shared) is refused; a signed callback URL outside the public origin makes
// any of them invalid_statement; the origin itself and paths under it are
// accepted, and the answer run, re-verifying the approval, carries it out.
func TestStatementsAreBoundToThisDeployment(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	w.StartJobs()
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	origin := w.URL
	if got, want := w.Inbox.Recipient(), strings.TrimPrefix(origin, "http://"); got != want {
		t.Errorf("the recipient is %q, want the public origin's host %q", got, want)
	}
	task := w.Pay()
	opened := open(t, w.Owner, task)
	as := func(recipient string, cb *string) *device.Device {
		d := *w.Owner
		d.Signer = asWallet{wallet: wallet, recipient: recipient, callback: cb}
		return &d
	}
	type statement struct {
		name      string
		recipient string
		callback  *string
		// want: the refusal of a sign-in, and of a confirmation or approval.
		signIn, confirm string
	}
	cb := func(s string) *string { return &s }
	const invalid, required = "invalid_statement", "confirmation_required"
	refused := []statement{
		{"signed for countersign", "countersign", nil, invalid, required},
		{"signed for another deployment", "inbox.example", nil, invalid, required},
		{"signed for this host on another port", "127.0.0.1:1", nil, invalid, required},
		{"a callback under another origin", "", cb("https://evil.example/"), invalid, invalid},
		{"a callback on another port", "", cb("http://127.0.0.1:1/"), invalid, invalid},
		{"a callback on a longer host", "", cb(origin + ".evil/"), invalid, invalid},
		{"a callback that is a prefix without /", "", cb(origin + "0"), invalid, invalid},
		{"a callback with a query after the origin", "", cb(origin + "?x"), invalid, invalid},
		{"a callback with a user before the host", "", cb(strings.Replace(origin, "//", "//evil.example@", 1) + "/"), invalid, invalid},
		{"a callback over another scheme", "", cb(strings.Replace(origin, "http:", "https:", 1) + "/"), invalid, invalid},
	}
	for _, s := range refused {
		t.Run(s.name, func(t *testing.T) {
			d := as(s.recipient, s.callback)
			fresh := w.Device(wallet)
			fresh.Signer = d.Signer
			if _, err := fresh.SignIn(ctx, time.Hour); ownerRefusal(err) != s.signIn {
				t.Errorf("sign-in: %s, want %s", ownerRefusal(err), s.signIn)
			}
			conf, err := d.Confirm(approval.ActionRemoveProject("probe"))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Owner.Client.DeleteProject(ctx, "probe", conf); ownerRefusal(err) != s.confirm {
				t.Errorf("confirmation: %s, want %s", ownerRefusal(err), s.confirm)
			}
			req, err := d.ApproveRequest(opened, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Owner.Client.Approve(ctx, task, req); ownerRefusal(err) != s.confirm {
				t.Errorf("approval: %s, want %s", ownerRefusal(err), s.confirm)
			}
		})
	}
	if got := w.Task(task).State; got != countersign.StateOpen {
		t.Fatalf("refused approvals moved the task to %s", got)
	}
	projects, err := w.Owner.Client.Projects(ctx)
	if err != nil || len(projects) != 2 {
		t.Fatalf("refused confirmations removed a project: %v %v", projects, err)
	}

	// The public origin itself and paths under it are accepted.
	for _, c := range []string{origin, origin + "/", origin + "/#/tasks/" + task} {
		fresh := w.Device(wallet)
		fresh.Signer = asWallet{wallet: wallet, callback: cb(c)}
		if _, err := fresh.SignIn(ctx, time.Hour); err != nil {
			t.Errorf("a sign-in with the callback %s: %v", c, err)
		}
	}
	conf, err := as("", cb(origin+"/")).Confirm(approval.ActionRemoveProject("probe"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Owner.Client.DeleteProject(ctx, "probe", conf); err != nil {
		t.Errorf("a confirmation with a callback under the origin: %v", err)
	}
	req, err := as("", cb(origin+"/#/tasks/"+task)).ApproveRequest(opened, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Owner.Client.Approve(ctx, task, req); err != nil {
		t.Fatalf("an approval with a callback under the origin: %v", err)
	}
	if got := w.WaitState(task, countersign.StateDone, countersign.StateVoid, countersign.StateFailed).State; got != countersign.StateDone {
		t.Fatalf("the answer run ended the approved task %s, want done", got)
	}
}

// TestCallbackURLsOfANamedOrigin: on a deployment at https://inbox.example
// (given with or without :443), the recipient is inbox.example, and a
// sign-in's callback URL is accepted at the origin or under it (with or
// without the default port) and refused at a look-alike: a longer host,
// another port, a name that merely starts with the host, a query or
// fragment right after it, plain http.
func TestCallbackURLsOfANamedOrigin(t *testing.T) {
	t.Parallel()
	for _, publicURL := range []string{"https://inbox.example", "https://inbox.example:443", "https://Inbox.Example/"} {
		t.Run(publicURL, func(t *testing.T) {
			t.Parallel()
			e := newEnvAt(t, storetest.SQLite(t), publicURL)
			if e.recipient != "inbox.example" {
				t.Errorf("the recipient of %s is %q, want inbox.example", publicURL, e.recipient)
			}
			alice := e.owner(t, "alice.near")
			wallet := alice.Signer.(device.WalletSigner).Wallet
			for _, c := range []string{"https://inbox.example", "https://inbox.example/", "https://inbox.example/#/tasks/t-1",
				"https://inbox.example:443/cb", "https://inbox.example:443", "HTTPS://INBOX.EXAMPLE/cb"} {
				d := e.another(t, alice)
				d.Signer = asWallet{wallet: wallet, callback: &c}
				if _, err := d.SignIn(ctx, time.Hour); err != nil {
					t.Errorf("callback %s: %v", c, err)
				}
			}
			for _, c := range []string{"https://inbox.example.evil", "https://inbox.example.evil/", "https://inbox.example:444",
				"https://inbox.example:444/", "https://inbox.examplex", "https://inbox.examplex/", "https://inbox.example?x",
				"https://inbox.example#/tasks", "http://inbox.example/", "http://inbox.example:443/", "https://evil.example/https://inbox.example/",
				"https://inbox.example@evil.example/", ""} {
				d := e.another(t, alice)
				d.Signer = asWallet{wallet: wallet, callback: &c}
				if _, err := d.SignIn(ctx, time.Hour); reason(err) != "invalid_statement" {
					t.Errorf("callback %q: %v, want invalid_statement", c, err)
				}
			}
		})
	}
}
