package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/approval"
	"countersign/approval/neartest"
	"countersign/client"
	"countersign/device"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

func TestSignInAndDevices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		alice := e.owner(t, "alice.near")
		sess, err := alice.SignIn(ctx, 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sess.Token, "os_") || sess.AccountID != "alice.near" || sess.ValidUntil != e.clock.Now().Add(24*time.Hour).Format("2006-01-02T15:04:05Z") {
			t.Fatalf("session %+v", sess)
		}
		devices, err := alice.Client.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(devices) != 1 || devices[0].ID != sess.DeviceID || !devices[0].This || devices[0].DevicePubkey != alice.Pubkey() {
			t.Fatalf("devices %+v", devices)
		}
		if found := storetest.Find(t, db, sess.Token); len(found) > 0 {
			t.Fatalf("the session token is stored: %v", found)
		}

		// An implicit account not on chain signs in with its own key; the
		// chain must still say it is not there (its keys may have changed).
		imp := e.owner(t, "")
		e.rpc.SetMode(neartest.DownClose)
		_, err = imp.SignIn(ctx, time.Hour)
		wantReason(t, err, 503, "upstream_unavailable")
		e.rpc.SetMode(neartest.Up)
		if _, err := imp.SignIn(ctx, time.Hour); err != nil {
			t.Fatalf("implicit account: %v", err)
		}

		if err := alice.Client.SignOut(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = alice.Client.Devices(ctx)
		wantReason(t, err, 401, "session_required")
	})
}

func TestSixthDeviceRetiresTheFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		first := e.owner(t, "alice.near")
		devs := []*device.Device{first}
		for i := 1; i < 6; i++ {
			devs = append(devs, e.another(t, first))
		}
		for i, d := range devs {
			e.clock.Add(time.Second)
			if _, err := d.SignIn(ctx, time.Hour); err != nil {
				t.Fatalf("device %d: %v", i+1, err)
			}
		}
		_, err := first.Client.Devices(ctx)
		wantReason(t, err, 401, "session_replaced")
		list, err := devs[5].Client.Devices(ctx)
		if err != nil || len(list) != 5 {
			t.Fatalf("%d devices after a sixth sign-in (%v)", len(list), err)
		}
		for _, d := range devs[1:] {
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatalf("a newer device was retired: %v", err)
			}
		}
	})
}

func TestSessionsEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		t.Run("at valid_until, never extended", func(t *testing.T) {
			d := e.owner(t, "short.near")
			if _, err := d.SignIn(ctx, time.Hour); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(59 * time.Minute)
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatalf("before valid_until: %v", err)
			}
			e.clock.Add(time.Minute)
			_, err := d.Client.Devices(ctx)
			wantReason(t, err, 401, "session_required")
		})
		t.Run("after two checks find the key gone", func(t *testing.T) {
			d := e.owner(t, "gone.near")
			if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			key := d.Signer.(device.WalletSigner).Wallet.Key.PublicKey().String()
			e.rpc.RemoveKey("gone.near", key)
			e.clock.Add(11 * time.Minute)
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatalf("one gone answer ended the session: %v", err)
			}
			e.clock.Add(5 * time.Minute) // not yet due for a recheck
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatalf("a recheck came early: %v", err)
			}
			e.clock.Add(6 * time.Minute)
			_, err := d.Client.Devices(ctx)
			wantReason(t, err, 401, "session_required")
		})
		t.Run("a key that comes back resets the count", func(t *testing.T) {
			d := e.owner(t, "flaky.near")
			if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			key := d.Signer.(device.WalletSigner).Wallet.Key.PublicKey().String()
			e.rpc.RemoveKey("flaky.near", key)
			e.clock.Add(11 * time.Minute)
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatal(err)
			}
			e.rpc.AddKey("flaky.near", key, neartest.FullAccess())
			e.clock.Add(11 * time.Minute)
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatal(err)
			}
			e.rpc.RemoveKey("flaky.near", key)
			e.clock.Add(11 * time.Minute)
			if _, err := d.Client.Devices(ctx); err != nil {
				t.Fatalf("gone, back, gone ended the session: %v", err)
			}
		})
		t.Run("a due recheck with the chain down is 503, not valid", func(t *testing.T) {
			d := e.owner(t, "down.near")
			if _, err := d.SignIn(ctx, 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			e.rpc.SetMode(neartest.Down500)
			defer e.rpc.SetMode(neartest.Up)
			e.clock.Add(11 * time.Minute)
			_, err := d.Client.Devices(ctx)
			wantReason(t, err, 503, "upstream_unavailable")
			var ce *client.Error
			errors.As(err, &ce)
			if ce.Terminal || ce.RetryAfter == 0 {
				t.Fatalf("503 without terminal:false and Retry-After: %+v", ce)
			}
		})
	})
}

// signInBody is a signed sign-in statement, built by hand so refusals can
// break any piece of it.
func signInBody(t *testing.T, d *device.Device, validUntil time.Time, recipient string) map[string]any {
	t.Helper()
	sentence, err := approval.SignIn{Account: d.Account, DeviceKey: d.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := d.Signer.Sign(sentence, recipient)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"account_id": d.Account, "device_pubkey": d.Pubkey(), "valid_until": validUntil.Format(approval.TimeLayout),
		"public_key": signed.PublicKey, "signature": signed.Signature, "nonce": signed.Nonce}
}

func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestSignInRefusals: every refusal of a sign-in, each writing nothing and
// spending no nonce.
func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		now := e.clock.Now()
		alice := e.owner(t, "alice.near")
		limited := e.owner(t, "limited.near")
		e.rpc.AddKey("limited.near", limited.Signer.(device.WalletSigner).Wallet.Key.PublicKey().String(), neartest.FunctionCall("app.near", "act"))
		stranger := e.owner(t, "")
		stranger.Account = "alice.near" // a key alice's account does not have

		good := func() map[string]any { return signInBody(t, alice, now.Add(time.Hour), e.recipient) }
		with := func(k string, v any) map[string]any { b := good(); b[k] = v; return b }
		offCurve := "p256:BA" + strings.Repeat("A", 85)
		cases := []struct {
			name   string
			body   any
			status int
			reason string
		}{
			{"not JSON", "{", 400, "invalid_request"},
			{"two values", `{"account_id":"a"} {}`, 400, "invalid_request"},
			{"unknown member", with("extra", 1), 400, "invalid_request"},
			{"over 64 KiB", with("account_id", strings.Repeat("a", 70<<10)), 400, "invalid_request"},
			{"bad account id", with("account_id", "Alice"), 400, "invalid_request"},
			{"device key not p256", with("device_pubkey", "ed25519:abc"), 400, "invalid_request"},
			{"device key off the curve", with("device_pubkey", offCurve), 400, "invalid_request"},
			{"valid_until not the format", with("valid_until", now.Add(time.Hour).Format(time.RFC3339Nano)+"x"), 400, "invalid_request"},
			{"garbled signature", with("signature", "!!!"), 400, "invalid_request"},
			{"short nonce", with("nonce", "AAAA"), 400, "invalid_request"},
			{"unknown key type", with("public_key", "rsa:abc"), 400, "invalid_request"},
			{"signature of another statement", with("valid_until", now.Add(2*time.Hour).Format(approval.TimeLayout)), 400, "invalid_statement"},
			{"another recipient", signInBody(t, alice, now.Add(time.Hour), "other-service"), 400, "invalid_statement"},
			{"the recipient every deployment once had", signInBody(t, alice, now.Add(time.Hour), "countersign"), 400, "invalid_statement"},
			{"valid_until past", signInBody(t, alice, now.Add(-time.Second), e.recipient), 400, "invalid_statement"},
			{"valid_until over 30 days", signInBody(t, alice, now.Add(30*24*time.Hour+11*time.Minute), e.recipient), 400, "invalid_statement"},
			{"function-call key", signInBody(t, limited, now.Add(time.Hour), e.recipient), 400, "invalid_statement"},
			{"key not of the account", signInBody(t, stranger, now.Add(time.Hour), e.recipient), 400, "invalid_statement"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body := post(t, e.url+"/inbox/session", tc.body)
				if status != tc.status || body["reason"] != tc.reason || body["terminal"] != true || body["error"] == "" {
					t.Fatalf("answered %d %v, want %d %s", status, body, tc.status, tc.reason)
				}
			})
		}
		// Nothing was written: alice has no device, and a statement whose
		// nonce went through a refused request still signs in, once.
		if n := countDevices(t, db); n != 0 {
			t.Fatalf("refused sign-ins wrote %d devices", n)
		}
		stmt := good()
		mangled := map[string]any{}
		for k, v := range stmt {
			mangled[k] = v
		}
		mangled["valid_until"] = now.Add(3 * time.Hour).Format(approval.TimeLayout)
		if status, _ := post(t, e.url+"/inbox/session", mangled); status != 400 {
			t.Fatalf("mangled statement: %d", status)
		}
		if status, body := post(t, e.url+"/inbox/session", stmt); status != 200 {
			t.Fatalf("the statement after a refusal with its nonce: %d %v", status, body)
		}
		status, body := post(t, e.url+"/inbox/session", stmt)
		if status != 400 || body["reason"] != "invalid_statement" || body["error"] != "this statement was used already; sign a new one" {
			t.Fatalf("a replayed statement: %d %v", status, body)
		}
		if n := countDevices(t, db); n != 1 {
			t.Fatalf("a replayed statement left %d devices, want the first one only", n)
		}

		e.rpc.SetMode(neartest.DownHang)
		defer e.rpc.SetMode(neartest.Up)
		status, body = post(t, e.url+"/inbox/session", signInBody(t, e.owner(t, "late.near"), now.Add(time.Hour), e.recipient))
		if status != 503 || body["reason"] != "upstream_unavailable" || body["terminal"] != false {
			t.Fatalf("RPC down: %d %v", status, body)
		}
	})
}

func countDevices(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	n := 0
	for _, acct := range []string{"alice.near", "limited.near"} {
		_ = db.Tx(ctx, func(tx store.Tx) error {
			d, err := tx.ActiveDevices(ctx, acct, time.Now().Add(-time.Hour))
			n += len(d)
			return err
		})
	}
	return n
}

// TestOneStatementOneSession: 50 parallel sign-ins with one statement open
// exactly one session.
func TestOneStatementOneSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		alice := e.owner(t, "alice.near")
		body := signInBody(t, alice, e.clock.Now().Add(time.Hour), e.recipient)
		var ok, replay atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, out := post(t, e.url+"/inbox/session", body)
				switch {
				case status == 200:
					ok.Add(1)
				case status == 400 && out["reason"] == "invalid_statement":
					replay.Add(1)
				default:
					t.Errorf("unexpected answer %d %v", status, out)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 || replay.Load() != 49 {
			t.Fatalf("%d sessions and %d refusals from one statement", ok.Load(), replay.Load())
		}
	})
}

func TestWithdrawDevice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		phone := e.owner(t, "alice.near")
		laptop := e.another(t, phone)
		bob := e.owner(t, "bob.near")
		for _, d := range []*device.Device{phone, laptop, bob} {
			if _, err := d.SignIn(ctx, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		list, _ := laptop.Client.Devices(ctx)
		var phoneID string
		for _, d := range list {
			if !d.This {
				phoneID = d.ID
			}
		}
		bobList, _ := bob.Client.Devices(ctx)
		bobID := bobList[0].ID

		confirm := func(d *device.Device, id string) client.Confirmation {
			c, err := d.Confirm(approval.ActionWithdrawDevice(id))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		// Refusals first: none spends the confirmation it carries.
		good := confirm(laptop, phoneID)
		wantReason(t, laptop.Client.WithdrawDevice(ctx, "nosuch", good), 400, "invalid_request")
		wantReason(t, laptop.Client.WithdrawDevice(ctx, bobID, confirm(laptop, bobID)), 400, "invalid_request")
		other := confirm(laptop, "another-device")
		wantReason(t, laptop.Client.WithdrawDevice(ctx, phoneID, other), 403, "confirmation_required")
		byBob := confirm(bob, phoneID)
		wantReason(t, laptop.Client.WithdrawDevice(ctx, phoneID, byBob), 403, "confirmation_required")
		e.clock.Add(11 * time.Minute)
		wantReason(t, laptop.Client.WithdrawDevice(ctx, phoneID, good), 403, "confirmation_required")
		e.clock.Add(-11 * time.Minute)

		if err := laptop.Client.WithdrawDevice(ctx, phoneID, good); err != nil {
			t.Fatal(err)
		}
		_, err := phone.Client.Devices(ctx)
		wantReason(t, err, 401, "session_required")
		wantReason(t, laptop.Client.WithdrawDevice(ctx, phoneID, good), 400, "invalid_request")
		if _, err := bob.Client.Devices(ctx); err != nil {
			t.Fatalf("bob's device suffered: %v", err)
		}
	})
}
