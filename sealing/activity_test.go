package sealing_test

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"testing"

	"countersign/sealing"
)

// TestEntryKeys: an entry's key is its own (another entry, owner, project
// or key id derives another), opens only its own body, and its device copy
// opens only as that entry's, never as a task's content key.
func TestEntryKeys(t *testing.T) {
	t.Parallel()
	kr := sealing.GenerateKeyring()
	kr2, err := kr.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	const (
		project = "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60"
		other   = "00000000-0000-4000-8000-000000000002"
		id      = "r7k2m9q4x1z8c3v6b5n0p2w4s6-1"
	)
	ek, err := kr2.EntryKey(1, project, "alice.near", id)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := kr2.EntryKey(1, project, "alice.near", id)
	body := []byte(`{"result":{"text":"Payment sent"},"summary":"pay $1","title":"Pay"}`)
	blob, err := ek.Seal(body)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := again.Open(blob); err != nil || !bytes.Equal(pt, body) {
		t.Fatalf("the same derivation does not open the body: %q, %v", pt, err)
	}
	for name, k := range map[string]struct {
		keyID              uint32
		project, owner, id string
	}{
		"another entry":   {1, project, "alice.near", "r7k2m9q4x1z8c3v6b5n0p2w4s6"},
		"another owner":   {1, project, "bob.near", id},
		"another project": {1, other, "alice.near", id},
		"another key id":  {2, project, "alice.near", id},
	} {
		o, err := kr2.EntryKey(k.keyID, k.project, k.owner, k.id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Open(blob); !errors.Is(err, sealing.ErrDecrypt) {
			t.Errorf("%s opens the body: %v", name, err)
		}
	}
	for name, bad := range map[string][3]string{
		"a task id with ':'": {project, "alice.near", "a:b"},
		"an upper-case uuid": {"4F1C2B9E-8A55-4C6E-9D0F-2B7A1E3C5D60", "alice.near", id},
		"an owner with '/'":  {project, "alice/near", id},
	} {
		if _, err := kr2.EntryKey(1, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%s derives a key", name)
		}
	}

	dev, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := sealing.WrapEntryKey(dev.PublicKey(), ek)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sealing.UnwrapEntryKey(dev, id, cp)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := got.Open(blob); err != nil || !bytes.Equal(pt, body) {
		t.Fatalf("the unwrapped key does not open the body: %v", err)
	}
	if _, err := sealing.UnwrapEntryKey(dev, "r7k2m9q4x1z8c3v6b5n0p2w4s6-2", cp); !errors.Is(err, sealing.ErrDecrypt) {
		t.Errorf("another entry's id unwraps the copy: %v", err)
	}
	if _, err := sealing.UnwrapContentKey(dev, id, cp); !errors.Is(err, sealing.ErrDecrypt) {
		t.Errorf("an entry's copy unwraps as the task's content key: %v", err)
	}
	ck := sealing.NewContentKey()
	dc, _ := sealing.WrapContentKey(dev.PublicKey(), id, ck)
	if _, err := sealing.UnwrapEntryKey(dev, id, dc); !errors.Is(err, sealing.ErrDecrypt) {
		t.Errorf("a task's device copy unwraps as its entry's key: %v", err)
	}
}
