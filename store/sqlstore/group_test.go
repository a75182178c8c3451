package sqlstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// agents makes n agents with a balance of 0 and returns their accounts.
func agents(t *testing.T, db *sqlstore.DB, prefix string, n int) []string {
	t.Helper()
	var accounts []string
	err := db.Tx(context.Background(), func(tx store.Tx) error {
		for i := range n {
			a := fmt.Sprintf("%s%d.near", prefix, i)
			key := sha256.Sum256([]byte(a))
			if err := tx.AddAgentKey(context.Background(), a, key[:], time.Unix(1, 0)); err != nil {
				return err
			}
			accounts = append(accounts, a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return accounts
}

// credited reads each agent's balance and the transaction that last
// wrote its row (PostgreSQL's xmin).
func credited(t *testing.T, db *sqlstore.DB, accounts []string) (balances []int64, writers []string) {
	t.Helper()
	for _, a := range accounts {
		var b int64
		var x string
		err := db.Postgres().QueryRow(context.Background(),
			"SELECT balance, xmin::text FROM "+db.SchemaName()+".agents WHERE account = $1", a).Scan(&b, &x)
		if err != nil {
			t.Fatal(err)
		}
		balances, writers = append(balances, b), append(writers, x)
	}
	return balances, writers
}

// credit is a transaction crediting an agent 1 µUSD, counting its tries.
func credit(account string, tries *atomic.Int64) func(store.Tx) error {
	return func(tx store.Tx) error {
		tries.Add(1)
		_, err := tx.Credit(context.Background(), account, 1, "grouped", time.Unix(2, 0))
		return err
	}
}

// TestGroupedTransactions: transactions waiting for a lane share its
// commit, each kept whole or not at all: a later member's failure keeps
// nothing of the group and every member is tried again alone, so each is
// kept once and answers as it would alone; the first member's failure is
// its own.
func TestGroupedTransactions(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	refused := errors.New("refused after writing")
	failing := func(account string, tries *atomic.Int64) func(store.Tx) error {
		return func(tx store.Tx) error {
			if err := credit(account, tries)(tx); err != nil {
				return err
			}
			return refused
		}
	}
	for _, c := range []struct {
		name  string
		fail  []bool // which members refuse after writing
		tries []int64
		// together are the members expected to share a commit.
		together []int
	}{
		{"all kept, one commit", []bool{false, false, false}, []int64{1, 1, 1}, []int{0, 1, 2}},
		{"the first refuses: its own answer", []bool{true, false, false}, []int64{1, 1, 1}, []int{1, 2}},
		{"a later one refuses: all tried alone", []bool{false, true, false}, []int64{2, 2, 1}, nil},
		{"the last refuses", []bool{false, false, true}, []int64{2, 2, 2}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			accounts := agents(t, db, fmt.Sprintf("g%x-", sha256.Sum256([]byte(c.name)))[:12], len(c.fail))
			tries := make([]atomic.Int64, len(c.fail))
			var fns []func(store.Tx) error
			for i, f := range c.fail {
				if f {
					fns = append(fns, failing(accounts[i], &tries[i]))
				} else {
					fns = append(fns, credit(accounts[i], &tries[i]))
				}
			}
			errs := sqlstore.RunGroups(db, fns...)
			balances, writers := credited(t, db, accounts)
			for i, f := range c.fail {
				switch {
				case f && !errors.Is(errs[i], refused):
					t.Errorf("member %d answered %v, want its own refusal", i, errs[i])
				case !f && errs[i] != nil:
					t.Errorf("member %d answered %v", i, errs[i])
				}
				if want := int64(1); f {
					want = 0
					if balances[i] != want {
						t.Errorf("member %d refused, and its credit was kept: balance %d", i, balances[i])
					}
				} else if balances[i] != want {
					t.Errorf("member %d: balance %d, want %d (kept once)", i, balances[i], want)
				}
				if got := tries[i].Load(); got != c.tries[i] {
					t.Errorf("member %d tried %d times, want %d", i, got, c.tries[i])
				}
			}
			for _, i := range c.together[min(1, len(c.together)):] {
				if writers[i] != writers[c.together[0]] {
					t.Errorf("members %d and %d were kept by transactions %s and %s, want one", c.together[0], i, writers[c.together[0]], writers[i])
				}
			}
			if c.together == nil {
				seen := map[string]bool{}
				for i, w := range writers {
					if !c.fail[i] && seen[w] {
						t.Errorf("members tried alone share transaction %s", w)
					}
					seen[w] = true
				}
			}
		})
	}
}

// TestGroupedMemberWaitingForALock: a group's later member waiting for a
// lock another transaction holds, while that one waits for a lock the
// group took for its first member, does not wait for PostgreSQL's deadlock
// check: the group gives up within its lock wait, keeps nothing, and its
// members are tried again alone. The other transaction is never the one
// refused; every credit is kept once.
func TestGroupedMemberWaitingForALock(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	accounts := agents(t, db, "lock-", 2)
	ctx := context.Background()
	groupHolds, otherHolds := make(chan struct{}), make(chan struct{})
	var once sync.Once
	other := make(chan error, 1)
	go func() {
		other <- db.Tx(ctx, func(tx store.Tx) error {
			if _, err := tx.Credit(ctx, accounts[1], 10, "other", time.Unix(3, 0)); err != nil {
				return err
			}
			close(otherHolds)
			<-groupHolds
			_, err := tx.Credit(ctx, accounts[0], 10, "other", time.Unix(3, 0))
			return err
		})
	}()
	<-otherHolds
	var tries [2]atomic.Int64
	first := func(tx store.Tx) error {
		if err := credit(accounts[0], &tries[0])(tx); err != nil {
			return err
		}
		once.Do(func() { close(groupHolds) })
		return nil
	}
	start := time.Now()
	errs := sqlstore.RunGroups(db, first, credit(accounts[1], &tries[1]))
	if err := <-other; err != nil {
		t.Fatalf("the other transaction was refused: %v", err)
	}
	if waited := time.Since(start); waited > time.Second/2 {
		t.Errorf("the group gave up after %s: PostgreSQL's deadlock check broke the wait, not the group's lock wait", waited)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d answered %v", i, err)
		}
		if tries[i].Load() != 2 {
			t.Errorf("member %d tried %d times, want 2 (in the group, then alone)", i, tries[i].Load())
		}
	}
	if balances, _ := credited(t, db, accounts); balances[0] != 11 || balances[1] != 11 {
		t.Fatalf("balances %v, want [11 11]: each credit kept once", balances)
	}
}

// TestGroupedConcurrently: many transactions of one key at once through
// the store's own lanes; each is kept once, and some share a commit.
func TestGroupedConcurrently(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	const n = 32
	accounts := agents(t, db, "conc-", n)
	ctx := store.Grouped(context.Background(), "owner.near")
	var wg sync.WaitGroup
	var tries [n]atomic.Int64
	for i := range n {
		wg.Go(func() {
			err := db.Tx(ctx, func(tx store.Tx) error {
				err := credit(accounts[i], &tries[i])(tx)
				time.Sleep(2 * time.Millisecond) // the lane busy while others queue
				return err
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	balances, writers := credited(t, db, accounts)
	commits := map[string]bool{}
	for i, b := range balances {
		if b != 1 || tries[i].Load() != 1 {
			t.Errorf("agent %d: balance %d after %d tries, want 1 after 1", i, b, tries[i].Load())
		}
		commits[writers[i]] = true
	}
	if len(commits) >= n {
		t.Fatalf("%d transactions were kept by %d commits: none shared one", n, len(commits))
	}
	// A transaction whose lane stayed busy past the wait ran alone.
	if g := db.Grouping(); g.Commits+g.Alone != int64(len(commits)) || g.Kept+g.Alone != n || g.Lanes < 1 || g.Busy <= 0 {
		t.Fatalf("Grouping says %d commits kept %d, %d ran alone, %d lanes busy %v; the rows say %d commits kept %d",
			g.Commits, g.Kept, g.Alone, g.Lanes, g.Busy, len(commits), n)
	}
	t.Logf("%d transactions kept by %d commits", n, len(commits))
}

// TestGroupedPanic: a grouped transaction that panics panics on its
// caller's goroutine, as one alone would, keeps nothing, and leaves its
// lane working.
func TestGroupedPanic(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	accounts := agents(t, db, "panic-", 2)
	ctx := store.Grouped(context.Background(), "owner.near")
	var tries [2]atomic.Int64
	func() {
		defer func() {
			if r := recover(); r != "broken" {
				t.Errorf("the caller recovered %v, want the transaction's panic", r)
			}
		}()
		_ = db.Tx(ctx, func(tx store.Tx) error {
			_ = credit(accounts[0], &tries[0])(tx)
			panic("broken")
		})
		t.Error("the panic did not reach the caller")
	}()
	if err := db.Tx(ctx, credit(accounts[1], &tries[1])); err != nil {
		t.Fatalf("the lane after a panic: %v", err)
	}
	if balances, _ := credited(t, db, accounts); balances[0] != 0 || balances[1] != 1 {
		t.Fatalf("balances %v, want [0 1]", balances)
	}
}

// TestGroupedSlowMember: a transaction that holds its lane a long while
// (an in-process handler using its compute limit) does not hold the next
// one of its lane, which runs alone rather than wait for it. The slow one
// here waits for the other to be kept: were the other waiting for the
// lane, neither would end.
func TestGroupedSlowMember(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	accounts := agents(t, db, "slow-", 2)
	ctx := store.Grouped(context.Background(), "owner.near")
	var tries [2]atomic.Int64
	holding, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := make(chan error, 1)
	go func() {
		slow <- db.Tx(ctx, func(tx store.Tx) error {
			err := credit(accounts[0], &tries[0])(tx)
			once.Do(func() { close(holding) })
			<-release
			return err
		})
	}()
	<-holding
	other := make(chan error, 1)
	go func() { other <- db.Tx(ctx, credit(accounts[1], &tries[1])) }()
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("the other transaction: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other transaction waited for the lane the slow one holds")
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatalf("the slow transaction: %v", err)
	}
	if balances, _ := credited(t, db, accounts); balances[0] != 1 || balances[1] != 1 || tries[0].Load() != 1 || tries[1].Load() != 1 {
		t.Fatalf("balances %v after %d and %d tries, want [1 1] after one each", balances, tries[0].Load(), tries[1].Load())
	}
	if alone := db.Grouping().Alone; alone != 1 {
		t.Fatalf("%d transactions ran alone, want the other one", alone)
	}
}
