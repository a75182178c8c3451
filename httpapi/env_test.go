package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/device"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/servicetest"
	"countersign/store"
)

var ctx = context.Background()

// env is a service on a real HTTP server, a store and a fake NEAR RPC.
type env struct {
	url   string
	db    store.Store
	rpc   *neartest.Server
	clock *servicetest.Clock
	// recipient is the NEP-413 recipient the service has owners sign for.
	recipient string
}

func newEnv(t *testing.T, db store.Store) *env { return newEnvAt(t, db, "") }

// newEnvAt is an env whose public URL is publicURL ("": the server's own
// address).
func newEnvAt(t *testing.T, db store.Store, publicURL string) *env {
	t.Helper()
	rpc := neartest.New()
	t.Cleanup(rpc.Close)
	clk := servicetest.NewClock(time.Now().UTC().Truncate(time.Second))
	// The fake RPC answers on loopback in milliseconds; the timeout is what
	// a test of a hanging RPC waits for.
	checker, err := approval.NewRPCChecker(approval.RPCConfig{URL: rpc.URL(), Client: &http.Client{Timeout: 750 * time.Millisecond}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	if publicURL == "" {
		publicURL = "http://" + srv.Listener.Addr().String()
	}
	svc := inbox.NewService(inbox.Config{Store: db, Keys: checker, PublicURL: publicURL, Now: clk.Now, Logger: quiet})
	srv.Config.Handler = httpapi.New(httpapi.Options{Version: "test", Store: db, Logger: quiet, Inbox: svc, PublicURL: publicURL,
		Limits: httpapi.Limits{SignInPerMinute: 100000, OwnerWritesPerMinute: 100000}})
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, db: db, rpc: rpc, clock: clk, recipient: svc.Recipient()}
}

// owner is a device of an owner whose wallet key is on chain: a named
// account with a full-access key, or an implicit account (account "").
func (e *env) owner(t *testing.T, account string) *device.Device {
	t.Helper()
	w, err := approval.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	if account != "" {
		w.AccountID = account
		e.rpc.AddAccount(account)
		e.rpc.AddKey(account, w.Key.PublicKey().String(), neartest.FullAccess())
	}
	key, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &device.Device{Account: w.AccountID, Key: key, Signer: device.WalletSigner{Wallet: w},
		Client: &client.Client{BaseURL: e.url}, Recipient: e.recipient, Now: e.clock.Now}
}

// another returns a second device of the same owner and wallet.
func (e *env) another(t *testing.T, d *device.Device) *device.Device {
	t.Helper()
	key, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &device.Device{Account: d.Account, Key: key, Signer: d.Signer, Client: &client.Client{BaseURL: e.url}, Recipient: e.recipient, Now: e.clock.Now}
}

func wantReason(t *testing.T, err error, status int, reason string) {
	t.Helper()
	var e *client.Error
	if err == nil {
		t.Fatalf("succeeded, want %d %s", status, reason)
	}
	if !errors.As(err, &e) || e.Status != status || e.Reason != reason {
		t.Fatalf("got %v (%+v), want %d %s", err, e, status, reason)
	}
}
