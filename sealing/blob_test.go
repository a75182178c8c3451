package sealing

import (
	"bytes"
	"crypto/ecdh"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
)

const (
	testUUID  = "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60"
	testOwner = "alice.near"
	testTask  = "r7k2m9q4x1z8c3v6b5n0p2w4s6-1"
)

// checkTamper asserts that open refuses every one-byte change of blob (two
// different changes per position), every truncation, an extension, and
// every version byte but 0x01, always with an error wrapping ErrDecrypt and
// no plaintext.
func checkTamper(t *testing.T, blob []byte, open func([]byte) ([]byte, error)) {
	t.Helper()
	if _, err := open(blob); err != nil {
		t.Fatalf("the untouched blob does not open: %v", err)
	}
	refuse := func(what string, b []byte) {
		t.Helper()
		pt, err := open(b)
		if err == nil || pt != nil {
			t.Fatalf("%s: opened to %q", what, pt)
		}
		if !errors.Is(err, ErrDecrypt) {
			t.Fatalf("%s: error %v does not wrap ErrDecrypt", what, err)
		}
	}
	for i := range blob {
		for _, mask := range []byte{0x01, 0xff} {
			b := bytes.Clone(blob)
			b[i] ^= mask
			refuse(fmt.Sprintf("byte %d ^ %#x", i, mask), b)
		}
	}
	for n := 0; n < len(blob); n++ {
		refuse(fmt.Sprintf("cut to %d bytes", n), bytes.Clone(blob[:n]))
	}
	refuse("one byte more", append(bytes.Clone(blob), 0))
	for v := 0; v < 256; v++ {
		if byte(v) == Version {
			continue
		}
		b := bytes.Clone(blob)
		b[0] = byte(v)
		pt, err := open(b)
		if err == nil || pt != nil || !strings.Contains(err.Error(), "unknown blob version") {
			t.Fatalf("version %#x: %q, %v", v, pt, err)
		}
	}
}

func testTaskKeys(t testing.TB, kr *Keyring, keyID uint32, uuid, owner, task string) *TaskKeys {
	t.Helper()
	tk, err := kr.TaskKeys(keyID, uuid, owner, task)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestRecordRoundTripAndTamper(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, hexA)
	tk := testTaskKeys(t, kr, 1, testUUID, testOwner, testTask)
	for _, r := range []Record{TaskRecord, OutcomeRecord} {
		for _, pt := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("state"), 1000)} {
			blob, err := tk.Seal(r, pt)
			if err != nil {
				t.Fatal(err)
			}
			if len(blob) != 1+24+len(pt)+16 || blob[0] != Version {
				t.Fatalf("%s blob: %d bytes, version %#x", r, len(blob), blob[0])
			}
			got, err := tk.Open(r, blob)
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("%s round trip: %q, %v", r, got, err)
			}
		}
		blob, err := tk.Seal(r, []byte(`{"content_key":"…"}`))
		if err != nil {
			t.Fatal(err)
		}
		checkTamper(t, blob, func(b []byte) ([]byte, error) { return tk.Open(r, b) })
	}
}

func TestRecordRefusesOtherBindings(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, "1:"+hexA+",2:"+hexB)
	tk := testTaskKeys(t, kr, 1, testUUID, testOwner, testTask)
	blob, err := tk.Seal(TaskRecord, []byte("sealed copy"))
	if err != nil {
		t.Fatal(err)
	}
	others := []struct {
		name string
		tk   *TaskKeys
		r    Record
	}{
		{"outcome record", tk, OutcomeRecord},
		{"other task", testTaskKeys(t, kr, 1, testUUID, testOwner, testTask+"0"), TaskRecord},
		{"other project", testTaskKeys(t, kr, 1, "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d61", testOwner, testTask), TaskRecord},
		{"other owner", testTaskKeys(t, kr, 1, testUUID, "bob.near", testTask), TaskRecord},
		{"other key id", testTaskKeys(t, kr, 2, testUUID, testOwner, testTask), TaskRecord},
	}
	for _, o := range others {
		t.Run(o.name, func(t *testing.T) {
			pt, err := o.tk.Open(o.r, blob)
			if !errors.Is(err, ErrDecrypt) || pt != nil {
				t.Fatalf("Open: %q, %v", pt, err)
			}
		})
	}
	// The same inputs derive the same keys; other inputs other reply keys.
	same := testTaskKeys(t, kr, 1, testUUID, testOwner, testTask)
	if !same.ReplyKey().Equal(tk.ReplyKey()) {
		t.Error("the same inputs derived another reply key")
	}
	for _, o := range others[1:] {
		if o.tk.ReplyKey().Equal(tk.ReplyKey()) {
			t.Errorf("%s derived the same reply key", o.name)
		}
	}
	for _, r := range []Record{"", "Task", "content", "task:x"} {
		if b, err := tk.Seal(r, []byte("x")); err == nil {
			t.Errorf("Seal(%q) = %x", r, b)
		}
		if pt, err := tk.Open(r, blob); err == nil {
			t.Errorf("Open(%q) = %q", r, pt)
		}
	}
}

func TestTaskKeysRefusals(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, hexA)
	tests := []struct {
		name              string
		keyID             uint32
		uuid, owner, task string
	}{
		{"unknown key id", 2, testUUID, testOwner, testTask},
		{"key id 0", 0, testUUID, testOwner, testTask},
		{"uuid in capitals", 1, strings.ToUpper(testUUID), testOwner, testTask},
		{"uuid without dashes", 1, strings.ReplaceAll(testUUID, "-", ""), testOwner, testTask},
		{"uuid in braces", 1, "{" + testUUID + "}", testOwner, testTask},
		{"uuid with a dash moved", 1, "4f1c2b9e8-a55-4c6e-9d0f-2b7a1e3c5d60", testOwner, testTask},
		{"uuid not hex", 1, "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d6g", testOwner, testTask},
		{"uuid empty", 1, "", testOwner, testTask},
		{"owner empty", 1, testUUID, "", testTask},
		{"owner of one character", 1, testUUID, "a", testTask},
		{"owner too long", 1, testUUID, strings.Repeat("a", 65), testTask},
		{"owner in capitals", 1, testUUID, "Alice.near", testTask},
		{"owner with a colon", 1, testUUID, "alice:near", testTask},
		{"owner with a space", 1, testUUID, "alice near", testTask},
		{"task id empty", 1, testUUID, testOwner, ""},
		{"task id too long", 1, testUUID, testOwner, strings.Repeat("a", 81)},
		{"task id in capitals", 1, testUUID, testOwner, "R7-1"},
		{"task id with a colon", 1, testUUID, testOwner, "r7:file:1"},
		{"task id with a dot", 1, testUUID, testOwner, "r7.1"},
		{"task id not ASCII", 1, testUUID, testOwner, "r7-ü"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, err := kr.TaskKeys(tt.keyID, tt.uuid, tt.owner, tt.task)
			if err == nil || tk != nil {
				t.Fatalf("TaskKeys: %v, %v", tk, err)
			}
		})
	}
	for _, ok := range []string{"a", strings.Repeat("a", 80), "0-9", "-"} {
		if _, err := kr.TaskKeys(1, testUUID, testOwner, ok); err != nil {
			t.Errorf("task id %q refused: %v", ok, err)
		}
	}
	for _, ok := range []string{"ab", strings.Repeat("a", 64), "0x29acbae1", "a_b-c.near"} {
		if _, err := kr.TaskKeys(1, testUUID, ok, testTask); err != nil {
			t.Errorf("owner %q refused: %v", ok, err)
		}
	}
	var nilRing *Keyring
	if _, err := nilRing.TaskKeys(1, testUUID, testOwner, testTask); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("nil keyring: %v", err)
	}
}

func TestFirstScalar(t *testing.T) {
	t.Parallel()
	order, _ := new(big.Int).SetString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)
	below := new(big.Int).Sub(order, big.NewInt(1)).FillBytes(make([]byte, 32))
	candidates := map[uint32][]byte{
		0: make([]byte, 32),                         // zero
		1: order.FillBytes(make([]byte, 32)),        // the order itself
		2: bytes.Repeat([]byte{0xff}, 32),           // above the order
		3: below,                                    // order - 1: valid
		4: append(make([]byte, 31), 1),              // also valid, never reached
		5: bytes.Repeat([]byte{0x11}, 32),           // never reached
		6: append(bytes.Repeat([]byte{0}, 31), 0x2), // never reached
	}
	var asked []uint32
	key, n, err := firstScalar(func(n uint32) []byte {
		asked = append(asked, n)
		return candidates[n]
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || !bytes.Equal(key.Bytes(), below) {
		t.Errorf("firstScalar chose n=%d scalar %x", n, key.Bytes())
	}
	if fmt.Sprint(asked) != "[0 1 2 3]" {
		t.Errorf("candidates asked: %v", asked)
	}
}

func TestContentAndFileRoundTripAndTamper(t *testing.T) {
	t.Parallel()
	ck := NewContentKey()
	content := []byte(`{"envelope":"{}","request":"{}"}`)
	blob, err := ck.SealContent(testTask, content)
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) != 1+12+len(content)+16 || blob[0] != Version {
		t.Fatalf("content blob: %d bytes", len(blob))
	}
	if got, err := ck.OpenContent(testTask, blob); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("content round trip: %q, %v", got, err)
	}
	checkTamper(t, blob, func(b []byte) ([]byte, error) { return ck.OpenContent(testTask, b) })

	for n := 0; n < 3; n++ {
		for _, pt := range [][]byte{nil, []byte("%PDF-1.7"), bytes.Repeat([]byte{0xab}, 70000)} {
			fb, err := ck.SealFile(testTask, n, pt)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ck.OpenFile(testTask, n, fb); err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("file %d round trip: %v", n, err)
			}
		}
	}
	fb, err := ck.SealFile(testTask, 1, []byte("file one"))
	if err != nil {
		t.Fatal(err)
	}
	checkTamper(t, fb, func(b []byte) ([]byte, error) { return ck.OpenFile(testTask, 1, b) })

	// A content key read back from its bytes opens what the original sealed.
	again, err := ContentKeyFromBytes(ck.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.OpenContent(testTask, blob); err != nil {
		t.Errorf("content key from bytes: %v", err)
	}
	// Bytes returns a copy.
	b := ck.Bytes()
	b[0] ^= 1
	if _, err := ck.OpenContent(testTask, blob); err != nil {
		t.Error("changing Bytes' result changed the key")
	}
	// Fresh nonces and keys.
	if b2, _ := ck.SealContent(testTask, content); bytes.Equal(b2, blob) {
		t.Error("two seals made the same blob")
	}
	if bytes.Equal(NewContentKey().Bytes(), ck.Bytes()) {
		t.Error("two content keys are equal")
	}
}

func TestContentRefusesOtherBindings(t *testing.T) {
	t.Parallel()
	ck, other := NewContentKey(), NewContentKey()
	content, err := ck.SealContent(testTask, []byte("content"))
	if err != nil {
		t.Fatal(err)
	}
	file1, err := ck.SealFile(testTask, 1, []byte("file"))
	if err != nil {
		t.Fatal(err)
	}
	opens := []struct {
		name string
		open func() ([]byte, error)
	}{
		{"content of another task", func() ([]byte, error) { return ck.OpenContent(testTask+"0", content) }},
		{"content under another key", func() ([]byte, error) { return other.OpenContent(testTask, content) }},
		{"content as file 0", func() ([]byte, error) { return ck.OpenFile(testTask, 0, content) }},
		{"file 1 as file 0", func() ([]byte, error) { return ck.OpenFile(testTask, 0, file1) }},
		{"file 1 as file 2", func() ([]byte, error) { return ck.OpenFile(testTask, 2, file1) }},
		{"file 1 as file 10", func() ([]byte, error) { return ck.OpenFile(testTask, 10, file1) }},
		{"file 1 as content", func() ([]byte, error) { return ck.OpenContent(testTask, file1) }},
		{"file 1 of another task", func() ([]byte, error) { return ck.OpenFile("r7-2", 1, file1) }},
		{"file 1 under another key", func() ([]byte, error) { return other.OpenFile(testTask, 1, file1) }},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			if pt, err := o.open(); !errors.Is(err, ErrDecrypt) || pt != nil {
				t.Fatalf("%q, %v", pt, err)
			}
		})
	}
	bad := []struct {
		name string
		call func() ([]byte, error)
	}{
		{"seal content, empty task id", func() ([]byte, error) { return ck.SealContent("", []byte("x")) }},
		{"seal content, task id with colon", func() ([]byte, error) { return ck.SealContent("a:b", []byte("x")) }},
		{"open content, bad task id", func() ([]byte, error) { return ck.OpenContent("A", content) }},
		{"seal file, negative n", func() ([]byte, error) { return ck.SealFile(testTask, -1, []byte("x")) }},
		{"open file, negative n", func() ([]byte, error) { return ck.OpenFile(testTask, -1, file1) }},
		{"seal file, bad task id", func() ([]byte, error) { return ck.SealFile("a b", 0, []byte("x")) }},
		{"open file, bad task id", func() ([]byte, error) { return ck.OpenFile(strings.Repeat("a", 81), 1, file1) }},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if out, err := b.call(); err == nil || out != nil {
				t.Fatalf("%x, %v", out, err)
			}
		})
	}
	for _, n := range []int{0, 16, 31, 33, 64} {
		if k, err := ContentKeyFromBytes(make([]byte, n)); err == nil {
			t.Errorf("ContentKeyFromBytes(%d bytes) = %v", n, k)
		}
	}
}

func TestAADHelpers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{string(ContentAAD("r1-1")), "r1-1"},
		{string(FileAAD("r1-1", 0)), "r1-1:file:0"},
		{string(FileAAD("r1-1", 9)), "r1-1:file:9"},
		{string(TaskRecord.AAD("r1-1")), "countersign-task:v1:task:r1-1"},
		{string(OutcomeRecord.AAD("r1-1")), "countersign-task:v1:outcome:r1-1"},
		{string(DeviceCopy.Info("r1-1")), "countersign-task:v1:device-copy:r1-1"},
		{string(Answer.Info("r1-1")), "countersign-task:v1:answer:r1-1"},
		{string(Note.Info("r1-1")), "countersign-task:v1:note:r1-1"},
		{string(Rejection.Info("r1-1")), "countersign-task:v1:rejection:r1-1"},
		{string(SecretAAD(WebhookSecret, "row:7")), "countersign-secret:v1:webhook-secret:row:7"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestKeysDoNotPrint(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, hexA)
	tk := testTaskKeys(t, kr, 1, testUUID, testOwner, testTask)
	ck := NewContentKey()
	secrets := []string{hex.EncodeToString(tk.seal[:]), hex.EncodeToString(tk.ReplyKey().Bytes()), hex.EncodeToString(ck.Bytes())}
	type holder struct {
		tk *TaskKeys
		ck ContentKey
		TK *TaskKeys
		CK *ContentKey
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "tk", tk, "ck", ck, "h", holder{tk, *ck, tk, ck})
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "tk", tk, "ck", ck)
	outs := []string{logs.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%x", "%s"} {
		outs = append(outs, fmt.Sprintf(verb, tk), fmt.Sprintf(verb, *tk), fmt.Sprintf(verb, ck),
			fmt.Sprintf(verb, *ck), fmt.Sprintf(verb, holder{tk, *ck, tk, ck}))
	}
	for _, out := range outs {
		assertNoKeyMaterial(t, out, secrets...)
	}
}

// The reply key's public half is what a device seals to.
func TestReplyKeyIsP256(t *testing.T) {
	t.Parallel()
	tk := testTaskKeys(t, mustKeyring(t, hexA), 1, testUUID, testOwner, testTask)
	if tk.ReplyKey().Curve() != ecdh.P256() {
		t.Fatal("reply key is not P-256")
	}
}

// Keys not made by this package's constructors are refused, not used.
func TestZeroValuesAreRefused(t *testing.T) {
	t.Parallel()
	device := newP256(t)
	var zeroCK ContentKey
	var nilCK *ContentKey
	var zeroTK TaskKeys
	var nilTK *TaskKeys
	calls := []struct {
		name string
		call func() ([]byte, error)
	}{
		{"zero content key seals", func() ([]byte, error) { return zeroCK.SealContent(testTask, []byte("x")) }},
		{"nil content key opens", func() ([]byte, error) { return nilCK.OpenContent(testTask, make([]byte, 40)) }},
		{"zero content key seals a file", func() ([]byte, error) { return zeroCK.SealFile(testTask, 0, []byte("x")) }},
		{"nil content key opens a file", func() ([]byte, error) { return nilCK.OpenFile(testTask, 0, make([]byte, 40)) }},
		{"nil content key wrapped", func() ([]byte, error) { return WrapContentKey(device.PublicKey(), testTask, nil) }},
		{"zero content key wrapped", func() ([]byte, error) { return WrapContentKey(device.PublicKey(), testTask, &zeroCK) }},
		{"zero task keys seal", func() ([]byte, error) { return zeroTK.Seal(TaskRecord, []byte("x")) }},
		{"nil task keys open", func() ([]byte, error) { return nilTK.Open(TaskRecord, make([]byte, 60)) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if out, err := c.call(); err == nil || out != nil {
				t.Fatalf("%x, %v", out, err)
			}
		})
	}
	if zeroCK.Bytes() != nil || nilCK.Bytes() != nil {
		t.Error("an empty content key has bytes")
	}
	var nilRing *Keyring
	if nilRing.Export() != "" || nilRing.Current() != 0 || nilRing.IDs() != nil || nilRing.Has(1) {
		t.Error("a nil keyring holds something")
	}
	if kr, err := nilRing.AddKey(); err != nil || kr.Current() != 1 {
		t.Errorf("AddKey on a nil keyring: %v, %v", kr, err)
	}
}
