package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"countersign/config"
	"countersign/connectors"
	"countersign/connectors/wasm"
	"countersign/enclave"
	"countersign/enclave/rotation"
	"countersign/sealing"
	"countersign/store"
)

// runDoctor checks what the service needs and prints each problem with its
// fix. It changes nothing.
func runDoctor(ctx context.Context, a *app, args []string) error {
	fset := a.flags("doctor")
	dev := fset.Bool("dev", false, "check with the defaults serve --dev applies")
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		fmt.Fprintf(a.stdout, "FAIL settings: %s\n", oneLine(err))
		return exitError{1}
	}
	if *dev && !cfg.Explicit("NEAR_RPC") {
		cfg.NearRPC = "off"
	}
	failed := false
	report := func(what string, err error) {
		if err != nil {
			failed = true
			fmt.Fprintf(a.stdout, "FAIL %s: %s\n", what, oneLine(err))
			return
		}
		fmt.Fprintf(a.stdout, "ok   %s\n", what)
	}
	report("settings", nil)
	report(fmt.Sprintf("public origin %s: owners sign for the recipient %q", cfg.PublicURL, cfg.Recipient), nil)
	if cfg.MetricsListen == "" {
		report("metrics: off (COUNTERSIGN_METRICS_LISTEN=off)", nil)
	} else {
		report("metrics: /metrics on "+cfg.MetricsListen+", apart from the public listener", nil)
	}
	keys, keyErr := keyring(cfg)
	switch {
	case *dev && !cfg.Explicit("MASTER_KEY"):
		fmt.Fprintf(a.stdout, "ok   master key: serve --dev uses or makes %s/master.key\n", cfg.DataDir)
	case keyErr == nil:
		report(fmt.Sprintf("master key (%d key(s), newest id %d)", len(keys.IDs()), keys.Current()), nil)
	default:
		report("master key", keyErr)
	}
	mode := existingStore
	if *dev {
		mode = createStore
	}
	db, err := openStore(ctx, cfg, mode)
	report("database ("+storeName(cfg)+")", err)
	if err == nil {
		st, err := checkSchema(ctx, db)
		report(fmt.Sprintf("schema (version %d, binary needs %d)", st.Current, st.Needed), err)
		if err == nil && keyErr == nil {
			report(keyringAgainstData(ctx, keys, db))
		}
		db.Close()
	}
	if cfg.NearRPC == "off" {
		report("NEAR RPC off: only implicit accounts can sign in", nil)
	} else {
		report("NEAR RPC at "+cfg.NearRPC, pingNearRPC(ctx, cfg.NearRPC))
	}
	switch {
	case !cfg.WebhookAllowPrivate:
		report("webhook egress: https to public addresses only, checked at dial time", nil)
	case *dev:
		report("webhook egress: loopback and private receivers allowed (development)", nil)
	default:
		report("webhook egress", errors.New("COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach this machine and its network; turn it off outside development"))
	}
	switch {
	case !cfg.PushAllowAnyEndpoint:
		report("push egress: the push services' hosts only (Apple, Google, Mozilla, Microsoft), public addresses checked at dial time", nil)
	case *dev:
		report("push egress: endpoints on any host allowed (development)", nil)
	default:
		report("push egress", errors.New("COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT is on: pushes may reach this machine and its network; turn it off outside development"))
	}
	if cfg.ConnectorsDir != "" {
		// The manifests, schemas and module hashes; compiling the modules
		// is serve's and connector check's.
		declared, err := wasm.Declared(cfg.ConnectorsDir)
		if err == nil {
			_, err = withConnectors(catalogueOrEmpty(), declared...)
		}
		var builds []string
		for _, c := range declared {
			builds = append(builds, c.Build())
		}
		report(fmt.Sprintf("WebAssembly connectors in %s: %s", cfg.ConnectorsDir, strings.Join(builds, ", ")), err)
	}
	if failed {
		return exitError{1}
	}
	return nil
}

func storeName(cfg *config.Config) string {
	if cfg.DatabaseURL != "" {
		return "PostgreSQL"
	}
	return "embedded store in " + cfg.DataDir
}

// pingNearRPC asks the RPC for its status.
func pingNearRPC(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body := []byte(`{"jsonrpc":"2.0","id":"countersign-doctor","method":"status","params":[]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unreachable (%v): check COUNTERSIGN_NEAR_RPC, or set it to off to allow implicit accounts only", err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Result) == 0 {
		return fmt.Errorf("answered HTTP %d without a status result: check COUNTERSIGN_NEAR_RPC", resp.StatusCode)
	}
	return nil
}

// keyringAgainstData says whether the keyring is the one the data was
// sealed with: every key id the data needs is in it, and what was sealed
// under each opens.
func keyringAgainstData(ctx context.Context, keys *sealing.Keyring, db store.Store) (string, error) {
	const what = "the master key against the data"
	c, err := rotation.New(enclave.New(enclave.Config{Keyring: keys}), db, nil).CheckKeyring(ctx)
	if err != nil {
		return what, fmt.Errorf("cannot read what the data was sealed with: %s", oneLine(err))
	}
	if err := keyringProblem(c); err != nil {
		return what, err
	}
	if len(c.Missing) > 0 {
		return what, fmt.Errorf("the data needs %s, which this keyring lacks: install the keyring the data was sealed with (an older key stays in it until nothing needs it)", c.Needs(c.Missing))
	}
	if len(c.Failed) > 0 {
		return what, fmt.Errorf("%d of %d sealed rows sampled do not open with this keyring (%s): it is not the keyring the data was sealed with, or they are damaged", len(c.Failed), len(c.Failed)+c.Opened, strings.Join(c.Failed, ", "))
	}
	ids := make([]string, 0, len(c.InUse))
	for id := range c.InUse {
		ids = append(ids, fmt.Sprint(id))
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return what + ": nothing is sealed yet", nil
	}
	return fmt.Sprintf("the master key opens the data (key ids in use: %s; %d sealed rows sampled)", strings.Join(ids, ", "), c.Opened), nil
}

// keyringProblem is why serve must not start with a keyring, as doctor and
// serve say it (SPEC §15): one that holds another key under an id the data
// uses, or that opens none of the data, naming the key ids the data needs.
func keyringProblem(c rotation.KeyringCheck) error {
	const fix = "set COUNTERSIGN_MASTER_KEY (or its _FILE) to the keyring the data was sealed with; `countersign doctor` checks it"
	switch {
	case len(c.Wrong) > 0:
		return fmt.Errorf("the master keyring opens none of the data sealed under %s: it holds another key under that id; %s", c.Needs(c.Wrong), fix)
	case c.OpensNone():
		return fmt.Errorf("the master keyring opens none of the data already stored: the data needs %s, which it lacks; %s", c.Needs(c.Missing), fix)
	}
	return nil
}

// catalogueOrEmpty is the compiled-in catalogue, or none when it does not
// build (which serve reports).
func catalogueOrEmpty() connectors.Catalogue {
	cat, err := catalogue()
	if err != nil {
		return connectors.Catalogue{}
	}
	return cat
}
