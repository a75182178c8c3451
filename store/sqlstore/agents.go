package sqlstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"countersign/store"
)

// AddAgentKey makes the agent on its first key and records the key's hash.
// A hash that is recorded already, for any account, is ErrConflict.
func (t *tx) AddAgentKey(ctx context.Context, account string, keyHash []byte, at time.Time) error {
	if account == "" {
		return errors.New("store: an agent key needs an account")
	}
	if len(keyHash) != sha256.Size {
		// Also keeps a key itself, passed by mistake, out of the table.
		return fmt.Errorf("store: an agent key is stored as its SHA-256 (%d bytes), not %d bytes", sha256.Size, len(keyHash))
	}
	if _, err := t.q.exec(ctx, `INSERT INTO agents (account, balance, created_at) VALUES (?, 0, ?)
		ON CONFLICT (account) DO NOTHING`, account, at.Unix()); err != nil {
		return fmt.Errorf("store: add agent %s: %w", account, err)
	}
	if _, err := t.q.exec(ctx, "INSERT INTO agent_keys (key_hash, account, created_at) VALUES (?, ?, ?)",
		keyHash, account, at.Unix()); err != nil {
		return fmt.Errorf("store: add a key of agent %s: %w", account, err)
	}
	return nil
}

// agentColumns reads an agent "a" with the number of its live keys.
const agentColumns = `a.account, a.balance, a.created_at,
	(SELECT COUNT(*) FROM agent_keys k WHERE k.account = a.account AND k.revoked_at IS NULL)`

func scanAgent(r row) (store.Agent, error) {
	var a store.Agent
	var created int64
	if err := r.Scan(&a.Account, &a.Balance, &created, &a.Keys); err != nil {
		return store.Agent{}, err
	}
	a.CreatedAt = unix(created)
	return a, nil
}

const agentByKey = "SELECT " + agentColumns + ` FROM agent_keys kh
	JOIN agents a ON a.account = kh.account
	WHERE kh.key_hash = ? AND kh.revoked_at IS NULL`

func (t *tx) AgentByKey(ctx context.Context, keyHash []byte) (store.Agent, error) {
	return scanAgent(t.q.queryRow(ctx, agentByKey, keyHash))
}

func (t *tx) AgentCalling(ctx context.Context, keyHash []byte, owner, project string) (store.Agent, store.Project, bool, error) {
	r, err := t.send(ctx, stmt{sql: agentByKey, args: []any{keyHash}}, stmt{sql: projectAndAgents + projectByName, args: []any{owner, project}})
	if err != nil {
		return store.Agent{}, store.Project{}, false, err
	}
	defer r.close()
	a, err := scanAgent(r.row())
	if err != nil {
		return store.Agent{}, store.Project{}, false, err
	}
	projects, err := r.rows()
	if err != nil {
		return store.Agent{}, store.Project{}, false, err
	}
	p, err := scanProjectAndAgents(projects)
	if errors.Is(err, store.ErrNotFound) {
		return a, store.Project{}, false, r.close()
	} else if err != nil {
		return store.Agent{}, store.Project{}, false, err
	}
	return a, p, true, r.close()
}

const agentByAccount = "SELECT " + agentColumns + " FROM agents a WHERE a.account = ?"

func (t *tx) Agent(ctx context.Context, account string) (store.Agent, error) {
	return scanAgent(t.q.queryRow(ctx, agentByAccount, account))
}

func (t *tx) Agents(ctx context.Context) ([]store.Agent, error) {
	r, err := t.q.query(ctx, "SELECT "+agentColumns+" FROM agents a")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Agent
	for r.Next() {
		a, err := scanAgent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	// Sorted here, in byte order, so that both databases agree whatever
	// the PostgreSQL collation.
	slices.SortFunc(out, func(a, b store.Agent) int { return strings.Compare(a.Account, b.Account) })
	return out, nil
}

func (t *tx) RevokeAgentKeys(ctx context.Context, account string, at time.Time) (int, error) {
	n, err := t.q.exec(ctx, "UPDATE agent_keys SET revoked_at = ? WHERE account = ? AND revoked_at IS NULL",
		at.Unix(), account)
	return int(n), err
}

// Credit adds amount to the balance in one conditional UPDATE that also
// refuses a sum past the largest balance a BIGINT holds (SQLite would turn
// it into a floating-point number, PostgreSQL would fail the statement).
func (t *tx) Credit(ctx context.Context, account string, amount int64, note string, at time.Time) (int64, error) {
	if amount < 0 {
		return 0, fmt.Errorf("store: credit of a negative amount (%d µUSD)", amount)
	}
	var balance int64
	err := t.q.queryRow(ctx, `UPDATE agents SET balance = balance + ?
		WHERE account = ? AND balance <= ? RETURNING balance`,
		amount, account, math.MaxInt64-amount).Scan(&balance)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := t.Agent(ctx, account); err != nil {
			return 0, fmt.Errorf("store: credit agent %s: %w", account, err)
		}
		return 0, fmt.Errorf("store: credit agent %s: the balance would pass %d µUSD", account, int64(math.MaxInt64))
	}
	if err != nil {
		return 0, fmt.Errorf("store: credit agent %s: %w", account, err)
	}
	if amount > 0 {
		if err := t.ledger(ctx, account, amount, "", note, at); err != nil {
			return 0, err
		}
	}
	return balance, nil
}

// takeBalance takes an amount from an agent's balance if it holds that much.
const takeBalance = "UPDATE agents SET balance = balance - ? WHERE account = ? AND balance >= ?"

// Charge takes amount in one conditional UPDATE, so concurrent charges
// never take more than the balance holds. The UPDATE is a checked write
// kept for the transaction's next round trip, with its ledger entry: a
// charge costs no wait of its own.
func (t *tx) Charge(_ context.Context, account string, amount int64, run string, at time.Time) error {
	if amount < 0 {
		return fmt.Errorf("store: charge of a negative amount (%d µUSD)", amount)
	}
	t.later(checked(fmt.Errorf("store: charge agent %s: %w", account, store.ErrUncovered), takeBalance, amount, account, amount))
	if amount > 0 {
		t.later(stmt{sql: addLedger, args: []any{account, -amount, run, "", at.Unix()}})
	}
	return nil
}

// Uncharge removes the run's charge from the ledger and returns its amount
// to the balance. Two calls for one run restore it once: the second finds
// no entry to remove.
func (t *tx) Uncharge(ctx context.Context, account, run string) (int64, error) {
	if run == "" {
		return 0, fmt.Errorf("store: uncharge of agent %s: no run", account)
	}
	amount, err := t.db.e.refund(ctx, t, account, run)
	if err != nil {
		return 0, fmt.Errorf("store: uncharge run %s of agent %s: %w", run, account, err)
	}
	return amount, nil
}

const addLedger = "INSERT INTO ledger (account, amount, run, note, at) VALUES (?, ?, ?, ?, ?)"

func (t *tx) ledger(ctx context.Context, account string, amount int64, run, note string, at time.Time) error {
	_, err := t.q.exec(ctx, addLedger, account, amount, run, note, at.Unix())
	if err != nil {
		return fmt.Errorf("store: ledger entry of agent %s: %w", account, err)
	}
	return nil
}

func (t *tx) Ledger(ctx context.Context, account string) ([]store.LedgerEntry, error) {
	r, err := t.q.query(ctx, "SELECT amount, run, note, at FROM ledger WHERE account = ? ORDER BY id", account)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.LedgerEntry
	for r.Next() {
		var e store.LedgerEntry
		var at int64
		if err := r.Scan(&e.Amount, &e.Run, &e.Note, &at); err != nil {
			return nil, err
		}
		e.At = unix(at)
		out = append(out, e)
	}
	return out, r.Err()
}

// admissionHolds finds the row of an admission that still holds: the key
// live and the agent's, the project of that uuid and version the owner's
// by that name, and granted to the agent.
const admissionHolds = `SELECT 1 FROM agent_keys kh
	JOIN projects p ON p.project_uuid = ? AND p.version = ? AND p.owner = ? AND p.name = ?
	JOIN project_agents g ON g.project_uuid = p.project_uuid AND g.agent = kh.account
	WHERE kh.key_hash = ? AND kh.revoked_at IS NULL AND kh.account = ?`

func (t *tx) AdmissionHolds(_ context.Context, d store.Admission) error {
	if len(d.KeyHash) == 0 || d.Agent == "" || d.UUID == "" {
		return fmt.Errorf("store: an admission needs a key, an agent and a project: %w", store.ErrAdmissionChanged)
	}
	t.later(held(fmt.Errorf("store: agent %s calling %s/%s: %w", d.Agent, d.Owner, d.Project, store.ErrAdmissionChanged),
		admissionHolds, d.UUID, d.Version, d.Owner, d.Project, d.KeyHash, d.Agent))
	return nil
}
