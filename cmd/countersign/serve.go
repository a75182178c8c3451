package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"countersign/config"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/rotation"
	"countersign/enclave/side"
	"countersign/httpapi"
	"countersign/inbox"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/jobs"
)

func runServe(ctx context.Context, a *app, args []string) error {
	fset := a.flags("serve")
	dev := fset.Bool("dev", false, "a sandbox on this machine: embedded store, generated master key, NEAR RPC off, sandbox connectors, loopback webhooks; migrates on start")
	fakes := anyPorts
	fset.StringVar(&fakes.github, "sandbox-github", fakes.github, "with --dev: the address of the sandbox GitHub")
	fset.StringVar(&fakes.gmail, "sandbox-gmail", fakes.gmail, "with --dev: the address of the sandbox Gmail")
	fset.StringVar(&fakes.mercury, "sandbox-mercury", fakes.mercury, "with --dev: the address of the sandbox Mercury")
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		return err
	}
	var notes []string
	if *dev {
		if notes, err = devDefaults(cfg); err != nil {
			return err
		}
	}
	keys, err := keyring(cfg)
	if err != nil {
		return err
	}
	var cat connectors.Catalogue
	if *dev {
		var sandboxNotes []string
		var stopFakes func()
		if cat, sandboxNotes, stopFakes, err = devCatalogue(fakes); err != nil {
			return err
		}
		defer stopFakes()
		notes = append(notes, sandboxNotes...)
	} else if cat, err = catalogue(); err != nil {
		return err
	}
	if cfg.ConnectorsDir != "" {
		mods, closeModules, err := loadModules(ctx, cfg, *dev, a.stderr)
		if err != nil {
			return err
		}
		defer closeModules()
		for _, m := range mods {
			if cat, err = withConnectors(cat, m.Connector); err != nil {
				return err
			}
		}
	}
	mode := existingStore
	if *dev {
		mode = createStore
	}
	db, err := openStore(ctx, cfg, mode)
	if err != nil {
		return err
	}
	defer db.Close()
	if *dev {
		if _, err := db.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate: %s", oneLine(err))
		}
	}
	st, err := checkSchema(ctx, db)
	if err != nil {
		return err
	}
	// A keyring that is well formed but not the data's would start and
	// then fail every call: refuse it here, naming the ids the data needs.
	check, err := rotation.New(enclave.New(enclave.Config{Keyring: keys}), db, nil).CheckKeyring(ctx)
	if err != nil {
		return fmt.Errorf("cannot read what the data was sealed with: %s", oneLine(err))
	}
	if err := keyringProblem(check); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(a.stderr, "dev: "+n)
	}
	log := newLogger(cfg, a)
	if len(check.Missing) > 0 || len(check.Failed) > 0 {
		log.Warn("the master keyring lacks keys some of the data needs, or some of it does not open: run countersign doctor",
			"missing", check.Missing, "not_opened", check.Failed)
	}
	if cfg.WebhookAllowPrivate {
		log.Warn("COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach loopback and private addresses; never use this in production")
	}
	if cfg.PushAllowAnyEndpoint {
		log.Warn("COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT is on: pushes may go to any host, loopback and private ones too; never use this in production")
	}

	if *dev {
		if note, err := devAgent(ctx, db); err != nil {
			return err
		} else if note != "" {
			fmt.Fprintln(a.stderr, "dev: "+note)
		}
	}
	wallets, err := keyChecker(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (COUNTERSIGN_LISTEN): %s", cfg.Listen, oneLine(err))
	}
	defer ln.Close()
	cfg.Listening(ln.Addr().String())
	var metricsLn net.Listener
	if cfg.MetricsListen != "" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			return fmt.Errorf("cannot listen on %s for /metrics (COUNTERSIGN_METRICS_LISTEN): %s; choose another address, or off", cfg.MetricsListen, oneLine(err))
		}
		defer metricsLn.Close()
	}
	if *dev {
		fmt.Fprintf(a.stderr, "dev: recipient: owners sign for %q (the public origin %s; COUNTERSIGN_RECIPIENT sets another)\n", cfg.Recipient, cfg.PublicURL)
	}
	es := newEnclaveSide(keys, db, cat, cfg, log)
	owners := inbox.NewService(inbox.Config{Store: db, Keeper: es.Unlock, Tokens: es.Keys, Webhooks: es.Delivery,
		Push: es.Delivery, Catalogue: cat, Keys: wallets,
		PublicURL: cfg.PublicURL, Recipient: cfg.Recipient, Logger: log, WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		PushAllowAnyEndpoint: cfg.PushAllowAnyEndpoint})
	runKey, runKeys, err := es.Keys.RunKeys()
	if err != nil {
		return err
	}
	api := httpapi.New(httpapi.Options{Version: version, Store: db, Logger: log, Inbox: owners, Agents: es.Calls,
		Connectors: cat, RunKey: httpapi.RunKeys{Current: runKey, Keys: runKeys},
		Limits: httpapi.Limits{AgentCallsPerMinute: cfg.AgentCallsPerMinute}, PublicURL: cfg.PublicURL,
		NearNetwork: nearNetwork(cfg.NearRPC), SandboxWallet: *dev})
	defer api.Close()
	api.Registry().MustRegister(append(es.Answers.Collectors(), es.Delivery.Collectors()...)...)
	// Answer runs, the leader's sweeps, webhook deliveries and pushes come
	// from the job queue; the heartbeat tells other processes this one's
	// runs are alive.
	jobsCtx, stopBeating := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBeating()
	go es.Answers.KeepAlive(jobsCtx)
	work := es.Work()
	stopJobs, err := jobs.Start(jobsCtx, db, jobs.Config{Workers: work.Workers(), Periodic: work.Periodic(), Logger: log,
		HandOff: work.Answer, HandOffTimeout: work.AnswerTimeout})
	if err != nil {
		return fmt.Errorf("cannot start running approved tasks, webhook deliveries and pushes (the job queue): %s", oneLine(err))
	}
	// Long-held requests (event streams, task_wait) end when shutdown starts,
	// so shutdown need not wait for them.
	requests, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()
	srv := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return requests },
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	metricsAddr := "off"
	if metricsLn != nil {
		metricsAddr = metricsLn.Addr().String()
	}
	log.Info("serving", "addr", ln.Addr().String(), "public_url", cfg.PublicURL, "recipient", cfg.Recipient,
		"metrics", metricsAddr, "store", db.Dialect(), "schema", st.Current, "version", version)
	fmt.Fprintf(a.stderr, "countersign %s listening on http://%s\n", version, ln.Addr())
	if metricsLn != nil {
		fmt.Fprintf(a.stderr, "metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	if a.listening != nil {
		a.listening(ln.Addr().String(), db)
	}

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	// /metrics has a listener of its own, not the public one (SPEC §15).
	var metricsSrv *http.Server
	if metricsLn != nil {
		metricsSrv = &http.Server{Handler: metricsHandler(api.Metrics(), cfg.Pprof), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
			WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	endRequests()
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("HTTP requests did not end in time", "err", err)
	}
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutdown)
	}
	// Running answer runs finish (up to their compute limit) before the
	// process goes: one cut off would end run_unfinished.
	draining, cancelJobs := context.WithTimeout(context.WithoutCancel(ctx), connectors.MaxLimit+30*time.Second)
	defer cancelJobs()
	if err := stopJobs(draining); err != nil {
		log.Warn("the job queue did not stop cleanly", "err", err)
	}
	return nil
}

func runMigrate(ctx context.Context, a *app, args []string) error {
	fset := a.flags("migrate")
	wait := fset.Duration("wait", 0, "keep trying to reach the database this long (e.g. 2m, for a database that is still starting); 0: try once")
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(*wait)
	db, err := openStore(ctx, cfg, createStore)
	for err != nil && time.Now().Before(deadline) {
		fmt.Fprintf(a.stderr, "migrate: the database does not answer yet; trying again until %s: %v\n", deadline.UTC().Format(time.TimeOnly), err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
		db, err = openStore(ctx, cfg, createStore)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("%s", oneLine(err))
	}
	st, err := checkSchema(ctx, db)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(a.stdout, "the %s schema is current (version %d)\n", db.Dialect(), st.Current)
		return nil
	}
	fmt.Fprintf(a.stdout, "applied migrations %v: the %s schema is at version %d\n", applied, db.Dialect(), st.Current)
	return nil
}

// newEnclaveSide wires the enclave side for the recipient and public
// origin cfg names (known once serve listens).
func newEnclaveSide(keys *sealing.Keyring, db store.Store, cat connectors.Catalogue, cfg *config.Config, log *slog.Logger) *side.Side {
	return side.New(side.Config{Keys: keys, Store: db, Connectors: cat, Recipient: cfg.Recipient, PublicURL: cfg.PublicURL,
		Logger: log, WebhookAllowPrivate: cfg.WebhookAllowPrivate, PushAllowAnyEndpoint: cfg.PushAllowAnyEndpoint,
		PushContact: cfg.PushContact, RunnerDead: cfg.RunnerDeadAfter})
}

// nearNetwork is the network the page's wallets sign in on: testnet when
// the service checks keys against a testnet RPC, mainnet otherwise.
func nearNetwork(rpc string) string {
	if strings.Contains(rpc, "testnet") {
		return "testnet"
	}
	return "mainnet"
}

// metricsHandler is what the metrics listener serves: /metrics and, with
// PPROF, Go's profiler under /debug/pprof/.
func metricsHandler(metrics http.Handler, profiler bool) http.Handler {
	if !profiler {
		return metrics
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", metrics)
	return mux
}
