// Package config reads the service's settings from flags, COUNTERSIGN_*
// environment variables and, for secrets, COUNTERSIGN_*_FILE files — one table
// of settings, validated at start with errors that name the setting and the
// fix. Every command that touches the database reads the same settings.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"countersign/approval"
	"countersign/webpush"
)

// Prefix starts every environment variable the service reads.
const Prefix = "COUNTERSIGN_"

// Defaults. The recipient's default is the public origin's host (SPEC §7).
const (
	DefaultListen        = "127.0.0.1:8080"
	DefaultMetricsListen = "127.0.0.1:9090"
	DefaultNearRPC       = "https://rpc.mainnet.near.org"
	DefaultDataDir       = "./countersign-data"
)

// Config is the service's settings.
type Config struct {
	// DatabaseURL is a postgres:// URL; empty means the embedded store in
	// DataDir.
	DatabaseURL string
	// MasterKey is the keyring text (SPEC §15); empty means none given.
	MasterKey string
	// MasterKeyFile is where MasterKey was read from, if it came from a file.
	MasterKeyFile string
	Listen        string
	// MetricsListen is where /metrics is served, apart from the public
	// listener (SPEC §15); empty when it is off.
	MetricsListen string
	// Pprof serves Go's profiler (/debug/pprof/) beside /metrics, whose
	// listener is then on a loopback address: for measuring.
	Pprof bool
	// PublicURL is the public origin, canonical (lowercase, no default
	// port).
	PublicURL string
	// Recipient is the NEP-413 recipient; by default the public origin's
	// host, with its port unless it is the scheme's default.
	Recipient string
	// NearRPC is the NEAR JSON-RPC URL, or "off" (implicit accounts only).
	NearRPC string
	// WebhookAllowPrivate lets webhooks reach loopback and private addresses
	// over http or https: for development and tests only.
	WebhookAllowPrivate bool
	// PushAllowAnyEndpoint lets Web Push reach endpoints on any host, over
	// http and at loopback and private addresses too: for development and
	// tests only (a fake push service on loopback).
	PushAllowAnyEndpoint bool
	// PushContact is the VAPID JWT's sub (mailto: or an https URL); empty:
	// the public URL.
	PushContact string
	DataDir     string
	LogLevel    string
	// AgentCallsPerMinute bounds one agent key's calls.
	AgentCallsPerMinute int
	// RunnerDeadAfter is how long a process that runs answers may go
	// unheard from (it beats every 10 s) before it is taken for dead and
	// its runs in flight end run_unfinished.
	RunnerDeadAfter time.Duration
	// ConnectorsDir is a directory of WebAssembly connectors (SPEC §14),
	// one subdirectory each, loaded at start; empty: none.
	ConnectorsDir string
	// ConnectorsCache is where compiled connector modules are kept across
	// starts; empty: DataDir/connectors-cache.
	ConnectorsCache string

	// set records which settings were given explicitly (by flag, variable or
	// file), so that --dev fills in only the others.
	set map[string]bool
}

// MinRunnerDeadAfter is the shortest RUNNER_DEAD_AFTER: two of a
// process's heartbeats, 10 s apart.
const MinRunnerDeadAfter = 20 * time.Second

// Explicit reports whether the named setting (e.g. "MASTER_KEY") was given.
func (c *Config) Explicit(name string) bool { return c.set[name] }

// setting is one row of the table.
type setting struct {
	name   string // environment name without the prefix
	flag   string
	secret bool // may come from NAME_FILE, never shown
	def    func(c *Config) string
	usage  string
	apply  func(c *Config, v string) error
}

var table = []setting{
	{
		name: "DATABASE_URL", flag: "database-url", secret: true,
		usage: "PostgreSQL URL (postgres://…); empty: the embedded store in the data directory",
		apply: func(c *Config, v string) error {
			if v == "" {
				c.DatabaseURL = ""
				return nil
			}
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
				return errors.New("expected postgres://user[:password]@host[:port]/database")
			}
			c.DatabaseURL = v
			return nil
		},
	},
	{
		name: "MASTER_KEY", flag: "master-key", secret: true,
		usage: "master keyring: <id>:<64 hex>[,<id>:<64 hex>…], or 64 hex for key id 1",
		apply: func(c *Config, v string) error { c.MasterKey = strings.TrimSpace(v); return nil },
	},
	{
		name: "LISTEN", flag: "listen", def: func(*Config) string { return DefaultListen },
		usage: "address the service listens on (host:port)",
		apply: func(c *Config, v string) error {
			if err := hostPort(v, "127.0.0.1:8080"); err != nil {
				return err
			}
			c.Listen = v
			return nil
		},
	},
	{
		name: "METRICS_LISTEN", flag: "metrics-listen", def: func(*Config) string { return DefaultMetricsListen },
		usage: "address /metrics is served on, apart from the public one (host:port), or off",
		apply: func(c *Config, v string) error {
			if v == "off" {
				c.MetricsListen = ""
				return nil
			}
			if err := hostPort(v, "127.0.0.1:9090, or off"); err != nil {
				return err
			}
			c.MetricsListen = v
			return nil
		},
	},
	{
		name: "PPROF", flag: "pprof", def: func(*Config) string { return "false" },
		usage: "serve Go's profiler (/debug/pprof/) beside /metrics, which must then listen on a loopback address (for measuring)",
		apply: func(c *Config, v string) error {
			b, err := parseBool(v)
			if err != nil {
				return err
			}
			if b && !loopback(c.MetricsListen) {
				return errors.New("the profiler is served beside /metrics, whose address (METRICS_LISTEN) must then be a loopback one, e.g. 127.0.0.1:9090")
			}
			c.Pprof = b
			return nil
		},
	},
	{
		name: "PUBLIC_URL", flag: "public-url", def: func(c *Config) string { return "http://" + c.Listen },
		usage: "the service's public origin, used in links, for the browser's Origin check and as the default recipient",
		apply: func(c *Config, v string) error {
			origin, err := approval.PublicOrigin(v)
			if err != nil {
				return err
			}
			c.PublicURL = origin
			return nil
		},
	},
	{
		name: "RECIPIENT", flag: "recipient", def: func(c *Config) string { r, _ := approval.RecipientOf(c.PublicURL); return r },
		usage: "the NEP-413 recipient every owner signature names (default: the public origin's host)",
		apply: func(c *Config, v string) error {
			if v == "" || len(v) > 128 || strings.TrimSpace(v) != v || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return errors.New("expected 1 to 128 printable characters without surrounding spaces")
			}
			c.Recipient = v
			return nil
		},
	},
	{
		name: "NEAR_RPC", flag: "near-rpc", def: func(*Config) string { return DefaultNearRPC },
		usage: "NEAR JSON-RPC URL for access-key checks, or off (implicit accounts only)",
		apply: func(c *Config, v string) error {
			if v == "off" {
				c.NearRPC = v
				return nil
			}
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("expected an http(s) URL or off")
			}
			c.NearRPC = v
			return nil
		},
	},
	{
		name: "WEBHOOK_ALLOW_PRIVATE", flag: "webhook-allow-private", def: func(*Config) string { return "false" },
		usage: "let webhooks reach loopback and private addresses (development and tests only)",
		apply: func(c *Config, v string) error {
			b, err := parseBool(v)
			c.WebhookAllowPrivate = b
			return err
		},
	},
	{
		name: "PUSH_ALLOW_ANY_ENDPOINT", flag: "push-allow-any-endpoint", def: func(*Config) string { return "false" },
		usage: "let Web Push reach endpoints on any host, loopback and private ones too (development and tests only)",
		apply: func(c *Config, v string) error {
			b, err := parseBool(v)
			c.PushAllowAnyEndpoint = b
			return err
		},
	},
	{
		name: "PUSH_CONTACT", flag: "push-contact",
		usage: "the operator's contact push services are given with each push: mailto:<address> or an https URL (default: the public URL)",
		apply: func(c *Config, v string) error {
			if v == "" {
				c.PushContact = ""
				return nil
			}
			if err := webpush.CheckSubject(v); err != nil {
				return err
			}
			c.PushContact = v
			return nil
		},
	},
	{
		name: "DATA_DIR", flag: "data-dir", def: func(*Config) string { return DefaultDataDir },
		usage: "directory of the embedded store and of the development master key file",
		apply: func(c *Config, v string) error {
			if v == "" {
				return errors.New("expected a directory path")
			}
			c.DataDir = v
			return nil
		},
	},
	{
		name: "AGENT_CALLS_PER_MINUTE", flag: "agent-calls-per-minute", def: func(*Config) string { return "600" },
		usage: "calls one agent key may make a minute (a fifth of them at once)",
		apply: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1_000_000 {
				return errors.New("expected a whole number from 1 to 1000000")
			}
			c.AgentCallsPerMinute = n
			return nil
		},
	},
	{
		name: "RUNNER_DEAD_AFTER", flag: "runner-dead-after", def: func(*Config) string { return "1m" },
		usage: "how long a process that runs answers may go unheard from (it beats every 10s) before its runs in flight end run_unfinished",
		apply: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < MinRunnerDeadAfter || d >= 30*time.Minute {
				return fmt.Errorf("expected a duration from %s to under 30m (\"1m\")", MinRunnerDeadAfter)
			}
			c.RunnerDeadAfter = d
			return nil
		},
	},
	{
		name: "CONNECTORS_DIR", flag: "connectors-dir",
		usage: "directory of WebAssembly connectors, one subdirectory each (manifest.json and its module), loaded at start",
		apply: func(c *Config, v string) error { c.ConnectorsDir = v; return nil },
	},
	{
		name: "CONNECTORS_CACHE", flag: "connectors-cache",
		usage: "directory where compiled WebAssembly connectors are kept across starts (default: connectors-cache in the data directory)",
		apply: func(c *Config, v string) error { c.ConnectorsCache = v; return nil },
	},
	{
		name: "LOG_LEVEL", flag: "log-level", def: func(*Config) string { return "info" },
		usage: "debug, info, warn or error",
		apply: func(c *Config, v string) error {
			switch v {
			case "debug", "info", "warn", "error":
				c.LogLevel = v
				return nil
			}
			return errors.New("expected debug, info, warn or error")
		},
	},
}

// hostPort checks a listening address; example is what the refusal
// suggests.
func hostPort(v, example string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return errors.New("expected host:port, e.g. " + example)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return errors.New("the port must be a number from 0 to 65535")
	}
	return nil
}

// loopback says whether the host of host:port is a loopback address.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Listening tells the settings the address the service listens on, once
// it does: when LISTEN asked for any free port (:0) and PUBLIC_URL was not
// given, the public URL becomes that address, and the recipient follows it
// unless RECIPIENT was given.
func (c *Config) Listening(addr string) {
	if c.Explicit("PUBLIC_URL") {
		return
	}
	if _, port, err := net.SplitHostPort(c.Listen); err != nil || port != "0" {
		return
	}
	origin, err := approval.PublicOrigin("http://" + addr)
	if err != nil {
		return
	}
	c.PublicURL = origin
	if !c.Explicit("RECIPIENT") {
		c.Recipient, _ = approval.RecipientOf(origin)
	}
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, errors.New("expected true or false")
}

// Flags registers every setting on fs and returns a function that, after
// fs.Parse, reads the settings: flags first, then COUNTERSIGN_* variables
// (through getenv), then *_FILE files for secrets, then defaults.
func Flags(fs *flag.FlagSet, getenv func(string) string) func() (*Config, error) {
	values := map[string]*string{}
	for _, s := range table {
		v := new(string)
		values[s.name] = v
		usage := s.usage + " (" + Prefix + s.name
		if s.secret {
			usage += ", or " + Prefix + s.name + "_FILE"
		}
		usage += ")"
		fs.StringVar(v, s.flag, "", usage)
	}
	return func() (*Config, error) {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		c := &Config{set: map[string]bool{}}
		for _, s := range table {
			raw, from, err := lookup(s, given[s.flag], *values[s.name], getenv)
			if err != nil {
				return nil, err
			}
			if from != "" {
				c.set[s.name] = true
				if s.name == "MASTER_KEY" && strings.HasSuffix(from, "_FILE") {
					c.MasterKeyFile = getenv(Prefix + s.name + "_FILE")
				}
			} else if s.def != nil {
				raw = s.def(c)
			}
			if err := s.apply(c, raw); err != nil {
				where := from
				if where == "" {
					where = "the default of " + Prefix + s.name
				}
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		return c, nil
	}
}

// lookup finds a setting's raw value and says where it came from ("" for
// nowhere).
func lookup(s setting, flagGiven bool, flagValue string, getenv func(string) string) (string, string, error) {
	if flagGiven {
		return flagValue, "--" + s.flag, nil
	}
	env := Prefix + s.name
	v, file := getenv(env), ""
	if s.secret {
		file = getenv(env + "_FILE")
	}
	switch {
	case v != "" && file != "":
		return "", "", fmt.Errorf("%s and %s_FILE are both set: keep one", env, env)
	case v != "":
		return v, env, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("%s_FILE: cannot read the file: %v", env, errors.Unwrap(err))
		}
		if err := private(file, getenv(Prefix+"SECRET_FILES_SHARED")); err != nil {
			return "", "", fmt.Errorf("%s_FILE: %v", env, err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if strings.TrimSpace(v) == "" {
			return "", "", fmt.Errorf("%s_FILE: %s is empty: put the value in it, or unset %s_FILE", env, file, env)
		}
		return v, env + "_FILE", nil
	}
	return "", "", nil
}

// Describe lists the settings as "NAME (flag): usage" lines, sorted, for help
// text.
func Describe() []string {
	var out []string
	for _, s := range table {
		out = append(out, fmt.Sprintf("  --%-24s %s%s", s.flag, Prefix, s.name))
	}
	sort.Strings(out)
	return out
}

// private refuses a secret file that its group or others can read or write:
// a master key or a database URL readable by other accounts of the machine
// is as good as published. shared="true" (COUNTERSIGN_SECRET_FILES_SHARED,
// for a container whose user the files cannot be given to) lets it pass.
func private(path, shared string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("cannot read the file: %v", errors.Unwrap(err))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && shared != "true" {
		return fmt.Errorf("%s can be read or written by others than its owner (mode %04o): chmod 600 it (or set %sSECRET_FILES_SHARED=true where that cannot be done)", path, perm, Prefix)
	}
	return nil
}
