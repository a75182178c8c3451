package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/store"
)

func agentTests() []storeTest {
	return []storeTest{
		{"AgentKeys", testAgentKeys},
		{"AgentKeyRefusals", testAgentKeyRefusals},
		{"AgentCalling", testAgentCalling},
		{"AdmissionHolds", testAdmissionHolds},
		{"CreditAndCharge", testCreditAndCharge},
		{"MoneyRefusals", testMoneyRefusals},
		{"ChargeNeverOverdraws", testChargeNeverOverdraws},
		{"RolledBackChargeTakesNothing", testRolledBackCharge},
		{"UnchargeOnce", testUncharge},
	}
}

// keyHash is the SHA-256 of a made-up agent key.
func keyHash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// inTx runs fn in a transaction and fails the test on an error.
func inTx(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Tx(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func addKey(t *testing.T, s store.Store, account, key string, at time.Time) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error { return tx.AddAgentKey(ctx, account, keyHash(key), at) })
}

func testAgentKeys(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	addKey(t, s, "bot.near", "ak_two", t0.Add(time.Hour))
	addKey(t, s, "abc.near", "ak_three", t0.Add(2*time.Hour))

	err := s.Tx(ctx, func(tx store.Tx) error { return tx.AddAgentKey(ctx, "abc.near", keyHash("ak_one"), t0) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a key hash recorded twice, for another account: %v, want ErrConflict", err)
	}

	inTx(t, s, func(tx store.Tx) error {
		bot := store.Agent{Account: "bot.near", Balance: 0, Keys: 2, CreatedAt: t0}
		for _, key := range []string{"ak_one", "ak_two"} {
			got, err := tx.AgentByKey(ctx, keyHash(key))
			if err != nil || got != bot {
				t.Errorf("AgentByKey(%s) = %+v, %v; want %+v", key, got, err, bot)
			}
		}
		if _, err := tx.AgentByKey(ctx, keyHash("ak_unknown")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AgentByKey of an unknown key: %v, want ErrNotFound", err)
		}
		if _, err := tx.Agent(ctx, "nobody.near"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Agent of an unknown account: %v, want ErrNotFound", err)
		}
		all, err := tx.Agents(ctx)
		if err != nil {
			return err
		}
		want := []store.Agent{{Account: "abc.near", Keys: 1, CreatedAt: t0.Add(2 * time.Hour)}, bot}
		if fmt.Sprint(all) != fmt.Sprint(want) {
			t.Errorf("Agents = %+v, want %+v", all, want)
		}
		return nil
	})

	// Revoking ends every key of the account, and only of that account; the
	// agent and its money stay.
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.Credit(ctx, "bot.near", 500, "top-up", t0)
		return err
	})
	var revoked int
	inTx(t, s, func(tx store.Tx) (err error) {
		revoked, err = tx.RevokeAgentKeys(ctx, "bot.near", t0.Add(3*time.Hour))
		return err
	})
	if revoked != 2 {
		t.Fatalf("RevokeAgentKeys revoked %d keys, want 2", revoked)
	}
	inTx(t, s, func(tx store.Tx) error {
		for _, key := range []string{"ak_one", "ak_two"} {
			if _, err := tx.AgentByKey(ctx, keyHash(key)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AgentByKey of revoked %s: %v, want ErrNotFound", key, err)
			}
		}
		if a, err := tx.AgentByKey(ctx, keyHash("ak_three")); err != nil || a.Account != "abc.near" {
			t.Errorf("another account's key: %+v, %v", a, err)
		}
		a, err := tx.Agent(ctx, "bot.near")
		if err != nil || a.Keys != 0 || a.Balance != 500 {
			t.Errorf("a revoked agent: %+v, %v; want no keys and its balance", a, err)
		}
		if again, err := tx.RevokeAgentKeys(ctx, "bot.near", t0.Add(4*time.Hour)); again != 0 || err != nil {
			t.Errorf("a second revoke revoked %d keys (%v)", again, err)
		}
		if none, err := tx.RevokeAgentKeys(ctx, "nobody.near", t0); none != 0 || err != nil {
			t.Errorf("revoking an unknown account: %d, %v", none, err)
		}
		return nil
	})

	// A new key for an existing agent keeps its balance and creation time; a
	// revoked key cannot come back.
	addKey(t, s, "bot.near", "ak_four", t0.Add(5*time.Hour))
	err = s.Tx(ctx, func(tx store.Tx) error { return tx.AddAgentKey(ctx, "bot.near", keyHash("ak_one"), t0) })
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a revoked key added again: %v, want ErrConflict", err)
	}
	inTx(t, s, func(tx store.Tx) error {
		a, err := tx.AgentByKey(ctx, keyHash("ak_four"))
		want := store.Agent{Account: "bot.near", Balance: 500, Keys: 1, CreatedAt: t0}
		if err != nil || a != want {
			t.Errorf("after a new key: %+v, %v; want %+v", a, err, want)
		}
		return nil
	})
}

func testAgentKeyRefusals(t *testing.T, s store.Store) {
	for _, tc := range []struct {
		name    string
		account string
		hash    []byte
	}{
		{"no account", "", keyHash("ak_x")},
		{"no hash", "bot.near", nil},
		{"a key, not its hash", "bot.near", []byte("ak_0123456789abcdef")},
		{"a hash too long", "bot.near", append(keyHash("ak_x"), 0)},
		{"a hash too short", "bot.near", keyHash("ak_x")[:31]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Tx(ctx, func(tx store.Tx) error { return tx.AddAgentKey(ctx, tc.account, tc.hash, t0) })
			if err == nil || errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("AddAgentKey(%q, % x) = %v, want a refusal", tc.account, tc.hash, err)
			}
		})
	}
	inTx(t, s, func(tx store.Tx) error {
		if all, err := tx.Agents(ctx); len(all) != 0 || err != nil {
			t.Errorf("refused keys made agents: %+v, %v", all, err)
		}
		return nil
	})
}

func credit(t *testing.T, s store.Store, account string, amount int64) int64 {
	t.Helper()
	var balance int64
	inTx(t, s, func(tx store.Tx) (err error) {
		balance, err = tx.Credit(ctx, account, amount, "top-up", t0)
		return err
	})
	return balance
}

// charge reports whether a transaction charging amount committed, and
// fails the test on any error but ErrUncovered.
func charge(t *testing.T, s store.Store, account string, amount int64, run string) bool {
	t.Helper()
	err := s.Tx(ctx, func(tx store.Tx) error { return tx.Charge(ctx, account, amount, run, t0.Add(time.Minute)) })
	if err != nil && !errors.Is(err, store.ErrUncovered) {
		t.Fatalf("charge of %d to %s: %v", amount, account, err)
	}
	return err == nil
}

func balance(t *testing.T, s store.Store, account string) int64 {
	t.Helper()
	var a store.Agent
	inTx(t, s, func(tx store.Tx) (err error) {
		a, err = tx.Agent(ctx, account)
		return err
	})
	return a.Balance
}

func ledger(t *testing.T, s store.Store, account string) []store.LedgerEntry {
	t.Helper()
	var l []store.LedgerEntry
	inTx(t, s, func(tx store.Tx) (err error) {
		l, err = tx.Ledger(ctx, account)
		return err
	})
	return l
}

func testCreditAndCharge(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	addKey(t, s, "other.near", "ak_two", t0)
	if b := credit(t, s, "bot.near", 25_000); b != 25_000 {
		t.Fatalf("balance after a credit of 25000: %d", b)
	}
	if b := credit(t, s, "bot.near", 5_000); b != 30_000 {
		t.Fatalf("balance after a second credit of 5000: %d", b)
	}
	if !charge(t, s, "bot.near", 10_000, "run1") {
		t.Fatal("a charge the balance covers was refused")
	}
	if charge(t, s, "bot.near", 20_001, "run2") {
		t.Fatal("a charge above the balance was taken")
	}
	if b := balance(t, s, "bot.near"); b != 20_000 {
		t.Fatalf("balance %d after a refused charge, want 20000", b)
	}
	if !charge(t, s, "bot.near", 20_000, "run3") {
		t.Fatal("a charge of exactly the balance was refused")
	}
	if charge(t, s, "bot.near", 1, "run4") {
		t.Fatal("a charge against an empty balance was taken")
	}
	// Zero-priced runs are covered by any balance and leave no entry.
	if !charge(t, s, "bot.near", 0, "run5") {
		t.Fatal("a zero charge against an empty balance was refused")
	}
	if b := credit(t, s, "bot.near", 0); b != 0 {
		t.Fatalf("a zero credit returned the balance %d", b)
	}
	got := ledger(t, s, "bot.near")
	want := []store.LedgerEntry{
		{Amount: 25_000, Note: "top-up", At: t0},
		{Amount: 5_000, Note: "top-up", At: t0},
		{Amount: -10_000, Run: "run1", At: t0.Add(time.Minute)},
		{Amount: -20_000, Run: "run3", At: t0.Add(time.Minute)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ledger\n got %+v\nwant %+v", got, want)
	}
	if l := ledger(t, s, "other.near"); len(l) != 0 || balance(t, s, "other.near") != 0 {
		t.Errorf("another agent's money moved: %+v", l)
	}
	if l := ledger(t, s, "nobody.near"); len(l) != 0 {
		t.Errorf("an unknown agent has a ledger: %+v", l)
	}

	// The largest balance is reachable, and no credit goes past it.
	if b := credit(t, s, "other.near", math.MaxInt64); b != math.MaxInt64 {
		t.Fatalf("credit of the largest amount: %d", b)
	}
	err := s.Tx(ctx, func(tx store.Tx) error {
		_, err := tx.Credit(ctx, "other.near", 1, "overflow", t0)
		return err
	})
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a credit past the largest balance: %v, want a refusal", err)
	}
	if b := balance(t, s, "other.near"); b != math.MaxInt64 {
		t.Fatalf("a refused credit changed the balance to %d", b)
	}
	if !charge(t, s, "other.near", math.MaxInt64, "run6") || balance(t, s, "other.near") != 0 {
		t.Fatal("a charge of the largest balance did not empty it")
	}

	// A charge the balance does not cover fails its whole transaction at
	// its commit: what was written before it and after it is not kept.
	credit(t, s, "bot.near", 100)
	err = s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.AddAgentKey(ctx, "before.near", keyHash("ak_before"), t0); err != nil {
			return err
		}
		if err := tx.Charge(ctx, "bot.near", 101, "run7", t0); err != nil {
			return err
		}
		return tx.AddAgentKey(ctx, "after.near", keyHash("ak_after"), t0)
	})
	if !errors.Is(err, store.ErrUncovered) {
		t.Fatalf("a transaction with a charge its balance does not cover: %v, want ErrUncovered", err)
	}
	if b, l := balance(t, s, "bot.near"), ledger(t, s, "bot.near"); b != 100 || len(l) != len(want)+1 {
		t.Errorf("an uncovered charge left the balance %d and %d ledger entries, want 100 and %d", b, len(l), len(want)+1)
	}
	inTx(t, s, func(tx store.Tx) error {
		for _, k := range []string{"ak_before", "ak_after"} {
			if _, err := tx.AgentByKey(ctx, keyHash(k)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the failed transaction kept %s: %v", k, err)
			}
		}
		return nil
	})
}

func testMoneyRefusals(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	credit(t, s, "bot.near", 1_000)
	for _, tc := range []struct {
		name string
		f    func(tx store.Tx) error
		want error // nil: any refusal but those named
	}{
		{"negative credit", func(tx store.Tx) error {
			_, err := tx.Credit(ctx, "bot.near", -1, "", t0)
			return err
		}, nil},
		{"most negative credit", func(tx store.Tx) error {
			_, err := tx.Credit(ctx, "bot.near", math.MinInt64, "", t0)
			return err
		}, nil},
		{"negative charge", func(tx store.Tx) error {
			return tx.Charge(ctx, "bot.near", -5, "run1", t0)
		}, nil},
		{"most negative charge", func(tx store.Tx) error {
			return tx.Charge(ctx, "bot.near", math.MinInt64, "run1", t0)
		}, nil},
		{"credit of an unknown agent", func(tx store.Tx) error {
			_, err := tx.Credit(ctx, "nobody.near", 100, "", t0)
			return err
		}, store.ErrNotFound},
		{"charge of an unknown agent", func(tx store.Tx) error {
			return tx.Charge(ctx, "nobody.near", 100, "run1", t0)
		}, store.ErrUncovered},
		{"zero charge of an unknown agent", func(tx store.Tx) error {
			return tx.Charge(ctx, "nobody.near", 0, "run1", t0)
		}, store.ErrUncovered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Tx(ctx, tc.f)
			switch {
			case err == nil:
				t.Fatal("accepted, want a refusal")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("got %v, want %v", err, tc.want)
			case tc.want == nil && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrUncovered)):
				t.Fatalf("got %v, want a refusal of the amount", err)
			}
		})
	}
	if b := balance(t, s, "bot.near"); b != 1_000 {
		t.Errorf("refusals changed the balance to %d", b)
	}
	if l := ledger(t, s, "bot.near"); len(l) != 1 {
		t.Errorf("refusals wrote ledger entries: %+v", l)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.Agent(ctx, "nobody.near"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused credit made an agent: %v", err)
		}
		return nil
	})
}

func testChargeNeverOverdraws(t *testing.T, s store.Store) {
	const price, covered, tries = 10_000, 7, 50
	addKey(t, s, "bot.near", "ak_one", t0)
	credit(t, s, "bot.near", price*covered)
	var taken atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				return tx.Charge(ctx, "bot.near", price, fmt.Sprintf("run%d", i), t0)
			})
			switch {
			case err == nil:
				taken.Add(1)
			case !errors.Is(err, store.ErrUncovered):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if taken.Load() != covered {
		t.Fatalf("%d of %d concurrent charges were taken against a balance covering %d", taken.Load(), tries, covered)
	}
	if b := balance(t, s, "bot.near"); b != 0 {
		t.Fatalf("balance %d after the charges, want 0", b)
	}
	var charges int
	for _, e := range ledger(t, s, "bot.near") {
		if e.Amount < 0 {
			charges++
			if e.Amount != -price || e.Run == "" {
				t.Errorf("ledger charge %+v", e)
			}
		}
	}
	if charges != covered {
		t.Fatalf("%d charges in the ledger, want %d", charges, covered)
	}
}

func testRolledBackCharge(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	credit(t, s, "bot.near", 1_000)
	boom := errors.New("the run was refused later in the transaction")
	err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.Charge(ctx, "bot.near", 600, "run1", t0); err != nil {
			return fmt.Errorf("charge in the transaction: %w", err)
		}
		if _, err := tx.Credit(ctx, "bot.near", 50, "in the same transaction", t0); err != nil {
			return err
		}
		if err := tx.AddAgentKey(ctx, "new.near", keyHash("ak_new"), t0); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want the function's error", err)
	}
	if b := balance(t, s, "bot.near"); b != 1_000 {
		t.Errorf("balance %d after a rolled back charge, want 1000", b)
	}
	if l := ledger(t, s, "bot.near"); len(l) != 1 {
		t.Errorf("a rolled back transaction left ledger entries: %+v", l)
	}
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.AgentByKey(ctx, keyHash("ak_new")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rolled back key is there: %v", err)
		}
		return nil
	})
}

// testUncharge: a run's charge is taken back once — its entry gone, its
// amount back in the balance — even by concurrent calls; nothing else of
// the ledger or of another agent moves.
func testUncharge(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	addKey(t, s, "other.near", "ak_two", t0)
	credit(t, s, "bot.near", 30_000)
	credit(t, s, "other.near", 1_000)
	charge(t, s, "bot.near", 10_000, "run1")
	charge(t, s, "bot.near", 5_000, "run2")
	charge(t, s, "other.near", 1_000, "run3")
	uncharge := func(account, run string) int64 {
		t.Helper()
		var n int64
		inTx(t, s, func(tx store.Tx) (err error) {
			n, err = tx.Uncharge(ctx, account, run)
			return err
		})
		return n
	}
	const tries = 8
	var restored atomic.Int64
	var wg sync.WaitGroup
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error {
				n, err := tx.Uncharge(ctx, "bot.near", "run1")
				restored.Add(n)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if restored.Load() != 10_000 {
		t.Fatalf("%d concurrent uncharges of one run restored %d µUSD, want 10000 once", tries, restored.Load())
	}
	if b := balance(t, s, "bot.near"); b != 25_000 {
		t.Fatalf("balance %d after the uncharge, want 25000", b)
	}
	for _, tc := range []struct{ account, run string }{{"bot.near", "run9"}, {"bot.near", "run3"}, {"nobody.near", "run2"}, {"bot.near", ""}} {
		err := s.Tx(ctx, func(tx store.Tx) error {
			n, err := tx.Uncharge(ctx, tc.account, tc.run)
			if n != 0 {
				t.Errorf("uncharge of %s's %q restored %d", tc.account, tc.run, n)
			}
			return err
		})
		if tc.run == "" && err == nil {
			t.Error("an uncharge without a run was taken")
		}
	}
	want := []store.LedgerEntry{{Amount: 30_000, Note: "top-up", At: t0}, {Amount: -5_000, Run: "run2", At: t0.Add(time.Minute)}}
	if got := ledger(t, s, "bot.near"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ledger\n got %+v\nwant %+v", got, want)
	}
	if b, l := balance(t, s, "other.near"), ledger(t, s, "other.near"); b != 0 || len(l) != 2 {
		t.Errorf("another agent's money moved: %d %+v", b, l)
	}
	if n := uncharge("bot.near", "run2"); n != 5_000 || balance(t, s, "bot.near") != 30_000 {
		t.Errorf("uncharge of run2: %d, balance %d", n, balance(t, s, "bot.near"))
	}
}

// testAgentCalling: the agent and the project it calls, read together,
// are what AgentByKey and Project read one at a time, in a read as in a
// transaction.
func testAgentCalling(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_one", t0)
	addKey(t, s, "gone.near", "ak_gone", t0)
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.RevokeAgentKeys(ctx, "gone.near", t0); err != nil {
			return err
		}
		return tx.PutProject(ctx, NewProject("alice.near", "probe", "uuid-calling", "bot.near", "other.near"))
	})
	var want store.Project
	inTx(t, s, func(tx store.Tx) (err error) {
		want, err = tx.Project(ctx, "alice.near", "probe")
		return err
	})
	bot := store.Agent{Account: "bot.near", Keys: 1, CreatedAt: t0}
	for name, read := range map[string]func(func(store.Tx) error) error{
		"Tx":   func(fn func(store.Tx) error) error { return s.Tx(ctx, fn) },
		"Read": func(fn func(store.Tx) error) error { return s.Read(ctx, fn) },
	} {
		err := read(func(tx store.Tx) error {
			a, p, found, err := tx.AgentCalling(ctx, keyHash("ak_one"), "alice.near", "probe")
			if err != nil || a != bot || !found || !reflect.DeepEqual(p, want) {
				t.Errorf("%s: AgentCalling = %+v, %+v, %v, %v; want %+v, %+v, found", name, a, p, found, err, bot, want)
			}
			a, p, found, err = tx.AgentCalling(ctx, keyHash("ak_one"), "alice.near", "nothing")
			if err != nil || a != bot || found || !reflect.DeepEqual(p, store.Project{}) {
				t.Errorf("%s: AgentCalling of a project not there = %+v, %+v, %v, %v; want the agent and no project", name, a, p, found, err)
			}
			for _, key := range []string{"ak_unknown", "ak_gone"} {
				if a, p, found, err := tx.AgentCalling(ctx, keyHash(key), "alice.near", "probe"); !errors.Is(err, store.ErrNotFound) || found || p.Name != "" || a.Account != "" {
					t.Errorf("%s: AgentCalling of %s = %+v, %+v, %v, %v; want ErrNotFound and nothing else", name, key, a, p, found, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// testAdmissionHolds: an admission read before a transaction holds in it
// only while nothing it was read from changed. Each change below is made
// to a project (or key) of its own, after its admission was read; a
// transaction that credits the agent and checks the admission then keeps
// nothing, and one whose admission is unchanged keeps its credit.
func testAdmissionHolds(t *testing.T, s store.Store) {
	addKey(t, s, "bot.near", "ak_bot", t0)
	addKey(t, s, "other.near", "ak_other", t0)
	addKey(t, s, "gone.near", "ak_gone", t0)
	cases := []struct {
		name   string
		change func(tx store.Tx, p store.Project) error
		// admission, if set, changes the admission itself rather than the rows.
		admission func(d *store.Admission)
		held      bool
	}{
		{name: "nothing changed", held: true},
		{name: "read again, nothing changed", held: true, change: func(tx store.Tx, p store.Project) error {
			_, err := tx.Project(ctx, p.Owner, p.Name)
			return err
		}},
		{name: "policy changed", change: func(tx store.Tx, p store.Project) error {
			p.Policy, p.UpdatedAt = []byte(`{"confirm":[]}`), t0 // the same second: only the version tells
			return tx.PutProject(ctx, p)
		}},
		{name: "put again as it was", change: func(tx store.Tx, p store.Project) error { return tx.PutProject(ctx, p) }},
		{name: "grant withdrawn", change: func(tx store.Tx, p store.Project) error {
			p.Agents = []string{"other.near"}
			return tx.PutProject(ctx, p)
		}},
		{name: "deleted", change: func(tx store.Tx, p store.Project) error {
			_, err := tx.DeleteProject(ctx, p.Owner, p.Name)
			return err
		}},
		{name: "deleted and made again by its name", change: func(tx store.Tx, p store.Project) error {
			if _, err := tx.DeleteProject(ctx, p.Owner, p.Name); err != nil {
				return err
			}
			p.UUID += "-again"
			return tx.PutProject(ctx, p)
		}},
		{name: "credentials sealed again", change: func(tx store.Tx, p store.Project) error {
			ok, err := tx.ReplaceSealed(ctx, store.Sealed{Kind: "project", Row: p.UUID, KeyID: p.CredsKeyID, Blob: p.Creds}, 2, []byte("resealed"))
			if err == nil && !ok {
				err = errors.New("the credentials were not sealed again")
			}
			return err
		}},
		{name: "key revoked", change: func(tx store.Tx, _ store.Project) error {
			_, err := tx.RevokeAgentKeys(ctx, "gone.near", t0)
			return err
		}},
		{name: "another agent's key", admission: func(d *store.Admission) { d.KeyHash = keyHash("ak_other") }},
		{name: "another project's uuid", admission: func(d *store.Admission) { d.UUID = "uuid-door-0" }},
		{name: "another owner", admission: func(d *store.Admission) { d.Owner = "bob.near" }},
		{name: "an older version", admission: func(d *store.Admission) { d.Version-- }},
		{name: "no agent named", admission: func(d *store.Admission) { d.Agent = "" }},
		{name: "no key named", admission: func(d *store.Admission) { d.KeyHash = nil }},
	}
	admissions := make([]store.Admission, len(cases))
	projects := make([]store.Project, len(cases))
	for i, c := range cases {
		agent, key := "bot.near", "ak_bot"
		if c.name == "key revoked" {
			agent, key = "gone.near", "ak_gone"
		}
		name := fmt.Sprintf("door%d", i)
		putProject(t, s, NewProject("alice.near", name, fmt.Sprintf("uuid-door-%d", i), agent))
		if i > 0 && c.admission == nil && c.change != nil {
			// One earlier change, so that a version other than a new
			// project's is what the admission reads.
			putProject(t, s, NewProject("alice.near", name, fmt.Sprintf("uuid-door-%d", i), agent))
		}
		inTx(t, s, func(tx store.Tx) error {
			a, p, found, err := tx.AgentCalling(ctx, keyHash(key), "alice.near", name)
			if err != nil || !found {
				return fmt.Errorf("%s: read the admission: %v, found %v", c.name, err, found)
			}
			projects[i] = p
			admissions[i] = store.Admission{KeyHash: keyHash(key), Agent: a.Account, Owner: p.Owner, Project: p.Name, UUID: p.UUID, Version: p.Version}
			return nil
		})
	}
	if projects[0].Version != 1 || projects[1].Version != 2 {
		t.Errorf("versions read: a new project %d, one put twice %d; want 1 and 2", projects[0].Version, projects[1].Version)
	}
	for i, c := range cases {
		if c.change != nil {
			inTx(t, s, func(tx store.Tx) error { return c.change(tx, projects[i]) })
		}
		account := admissions[i].Agent
		if c.admission != nil {
			c.admission(&admissions[i])
		}
		before := balance(t, s, account)
		err := s.Tx(ctx, func(tx store.Tx) error {
			if _, err := tx.Credit(ctx, account, 7, "door", t0); err != nil {
				return err
			}
			return tx.AdmissionHolds(ctx, admissions[i])
		})
		after := balance(t, s, account)
		switch {
		case c.held && (err != nil || after != before+7):
			t.Errorf("%s: the check = %v, balance %d → %d; want it held and the credit kept", c.name, err, before, after)
		case !c.held && (!errors.Is(err, store.ErrAdmissionChanged) || after != before):
			t.Errorf("%s: the check = %v, balance %d → %d; want ErrAdmissionChanged and nothing kept", c.name, err, before, after)
		}
	}
	var p store.Project
	inTx(t, s, func(tx store.Tx) (err error) {
		p, err = tx.Project(ctx, "alice.near", "door7")
		return err
	})
	if p.Version != projects[7].Version+1 {
		t.Errorf("credentials sealed again: version %d → %d; want it moved by one", projects[7].Version, p.Version)
	}
}
