package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/argschema"
	"countersign/connectors"
	"countersign/connectors/github"
	"countersign/connectors/gmail"
	"countersign/connectors/mercury"
	"countersign/connectors/probe"
	"countersign/connectors/wasm"
	"countersign/enclave"
	"countersign/enclave/calls"
	"countersign/policy"
	"countersign/store"
	"countersign/store/sqlstore"
)

func init() {
	commands["agent"] = command{"agents: agent create|credit|revoke|list", runAgent}
	commands["project"] = command{"owners' projects: project put", runProject}
}

// catalogue is the connectors this binary runs, against the real APIs.
func catalogue() (connectors.Catalogue, error) {
	return catalogueWith(github.New(github.Options{}), gmail.New(gmail.Config{}), mercury.New(mercury.Config{}))
}

// catalogueWith is the probe and the connectors given, their schemas
// checked.
func catalogueWith(cs ...*connectors.Connector) (connectors.Catalogue, error) {
	cat, err := connectors.NewCatalogue(append([]*connectors.Connector{probe.New()}, cs...)...)
	if err != nil {
		return nil, err
	}
	// Every argument schema compiles with its examples before anything
	// serves.
	if _, err := argschema.NewSet(cat); err != nil {
		return nil, err
	}
	return cat, nil
}

// operatorStore parses settings and opens a current store for an operator
// command.
func (a *app) operatorStore(ctx context.Context, fset *flag.FlagSet, args []string) (*sqlstore.DB, error) {
	cfg, err := a.parseSettings(fset, args)
	if err != nil {
		return nil, err
	}
	db, err := openStore(ctx, cfg, existingStore)
	if err != nil {
		return nil, err
	}
	if _, err := checkSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func runAgent(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: countersign agent create|credit|revoke|list")
	}
	fset := a.flags("agent " + args[0])
	account := fset.String("account", "", "the agent's NEAR account id")
	micro := fset.Int64("micro-usd", 0, "amount to credit, in micro-USD (1 USD = 1000000)")
	now := time.Now().UTC()
	switch args[0] {
	case "create", "credit", "revoke", "list":
	default:
		return fmt.Errorf("unknown agent command %q: agent create|credit|revoke|list", args[0])
	}
	db, err := a.operatorStore(ctx, fset, args[1:])
	if err != nil {
		return err
	}
	defer db.Close()
	if args[0] != "list" {
		if err := approval.ValidateAccountID(*account); err != nil {
			return errors.New("--account: a NEAR account id is needed")
		}
	}
	switch args[0] {
	case "create":
		key, err := calls.NewAgentKey()
		if err != nil {
			return err
		}
		if err := operatorPort(db).Tx(ctx, func(tx operatorTx) error { return tx.AddAgentKey(ctx, *account, calls.HashAgentKey(key), now) }); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "agent %s: key (shown once, keep it secret)\n%s\n", *account, key)
	case "credit":
		if *micro <= 0 {
			return errors.New("--micro-usd: a positive whole number of micro-USD is needed")
		}
		var balance int64
		err := operatorPort(db).Tx(ctx, func(tx operatorTx) (err error) {
			balance, err = tx.Credit(ctx, *account, *micro, "operator credit", now)
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no agent %s: create it with `countersign agent create --account %s`", *account, *account)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "agent %s: balance %d µUSD\n", *account, balance)
	case "revoke":
		var n int
		if err := operatorPort(db).Tx(ctx, func(tx operatorTx) (err error) {
			n, err = tx.RevokeAgentKeys(ctx, *account, now)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "agent %s: %d key(s) revoked\n", *account, n)
	case "list":
		var agents []store.Agent
		if err := operatorPort(db).Tx(ctx, func(tx operatorTx) (err error) {
			agents, err = tx.Agents(ctx)
			return err
		}); err != nil {
			return err
		}
		tw := a.table("ACCOUNT\tBALANCE µUSD\tKEYS\tCREATED")
		for _, ag := range agents {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", ag.Account, ag.Balance, ag.Keys, ag.CreatedAt.Format(countersign.TimeFormat))
		}
		return tw.Flush()
	}
	return nil
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runProject(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 || args[0] != "put" {
		return errors.New("usage: countersign project put --owner ACCOUNT --name NAME --connector C --policy FILE --agent ID…")
	}
	fset := a.flags("project put")
	owner := fset.String("owner", "", "the owner's NEAR account id")
	name := fset.String("name", "", "the project's name (1–64 of a-z 0-9 . _ -)")
	conn := fset.String("connector", "", "the connector it installs")
	policyFile := fset.String("policy", "", "file holding the policy (JSON)")
	credsFile := fset.String("credentials", "", "file holding the credentials (sealed at once; needs the master key)")
	var agents stringList
	fset.Var(&agents, "agent", "an agent the project is granted to (repeat for several)")
	cfg, err := a.parseSettings(fset, args[1:])
	if err != nil {
		return err
	}
	cat, err := catalogue()
	if err != nil {
		return err
	}
	if cfg.ConnectorsDir != "" {
		declared, err := wasm.Declared(cfg.ConnectorsDir)
		if err != nil {
			return fmt.Errorf("CONNECTORS_DIR: %s", oneLine(err))
		}
		if cat, err = withConnectors(cat, declared...); err != nil {
			return err
		}
	}
	c, ok := cat[*conn]
	switch {
	case approval.ValidateAccountID(*owner) != nil:
		return errors.New("--owner: a NEAR account id is needed")
	case !countersign.ValidProjectName(*name):
		return errors.New("--name: 1–64 of a-z 0-9 . _ -, beginning with a letter or digit")
	case !ok:
		return fmt.Errorf("--connector: one of %s", strings.Join(cat.Names(), ", "))
	case *policyFile == "":
		return errors.New("--policy: a policy file is needed (a policy of {} asks about nothing)")
	}
	pol, err := os.ReadFile(*policyFile)
	if err != nil {
		return fmt.Errorf("--policy: %v", errors.Unwrap(err))
	}
	if len(pol) > policy.MaxBytes {
		return fmt.Errorf("--policy: the policy is larger than %d bytes", policy.MaxBytes)
	}
	for _, ag := range agents {
		if approval.ValidateAccountID(ag) != nil {
			return fmt.Errorf("--agent %q: a NEAR account id is needed", ag)
		}
	}
	db, err := openStore(ctx, cfg, existingStore)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := checkSchema(ctx, db); err != nil {
		return err
	}
	p := store.Project{Owner: *owner, Name: *name, UUID: countersign.NewProjectUUID(), Connector: *conn, Policy: pol, Agents: agents}
	now := time.Now().UTC()
	p.CreatedAt, p.UpdatedAt = now, now
	err = operatorPort(db).Tx(ctx, func(tx operatorTx) error {
		if old, err := tx.Project(ctx, *owner, *name); err == nil {
			p.UUID = old.UUID
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		for _, ag := range agents {
			if _, err := tx.Agent(ctx, ag); errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("--agent %s: no such agent (countersign agent create --account %s)", ag, ag)
			} else if err != nil {
				return err
			}
		}
		if *credsFile != "" {
			creds, err := os.ReadFile(*credsFile)
			if err != nil {
				return fmt.Errorf("--credentials: %v", errors.Unwrap(err))
			}
			keys, err := keyring(cfg)
			if err != nil {
				return err
			}
			e := enclave.New(enclave.Config{Keyring: keys})
			if p.CredsKeyID, p.Creds, err = e.SealCredentials(p.UUID, creds); err != nil {
				return err
			}
		}
		return tx.PutProject(ctx, p)
	})
	if err != nil {
		return err
	}
	parsed := c.ParsePolicy(pol)
	fmt.Fprintf(a.stdout, "project %s/%s (%s, uuid %s): policy %s", *owner, *name, *conn, p.UUID, parsed.Mode())
	if parsed.Mode() != policy.OK {
		fmt.Fprintf(a.stdout, ": %s", parsed.Sentence())
	}
	fmt.Fprintf(a.stdout, "; granted to %s\n", strings.Join(agents, ", "))
	return nil
}

// operatorTx is what the operator's commands, and a sandbox's first start,
// read and change in one of the store's transactions: agents, their money
// and projects.
type operatorTx interface {
	store.Agents
	store.Balances
	store.Projects
}

// operatorPort gives the operator's commands db's transactions as
// operatorTx.
func operatorPort(db store.Store) store.Port[operatorTx] {
	return store.Narrow(db, func(tx store.Tx) operatorTx { return tx })
}
