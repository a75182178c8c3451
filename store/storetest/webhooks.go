package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"countersign/store"
)

func webhookTests() []storeTest {
	return []storeTest{
		{"Webhooks", testWebhooks},
	}
}

func testWebhooks(t *testing.T, s store.Store) {
	w := store.Webhook{Owner: "alice.near", ID: "wh1", SetAt: t0, SetByKey: "ed25519:k", KeyID: 1, Sealed: []byte("sealed")}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.Webhook(ctx, "alice.near"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("no webhook yet: %v", err)
		}
		if err := tx.PutWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		w.ID, w.Sealed = "wh2", []byte("sealed2")
		if err := tx.PutWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		got, err := tx.Webhook(ctx, "alice.near")
		if err != nil || fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("webhook %+v %v", got, err)
		}
		for i := 1; i <= 3; i++ {
			if err := tx.RecordAttempt(ctx, store.WebhookAttempt{Owner: "alice.near", EventID: "e1", Type: "task_created", TaskID: "t-1",
				Attempt: i, StatusCode: 500, Error: "HTTP 500", At: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := tx.AttemptCount(ctx, "e1"); n != 3 {
			t.Errorf("%d attempts counted", n)
		}
		list, _ := tx.Attempts(ctx, "alice.near", 2)
		if len(list) != 2 || list[0].Attempt != 3 {
			t.Errorf("latest attempts %+v", list)
		}
		if ok, _ := tx.DeleteWebhook(ctx, "alice.near"); !ok {
			t.Error("delete did nothing")
		}
		return nil
	})
}
