package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"countersign/connectors"
	"countersign/connectors/github"
	"countersign/connectors/gmail"
	"countersign/connectors/gmail/gmailtest"
	"countersign/connectors/mercury"
	"countersign/connectors/mercury/mercurytest"
	"countersign/egress"
)

// fake is a local fake of a connector's API, as serve --dev and
// countersign sandbox run it.
type fake interface {
	Serve(net.Listener) error
}

// sandboxFakes are the fakes `countersign sandbox NAME` serves, with what
// to tell the person pointing a project at one (given its base URL).
var sandboxFakes = map[string]struct {
	make func() fake
	tell func(base string) string
}{
	"gmail":   {func() fake { return gmailtest.New() }, gmailCredentials},
	"mercury": {func() fake { return mercurytest.New() }, mercuryCredentials},
}

func init() {
	commands["sandbox"] = command{"serve a connector's local fake on its own: sandbox github|gmail|mercury --listen ADDR", runSandbox}
}

func gmailCredentials(base string) string {
	b, _ := json.Marshal(map[string]string{"client_id": gmailtest.ClientID, "client_secret": gmailtest.ClientSecret,
		"refresh_token": gmailtest.RefreshToken, "base_url": base, "token_url": base + "/token"})
	return string(b)
}

func mercuryCredentials(base string) string {
	b, _ := json.Marshal(map[string]string{"token": mercurytest.Token, "base_url": base + "/api/v1"})
	return string(b)
}

func runSandbox(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 && args[0] == "github" {
		return runSandboxGitHub(ctx, a, args)
	}
	names := []string{"github", "gmail", "mercury"}
	if len(args) == 0 || sandboxFakes[args[0]].make == nil {
		return fmt.Errorf("usage: countersign sandbox %s --listen ADDR", strings.Join(names, "|"))
	}
	name := args[0]
	fset := a.flags("sandbox " + name)
	listen := fset.String("listen", "127.0.0.1:0", "the address to serve the fake on")
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %s", *listen, oneLine(err))
	}
	sb := sandboxFakes[name]
	f := sb.make()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(a.stderr, "sandbox %s listening on %s\n", name, base)
	fmt.Fprintf(a.stderr, "a project's credentials for it (sample values of this fake, not secrets): %s\n", sb.tell(base))
	srv := &http.Server{Handler: f.(http.Handler), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

// sandboxAddrs are the addresses serve --dev's fakes listen on (a port of
// 0: any free one).
type sandboxAddrs struct{ github, gmail, mercury string }

// anyPorts puts every fake on a free loopback port.
var anyPorts = sandboxAddrs{github: "127.0.0.1:0", gmail: "127.0.0.1:0", mercury: "127.0.0.1:0"}

// devCatalogue starts serve --dev's fakes at addrs and returns the
// catalogue whose Gmail and Mercury talk to them (a project without
// credentials uses the fakes' sample ones), what to print, and a stop.
func devCatalogue(addrs sandboxAddrs) (connectors.Catalogue, []string, func(), error) {
	var servers []*http.Server
	stop := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	start := func(h http.Handler, addr string) (string, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", fmt.Errorf("cannot listen on %s for a sandbox fake: %s", addr, oneLine(err))
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
		return "http://" + ln.Addr().String(), nil
	}
	gbase, err := start(gmailtest.New(), addrs.gmail)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	mbase, err := start(mercurytest.New(), addrs.mercury)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	// The sandbox's GitHub is a seeded fake on loopback, its token fixed so
	// that a project keeps working across restarts.
	gh, ghToken, err := startSandboxGitHub(addrs.github, devGitHubToken)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	stopRest := stop
	stop = func() { gh.Close(); stopRest() }
	repo := gh.Seed()
	// The fakes listen on loopback http: the sandbox's connectors, and
	// their projects' base URLs, may reach loopback and private hosts over
	// http. Link-local addresses (cloud metadata) stay refused.
	dev := egress.Options{AllowPrivate: true}
	cat, err := catalogueWith(
		github.New(github.Options{BaseURL: gh.URL, Egress: dev}),
		gmail.New(gmail.Config{BaseURL: gbase, TokenURL: gbase + "/token", Egress: dev, SandboxCredentials: []byte(gmailCredentials(gbase))}),
		mercury.New(mercury.Config{BaseURL: mbase + "/api/v1", Egress: dev, SandboxCredentials: []byte(mercuryCredentials(mbase))}))
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	notes := []string{
		fmt.Sprintf("github: a sandbox GitHub at %s with %s; give a github project the credentials {\"token\": %q}", gh.URL, repo, ghToken),
		"sandbox Gmail at " + gbase + " (projects without credentials use it, or give a gmail project the credentials " + gmailCredentials(gbase) +
			"; sent messages: GET " + gbase + "/gmail/v1/users/me/messages?q=in:sent)",
		"sandbox Mercury at " + mbase + "/api/v1 (projects without credentials use it, or give a mercury project the credentials " + mercuryCredentials(mbase) + ")",
	}
	return cat, notes, stop, nil
}
