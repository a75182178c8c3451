package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	read := Flags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return read()
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "" || c.Listen != DefaultListen || c.PublicURL != "http://"+DefaultListen ||
		c.Recipient != DefaultListen || c.MetricsListen != DefaultMetricsListen || c.NearRPC != DefaultNearRPC || c.WebhookAllowPrivate ||
		c.DataDir != DefaultDataDir || c.LogLevel != "info" || c.MasterKey != "" || c.RunnerDeadAfter != time.Minute {
		t.Fatalf("defaults: %+v", c)
	}
	if c.Explicit("LISTEN") {
		t.Fatal("a default counts as explicit")
	}
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, []string{"--listen", "127.0.0.1:9000"}, map[string]string{
		"COUNTERSIGN_LISTEN":          "127.0.0.1:7000",
		"COUNTERSIGN_RECIPIENT":       "other",
		"COUNTERSIGN_MASTER_KEY_FILE": keyFile,
		"COUNTERSIGN_NEAR_RPC":        "off",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9000" || c.PublicURL != "http://127.0.0.1:9000" {
		t.Errorf("a flag did not win over the variable: %s %s", c.Listen, c.PublicURL)
	}
	if c.Recipient != "other" || c.NearRPC != "off" {
		t.Errorf("variables not read: %+v", c)
	}
	if c.MasterKey != strings.Repeat("ab", 32) || c.MasterKeyFile != keyFile || !c.Explicit("MASTER_KEY") {
		t.Errorf("the key file was not read: %q from %q", c.MasterKey, c.MasterKeyFile)
	}
}

// TestPublicOriginAndRecipient: the public URL is kept canonical (a
// default port dropped, the host lowercased), and the recipient defaults
// to its host, with its port unless it is the scheme's default (SPEC §7);
// a recipient given explicitly wins.
func TestPublicOriginAndRecipient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env               map[string]string
		origin, recipient string
	}{
		{nil, "http://127.0.0.1:8080", "127.0.0.1:8080"},
		{map[string]string{"COUNTERSIGN_LISTEN": "0.0.0.0:9000"}, "http://0.0.0.0:9000", "0.0.0.0:9000"},
		{map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://Inbox.Example:443"}, "https://inbox.example", "inbox.example"},
		{map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://inbox.example/"}, "https://inbox.example", "inbox.example"},
		{map[string]string{"COUNTERSIGN_PUBLIC_URL": "http://inbox.example:80"}, "http://inbox.example", "inbox.example"},
		{map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://inbox.example:8443"}, "https://inbox.example:8443", "inbox.example:8443"},
		{map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://inbox.example", "COUNTERSIGN_RECIPIENT": "countersign"}, "https://inbox.example", "countersign"},
	} {
		c, err := load(t, nil, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		if c.PublicURL != tc.origin || c.Recipient != tc.recipient {
			t.Errorf("%v: public URL %q recipient %q, want %q %q", tc.env, c.PublicURL, c.Recipient, tc.origin, tc.recipient)
		}
	}
}

// TestListening: a service that asked for any free port takes the address
// it got as its public URL and recipient, unless they were given.
func TestListening(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args              []string
		origin, recipient string
	}{
		{[]string{"--listen", "127.0.0.1:0"}, "http://127.0.0.1:4242", "127.0.0.1:4242"},
		{[]string{"--listen", "127.0.0.1:0", "--recipient", "x"}, "http://127.0.0.1:4242", "x"},
		{[]string{"--listen", "127.0.0.1:0", "--public-url", "https://inbox.example"}, "https://inbox.example", "inbox.example"},
		{[]string{"--listen", "127.0.0.1:8080"}, "http://127.0.0.1:8080", "127.0.0.1:8080"},
	} {
		c, err := load(t, tc.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Listening("127.0.0.1:4242")
		if c.PublicURL != tc.origin || c.Recipient != tc.recipient {
			t.Errorf("%v: public URL %q recipient %q, want %q %q", tc.args, c.PublicURL, c.Recipient, tc.origin, tc.recipient)
		}
	}
}

// TestMetricsListen: /metrics has its own address, loopback by default,
// and off turns it off.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"off": "", "0.0.0.0:9100": "0.0.0.0:9100", "127.0.0.1:0": "127.0.0.1:0"} {
		c, err := load(t, []string{"--metrics-listen", v}, nil)
		if err != nil || c.MetricsListen != want || !c.Explicit("METRICS_LISTEN") {
			t.Errorf("--metrics-listen %s: %q %v", v, c.MetricsListen, err)
		}
	}
}

// TestPprof: the profiler is off by default and, when on, only beside a
// /metrics listening on a loopback address: never where a profile could be
// read from another host.
func TestPprof(t *testing.T) {
	t.Parallel()
	if c, err := load(t, nil, nil); err != nil || c.Pprof {
		t.Fatalf("by default: pprof %v, %v", c.Pprof, err)
	}
	for _, tc := range []struct {
		metrics string
		ok      bool
	}{
		{"127.0.0.1:0", true},
		{"[::1]:9090", true},
		{"localhost:9090", true},
		{"0.0.0.0:9090", false},
		{"[::]:9090", false},
		{"10.0.0.5:9090", false},
		{"off", false},
	} {
		c, err := load(t, []string{"--pprof", "true", "--metrics-listen", tc.metrics}, nil)
		if tc.ok && (err != nil || !c.Pprof) {
			t.Errorf("--pprof beside %s: %v", tc.metrics, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "METRICS_LISTEN")) {
			t.Errorf("--pprof beside %s: want a refusal naming METRICS_LISTEN, got %v", tc.metrics, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	secret := "postgres://u:hunter2@/db"
	shared := filepath.Join(t.TempDir(), "shared.key")
	if err := os.WriteFile(shared, []byte(strings.Repeat("ab", 32)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o644) // whatever the umask
	groupURL := filepath.Join(t.TempDir(), "database.url")
	if err := os.WriteFile(groupURL, []byte("postgres://u:hunter2@h/db"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(groupURL, 0o640)
	empty := filepath.Join(t.TempDir(), "empty.key")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"key file others can read", nil, map[string]string{"COUNTERSIGN_MASTER_KEY_FILE": shared}, "COUNTERSIGN_MASTER_KEY_FILE: " + shared + " can be read or written by others than its owner (mode 0644): chmod 600 it"},
		{"database URL file the group can read", nil, map[string]string{"COUNTERSIGN_DATABASE_URL_FILE": groupURL}, "COUNTERSIGN_DATABASE_URL_FILE: " + groupURL + " can be read or written by others than its owner (mode 0640)"},
		{"empty key file", nil, map[string]string{"COUNTERSIGN_MASTER_KEY_FILE": empty}, "COUNTERSIGN_MASTER_KEY_FILE: " + empty + " is empty"},
		{"database not postgres", nil, map[string]string{"COUNTERSIGN_DATABASE_URL": "mysql://x/y"}, "COUNTERSIGN_DATABASE_URL: expected postgres://"},
		{"database without host, password not echoed", nil, map[string]string{"COUNTERSIGN_DATABASE_URL": secret}, "COUNTERSIGN_DATABASE_URL: expected postgres://"},
		{"both variable and file", nil, map[string]string{"COUNTERSIGN_MASTER_KEY": "x", "COUNTERSIGN_MASTER_KEY_FILE": "/x"}, "both set"},
		{"missing file", nil, map[string]string{"COUNTERSIGN_MASTER_KEY_FILE": "/nonexistent/key"}, "COUNTERSIGN_MASTER_KEY_FILE: cannot read the file"},
		{"listen without port", []string{"--listen", "localhost"}, nil, "--listen: expected host:port"},
		{"listen bad port", nil, map[string]string{"COUNTERSIGN_LISTEN": "127.0.0.1:99999"}, "COUNTERSIGN_LISTEN: the port"},
		{"public url with path", nil, map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://x.example/inbox"}, "COUNTERSIGN_PUBLIC_URL: expected an origin"},
		{"public url ftp", nil, map[string]string{"COUNTERSIGN_PUBLIC_URL": "ftp://x.example"}, "COUNTERSIGN_PUBLIC_URL: expected an origin"},
		{"public url with a user", nil, map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://u@x.example"}, "COUNTERSIGN_PUBLIC_URL: expected an origin"},
		{"public url with an empty port", nil, map[string]string{"COUNTERSIGN_PUBLIC_URL": "https://x.example:"}, "COUNTERSIGN_PUBLIC_URL: expected an origin"},
		{"recipient with spaces", nil, map[string]string{"COUNTERSIGN_RECIPIENT": " x "}, "COUNTERSIGN_RECIPIENT: expected 1 to 128"},
		{"metrics listen without port", nil, map[string]string{"COUNTERSIGN_METRICS_LISTEN": "localhost"}, "COUNTERSIGN_METRICS_LISTEN: expected host:port, e.g. 127.0.0.1:9090, or off"},
		{"metrics listen bad port", []string{"--metrics-listen", "127.0.0.1:70000"}, nil, "--metrics-listen: the port"},
		{"near rpc garbage", nil, map[string]string{"COUNTERSIGN_NEAR_RPC": "maybe"}, "COUNTERSIGN_NEAR_RPC: expected an http(s) URL or off"},
		{"bool garbage", nil, map[string]string{"COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE": "perhaps"}, "COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE: expected true or false"},
		{"push contact without a scheme", nil, map[string]string{"COUNTERSIGN_PUSH_CONTACT": "ops@example.com"}, "COUNTERSIGN_PUSH_CONTACT: the push contact must be mailto:<address> or an https URL"},
		{"push contact over http", []string{"--push-contact", "http://inbox.example"}, nil, "--push-contact: the push contact must be"},
		{"push contact mailto without an address", nil, map[string]string{"COUNTERSIGN_PUSH_CONTACT": "mailto:ops"}, "the push contact's mailto: is not an email address"},
		{"push bool garbage", nil, map[string]string{"COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT": "sometimes"}, "COUNTERSIGN_PUSH_ALLOW_ANY_ENDPOINT: expected true or false"},
		{"log level", []string{"--log-level", "loud"}, nil, "--log-level: expected debug"},
		{"empty data dir flag", []string{"--data-dir", ""}, nil, "--data-dir: expected a directory"},
		{"runner dead after garbage", nil, map[string]string{"COUNTERSIGN_RUNNER_DEAD_AFTER": "soon"}, "COUNTERSIGN_RUNNER_DEAD_AFTER: expected a duration from 20s"},
		{"runner dead within a heartbeat", []string{"--runner-dead-after", "15s"}, nil, "--runner-dead-after: expected a duration from 20s"},
		{"runner dead only when answering ends anyway", nil, map[string]string{"COUNTERSIGN_RUNNER_DEAD_AFTER": "30m"}, "under 30m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.args, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one safe line: %q", err)
			}
		})
	}
}

// COUNTERSIGN_SECRET_FILES_SHARED=true lets a secret file others can read
// pass, for containers whose user the files cannot be given to.
func TestSecretFilesShared(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(keyFile, 0o644)
	c, err := load(t, nil, map[string]string{"COUNTERSIGN_MASTER_KEY_FILE": keyFile, "COUNTERSIGN_SECRET_FILES_SHARED": "true"})
	if err != nil || c.MasterKey != strings.Repeat("ab", 32) {
		t.Fatalf("a shared key file with SECRET_FILES_SHARED=true: %v", err)
	}
}

func TestRunnerDeadAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{[]string{"--runner-dead-after", "20s"}, nil, 20 * time.Second},
		{nil, map[string]string{"COUNTERSIGN_RUNNER_DEAD_AFTER": "5m"}, 5 * time.Minute},
		{[]string{"--runner-dead-after", "29m59s"}, nil, 29*time.Minute + 59*time.Second},
	} {
		c, err := load(t, tc.args, tc.env)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		if c.RunnerDeadAfter != tc.want {
			t.Errorf("%v %v: %s, want %s", tc.args, tc.env, c.RunnerDeadAfter, tc.want)
		}
	}
}
