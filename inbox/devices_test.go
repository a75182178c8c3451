package inbox_test

import (
	"context"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

var ctx = context.Background()

// copiesOf counts, reading the database directly, the content keys wrapped
// to a device.
func copiesOf(t *testing.T, db *sqlstore.DB, deviceID string) int {
	t.Helper()
	var n int
	var err error
	if pg := db.Postgres(); pg != nil {
		err = pg.QueryRow(ctx, "SELECT COUNT(*) FROM device_copies WHERE device_id = $1", deviceID).Scan(&n)
	} else {
		err = db.SQLite().QueryRowContext(ctx, "SELECT COUNT(*) FROM device_copies WHERE device_id = ?", deviceID).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// signIn signs in another device of the world owner's wallet.
func signIn(t *testing.T, w *servicetest.World, wallet *approval.Wallet) (*device.Device, client.Session) {
	t.Helper()
	d := w.Device(wallet)
	sess, err := d.SignIn(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return d, sess
}

// TestEndedDevicesLoseTheirCopies: signing out, a withdrawal and a
// retirement by a sixth sign-in each delete the device's key copies, read
// from the database itself; the devices still signed in keep theirs.
func TestEndedDevicesLoseTheirCopies(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		wallet := w.Owner.Signer.(device.WalletSigner).Wallet
		first, err := w.Owner.Client.Devices(ctx)
		if err != nil || len(first) != 1 {
			t.Fatalf("devices %v %v", first, err)
		}
		out, outSess := signIn(t, w, wallet)
		_, gone := signIn(t, w, wallet)
		w.Pay()
		w.Pay()
		for _, id := range []string{first[0].ID, outSess.DeviceID, gone.DeviceID} {
			if n := copiesOf(t, db, id); n != 2 {
				t.Fatalf("device %s holds %d copies before it ends, want 2", id, n)
			}
		}

		if err := out.Client.SignOut(ctx); err != nil {
			t.Fatal(err)
		}
		if n := copiesOf(t, db, outSess.DeviceID); n != 0 {
			t.Errorf("a signed-out device keeps %d copies", n)
		}
		conf, err := w.Owner.Confirm(approval.ActionWithdrawDevice(gone.DeviceID))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Owner.Client.WithdrawDevice(ctx, gone.DeviceID, conf); err != nil {
			t.Fatal(err)
		}
		if n := copiesOf(t, db, gone.DeviceID); n != 0 {
			t.Errorf("a withdrawn device keeps %d copies", n)
		}

		// Five more sign-ins retire the first device, the oldest.
		var kept []string
		for i := 0; i < 5; i++ {
			_, s := signIn(t, w, wallet)
			kept = append(kept, s.DeviceID)
		}
		if n := copiesOf(t, db, first[0].ID); n != 0 {
			t.Errorf("a retired device keeps %d copies", n)
		}
		for _, id := range kept {
			if n := copiesOf(t, db, id); n != 2 {
				t.Errorf("device %s, still signed in, holds %d copies, want 2", id, n)
			}
		}
	})
}

// TestSixthSignInWithinOneSecondRetiresTheFirst: six devices that sign in
// within one second (the service's clock does not move) are ordered as they
// signed in, so the sixth retires the first and no other; for three owners in
// a row, so that an order left to chance cannot pass.
func TestSixthSignInWithinOneSecondRetiresTheFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		for round := 0; round < 3; round++ {
			wallet, err := approval.NewWallet()
			if err != nil {
				t.Fatal(err)
			}
			var devices []*device.Device
			for i := 0; i < 6; i++ {
				d, _ := signIn(t, w, wallet)
				devices = append(devices, d)
			}
			_, err = devices[0].Client.Devices(ctx)
			if client.Reason(err) != "session_replaced" {
				t.Fatalf("round %d: the first device, signed in longest ago, was not retired: %v", round, err)
			}
			for i, d := range devices[1:] {
				if _, err := d.Client.Devices(ctx); err != nil {
					t.Errorf("round %d: device %d was retired instead: %v", round, i+2, err)
				}
			}
		}
	})
}
