package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store"
	"countersign/store/storetest"
)

// pushKeys are a browser's subscription keys: a fresh P-256 point and 16
// random bytes, unpadded base64url.
func pushKeys(t *testing.T) (string, string) {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(auth)
}

// putPushRaw sends PUT /inbox/push with body as given.
func putPushRaw(t *testing.T, w *servicetest.World, token string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, w.URL+"/inbox/push", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

func devicePush(t *testing.T, w *servicetest.World) []byte {
	t.Helper()
	var list []store.Device
	if err := w.DB.Tx(context.Background(), func(tx store.Tx) (err error) {
		list, err = tx.ActiveDevices(context.Background(), w.Owner.Account, w.Clock.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return list[0].Push
}

// TestPushSubscriptionRefusals: PUT /inbox/push (SPEC §6, §10), with the
// production allow-list, refuses what is not a known push service's
// subscription — 400 invalid_request with a sentence that repeats neither
// the endpoint nor a key, nothing stored — and takes one that is, sealed:
// it is shown only as push: true, replaced by the next PUT, removed by
// DELETE (which may be repeated), and never logged.
func TestPushSubscriptionRefusals(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithPushHostsOnly())
	token := w.Owner.Client.Session
	p256dh, auth := pushKeys(t)
	const fcm = "https://fcm.googleapis.com/fcm/send/dGVzdC1yZWdpc3RyYXRpb24:APA91bH"
	sub := func(endpoint, p, a string) []byte {
		b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{"p256dh": p, "auth": a}})
		return b
	}
	offCurve := base64.RawURLEncoding.EncodeToString(append([]byte{4}, bytes.Repeat([]byte{7}, 64)...))
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"no endpoint", sub("", p256dh, auth), "the push endpoint is empty"},
		{"http", sub("http://fcm.googleapis.com/fcm/send/x", p256dh, auth), "must use https"},
		{"a host of no push service", sub("https://push.example.com/x", p256dh, auth), "not a known push service"},
		{"a lookalike host", sub("https://fcm.googleapis.com.evil.example/x", p256dh, auth), "not a known push service"},
		{"the apex of notify.windows.com", sub("https://notify.windows.com/w/?token=x", p256dh, auth), "not a known push service"},
		{"another port", sub("https://web.push.apple.com:8443/x", p256dh, auth), "port 443"},
		{"userinfo", sub("https://a:b@fcm.googleapis.com/x", p256dh, auth), "user name or password"},
		{"a fragment", sub(fcm+"#x", p256dh, auth), "fragment"},
		{"loopback", sub("https://127.0.0.1/push/x", p256dh, auth), "public host"},
		{"link-local", sub("https://169.254.169.254/latest", p256dh, auth), "public host"},
		{"too long", sub(fcm+strings.Repeat("A", 2100), p256dh, auth), "2,048"},
		{"no p256dh", sub(fcm, "", auth), "keys.p256dh"},
		{"p256dh off the curve", sub(fcm, offCurve, auth), "keys.p256dh"},
		{"p256dh in standard base64", sub(fcm, strings.NewReplacer("-", "+", "_", "/").Replace(p256dh)+"+/", auth), "keys.p256dh"},
		{"auth of 8 bytes", sub(fcm, p256dh, auth[:11]), "keys.auth"},
		{"an unknown member", []byte(`{"endpoint":"` + fcm + `","keys":{"p256dh":"` + p256dh + `","auth":"` + auth + `"},"topic":"x"}`), "unknown member `topic`"},
		{"keys not an object", []byte(`{"endpoint":"` + fcm + `","keys":"` + p256dh + `"}`), "keys"},
		{"not JSON", []byte(`endpoint=` + fcm), "malformed JSON"},
	} {
		status, body := putPushRaw(t, w, token, c.body)
		msg, _ := body["error"].(string)
		if status != http.StatusBadRequest || body["reason"] != "invalid_request" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want 400 invalid_request saying %q", c.name, status, body, c.want)
		}
		for _, secret := range []string{"dGVzdC1yZWdpc3RyYXRpb24", p256dh, auth[:11]} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s: the refusal repeats what was sent: %s", c.name, msg)
			}
		}
		if devicePush(t, w) != nil {
			t.Fatalf("%s: a refused subscription was stored", c.name)
		}
	}
	if status, body := putPushRaw(t, w, "", sub(fcm, p256dh, auth)); status != http.StatusUnauthorized || body["reason"] != "session_required" {
		t.Errorf("without a session: %d %v", status, body)
	}

	// Taken: sealed, shown as push: true only, replaced, removed.
	ctx := context.Background()
	on, err := w.Owner.Client.PutPush(ctx, client.PushSubscription{Endpoint: fcm, Keys: client.PushKeys{P256dh: p256dh, Auth: auth}})
	if err != nil || !on {
		t.Fatalf("a good subscription: %v %v", on, err)
	}
	first := devicePush(t, w)
	if first == nil || bytes.Contains(first, []byte("dGVzdC1yZWdpc3RyYXRpb24")) || bytes.Contains(first, []byte(p256dh)) {
		t.Fatalf("stored: %q", first)
	}
	if list, _ := w.Owner.Client.Devices(ctx); len(list) != 1 || !list[0].Push {
		t.Fatalf("devices %+v", list)
	}
	withExpiry := []byte(`{"endpoint":"https://web.push.apple.com/QGFub3RoZXI","expirationTime":null,"keys":{"p256dh":"` + p256dh + `","auth":"` + auth + `"}}`)
	if status, body := putPushRaw(t, w, token, withExpiry); status != 200 || body["push"] != true {
		t.Fatalf("PushSubscription.toJSON's own shape: %d %v", status, body)
	}
	if again := devicePush(t, w); again == nil || bytes.Equal(again, first) {
		t.Fatal("the second PUT did not replace the subscription")
	}
	for range 2 {
		if on, err := w.Owner.Client.DeletePush(ctx); err != nil || on {
			t.Fatalf("DELETE: %v %v", on, err)
		}
	}
	if devicePush(t, w) != nil {
		t.Fatal("DELETE left the subscription")
	}
	k1, err1 := w.Owner.Client.PushKey(ctx)
	k2, err2 := w.Owner.Client.PushKey(ctx)
	if err1 != nil || err2 != nil || k1 != k2 || len(k1) != 87 {
		t.Fatalf("the VAPID key: %q %q %v %v", k1, k2, err1, err2)
	}
	if logs := w.Logs.String(); strings.Contains(logs, "dGVzdC1yZWdpc3RyYXRpb24") || strings.Contains(logs, p256dh) || strings.Contains(logs, auth) ||
		!strings.Contains(logs, "push subscription set") {
		t.Fatal("the log holds a subscription, or not its setting")
	}
}
