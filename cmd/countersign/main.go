// Command countersign is the owner-confirmation inbox: the service, its
// operator commands, the terminal inbox and an agent's client, in one binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	"countersign/store/sqlstore"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// app is what a command sees of the world, so tests can run commands in
// process.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// listening, when set, is told serve's address and store once it
	// listens, so that a test running serve in process can await it and
	// what the service does, instead of sleeping.
	listening func(addr string, db *sqlstore.DB)
}

type command struct {
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

// commands are the subcommands; files add theirs in init.
var commands = map[string]command{}

func init() {
	commands["serve"] = command{"run the service (--dev: a sandbox on this machine, nothing to install)", runServe}
	commands["migrate"] = command{"bring the database schema to this binary's version", runMigrate}
	commands["doctor"] = command{"check the settings, database, schema, master key and NEAR RPC", runDoctor}
	commands["version"] = command{"print the version", runVersion}
	commands["keys"] = command{"master keys: keys new | keys rotate", runKeys}
	commands["bench"] = command{"measure the whole service under load, beside PostgreSQL's own commit floor (a throwaway database on a loopback server)", runBench}
	commands["healthcheck"] = command{"exit 0 when the service on this machine answers /readyz (for container health checks)", runHealthcheck}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := a.main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// exitError carries a process exit code other than 1.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func (a *app) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		a.usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-v" {
		args = []string{"version"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(a.stderr, "countersign: unknown command %q (countersign help lists them)\n", args[0])
		return 2
	}
	err := cmd.run(ctx, a, args[1:])
	var exit exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.code
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(a.stderr, "countersign %s: %v\n", args[0], unreachable(err))
	return 1
}

func (a *app) usage() {
	fmt.Fprintln(a.stderr, "usage: countersign <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(a.stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(a.stderr, "\nRun countersign <command> -h for its flags.")
}

// flags returns a flag set that prints to the app's stderr.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("countersign "+name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	return fs
}

func runVersion(_ context.Context, a *app, args []string) error {
	fs := a.flags("version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "countersign %s\n", version)
	return nil
}

// oneLine keeps an error to one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// table starts a table on stdout under its header, columns separated by
// tabs; the caller writes the rows and flushes it.
func (a *app) table(header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

// unreachable says a failed connection to the service in words, naming the
// address it was made to; any other error is left as it is.
func unreachable(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return err
	}
	return cannotReach(u.Scheme+"://"+u.Host, err)
}

// cannotReach says a failed connection to the service at base: whether it
// runs, for a refused dial, else what went wrong on the way. It returns err
// itself when err is no connection failure.
func cannotReach(base string, err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("cannot reach the service at %s; is it running? (%v)", base, op.Err)
	}
	return fmt.Errorf("cannot reach the service at %s: %v", base, ue.Err)
}
