package storetest

import (
	"fmt"
	"sort"
	"testing"

	"countersign/store"
)

func rewrapTests() []storeTest {
	return []storeTest{{"RewrapSealedSecrets", testRewrap}, {"KeyIDsInUse", testKeyIDsInUse}}
}

func testRewrap(t *testing.T, s store.Store) {
	err := s.Tx(ctx, func(tx store.Tx) error {
		p := NewProject("alice.near", "payments", "00000000-0000-4000-8000-00000000000a")
		p.CredsKeyID, p.Creds = 1, []byte("creds-1")
		if err := tx.PutProject(ctx, p); err != nil {
			return err
		}
		if err := tx.PutWebhook(ctx, store.Webhook{Owner: "alice.near", ID: "wh", SetAt: t0, SetByKey: "k", KeyID: 2, Sealed: []byte("hook-2")}); err != nil {
			return err
		}
		c := NewCall("k1", "body")
		if _, _, err := tx.ClaimCall(ctx, c); err != nil {
			return err
		}
		c.AnswerKeyID, c.Answer = 1, []byte("answer-1")
		return tx.AnswerCall(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Tx(ctx, func(tx store.Tx) error {
		old, err := tx.SealedUnder(ctx, 2, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range old {
			got = append(got, fmt.Sprintf("%s %q %d %s", x.Kind, x.Row, x.KeyID, x.Blob))
		}
		sort.Strings(got)
		c := NewCall("k1", "body")
		want := []string{fmt.Sprintf("call %q 1 answer-1", c.Agent+"\x00"+c.Owner+"\x00"+c.Project+"\x00"+c.Key),
			`project "00000000-0000-4000-8000-00000000000a" 1 creds-1`}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("sealed under an old key:\n%v\nwant\n%v", got, want)
		}
		for _, x := range old {
			ok, err := tx.ReplaceSealed(ctx, x, 2, append([]byte("re-"), x.Blob...))
			if err != nil || !ok {
				t.Fatalf("replace %s: %v %v", x.Kind, ok, err)
			}
			if ok, _ := tx.ReplaceSealed(ctx, x, 2, []byte("again")); ok {
				t.Fatalf("a %s was replaced twice from its old key", x.Kind)
			}
		}
		if left, _ := tx.SealedUnder(ctx, 2, 100); len(left) != 0 {
			t.Fatalf("still under an old key: %v", left)
		}
		p, _ := tx.Project(ctx, "alice.near", "payments")
		if p.CredsKeyID != 2 || string(p.Creds) != "re-creds-1" {
			t.Fatalf("project after rewrap: %d %s", p.CredsKeyID, p.Creds)
		}
		return nil
	})
}

// KeyIDsInUse names every master key id the data needs and what needs it.
func testKeyIDsInUse(t *testing.T, s store.Store) {
	k, c := NewTask("ku-1", "alice.near", "bot.near")
	k.KeyID = 3
	insert(t, s, k, c)
	err := s.Tx(ctx, func(tx store.Tx) error {
		p := NewProject("alice.near", "payments", "00000000-0000-4000-8000-00000000000b")
		p.CredsKeyID, p.Creds = 1, []byte("creds-1")
		if err := tx.PutProject(ctx, p); err != nil {
			return err
		}
		return tx.PutWebhook(ctx, store.Webhook{Owner: "alice.near", ID: "wh", SetAt: t0, SetByKey: "k", KeyID: 2, Sealed: []byte("hook-2")})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[uint32][]string
	if err := s.Tx(ctx, func(tx store.Tx) (err error) { got, err = tx.KeyIDsInUse(ctx); return err }); err != nil {
		t.Fatal(err)
	}
	want := map[uint32][]string{1: {"project credentials"}, 2: {"webhooks"}, 3: {"tasks"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("key ids in use: %v, want %v", got, want)
	}
}
