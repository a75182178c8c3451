package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"time"

	"countersign/connectors/github/githubtest"
)

// devGitHubToken is the token serve --dev's sandbox GitHub accepts: it
// listens on loopback only, and holds only sample data.
const devGitHubToken = "sandbox-token"

// sandboxGitHub is a fake GitHub served on a listener.
type sandboxGitHub struct {
	*githubtest.Server
	srv *http.Server
}

func (s *sandboxGitHub) Close() { _ = s.srv.Close() }

// startSandboxGitHub serves an empty fake GitHub on addr accepting token
// (a random one when empty) and returns it with the token.
func startSandboxGitHub(addr, token string) (*sandboxGitHub, string, error) {
	if token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, "", err
		}
		token = "sandbox_" + hex.EncodeToString(b)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("cannot listen on %s: %s", addr, oneLine(err))
	}
	fake := githubtest.New(token, "sandbox")
	fake.URL = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: fake, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &sandboxGitHub{Server: fake, srv: srv}, token, nil
}

// runSandboxGitHub serves a seeded fake GitHub: countersign sandbox github
// --listen ADDR [--token T].
func runSandboxGitHub(ctx context.Context, a *app, args []string) error {
	fs := a.flags("sandbox github")
	listen := fs.String("listen", "127.0.0.1:8081", "address to serve the fake GitHub on")
	token := fs.String("token", "", "the token it accepts (default: a random one, printed)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	fake, tok, err := startSandboxGitHub(*listen, *token)
	if err != nil {
		return err
	}
	defer fake.Close()
	repo := fake.Seed()
	fmt.Fprintf(a.stdout, "a sandbox GitHub on %s, seeded with %s (README, branch add-greeting, pull request 1, issue 2)\n", fake.URL, repo)
	fmt.Fprintf(a.stdout, "a github project's credentials: {\"token\": %q, \"base_url\": %q}\n", tok, fake.URL)
	fmt.Fprintf(a.stdout, "look at it: curl -H 'Authorization: Bearer %s' %s/repos/%s\n", tok, fake.URL, repo)
	<-ctx.Done()
	return nil
}
