package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
)

// inboxLogin signs this terminal's device in: it pins the service's run
// keys, has the wallet sign the sign-in statement, ends the directory's old
// session and saves the new one.
func inboxLogin(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("login")
	account := fset.String("account", "", "the NEAR account to sign in as (default with --wallet: the wallet's account)")
	walletFile := fset.String("wallet", "", "sign with this wallet key file (near-cli format)")
	external := fset.Bool("external", false, "sign with a wallet elsewhere: print the sentence, read its JSON answer on standard input")
	days := fset.Int("days", 30, "how long the session lasts, in days (1–30)")
	server := fset.String("server", "", "the service's URL (COUNTERSIGN_SERVER, default http://127.0.0.1:8080)")
	recipient := fset.String("recipient", "", "the deployment's NEP-413 recipient (COUNTERSIGN_RECIPIENT, default: the server's host, as the service's default is its public origin's)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("usage: countersign inbox login (--wallet FILE [--account ID] | --external --account ID) [--days N] [--server URL]")
	}
	base := strings.TrimSuffix(first(*server, a.getenv("COUNTERSIGN_SERVER"), "http://127.0.0.1:8080"), "/")
	if err := checkServerURL(base); err != nil {
		return fmt.Errorf("--server: %v", err)
	}
	rcpt := first(*recipient, a.getenv("COUNTERSIGN_RECIPIENT"), serverRecipient(base))
	switch {
	case rcpt == "":
		return errors.New("--recipient: the server's URL names no host to sign for; give the deployment's recipient")
	case *days < 1 || *days > 30:
		return errors.New("--days: a session lasts 1 to 30 days")
	case *walletFile != "" && *external:
		return errors.New("--wallet or --external, not both: --wallet FILE signs with a key file here, --external with a wallet elsewhere")
	case *walletFile == "" && !*external:
		return errors.New("say how to sign: --wallet FILE (a key file here) or --external (a wallet elsewhere)")
	}
	var signer device.Signer
	var walletPath string
	if *walletFile != "" {
		w, err := approval.LoadWallet(*walletFile)
		if err != nil {
			return fmt.Errorf("cannot load the wallet %s: %s", *walletFile, oneLine(err))
		}
		if *account == "" {
			*account = w.AccountID
		}
		if w.AccountID != *account {
			return fmt.Errorf("the wallet %s is for %s, not %s", *walletFile, w.AccountID, *account)
		}
		if walletPath, err = filepath.Abs(*walletFile); err != nil {
			return err
		}
		signer = device.WalletSigner{Wallet: w}
	}
	if approval.ValidateAccountID(*account) != nil {
		return errors.New("--account: a NEAR account id is needed")
	}
	if signer == nil {
		signer = newExternalSigner(*account, a.stdin, a.stderr)
	}

	dir := dirOf()
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the inbox directory: %v", err)
	}
	// A sign-in that fails leaves no directory it made behind.
	signedIn := false
	if errors.Is(statErr, os.ErrNotExist) {
		defer func() {
			if !signedIn {
				os.RemoveAll(dir)
			}
		}()
	}
	key, err := loadOrMakeKey(filepath.Join(dir, deviceKeyFile))
	if err != nil {
		return err
	}
	c := &client.Client{BaseURL: base}
	keys, err := fetchRunKeys(ctx, c)
	if err != nil {
		return err
	}

	d := &device.Device{Account: *account, Key: key, Signer: signer, Client: c, Recipient: rcpt}
	validUntil := time.Now().UTC().Truncate(time.Second).Add(time.Duration(*days) * 24 * time.Hour)
	sentence, err := approval.SignIn{Account: *account, DeviceKey: d.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		return err
	}
	signed, err := signer.Sign(sentence, rcpt)
	if err != nil {
		return err
	}
	// The statement is signed: end the directory's old session, so that
	// this sign-in does not take another of the account's device places.
	if old, err := loadSession(dir); err == nil && old.Server == base {
		_ = (&client.Client{BaseURL: old.Server, Session: old.Token}).SignOut(ctx)
	}
	s, err := c.SignIn(ctx, client.SignInRequest{AccountID: *account, DevicePubkey: d.Pubkey(),
		ValidUntil: validUntil.Format(approval.TimeLayout), Signed: signed})
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return cannotReach(base, err)
		}
		return fmt.Errorf("the service refused the sign-in: %w", err)
	}
	sess := &session{Server: base, Account: *account, Token: s.Token, DeviceID: s.DeviceID, ValidUntil: s.ValidUntil,
		Recipient: rcpt, Wallet: walletPath, RunKeys: keys}
	if _, err := parseSession(mustJSON(sess)); err != nil {
		return fmt.Errorf("the service's answer to the sign-in: %v", err)
	}
	if err := saveSession(dir, sess); err != nil {
		return fmt.Errorf("cannot save the session: %v", err)
	}
	signedIn = true
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(a.stdout, "signed in as %s\ndevice:      %s\nvalid until: %s\nrun keys:    %s pinned\n",
		*account, clean(s.DeviceID), clean(s.ValidUntil), strings.Join(ids, ", "))
	return nil
}

// inboxLogout ends this terminal's session and removes its session file;
// the device key stays for the next login.
func inboxLogout(ctx context.Context, a *app, args []string) error {
	t, err := a.terminalWithoutArgs("logout", args)
	if err != nil {
		return err
	}
	if err := t.client.SignOut(ctx); err != nil && client.Reason(err) != "session_required" && client.Reason(err) != "session_replaced" {
		return t.explain(err)
	}
	if err := os.Remove(filepath.Join(t.dir, sessionFile)); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "signed out %s (device %s); the device key stays in %s\n", t.account, clean(t.sess.DeviceID), t.dir)
	return nil
}

// serverRecipient is the recipient a deployment at base has by default
// (SPEC §7): its host, with its port unless it is the scheme's default;
// "" when base has no host.
func serverRecipient(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	r, _ := approval.RecipientOf(u.Scheme + "://" + u.Host)
	return r
}
