package storetest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"countersign/store"
)

func rewrapTests() []storeTest {
	return []storeTest{{"RewrapSealedSecrets", testRewrap}, {"KeyIDsInUse", testKeyIDsInUse}, {"SealedSamples", testSealedSamples}}
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

// SealedSamples gives, per key id, one row of each kind sealed under it,
// with the row id its sealing is bound to; a task whose sealed copy is gone
// and a run without a receipt key give none.
func testSealedSamples(t *testing.T, s store.Store) {
	k, c := NewTask("ss-1", "alice.near", "bot.near")
	k.KeyID = 3
	insert(t, s, k, c)
	gone, gc := NewTask("ss-2", "alice.near", "bot.near")
	gone.KeyID = 4
	gc.Sealed = nil
	insert(t, s, gone, gc)
	err := s.Tx(ctx, func(tx store.Tx) error {
		for _, uuid := range []string{"00000000-0000-4000-8000-00000000000c", "00000000-0000-4000-8000-00000000000d"} {
			p := NewProject("alice.near", "payments-"+uuid[len(uuid)-1:], uuid)
			p.CredsKeyID, p.Creds = 1, []byte("creds-"+uuid)
			if err := tx.PutProject(ctx, p); err != nil {
				return err
			}
		}
		if err := tx.PutWebhook(ctx, store.Webhook{Owner: "alice.near", ID: "wh", SetAt: t0, SetByKey: "k", KeyID: 2, Sealed: []byte("hook-2")}); err != nil {
			return err
		}
		for _, r := range []store.Run{
			{ID: "run-1", ReceiptKeyID: 1, ReceiptKey: []byte("rk-1")},
			{ID: "run-4", ReceiptKeyID: 4},
		} {
			r.Agent, r.Owner, r.ProjectUUID, r.Operation, r.ComputeLimit, r.InputSHA256, r.StartedAt = "bot.near", "alice.near", "p", "guess", time.Second, "x", t0
			if err := tx.InsertRun(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32][]string{}
	for _, id := range []uint32{1, 2, 3, 4, 9} {
		var samples []store.Sealed
		if err := s.Tx(ctx, func(tx store.Tx) (err error) { samples, err = tx.SealedSamples(ctx, id); return err }); err != nil {
			t.Fatal(err)
		}
		for _, x := range samples {
			if x.KeyID != id || len(x.Blob) == 0 {
				t.Errorf("a sample under key %d: %+v", id, x)
			}
			got[id] = append(got[id], x.Kind+" "+strings.ReplaceAll(x.Row, "\x00", "|")+" "+string(x.Blob))
		}
	}
	for _, v := range got {
		sort.Strings(v)
	}
	want := map[uint32][]string{
		2: {"webhook alice.near hook-2"},
		3: {"task " + k.ProjectUUID + "|alice.near|ss-1 sealed-ss-1"},
	}
	if len(got[1]) != 2 || !strings.HasPrefix(got[1][0], "project 00000000-0000-4000-8000-00000000000") || got[1][1] != "run run-1 rk-1" ||
		fmt.Sprint(got[2]) != fmt.Sprint(want[2]) || fmt.Sprint(got[3]) != fmt.Sprint(want[3]) || len(got[4]) != 0 || len(got[9]) != 0 {
		t.Fatalf("samples %v", got)
	}
}
