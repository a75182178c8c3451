package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"countersign"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestSubscribeFunc: a function subscription hears its owner's committed
// task events, in order, and nothing of a rolled back change or of another
// owner; once stopped it hears nothing more.
func TestSubscribeFunc(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		var mu sync.Mutex
		var heard []store.TaskEvent
		stop := db.SubscribeFunc("alice.near", func(ev store.TaskEvent) {
			mu.Lock()
			heard = append(heard, ev)
			mu.Unlock()
		})
		_ = db.Tx(ctx, func(tx store.Tx) error {
			k, c := storetest.NewTask("gone-1", "alice.near", "bot.near")
			_ = tx.InsertTask(ctx, k, c)
			return errors.New("refused")
		})
		for i, owner := range []string{"bob.near", "alice.near", "alice.near"} {
			k, c := storetest.NewTask(fmt.Sprintf("r%d-1", i), owner, "bot.near")
			if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
				t.Fatal(err)
			}
		}
		want := []store.TaskEvent{{Owner: "alice.near", TaskID: "r1-1", State: countersign.StateOpen}, {Owner: "alice.near", TaskID: "r2-1", State: countersign.StateOpen}}
		got := func() []store.TaskEvent {
			mu.Lock()
			defer mu.Unlock()
			return append([]store.TaskEvent(nil), heard...)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(got()) < len(want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if g := got(); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("heard %+v, want %+v", g, want)
		}
		if n := db.Subscribers("alice.near"); n != 1 {
			t.Fatalf("%d subscribers", n)
		}
		stop()
		if n := db.Subscribers("alice.near"); n != 0 {
			t.Fatalf("%d subscribers after stop", n)
		}
		// A change after stop, then one of another subscription as a
		// marker: once the marker is heard, the first would have been.
		marker := make(chan struct{}, 1)
		stopB := db.SubscribeFunc("bob.near", func(store.TaskEvent) {
			select {
			case marker <- struct{}{}:
			default:
			}
		})
		defer stopB()
		for _, owner := range []string{"alice.near", "bob.near"} {
			k, c := storetest.NewTask("after-"+owner, owner, "bot.near")
			if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-marker:
		case <-time.After(5 * time.Second):
			t.Fatal("the marker was not heard")
		}
		if g := got(); len(g) != len(want) {
			t.Fatalf("heard after stop: %+v", g[len(want):])
		}
	})
}
