package sealing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestReceiptKeys: a task's receipt key is the content key's, a run's own is
// random, and neither gives the bare SHA-256.
func TestReceiptKeys(t *testing.T) {
	t.Parallel()
	ck := NewContentKey()
	a, b := ck.ReceiptKey(), ck.ReceiptKey()
	msg := []byte(`{"operation":"guess_start","max":10}`)
	if a.Sum(msg) != b.Sum(msg) {
		t.Fatal("one content key gives two receipt keys")
	}
	if NewContentKey().ReceiptKey().Sum(msg) == a.Sum(msg) {
		t.Fatal("two content keys give one receipt key")
	}
	r1, r2 := NewReceiptKey(), NewReceiptKey()
	if r1.Sum(msg) == r2.Sum(msg) || len(r1.Bytes()) != KeySize {
		t.Fatal("random receipt keys are not random")
	}
	bare := sha256.Sum256(msg)
	for _, k := range []*ReceiptKey{a, r1} {
		if s := k.Sum(msg); s == hex.EncodeToString(bare[:]) || len(s) != 64 || strings.ToLower(s) != s {
			t.Fatalf("a receipt hash %q", s)
		}
	}
	if _, err := ReceiptKeyFromBytes(make([]byte, 31)); err == nil {
		t.Fatal("a 31-byte receipt key was accepted")
	}
	var empty ReceiptKey
	if empty.Bytes() != nil || empty.Verify(msg, a.Sum(msg)) {
		t.Fatal("an empty receipt key keys something")
	}
	if got := fmt.Sprintf("%v %+v", *a, a); strings.Contains(got, hex.EncodeToString(a.Bytes())) {
		t.Fatal("printing a receipt key shows its bytes")
	}
}

// TestMAC: the keyed hash of a kept value is HMAC-SHA256 under a subkey of
// the master key for its purpose, bound to its row; it is the same for the
// same key id, row and bytes only.
func TestMAC(t *testing.T) {
	t.Parallel()
	kr, err := ParseKeyring("1:" + strings.Repeat("11", 32) + ",2:" + strings.Repeat("22", 32))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"operation":"guess_start","max":10}`)
	m, err := kr.MAC(1, "call-body", "row", body)
	if err != nil {
		t.Fatal(err)
	}
	// Spelled out.
	master, _ := hex.DecodeString(strings.Repeat("11", 32))
	sub := hmac.New(sha256.New, master)
	sub.Write([]byte("mac:v1:call-body"))
	h := hmac.New(sha256.New, sub.Sum(nil))
	h.Write(binary.BigEndian.AppendUint32(nil, 3))
	h.Write([]byte("row"))
	h.Write(body)
	if want := hex.EncodeToString(h.Sum(nil)); m != want {
		t.Fatalf("MAC = %s, want %s", m, want)
	}
	again, _ := kr.MAC(1, "call-body", "row", body)
	if again != m {
		t.Fatal("the same body is not recognised")
	}
	for name, f := range map[string]func() (string, error){
		"another key id":  func() (string, error) { return kr.MAC(2, "call-body", "row", body) },
		"another purpose": func() (string, error) { return kr.MAC(1, "call-answer", "row", body) },
		"another row":     func() (string, error) { return kr.MAC(1, "call-body", "row2", body) },
		"another body":    func() (string, error) { return kr.MAC(1, "call-body", "row", append(body, ' ')) },
		"row and body cut elsewhere": func() (string, error) {
			return kr.MAC(1, "call-body", "ro", append([]byte("w"), body...))
		},
	} {
		if got, err := f(); err != nil || got == m {
			t.Errorf("%s: %s %v", name, got, err)
		}
	}
	bare := sha256.Sum256(body)
	if m == hex.EncodeToString(bare[:]) {
		t.Fatal("the MAC is the bare hash")
	}
	for name, f := range map[string]func() (string, error){
		"an unknown key id": func() (string, error) { return kr.MAC(3, "call-body", "row", body) },
		"a bad purpose":     func() (string, error) { return kr.MAC(1, "Call Body", "row", body) },
		"no row":            func() (string, error) { return kr.MAC(1, "call-body", "", body) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s was accepted", name)
		}
	}
}
