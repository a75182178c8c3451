package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"countersign/approval"
	"countersign/config"
	"countersign/enclave/calls"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
)

// parseSettings parses a command's flags and the settings.
func (a *app) parseSettings(fset *flag.FlagSet, args []string) (*config.Config, error) {
	read := config.Flags(fset, a.getenv)
	if err := fset.Parse(args); err != nil {
		return nil, err
	}
	if fset.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fset.Arg(0))
	}
	return read()
}

// devDefaults fills in what serve --dev provides and says what it applied.
func devDefaults(cfg *config.Config) ([]string, error) {
	var notes []string
	if cfg.DatabaseURL == "" {
		notes = append(notes, "storage: the embedded store in "+cfg.DataDir)
	}
	if !cfg.Explicit("MASTER_KEY") {
		path := filepath.Join(cfg.DataDir, "master.key")
		key, created, err := devMasterKey(path)
		if err != nil {
			return nil, err
		}
		cfg.MasterKey, cfg.MasterKeyFile = key, path
		if created {
			notes = append(notes, "master key: generated "+path+" (mode 0600)")
		} else {
			notes = append(notes, "master key: "+path)
		}
	}
	if !cfg.Explicit("NEAR_RPC") {
		cfg.NearRPC = "off"
		notes = append(notes, "NEAR RPC: off (implicit accounts only)")
	}
	if !cfg.Explicit("WEBHOOK_ALLOW_PRIVATE") {
		cfg.WebhookAllowPrivate = true
		notes = append(notes, "webhooks: loopback and private receivers allowed")
	}
	if !cfg.Explicit("PUSH_ALLOW_ANY_ENDPOINT") {
		cfg.PushAllowAnyEndpoint = true
		notes = append(notes, "pushes: endpoints on any host allowed, loopback and private ones too")
	}
	return notes, nil
}

// devMasterKey reads the development key file, or makes one.
func devMasterKey(path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if err := checkPrivate(path); err != nil {
			return "", false, err
		}
		return string(b), false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("cannot read the development master key: %v", errors.Unwrap(err))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	text := sealing.GenerateKeyring().Export()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("cannot write the development master key: %v", errors.Unwrap(err))
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	return text, true, f.Close()
}

// checkPrivate refuses a secret file that others may read.
func checkPrivate(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s may be read by others (mode %04o): chmod 600 %s", path, info.Mode().Perm(), path)
	}
	return nil
}

// keyring reads the master keyring from the settings.
func keyring(cfg *config.Config) (*sealing.Keyring, error) {
	if cfg.MasterKey == "" {
		return nil, errors.New("COUNTERSIGN_MASTER_KEY is not set: make one with `countersign keys new` and set it (or COUNTERSIGN_MASTER_KEY_FILE), or run serve --dev")
	}
	k, err := sealing.ParseKeyring(cfg.MasterKey)
	if err != nil {
		where := "COUNTERSIGN_MASTER_KEY"
		if cfg.MasterKeyFile != "" {
			where += "_FILE (" + cfg.MasterKeyFile + ")"
		}
		return nil, fmt.Errorf("%s: %v; make a new keyring with `countersign keys new`", where, oneLine(err))
	}
	return k, nil
}

// keyChecker asks NEAR whether a wallet key may act for an account, or, with
// NEAR_RPC=off, admits implicit accounts signed with their own key only.
func keyChecker(cfg *config.Config) (approval.KeyChecker, error) {
	if cfg.NearRPC == "off" {
		return approval.OffChecker{}, nil
	}
	c, err := approval.NewRPCChecker(approval.RPCConfig{URL: cfg.NearRPC})
	if err != nil {
		return nil, fmt.Errorf("COUNTERSIGN_NEAR_RPC: %s", oneLine(err))
	}
	return c, nil
}

// storeMode says whether opening may create an embedded store.
type storeMode int

const (
	existingStore storeMode = iota // the store must exist already
	createStore                    // migrate and serve --dev create it
)

// openStore opens the database the settings name.
func openStore(ctx context.Context, cfg *config.Config, mode storeMode) (*sqlstore.DB, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if cfg.DatabaseURL != "" {
		db, err := sqlstore.OpenPostgres(ctx, cfg.DatabaseURL, "")
		if err != nil {
			return nil, fmt.Errorf("cannot reach the database named by COUNTERSIGN_DATABASE_URL (%s): check that PostgreSQL runs and the URL is right", oneLine(err))
		}
		return db, nil
	}
	if mode == existingStore {
		if _, err := os.Stat(sqlstore.SQLitePath(cfg.DataDir)); err != nil {
			return nil, fmt.Errorf("there is no embedded store in %s: run `countersign migrate` to make one (or serve --dev), or set COUNTERSIGN_DATABASE_URL", cfg.DataDir)
		}
	}
	db, err := sqlstore.OpenSQLite(ctx, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the embedded store in %s (COUNTERSIGN_DATA_DIR): %s", cfg.DataDir, oneLine(err))
	}
	return db, nil
}

// checkSchema refuses a schema that is behind or ahead of the binary.
func checkSchema(ctx context.Context, db store.Store) (store.SchemaStatus, error) {
	st, err := db.Schema(ctx)
	switch {
	case err != nil:
		return st, fmt.Errorf("cannot read the schema version: %s", oneLine(err))
	case st.Ahead():
		return st, fmt.Errorf("the database schema is at version %d, newer than this binary's %d: run a newer countersign", st.Current, st.Needed)
	case st.Behind():
		if st.Current >= st.Needed {
			return st, fmt.Errorf("the tables that keep approved tasks' runs and webhook deliveries are behind this binary: run `countersign migrate`")
		}
		return st, fmt.Errorf("the database schema is at version %d and this binary needs %d: run `countersign migrate`", st.Current, st.Needed)
	}
	return st, nil
}

// newLogger writes JSON lines to the app's standard error at the
// configured level.
func newLogger(cfg *config.Config, a *app) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: level}))
}

// DemoAgent is the agent serve --dev makes on its first start.
const DemoAgent = "demo-agent.near"

// devAgent makes the demo agent, with 1 USD, on the first start of a
// sandbox, and returns the sentence that prints its key once.
func devAgent(ctx context.Context, db store.Store) (string, error) {
	now := time.Now().UTC()
	var key string
	err := operatorPort(db).Tx(ctx, func(tx operatorTx) error {
		if _, err := tx.Agent(ctx, DemoAgent); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		k, err := calls.NewAgentKey()
		if err != nil {
			return err
		}
		if err := tx.AddAgentKey(ctx, DemoAgent, calls.HashAgentKey(k), now); err != nil {
			return err
		}
		if _, err := tx.Credit(ctx, DemoAgent, 1_000_000, "sandbox credit", now); err != nil {
			return err
		}
		key = k
		return nil
	})
	if err != nil || key == "" {
		return "", err
	}
	return fmt.Sprintf("demo agent %s with 1 USD; its key (shown once): %s", DemoAgent, key), nil
}
