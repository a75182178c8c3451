package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"countersign"
	"countersign/store"
	"countersign/store/storetest"
)

// TestPostgresTransactionRoundTrips: on PostgreSQL a transaction's BEGIN
// goes with its first statement and its COMMIT with its last writes, so a
// transaction refused before it sent anything costs no round trip, and one
// whose error its caller swallowed does not commit what came before it.
func TestPostgresTransactionRoundTrips(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	ctx := context.Background()
	refused := errors.New("refused before anything was read")
	before := db.RoundTrips()
	if err := db.Tx(ctx, func(store.Tx) error { return refused }); err != refused {
		t.Fatalf("a refused transaction: %v", err)
	}
	if err := db.Tx(ctx, func(store.Tx) error { return nil }); err != nil {
		t.Fatalf("an empty transaction: %v", err)
	}
	if n := db.RoundTrips() - before; n != 0 {
		t.Fatalf("transactions that sent nothing cost %d round trips", n)
	}

	k, c := storetest.NewTask("tx1-1", "alice.near", "bot.near")
	before = db.RoundTrips()
	if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
		t.Fatal(err)
	}
	if n := db.RoundTrips() - before; n != 2 {
		t.Fatalf("a task written in one transaction cost %d round trips, want 2 (its rows with BEGIN, then COMMIT)", n)
	}

	// A move and then a statement that fails, its error swallowed: the
	// transaction is aborted and Tx says so; the move is not kept.
	reject, err := countersign.Transition(k.Kind, countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, "")
	if err != nil {
		t.Fatal(err)
	}
	err = db.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.MoveTask(ctx, store.Move{ID: k.ID, Move: reject, At: k.CreatedAt}); err != nil {
			return err
		}
		if err := tx.InsertTask(ctx, k, c); !errors.Is(err, store.ErrConflict) {
			t.Errorf("inserting the task again: %v, want ErrConflict", err)
		}
		return nil
	})
	if err == nil {
		t.Fatal("a transaction aborted by a failed statement committed")
	}
	var got store.Task
	if err := db.Tx(ctx, func(tx store.Tx) (err error) { got, err = tx.Task(ctx, k.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if got.State != countersign.StateOpen {
		t.Fatalf("the aborted transaction's move was kept: %s", got.State)
	}
}

// TestOwnerLocksAreTheOwners: on PostgreSQL an owner's lock holds that
// owner's transactions back and no other's, in this store's schema and in
// another's on the same database: while one transaction holds alice's
// lock, bob's opens at once here, and alice's at once in another schema,
// and alice's here waits until the first ends.
func TestOwnerLocksAreTheOwners(t *testing.T) {
	t.Parallel()
	db, other := storetest.Postgres(t), storetest.Postgres(t)
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Tx(ctx, func(tx store.Tx) error {
			if err := tx.LockOwner(ctx, "alice.near"); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	lock := func(s store.Store, owner string, patience time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, patience)
		defer cancel()
		return s.Tx(ctx, func(tx store.Tx) error { return tx.LockOwner(ctx, owner) })
	}
	if err := lock(db, "bob.near", 5*time.Second); err != nil {
		t.Errorf("bob's lock waited for alice's: %v", err)
	}
	if err := lock(other, "alice.near", 5*time.Second); err != nil {
		t.Errorf("alice's lock in another schema waited for this one's: %v", err)
	}
	if err := lock(db, "alice.near", 300*time.Millisecond); err == nil {
		t.Error("alice's lock was taken twice at once")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := lock(db, "alice.near", 5*time.Second); err != nil {
		t.Errorf("alice's lock, once released: %v", err)
	}
}
