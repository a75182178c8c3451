package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
)

// signInsPerAddress is how many owners sign in from one loopback source
// address: the service allows 10 sign-ins a minute from an address.
const signInsPerAddress = 5

// addresses hands out HTTP clients whose connections come from loopback
// source addresses 127.1.x.y, a few owners to each.
type addresses struct {
	mu         sync.Mutex
	owners     int
	transports []*http.Transport
}

func newAddresses() *addresses { return &addresses{} }

// next is the client of the next owner.
func (a *addresses) next() *http.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := a.owners / signInsPerAddress
	a.owners++
	if i == len(a.transports) {
		ip := net.IPv4(127, 1, byte(i/250), byte(i%250+1))
		a.transports = append(a.transports, transport(&net.TCPAddr{IP: ip}))
	}
	return &http.Client{Timeout: 90 * time.Second, Transport: a.transports[i]}
}

func (a *addresses) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.transports {
		t.CloseIdleConnections()
	}
}

// transport dials from local (nil: any) and keeps enough idle connections
// for the bench's concurrency.
func transport(local *net.TCPAddr) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if local != nil {
		d.LocalAddr = local
	}
	return &http.Transport{DialContext: d.DialContext, MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
}

// agentHTTP is the agents' client, from 127.0.0.1.
var agentHTTP = &http.Client{Timeout: 90 * time.Second, Transport: transport(nil)}

// owner is an owner with one signed-in device.
type owner struct {
	*device.Device
}

// newOwner makes a NEAR-implicit account with a wallet held here and signs
// a device of it in (NEAR RPC is off, so the service takes the implicit
// account's own key).
func (b *bench) newOwner(ctx context.Context) (*owner, error) {
	w, err := approval.NewWallet()
	if err != nil {
		return nil, err
	}
	key, err := device.NewKey()
	if err != nil {
		return nil, err
	}
	d := &device.Device{Account: w.AccountID, Key: key, Signer: device.WalletSigner{Wallet: w}, Recipient: b.recipient,
		Client: &client.Client{BaseURL: b.svc.base, HTTP: b.addrs.next()}}
	if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
		return nil, fmt.Errorf("an owner's sign-in: %w", err)
	}
	return &owner{d}, nil
}

// newOwners signs n owners in, a few at a time.
func (b *bench) newOwners(ctx context.Context, n int) ([]*owner, error) {
	owners := make([]*owner, n)
	err := parallel(ctx, n, 8, func(ctx context.Context, i int) (err error) {
		owners[i], err = b.newOwner(ctx)
		return err
	})
	return owners, err
}

// projectName is the name of every owner's probe project.
const projectName = "probe"

// putProject sets the owner's probe project, granted to agents, signed by
// the owner's wallet (PUT /inbox/projects/probe).
func (o *owner) putProject(ctx context.Context, agents ...string) error {
	text, err := json.Marshal(map[string]any{"connector": "probe", "policy": map[string]any{}, "agents": agents})
	if err != nil {
		return err
	}
	conf, err := o.Confirm(approval.ActionSetProject(projectName, string(text)))
	if err != nil {
		return err
	}
	_, err = o.Client.PutProject(ctx, projectName, string(text), conf)
	return err
}

var agentKey = regexp.MustCompile(`(?m)^ak_\S+$`)

// agentCredit is what each agent is credited, in micro-USD: far more than
// any run spends.
const agentCredit = 1_000_000_000_000

// newAgent makes an agent with the operator commands (agent create, agent
// credit) and returns its client.
func (b *bench) newAgent(ctx context.Context, account string) (*client.Client, error) {
	out, err := b.svc.run(ctx, "agent", "create", "--account", account)
	if err != nil {
		return nil, err
	}
	key := agentKey.FindString(out)
	if key == "" {
		return nil, fmt.Errorf("agent create printed no key: %s", out)
	}
	if _, err := b.svc.run(ctx, "agent", "credit", "--account", account, "--micro-usd", fmt.Sprint(agentCredit)); err != nil {
		return nil, err
	}
	return &client.Client{BaseURL: b.svc.base, AgentKey: key, HTTP: agentHTTP}, nil
}

// grant puts the owner's probe project with the operator command project
// put, granted to the agents.
func (b *bench) grant(ctx context.Context, ownerAccount string, agents ...string) error {
	policy := filepath.Join(b.dir, "policy.json")
	if _, err := os.Stat(policy); err != nil {
		if err := os.WriteFile(policy, []byte("{}"), 0o600); err != nil {
			return err
		}
	}
	args := []string{"project", "put", "--owner", ownerAccount, "--name", projectName, "--connector", "probe", "--policy", policy}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	_, err := b.svc.run(ctx, args...)
	return err
}

// pair is an agent and the owner whose project it is granted.
type pair struct {
	agentName string
	agent     *client.Client
	owner     *owner
}

// pairs makes n owners, each with an agent of its own granted its probe
// project by the operator commands.
func (b *bench) pairs(ctx context.Context, prefix string, n int) ([]pair, error) {
	owners, err := b.newOwners(ctx, n)
	if err != nil {
		return nil, err
	}
	ps := make([]pair, n)
	err = parallel(ctx, n, 4, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s-%02d.near", prefix, i)
		c, err := b.newAgent(ctx, name)
		if err != nil {
			return err
		}
		ps[i] = pair{agentName: name, agent: c, owner: owners[i]}
		return b.grant(ctx, owners[i].Account, name)
	})
	return ps, err
}

// start opens a guessing game (guess_start) for the pair's owner and
// returns its first turn's task id.
func (p pair) start(ctx context.Context) (string, error) {
	return startGame(ctx, p.agent, p.owner.Account)
}

func startGame(ctx context.Context, agent *client.Client, ownerAccount string) (string, error) {
	raw, err := agent.Call(ctx, ownerAccount, projectName, "guess_start", map[string]any{"max": 1000}, nil)
	if err != nil {
		return "", fmt.Errorf("guess_start: %w", err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "awaiting_owner" || a.TaskID == "" {
		return "", fmt.Errorf("guess_start answered %s", raw)
	}
	return a.TaskID, nil
}

// parallel runs fn for 0…n-1, at most width at once, and returns the first
// error (the others stop at their next start).
func parallel(ctx context.Context, n, width int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, width) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}
