package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"countersign/approval"
)

func init() {
	commands["wallet"] = command{"an owner's NEAR wallet key: wallet new | wallet sign", runWallet}
	commands["nep413"] = command{"check a wallet's NEP-413 answer: nep413 verify < signed.json", runNEP413}
}

func runWallet(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: countersign wallet new [--out FILE] | wallet sign --wallet FILE --recipient R [--message TEXT]")
	}
	switch args[0] {
	case "new":
		return walletNew(a, args[1:])
	case "sign":
		return walletSign(a, args[1:])
	}
	return fmt.Errorf("unknown wallet command %q: wallet new | wallet sign", args[0])
}

const defaultWalletFile = "countersign-wallet.json"

func walletNew(a *app, args []string) error {
	fset := a.flags("wallet new")
	out := fset.String("out", defaultWalletFile, "key file to write (mode 0600; an existing file is never overwritten)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	w, err := approval.NewWallet()
	if err != nil {
		return err
	}
	if err := w.Save(*out); err != nil {
		return fmt.Errorf("cannot write %s: %s", *out, oneLine(err))
	}
	fmt.Fprintf(a.stdout, "account:    %s\npublic key: %s\nkey file:   %s (mode 0600)\n", w.AccountID, w.Key.PublicKey(), *out)
	return nil
}

func walletSign(a *app, args []string) error {
	fset := a.flags("wallet sign")
	file := fset.String("wallet", defaultWalletFile, "wallet key file")
	message := fset.String("message", "", "the sentence to sign (default: read from standard input)")
	recipient := fset.String("recipient", "", "the deployment's NEP-413 recipient (its public origin's host unless it set another)")
	nonce := fset.String("nonce", "", "base64 of 32 bytes (default: random)")
	callback := fset.String("callback-url", "", "a callback URL to include in the signed payload")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *recipient == "" {
		return errors.New("--recipient: say which deployment the signature is for (its recipient, e.g. inbox.example.com: the host of its public URL)")
	}
	w, err := approval.LoadWallet(*file)
	if err != nil {
		return fmt.Errorf("cannot load the wallet %s: %s", *file, oneLine(err))
	}
	msg := *message
	if msg == "" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 64<<10))
		if err != nil {
			return err
		}
		msg = strings.TrimRight(string(b), "\r\n")
	}
	if msg == "" {
		return errors.New("nothing to sign: give --message or the sentence on standard input")
	}
	req := approval.SignRequest{Message: msg, Recipient: *recipient}
	if *nonce != "" {
		n, err := approval.ParseNonce(*nonce)
		if err != nil {
			return fmt.Errorf("--nonce: %s", oneLine(err))
		}
		req.Nonce = &n
	}
	if *callback != "" {
		req.CallbackURL = callback
	}
	signed, err := w.Sign(req)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(signed)
}

// runNEP413 checks a wallet's signMessage answer (SPEC §15): "ok", exit 0, or
// "invalid: <why>", exit 1.
func runNEP413(_ context.Context, a *app, args []string) error {
	if len(args) != 1 || args[0] != "verify" {
		return errors.New("usage: countersign nep413 verify < signed.json")
	}
	if err := approval.VerifyWalletJSON(a.stdin); err != nil {
		fmt.Fprintf(a.stdout, "invalid: %s\n", oneLine(err))
		return exitError{1}
	}
	fmt.Fprintln(a.stdout, "ok")
	return nil
}
