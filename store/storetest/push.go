package storetest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"countersign/store"
)

func pushTests() []storeTest {
	return []storeTest{
		{"PushKeyMadeOnce", testPushKeyMadeOnce},
		{"PushOnTheDevice", testPushOnTheDevice},
		{"PushDeliveries", testPushDeliveries},
		{"PushPurged", testPushPurged},
		{"PushRewrapped", testPushRewrapped},
	}
}

// testPushKeyMadeOnce: of processes storing a VAPID key at once, one
// wins, and everyone reads the winner's.
func testPushKeyMadeOnce(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.PushKey(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a key before any was made: %v", err)
		}
		return nil
	})
	won := concurrentWins(t, s, 8, func(tx store.Tx, i int) (bool, error) {
		return tx.InsertPushKey(ctx, store.PushKey{PublicKey: fmt.Sprintf("pub-%d", i), KeyID: 1, Sealed: []byte(fmt.Sprintf("sealed-%d", i)), CreatedAt: t0})
	})
	if won != 1 {
		t.Fatalf("%d keys stored", won)
	}
	inTx(t, s, func(tx store.Tx) error {
		k, err := tx.PushKey(ctx)
		if err != nil || !strings.HasPrefix(k.PublicKey, "pub-") || string(k.Sealed) != "sealed-"+k.PublicKey[4:] || k.KeyID != 1 || !k.CreatedAt.Equal(t0) {
			t.Errorf("the key %+v %v", k, err)
		}
		return nil
	})
}

// testPushOnTheDevice: a subscription is set on a device that has not
// ended, replaced, deleted only when it is still the one named, and ends
// with the device.
func testPushOnTheDevice(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		for _, id := range []string{"p1", "p2", "p3"} {
			if err := tx.InsertDevice(ctx, device(id, "alice.near", t0)); err != nil {
				return err
			}
		}
		if _, err := tx.EndDevice(ctx, "p3", "signed_out", t0); err != nil {
			return err
		}
		for _, c := range []struct {
			id   string
			want bool
		}{{"p1", true}, {"p2", true}, {"p3", false}, {"none", false}} {
			if ok, err := tx.PutPush(ctx, c.id, 2, []byte("sub-"+c.id)); ok != c.want || err != nil {
				t.Errorf("PutPush %s: %v %v", c.id, ok, err)
			}
		}
		ok, err := tx.PutPush(ctx, "p1", 3, []byte("sub-p1-again"))
		if !ok || err != nil {
			t.Errorf("replace: %v %v", ok, err)
		}
		active, err := tx.ActiveDevices(ctx, "alice.near", t0)
		if err != nil || len(active) != 2 || string(active[0].Push)+string(active[1].Push) != "sub-p1-againsub-p2" || active[0].PushKeyID != 3 {
			t.Errorf("active devices %+v %v", active, err)
		}
		if ok, _ := tx.DeletePush(ctx, "p1", []byte("sub-p1")); ok {
			t.Error("a subscription replaced since was deleted")
		}
		if ok, _ := tx.DeletePush(ctx, "p1", []byte("sub-p1-again")); !ok {
			t.Error("the subscription named was not deleted")
		}
		if ok, _ := tx.DeletePush(ctx, "p1", nil); ok {
			t.Error("deleted twice")
		}
		d, _ := tx.Device(ctx, "p1")
		if d.Push != nil || d.PushKeyID != 0 {
			t.Errorf("after delete: %+v", d)
		}
		if _, err := tx.EndDevice(ctx, "p2", "withdrawn", t0); err != nil {
			return err
		}
		d, _ = tx.Device(ctx, "p2")
		if d.Push != nil {
			t.Error("a withdrawn device keeps its subscription")
		}
		return nil
	})
}

// testPushDeliveries: a task's deliveries are written with its jobs, or not
// at all; an attempt is claimed once.
func testPushDeliveries(t *testing.T, s store.Store) {
	err := s.Tx(ctx, func(tx store.Tx) error {
		if err := tx.QueuePushes(ctx, "rolled-1", []string{"a"}, t0); err != nil {
			return err
		}
		return errors.New("refused later")
	})
	if err == nil {
		t.Fatal("the refusal was lost")
	}
	inTx(t, s, func(tx store.Tx) error { return tx.QueuePushes(ctx, "t-1", []string{"a", "b"}, t0) })
	inTx(t, s, func(tx store.Tx) error {
		if _, err := tx.PushDelivery(ctx, "rolled-1", "a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a rolled back delivery: %v", err)
		}
		d, err := tx.PushDelivery(ctx, "t-1", "b")
		if err != nil || d.Attempts != 0 || !d.CreatedAt.Equal(t0) {
			t.Errorf("delivery %+v %v", d, err)
		}
		g, err := tx.Gauges(ctx)
		if err != nil || g.Queued["push_delivery"] != 2 {
			t.Errorf("queued %v %v", g.Queued, err)
		}
		for i, c := range []struct {
			n    int
			want bool
		}{{0, true}, {0, false}, {1, true}, {3, false}} {
			if ok, err := tx.ClaimPushAttempt(ctx, "t-1", "a", c.n); ok != c.want || err != nil {
				t.Errorf("claim %d (at %d): %v %v", i, c.n, ok, err)
			}
		}
		if d, _ := tx.PushDelivery(ctx, "t-1", "a"); d.Attempts != 2 {
			t.Errorf("%d attempts", d.Attempts)
		}
		if err := tx.DeletePushDelivery(ctx, "t-1", "a"); err != nil {
			return err
		}
		if _, err := tx.PushDelivery(ctx, "t-1", "a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a done delivery: %v", err)
		}
		if ok, _ := tx.ClaimPushAttempt(ctx, "t-1", "a", 2); ok {
			t.Error("a done delivery was claimed")
		}
		return nil
	})
}

// testPushPurged: a subscription goes when its device's session runs out;
// deliveries go with the outcomes.
func testPushPurged(t *testing.T, s store.Store) {
	now := t0.Add(48 * time.Hour)
	inTx(t, s, func(tx store.Tx) error {
		old := device("out", "alice.near", t0) // valid until t0+24h
		live := device("live", "alice.near", now)
		for _, d := range []store.Device{old, live} {
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
			if _, err := tx.PutPush(ctx, d.ID, 1, []byte("sub")); err != nil {
				return err
			}
		}
		if err := tx.QueuePushes(ctx, "old-1", []string{"out"}, now.Add(-31*24*time.Hour)); err != nil {
			return err
		}
		return tx.QueuePushes(ctx, "new-1", []string{"live"}, now)
	})
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.Purge(ctx, now, now.Add(-30*24*time.Hour), now.Add(-24*time.Hour), now.Add(-3*24*time.Hour))
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		if d, _ := tx.Device(ctx, "out"); d.Push != nil {
			t.Error("a device whose session ran out keeps its subscription")
		}
		if d, _ := tx.Device(ctx, "live"); string(d.Push) != "sub" {
			t.Error("a live device lost its subscription")
		}
		if _, err := tx.PushDelivery(ctx, "old-1", "out"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an old delivery was kept: %v", err)
		}
		if _, err := tx.PushDelivery(ctx, "new-1", "live"); err != nil {
			t.Errorf("a new delivery was purged: %v", err)
		}
		return nil
	})
}

// testPushRewrapped: subscriptions and the VAPID key are among what key
// rotation seals again, what the data needs, and what a keyring is tried
// against.
func testPushRewrapped(t *testing.T, s store.Store) {
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.InsertDevice(ctx, device("rw", "alice.near", t0)); err != nil {
			return err
		}
		if _, err := tx.PutPush(ctx, "rw", 1, []byte("sub-1")); err != nil {
			return err
		}
		_, err := tx.InsertPushKey(ctx, store.PushKey{PublicKey: "pub", KeyID: 1, Sealed: []byte("vapid-1"), CreatedAt: t0})
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		inUse, err := tx.KeyIDsInUse(ctx)
		if err != nil || fmt.Sprint(inUse[1]) != "[push subscriptions the push key]" {
			t.Errorf("in use %v %v", inUse, err)
		}
		samples, err := tx.SealedSamples(ctx, 1)
		var got []string
		for _, x := range samples {
			got = append(got, x.Kind+" "+x.Row+" "+string(x.Blob))
		}
		sort.Strings(got)
		if err != nil || fmt.Sprint(got) != "[push rw sub-1 vapid vapid vapid-1]" {
			t.Errorf("samples %v %v", got, err)
		}
		old, err := tx.SealedUnder(ctx, 2, 100)
		if err != nil || len(old) != 2 {
			t.Fatalf("under an old key: %v %v", old, err)
		}
		for _, x := range old {
			if ok, err := tx.ReplaceSealed(ctx, x, 2, append([]byte("re-"), x.Blob...)); !ok || err != nil {
				t.Errorf("replace %s: %v %v", x.Kind, ok, err)
			}
		}
		d, _ := tx.Device(ctx, "rw")
		k, _ := tx.PushKey(ctx)
		if d.PushKeyID != 2 || string(d.Push) != "re-sub-1" || k.KeyID != 2 || string(k.Sealed) != "re-vapid-1" || k.PublicKey != "pub" {
			t.Errorf("after rewrap: device %d %s, key %d %s", d.PushKeyID, d.Push, k.KeyID, k.Sealed)
		}
		return nil
	})
}
