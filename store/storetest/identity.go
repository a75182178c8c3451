package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/store"
)

func identityTests() []storeTest {
	return []storeTest{
		{"NonceSpentOnce", testNonceSpentOnce},
		{"NonceOnceUnderConcurrency", testNonceOnceUnderConcurrency},
		{"NonceSpentAgainKeepsNothing", testNonceSpentAgainKeepsNothing},
		{"Devices", testDevices},
		{"DeviceWithTask", testDeviceWithTask},
		{"DevicesInSignInOrder", testDevicesInSignInOrder},
		{"EndDeviceDropsItsCopies", testEndDeviceDropsItsCopies},
	}
}

// spend spends a nonce in a transaction of its own: false if it was
// refused as used already.
func spend(t *testing.T, s store.Store, account string, nonce []byte) bool {
	t.Helper()
	err := s.Tx(ctx, func(tx store.Tx) error { return tx.SpendNonce(ctx, account, nonce, t0.Add(time.Hour)) })
	if errors.Is(err, store.ErrSpent) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func testNonceSpentOnce(t *testing.T, s store.Store) {
	n := []byte("0123456789abcdef0123456789abcdef")
	if !spend(t, s, "alice.near", n) {
		t.Fatal("a fresh nonce was refused")
	}
	if spend(t, s, "alice.near", n) {
		t.Fatal("a nonce was spent twice")
	}
	if !spend(t, s, "bob.near", n) {
		t.Fatal("nonces are per account, but bob's was refused")
	}
	// A refused transaction spends nothing.
	other := []byte("ffffffffffffffffffffffffffffffff")
	_ = s.Tx(ctx, func(tx store.Tx) error {
		_ = tx.SpendNonce(ctx, "alice.near", other, t0)
		return errors.New("refused later in the transaction")
	})
	if !spend(t, s, "alice.near", other) {
		t.Fatal("a nonce of a rolled back transaction stayed spent")
	}
}

func testNonceOnceUnderConcurrency(t *testing.T, s store.Store) {
	n := []byte("concurrent-nonce-0123456789abcde")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Tx(ctx, func(tx store.Tx) error { return tx.SpendNonce(ctx, "alice.near", n, t0) })
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, store.ErrSpent):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("a nonce was accepted %d times under 50 parallel attempts", wins.Load())
	}
}

// A nonce spent again fails its whole transaction with ErrSpent, whether
// the refusal comes with the commit or with a later statement's round
// trip, and nothing else the transaction wrote is kept.
func testNonceSpentAgainKeepsNothing(t *testing.T, s store.Store) {
	n := []byte("spent-twice-0123456789abcdefghij")
	if !spend(t, s, "alice.near", n) {
		t.Fatal("a fresh nonce was refused")
	}
	for _, tc := range []struct {
		name string
		then func(tx store.Tx) error // after the nonce
	}{
		{"refused at the commit", func(store.Tx) error { return nil }},
		{"refused at the next statement", func(tx store.Tx) error {
			_, err := tx.ActiveDevices(ctx, "alice.near", t0)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := device("d-"+strings.ReplaceAll(tc.name, " ", "-"), "alice.near", t0)
			err := s.Tx(ctx, func(tx store.Tx) error {
				if err := tx.InsertDevice(ctx, d); err != nil {
					return err
				}
				if err := tx.SpendNonce(ctx, "alice.near", n, t0.Add(time.Hour)); err != nil {
					return err
				}
				return tc.then(tx)
			})
			if !errors.Is(err, store.ErrSpent) {
				t.Fatalf("a nonce spent again: %v, want ErrSpent", err)
			}
			err = s.Tx(ctx, func(tx store.Tx) error {
				_, err := tx.Device(ctx, d.ID)
				return err
			})
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused transaction's device was kept: %v", err)
			}
		})
	}
}

func device(id, account string, created time.Time) store.Device {
	return store.Device{ID: id, Account: account, DevicePubkey: "p256:" + id, SignerPubkey: "ed25519:x",
		TokenHash: []byte("hash-" + id), Statement: `{"message":"m"}`, CreatedAt: created,
		ValidUntil: created.Add(24 * time.Hour), KeyCheckedAt: created}
}

// testDeviceWithTask: a session's device and a task, read in one round
// trip, are what DeviceByToken and TaskSeen read apart; the task is read
// whoever's it is, and its absence is no error.
func testDeviceWithTask(t *testing.T, s store.Store) {
	k, c := NewTask("withtask-1", "alice.near", "bot.near")
	insert(t, s, k, c)
	inTx(t, s, func(tx store.Tx) error {
		for _, d := range []store.Device{device("a1", "alice.near", t0), device("b1", "bob.near", t0)} {
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		return tx.PutWebhook(ctx, store.Webhook{Owner: "alice.near", ID: "wh-a", SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")})
	})
	var task store.Task
	var seen store.Seen
	if err := s.Read(ctx, func(tx store.Tx) (err error) {
		task, seen, err = tx.TaskSeen(ctx, k.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if seen != (store.Seen{Owner: "alice.near", Webhook: "wh-a"}) || task.ID != k.ID {
		t.Fatalf("TaskSeen read %+v, %+v", task, seen)
	}
	for _, tc := range []struct {
		name, token, id string
		device          string // "" for ErrNotFound
		task            store.Task
		seen            store.Seen
	}{
		{"the owner's device and task", "hash-a1", k.ID, "a1", task, seen},
		{"another account's device", "hash-b1", k.ID, "b1", task, seen},
		{"no such task", "hash-a1", "absent-1", "a1", store.Task{}, store.Seen{}},
		{"no such token", "hash-nope", k.ID, "", store.Task{}, store.Seen{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d store.Device
			var gotTask store.Task
			var gotSeen store.Seen
			err := s.Read(ctx, func(tx store.Tx) (err error) {
				d, gotTask, gotSeen, err = tx.DeviceWithTask(ctx, []byte(tc.token), tc.id)
				return err
			})
			if tc.device == "" {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("got %v, want ErrNotFound", err)
				}
				return
			}
			if err != nil || d.ID != tc.device {
				t.Fatalf("device %q, %v; want %s", d.ID, err, tc.device)
			}
			if fmt.Sprint(gotTask) != fmt.Sprint(tc.task) || gotSeen != tc.seen {
				t.Errorf("read\n%+v %+v\nwant\n%+v %+v", gotTask, gotSeen, tc.task, tc.seen)
			}
		})
	}
}

func testDevices(t *testing.T, s store.Store) {
	err := s.Tx(ctx, func(tx store.Tx) error {
		for i, id := range []string{"d3", "d1", "d2"} {
			if err := tx.InsertDevice(ctx, device(id, "alice.near", t0.Add(time.Duration([]int{3, 1, 2}[i])*time.Minute))); err != nil {
				return err
			}
		}
		short := device("d4", "alice.near", t0)
		short.ValidUntil = t0.Add(time.Minute)
		if err := tx.InsertDevice(ctx, short); err != nil {
			return err
		}
		return tx.InsertDevice(ctx, device("b1", "bob.near", t0))
	})
	if err != nil {
		t.Fatal(err)
	}
	dup := device("d9", "alice.near", t0)
	dup.TokenHash = []byte("hash-d1")
	if err := s.Tx(ctx, func(tx store.Tx) error { return tx.InsertDevice(ctx, dup) }); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("two devices with one token: %v", err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		active, err := tx.ActiveDevices(ctx, "alice.near", t0.Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range active {
			ids = append(ids, d.ID)
		}
		if fmt.Sprint(ids) != "[d1 d2 d3]" {
			t.Errorf("active devices %v, want oldest first and no expired one", ids)
		}
		got, err := tx.DeviceByToken(ctx, []byte("hash-d2"))
		if err != nil || fmt.Sprint(got) != fmt.Sprint(device("d2", "alice.near", t0.Add(2*time.Minute))) {
			t.Errorf("DeviceByToken = %+v, %v", got, err)
		}
		if _, err := tx.DeviceByToken(ctx, []byte("nope")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown token: %v", err)
		}
		ended, err := tx.EndDevice(ctx, "d1", "replaced", t0.Add(5*time.Minute))
		if err != nil || !ended {
			t.Fatalf("EndDevice: %v %v", ended, err)
		}
		if again, _ := tx.EndDevice(ctx, "d1", "withdrawn", t0.Add(6*time.Minute)); again {
			t.Error("a device was ended twice")
		}
		d1, _ := tx.Device(ctx, "d1")
		if d1.EndReason != "replaced" || !d1.EndedAt.Equal(t0.Add(5*time.Minute)) {
			t.Errorf("ended device %+v", d1)
		}
		if err := tx.RecordKeyCheck(ctx, "d2", t0.Add(20*time.Minute), 1); err != nil {
			t.Fatal(err)
		}
		d2, _ := tx.Device(ctx, "d2")
		if d2.KeyGone != 1 || !d2.KeyCheckedAt.Equal(t0.Add(20*time.Minute)) {
			t.Errorf("key check not recorded: %+v", d2)
		}
		active, _ = tx.ActiveDevices(ctx, "alice.near", t0.Add(10*time.Minute))
		if len(active) != 2 {
			t.Errorf("%d active devices after ending one of three", len(active))
		}
		return nil
	})
}

// testDevicesInSignInOrder: devices signed in within one second are listed
// in the order they signed in, whatever their ids.
func testDevicesInSignInOrder(t *testing.T, s store.Store) {
	var want []string
	for i := 0; i < 6; i++ {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		want = append(want, id)
		if err := s.Tx(ctx, func(tx store.Tx) error {
			if err := tx.LockOwner(ctx, "alice.near"); err != nil {
				return err
			}
			return tx.InsertDevice(ctx, device(id, "alice.near", t0))
		}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		active, err := tx.ActiveDevices(ctx, "alice.near", t0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range active {
			got = append(got, d.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("devices signed in within one second: %v, want the sign-in order %v", got, want)
		}
		return nil
	})
}

// testEndDeviceDropsItsCopies: ending a device deletes every content key
// wrapped to it, and no other device's.
func testEndDeviceDropsItsCopies(t *testing.T, s store.Store) {
	k, c := NewTask("run1-1", "alice.near", "bot.near")
	c.DeviceCopies = map[string][]byte{"gone": []byte("copy-gone"), "kept": []byte("copy-kept")}
	insert(t, s, k, c)
	inTx(t, s, func(tx store.Tx) error {
		for _, id := range []string{"gone", "kept"} {
			d := device(id, "alice.near", t0)
			if err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		ended, err := tx.EndDevice(ctx, "gone", "withdrawn", t0)
		if !ended {
			t.Error("the device was not ended")
		}
		return err
	})
	inTx(t, s, func(tx store.Tx) error {
		if b, err := tx.DeviceCopy(ctx, k.ID, "gone"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the ended device's copy is still there: %q %v", b, err)
		}
		if b, err := tx.DeviceCopy(ctx, k.ID, "kept"); err != nil || string(b) != "copy-kept" {
			t.Errorf("the other device's copy: %q %v", b, err)
		}
		return nil
	})
}
