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
//     run). In addition the receipt's input_sha256 must be the keyed hash
//     of the request the task shows (SPEC §11: HMAC-SHA256 under
//     HMAC-SHA256(content key, "receipt:v1"), recomputed over the raw request
//     decrypted; a bare SHA-256 is refused), so that `show --request` prints
//     what the run was given. approve refuses a task whose receipt does not verify, before
//     anything is signed.
//   - A new login signs out the directory's previous session with the same
//     service first (after the new statement is signed), so that logging in
//     again does not use up one of the account's five device places.
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
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
)

func init() {
	commands["inbox"] = command{"the owner's terminal inbox: inbox login|list|show|approve|allow|reject|ack|activity|watch|devices|mute|projects …", runInbox}
}

const inboxUsage = `usage: countersign inbox <command> [flags]

  login --account ID [--wallet FILE | --external] [--days N] [--server URL]
  logout
  list [--closed] [--limit N] [--before ID]
  show ID [--raw | --request]
  approve ID [--text T | --file F] [--note N] [--hash H] [--external]
  approve ID ID … [--external]          (several confirm tasks, one signature a project)
  allow ID [--approve] [--external]     (Always allow this: a rule allowing writes like it)
  reject ID [--reason R]
  ack ID
  cancel ID
  unlock
  activity [--project NAME] [--agent ACCOUNT] [--limit N] [--before ID]
  watch
  devices
  devices withdraw ID [--external]
  mute agent|project SUBJECT [--delete-waiting]
  unmute agent|project SUBJECT
  mutes
  projects list
  projects put NAME --connector C --policy FILE [--credentials FILE] --agent A… [--external]
  projects approvers NAME [ACCOUNT…] [--threshold K] [--external]
                                        (who approves besides you, and how many must; none: you alone)
  projects rm NAME [--external]

Every command takes --dir DIR (COUNTERSIGN_INBOX_DIR, default ./countersign-inbox).`

// inboxCommands are the subcommands of `countersign inbox`; other files add
// theirs in init (webhook).
var inboxCommands = map[string]func(ctx context.Context, a *app, args []string) error{
	"login":    inboxLogin,
	"logout":   inboxLogout,
	"list":     inboxList,
	"show":     inboxShow,
	"approve":  inboxApprove,
	"allow":    inboxAllow,
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
		return cannotReach(t.sess.Server, err)
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
