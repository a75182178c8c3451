package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"countersign/enclave"
	"countersign/enclave/rotation"
	"countersign/sealing"
)

func runKeys(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: countersign keys new | keys rotate")
	}
	switch args[0] {
	case "new":
		fset := a.flags("keys new")
		out := fset.String("out", "", "write the keyring to this file (mode 0600; an existing file is never overwritten) instead of standard output")
		if err := fset.Parse(args[1:]); err != nil {
			return err
		}
		text := sealing.GenerateKeyring().Export() + "\n"
		if *out == "" {
			_, err := io.WriteString(a.stdout, text)
			return err
		}
		if err := writeSecretFile(*out, []byte(text)); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "master key written to %s (mode 0600): give it to the service as COUNTERSIGN_MASTER_KEY_FILE, and keep a copy apart from the database's backups\n", *out)
		return nil
	case "rotate":
		return keysRotate(ctx, a, args[1:])
	}
	return fmt.Errorf("unknown keys command %q: keys new | keys rotate", args[0])
}

// keysRotate is key rotation in two steps. With --add it prints the keyring
// with a new key added (the highest id, which seals from then on): install
// it in every process's settings and restart them. Then, without --add, it
// seals every master-sealed secret again under the newest key.
func keysRotate(ctx context.Context, a *app, args []string) error {
	fset := a.flags("keys rotate")
	add := fset.Bool("add", false, "print the keyring with a new key added, to install everywhere before rewrapping")
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		return err
	}
	keys, err := keyring(cfg)
	if err != nil {
		return err
	}
	if *add {
		next, err := keys.AddKey()
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, next.Export())
		fmt.Fprintf(a.stderr, "key %d added: install this keyring in every process's COUNTERSIGN_MASTER_KEY (or its _FILE), restart them, then run `countersign keys rotate` to move secrets to it\n", next.Current())
		return nil
	}
	db, err := openStore(ctx, cfg, existingStore)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := checkSchema(ctx, db); err != nil {
		return err
	}
	n, skipped, err := rotation.New(enclave.New(enclave.Config{Keyring: keys}), db, newLogger(cfg, a)).Rewrap(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%d secret(s) sealed again under key %d; task blobs keep their key ids (keep older keys until their tasks are purged, 30 days after they close)\n", n, keys.Current())
	if skipped > 0 {
		return fmt.Errorf("%d secret(s) do not open with this keyring and were left as they are (see the log): keep the keys that sealed them", skipped)
	}
	return nil
}

// writeSecretFile writes b to a new file readable by its owner only; it
// never replaces a file that exists.
func writeSecretFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists: it is never overwritten (move it away first, or choose another --out)", path)
		}
		return fmt.Errorf("cannot write %s: %s", path, oneLine(err))
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("cannot write %s: %s", path, oneLine(err))
	}
	return f.Close()
}
