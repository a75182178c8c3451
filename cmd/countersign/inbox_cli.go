package main

// The terminal inbox: `countersign inbox …` is an owner's device on a
// terminal, speaking the same protocol as the web inbox through the device
// and client packages.
//
// Choices where the contract is silent:
//
//   - A terminal's state lives in one directory (--dir, COUNTERSIGN_INBOX_DIR,
//     default ./countersign-inbox, made with mode 0700): device.key, the P-256
//     device key (mode 0600, made at the first login and kept across logins),
//     and session.json (mode 0600, replaced atomically): the server, account,
//     session token, device id, valid-until time, the NEP-413 recipient, the
//     wallet key file named at login (absolute path; none means an external
//     wallet) and the run keys pinned at login. Either file is refused when its
//     group or others may read it, as wallet key files are.
//   - The run keys are fetched once, at login, from
//     /.well-known/countersign-run-key and pinned: every receipt is checked
//     against the pinned keys only, so a service that later swaps its keys is
//     NOT VERIFIED until the owner logs in again. Trust is taken on first use,
//     at login, as with a server's SSH host key.
//   - A receipt is verified when it is signed by a pinned key and names the
//     task the device opened and hashed itself: its id and hash, owner,
//     preparer (the receipt's agent), build, and the preparing run, which is
//     the task id's first part (<run id>-<n>; the view's `run` is the answer
//     run). In addition the receipt's input_sha256 must be the SHA-256 of the
//     request the task shows, so that `show --request` prints what the run
//     was given. approve refuses a task whose receipt does not verify, before
//     anything is signed.
//   - A new login signs out the directory's previous session first (after
//     the new statement is signed), so that logging in again does not use up
//     one of the account's five device places.
//   - --account may be left out with --wallet: it is the wallet file's
//     account; both given must agree.
//   - An external wallet's answer is read from standard input as the JSON
//     near-api-js signMessage returns (accountId, publicKey, signature, nonce,
//     with message, recipient and callbackUrl when the wallet gives them back;
//     a nonce may be base64 or an array of 32 byte values; `state` is ignored;
//     any other member is refused). accountId, message and recipient, when
//     given, must be the account, sentence and recipient asked for, and the
//     signature is checked here over the sentence asked for before anything is
//     sent.
//   - Sentences to sign and other prompts go to standard error, results to
//     standard output. Text that comes from the service or from a task is
//     printed with control, format (bidi, zero-width) and line-separator
//     characters written as \u escapes, so that nothing shown can move the
//     cursor, colour the terminal or reorder a line. `show --raw` is the one
//     exception: it prints the envelope's exact bytes, without a newline, so
//     that `| sha256sum` prints the task hash.
//   - Flags may come before or after a subcommand's arguments.

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/inbox"
	"countersign/origin"
)

func init() {
	commands["inbox"] = command{"the owner's terminal inbox: inbox login|list|show|approve|reject|ack|watch|devices|mute|projects …", runInbox}
}

const inboxUsage = `usage: countersign inbox <command> [flags]

  login --account ID [--wallet FILE | --external] [--days N] [--server URL]
  logout
  list [--closed] [--limit N] [--before ID]
  show ID [--raw | --request]
  approve ID [--text T | --file F] [--note N] [--hash H] [--external]
  reject ID [--reason R]
  ack ID
  cancel ID
  unlock
  watch
  devices
  devices withdraw ID [--external]
  mute agent|project SUBJECT [--delete-waiting]
  unmute agent|project SUBJECT
  mutes
  projects list
  projects put NAME --connector C --policy FILE [--credentials FILE] --agent A… [--external]
  projects rm NAME [--external]

Every command takes --dir DIR (COUNTERSIGN_INBOX_DIR, default ./countersign-inbox).`

// inboxCommands are the subcommands of `countersign inbox`.
var inboxCommands = map[string]func(ctx context.Context, a *app, args []string) error{
	"login":    inboxLogin,
	"logout":   inboxLogout,
	"list":     inboxList,
	"show":     inboxShow,
	"approve":  inboxApprove,
	"reject":   inboxReject,
	"ack":      inboxAck,
	"cancel":   inboxCancel,
	"unlock":   inboxUnlock,
	"watch":    inboxWatch,
	"devices":  inboxDevices,
	"mute":     inboxMute,
	"unmute":   inboxUnmute,
	"mutes":    inboxMutes,
	"projects": inboxProjects,
}

func runInbox(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(a.stderr, inboxUsage)
		if len(args) == 0 {
			return exitError{2}
		}
		return nil
	}
	sub, ok := inboxCommands[args[0]]
	if !ok {
		return fmt.Errorf("unknown inbox command %q (countersign inbox help lists them)", args[0])
	}
	if err := sub(ctx, a, args[1:]); err != nil {
		var exit exitError
		if errors.As(err, &exit) || errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errors.New(oneLine(err))
	}
	return nil
}

// Files of an inbox directory.
const (
	defaultInboxDir = "countersign-inbox"
	deviceKeyFile   = "device.key"
	sessionFile     = "session.json"
	maxSessionBytes = 64 << 10
)

// inboxFlags is a subcommand's flag set with the common --dir flag.
func (a *app) inboxFlags(name string) (*flag.FlagSet, func() string) {
	fset := a.flags("inbox " + name)
	dir := fset.String("dir", "", "this terminal's inbox directory (COUNTERSIGN_INBOX_DIR, default ./"+defaultInboxDir+")")
	return fset, func() string { return first(*dir, a.getenv("COUNTERSIGN_INBOX_DIR"), defaultInboxDir) }
}

// terminalWithoutArgs opens this terminal's session for a subcommand that
// takes no argument besides --dir.
func (a *app) terminalWithoutArgs(name string, args []string) (*terminal, error) {
	fset, dirOf := a.inboxFlags(name)
	pos, err := parseArgs(fset, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 0 {
		return nil, errors.New("usage: countersign inbox " + name)
	}
	return openTerminal(dirOf())
}

// terminalDevice opens this terminal's session and device; with signer,
// the device signs with the wallet named at login (or, external, with one
// asked through the terminal).
func (a *app) terminalDevice(dir string, signer, external bool) (*terminal, *device.Device, error) {
	t, err := openTerminal(dir)
	if err != nil {
		return nil, nil, err
	}
	d, err := t.device(a, signer, external)
	return t, d, err
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, which it returns. Everything after "--" is
// positional.
func parseArgs(fset *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fset.Parse(args); err != nil {
			return nil, err
		}
		rest := fset.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// session is what session.json holds: one signed-in session of this
// terminal's device.
type session struct {
	Server     string `json:"server"`
	Account    string `json:"account"`
	Token      string `json:"token"`
	DeviceID   string `json:"device_id"`
	ValidUntil string `json:"valid_until"`
	Recipient  string `json:"recipient"`
	// Wallet is the absolute path of the wallet key file that signed the
	// login; "" means an external wallet signs.
	Wallet string `json:"wallet,omitempty"`
	// RunKeys are the service's run keys pinned at login: key id →
	// "ed25519:<base58>".
	RunKeys map[string]string `json:"run_keys"`
}

// parseSession reads session.json strictly and checks every member.
func parseSession(b []byte) (*session, error) {
	var s session
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, errors.New("it is not a session file")
	}
	if dec.More() {
		return nil, errors.New("it is not a session file (more than one JSON value)")
	}
	if err := checkServerURL(s.Server); err != nil {
		return nil, fmt.Errorf("its server: %v", err)
	}
	switch {
	case approval.ValidateAccountID(s.Account) != nil:
		return nil, errors.New("its account is not a NEAR account id")
	case !strings.HasPrefix(s.Token, inbox.TokenPrefix) || len(s.Token) > 256 || strings.ContainsFunc(s.Token, func(r rune) bool { return r <= ' ' || r > '~' }):
		return nil, errors.New("its token is not a session token")
	case s.DeviceID == "" || len(s.DeviceID) > approval.MaxNameLen:
		return nil, errors.New("it names no device")
	case s.Recipient == "" || len(s.Recipient) > 256:
		return nil, errors.New("it names no recipient")
	case s.Wallet != "" && !filepath.IsAbs(s.Wallet):
		return nil, errors.New("its wallet is not an absolute path")
	}
	if _, err := approval.ParseTime(s.ValidUntil); err != nil {
		return nil, errors.New("its valid_until is not a time")
	}
	if _, err := pinnedKeys(s.RunKeys); err != nil {
		return nil, fmt.Errorf("its run keys: %v", err)
	}
	return &s, nil
}

// pinnedKeys turns the pinned run keys into a verifier.
func pinnedKeys(m map[string]string) (origin.Keys, error) {
	if len(m) == 0 {
		return nil, errors.New("none are pinned")
	}
	keys := origin.Keys{}
	for id, k := range m {
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != id {
			return nil, errors.New("a key id is not a number")
		}
		pub, err := origin.ParseKey(k)
		if err != nil {
			return nil, fmt.Errorf("key %s is not ed25519:<base58>", id)
		}
		keys[uint32(n)] = pub
	}
	return keys, nil
}

// checkServerURL accepts an http(s) origin, optionally with a path prefix.
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("expected an http(s) URL such as http://127.0.0.1:8080")
	}
	return nil
}

// privateFile reads a file of the inbox directory, refusing one that its
// group or others may access.
func privateFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others (mode %04o): chmod 600 %s", path, info.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

// loadSession reads the directory's session, and refuses one that has
// ended by this machine's clock.
func loadSession(dir string) (*session, error) {
	path := filepath.Join(dir, sessionFile)
	b, err := privateFile(path, maxSessionBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("this terminal is not signed in (there is no %s): run `countersign inbox login`", path)
	} else if err != nil {
		return nil, err
	}
	s, err := parseSession(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; run `countersign inbox login` again", path, err)
	}
	if until, _ := approval.ParseTime(s.ValidUntil); !time.Now().Before(until) {
		return nil, fmt.Errorf("the session of %s ended at %s: run `countersign inbox login` again", s.Account, s.ValidUntil)
	}
	return s, nil
}

// saveSession writes session.json with mode 0600, replacing any old one in
// one rename.
func saveSession(dir string, s *session) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".session-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, sessionFile))
}

// terminal is a signed-in terminal: its session, device key and client.
type terminal struct {
	dir     string
	sess    *session
	client  *client.Client
	account string
}

// openTerminal loads the session of dir.
func openTerminal(dir string) (*terminal, error) {
	s, err := loadSession(dir)
	if err != nil {
		return nil, err
	}
	return &terminal{dir: dir, sess: s, account: s.Account, client: &client.Client{BaseURL: s.Server, Session: s.Token}}, nil
}

// device is the terminal's device. With a signer, it signs with the wallet
// named at login, or with an external wallet when there is none or external
// is set.
func (t *terminal) device(a *app, signer, external bool) (*device.Device, error) {
	key, err := device.LoadKey(filepath.Join(t.dir, deviceKeyFile))
	if err != nil {
		return nil, fmt.Errorf("cannot load this terminal's device key: %v", err)
	}
	d := &device.Device{Account: t.account, Key: key, Client: t.client, Recipient: t.sess.Recipient}
	if !signer {
		return d, nil
	}
	if external || t.sess.Wallet == "" {
		d.Signer = newExternalSigner(t.account, a.stdin, a.stderr)
		return d, nil
	}
	w, err := approval.LoadWallet(t.sess.Wallet)
	if err != nil {
		return nil, fmt.Errorf("cannot load the wallet %s named at login: %s (or sign with --external)", t.sess.Wallet, oneLine(err))
	}
	if w.AccountID != t.account {
		return nil, fmt.Errorf("the wallet %s is now for %s, not %s: log in again", t.sess.Wallet, w.AccountID, t.account)
	}
	d.Signer = device.WalletSigner{Wallet: w}
	return d, nil
}

// explain words an error of the service for the owner: a 401 says to log
// in again; anything else is the service's reason and sentence.
func (t *terminal) explain(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("cannot reach the service at %s: %v", t.sess.Server, ue.Err)
		}
		return err
	}
	if ce.Status == http.StatusUnauthorized {
		if ce.Reason == "session_replaced" {
			return fmt.Errorf("this terminal was signed out by a newer sign-in of %s (session_replaced): run `countersign inbox login` again", t.account)
		}
		return fmt.Errorf("the session of %s has ended (%s): run `countersign inbox login` again", t.account, first(ce.Reason, "unauthorized"))
	}
	if ce.RetryAfter > 0 {
		return fmt.Errorf("%v (try again in %s)", err, ce.RetryAfter)
	}
	return err
}

func inboxLogin(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("login")
	account := fset.String("account", "", "the NEAR account to sign in as (default with --wallet: the wallet's account)")
	walletFile := fset.String("wallet", "", "sign with this wallet key file (near-cli format)")
	external := fset.Bool("external", false, "sign with a wallet elsewhere: print the sentence, read its JSON answer on standard input")
	days := fset.Int("days", 30, "how long the session lasts, in days (1–30)")
	server := fset.String("server", "", "the service's URL (COUNTERSIGN_SERVER, default http://127.0.0.1:8080)")
	recipient := fset.String("recipient", "", "the deployment's NEP-413 recipient (COUNTERSIGN_RECIPIENT, default countersign)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("usage: countersign inbox login --account ID [--wallet FILE | --external] [--days N] [--server URL]")
	}
	base := strings.TrimSuffix(first(*server, a.getenv("COUNTERSIGN_SERVER"), "http://127.0.0.1:8080"), "/")
	rcpt := first(*recipient, a.getenv("COUNTERSIGN_RECIPIENT"), "countersign")
	switch {
	case checkServerURL(base) != nil:
		return fmt.Errorf("--server: %v", checkServerURL(base))
	case *days < 1 || *days > 30:
		return errors.New("--days: a session lasts 1 to 30 days")
	case (*walletFile == "") == !*external:
		return errors.New("say how to sign: --wallet FILE (a key file here) or --external (a wallet elsewhere), not both")
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the inbox directory: %v", err)
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
			return fmt.Errorf("cannot reach the service at %s: %v", base, ue.Err)
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
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(a.stdout, "signed in as %s\ndevice:      %s\nvalid until: %s\nrun keys:    %s pinned\n",
		*account, clean(s.DeviceID), clean(s.ValidUntil), strings.Join(ids, ", "))
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// loadOrMakeKey loads the device key, making it on first use.
func loadOrMakeKey(path string) (*ecdh.PrivateKey, error) {
	key, err := device.LoadKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if key, err = device.NewKey(); err != nil {
			return nil, err
		}
		if err := device.SaveKey(path, key); err != nil {
			return nil, fmt.Errorf("cannot save the device key: %v", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot load this terminal's device key: %v", err)
	}
	return key, nil
}

// maxRunKeyBytes bounds the run-key document.
const maxRunKeyBytes = 64 << 10

// fetchRunKeys fetches the service's run keys for pinning.
func fetchRunKeys(ctx context.Context, c *client.Client) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/.well-known/countersign-run-key", nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach the service at %s: %v", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRunKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the service's run keys: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the service at %s publishes no run keys (HTTP %d): is it a Countersign service?", c.BaseURL, resp.StatusCode)
	}
	keys, err := parseRunKeys(body)
	if err != nil {
		return nil, fmt.Errorf("the service's run keys: %v", err)
	}
	return keys, nil
}

// parseRunKeys reads GET /.well-known/countersign-run-key:
// {"algorithm":"ed25519","key_id":N,"public_key":"ed25519:…","keys":{"N":"ed25519:…",…}}.
// The current key must be one of the keys.
func parseRunKeys(b []byte) (map[string]string, error) {
	if len(b) > maxRunKeyBytes {
		return nil, errors.New("the document is too large")
	}
	var doc struct {
		Algorithm string            `json:"algorithm"`
		KeyID     *uint32           `json:"key_id"`
		PublicKey string            `json:"public_key"`
		Keys      map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errors.New("not the expected JSON")
	}
	if doc.Algorithm != "ed25519" {
		return nil, errors.New("the algorithm is not ed25519")
	}
	if doc.KeyID == nil {
		return nil, errors.New("no current key id")
	}
	if len(doc.Keys) > 1000 {
		return nil, errors.New("too many keys")
	}
	keys, err := pinnedKeys(doc.Keys)
	if err != nil {
		return nil, err
	}
	cur, ok := keys[*doc.KeyID]
	if !ok {
		return nil, errors.New("the current key is not among the keys")
	}
	pub, err := origin.ParseKey(doc.PublicKey)
	if err != nil || !ed25519.PublicKey(pub).Equal(cur) {
		return nil, errors.New("the current key is not the key of its id")
	}
	out := make(map[string]string, len(keys))
	for id, k := range keys {
		out[strconv.FormatUint(uint64(id), 10)] = origin.FormatKey(k)
	}
	return out, nil
}

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
