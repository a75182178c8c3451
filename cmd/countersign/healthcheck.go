package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// runHealthcheck asks the service this process's settings name (its
// COUNTERSIGN_LISTEN address, on loopback when it listens on every address)
// for /readyz: exit 0 when it answers 200, 1 otherwise. The container image
// has no shell and no curl, so its health check is this command.
func runHealthcheck(ctx context.Context, a *app, args []string) error {
	fset := a.flags("healthcheck")
	timeout := fset.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the service at %s; is it running? (%s)", url, oneLine(err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: the service is not ready", url, resp.StatusCode)
	}
	fmt.Fprintf(a.stdout, "%s answered 200\n", url)
	return nil
}
