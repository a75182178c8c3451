package main

import (
	"bytes"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/device"
	"countersign/inbox"
)

// Files of an inbox directory.
const (
	defaultInboxDir = "countersign-inbox"
	deviceKeyFile   = "device.key"
	sessionFile     = "session.json"
	maxSessionBytes = 64 << 10
)

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
	case !countersign.ValidDeviceID(s.DeviceID):
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

// mustJSON is v as JSON, for values that always encode (a session).
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
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
