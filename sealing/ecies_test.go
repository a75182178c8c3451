package sealing

import (
	"bytes"
	"crypto/ecdh"
	"crypto/elliptic"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func newP256(t testing.TB) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealToRoundTripAndTamper(t *testing.T) {
	t.Parallel()
	device := newP256(t)
	for _, p := range []Purpose{DeviceCopy, Answer, Note, Rejection} {
		for _, pt := range [][]byte{nil, []byte("7"), bytes.Repeat([]byte("ü"), 4096)} {
			blob, err := SealTo(device.PublicKey(), p, testTask, pt)
			if err != nil {
				t.Fatal(err)
			}
			if len(blob) != 1+65+12+len(pt)+16 || blob[0] != Version || blob[1] != 0x04 {
				t.Fatalf("%s blob: %d bytes, starts %x", p, len(blob), blob[:2])
			}
			got, err := OpenWith(device, p, testTask, blob)
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("%s round trip: %v", p, err)
			}
		}
		blob, err := SealTo(device.PublicKey(), p, testTask, []byte("a short answer"))
		if err != nil {
			t.Fatal(err)
		}
		checkTamper(t, blob, func(b []byte) ([]byte, error) { return OpenWith(device, p, testTask, b) })
	}
	// Fresh ephemeral keys and nonces.
	a, _ := SealTo(device.PublicKey(), Note, testTask, []byte("x"))
	b, _ := SealTo(device.PublicKey(), Note, testTask, []byte("x"))
	if bytes.Equal(a[1:66], b[1:66]) || bytes.Equal(a[66:78], b[66:78]) {
		t.Error("two seals share an ephemeral key or a nonce")
	}
}

func TestOpenWithRefusesOtherBindings(t *testing.T) {
	t.Parallel()
	device, other := newP256(t), newP256(t)
	blob, err := SealTo(device.PublicKey(), Answer, testTask, []byte("42"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		key  *ecdh.PrivateKey
		p    Purpose
		task string
	}{
		{"other key", other, Answer, testTask},
		{"as a note", device, Note, testTask},
		{"as a rejection", device, Rejection, testTask},
		{"as a device copy", device, DeviceCopy, testTask},
		{"other task", device, Answer, "r7k2m9q4x1z8c3v6b5n0p2w4s6-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := OpenWith(tt.key, tt.p, tt.task, blob)
			if !errors.Is(err, ErrDecrypt) || pt != nil {
				t.Fatalf("%q, %v", pt, err)
			}
		})
	}
}

func TestOpenWithRefusesBadEphemeral(t *testing.T) {
	t.Parallel()
	device := newP256(t)
	blob, err := SealTo(device.PublicKey(), Note, testTask, []byte("note"))
	if err != nil {
		t.Fatal(err)
	}
	x, y := blob[2:34], blob[34:66]
	edits := []struct {
		name string
		eph  []byte
	}{
		{"compressed prefix 0x02", append([]byte{0x02}, append(bytes.Clone(x), y...)...)},
		{"compressed prefix 0x03", append([]byte{0x03}, append(bytes.Clone(x), y...)...)},
		{"hybrid prefix 0x06", append([]byte{0x06}, append(bytes.Clone(x), y...)...)},
		{"identity encoding", make([]byte, 65)},
		{"off the curve", append([]byte{0x04}, append(bytes.Clone(x), append(bytes.Clone(y[:31]), y[31]^1)...)...)},
		{"x and y swapped", append([]byte{0x04}, append(bytes.Clone(y), x...)...)},
		{"another valid point", newP256(t).PublicKey().Bytes()},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			b := bytes.Clone(blob)
			copy(b[1:66], e.eph)
			if pt, err := OpenWith(device, Note, testTask, b); !errors.Is(err, ErrDecrypt) || pt != nil {
				t.Fatalf("%q, %v", pt, err)
			}
		})
	}
}

func TestSealToAndOpenWithRefusals(t *testing.T) {
	t.Parallel()
	device := newP256(t)
	x25519, err := ecdh.X25519().GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdh.P384().GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := SealTo(device.PublicKey(), Answer, testTask, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	seals := []struct {
		name string
		to   *ecdh.PublicKey
		p    Purpose
		task string
	}{
		{"nil recipient", nil, Answer, testTask},
		{"X25519 recipient", x25519.PublicKey(), Answer, testTask},
		{"P-384 recipient", p384.PublicKey(), Answer, testTask},
		{"unknown purpose", device.PublicKey(), "reason", testTask},
		{"empty purpose", device.PublicKey(), "", testTask},
		{"empty task id", device.PublicKey(), Answer, ""},
		{"task id with colon", device.PublicKey(), Answer, "a:b"},
	}
	for _, tt := range seals {
		t.Run("seal/"+tt.name, func(t *testing.T) {
			if b, err := SealTo(tt.to, tt.p, tt.task, []byte("x")); err == nil || b != nil {
				t.Fatalf("%x, %v", b, err)
			}
		})
	}
	opens := []struct {
		name string
		key  *ecdh.PrivateKey
		p    Purpose
		task string
	}{
		{"nil key", nil, Answer, testTask},
		{"X25519 key", x25519, Answer, testTask},
		{"P-384 key", p384, Answer, testTask},
		{"unknown purpose", device, "Answer", testTask},
		{"bad task id", device, Answer, "A"},
	}
	for _, tt := range opens {
		t.Run("open/"+tt.name, func(t *testing.T) {
			if pt, err := OpenWith(tt.key, tt.p, tt.task, blob); err == nil || pt != nil {
				t.Fatalf("%q, %v", pt, err)
			}
		})
	}
}

func TestWrapContentKey(t *testing.T) {
	t.Parallel()
	device, other := newP256(t), newP256(t)
	ck := NewContentKey()
	copyBlob, err := WrapContentKey(device.PublicKey(), testTask, ck)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnwrapContentKey(device, testTask, copyBlob)
	if err != nil || !bytes.Equal(got.Bytes(), ck.Bytes()) {
		t.Fatalf("unwrap: %v", err)
	}
	if k, err := UnwrapContentKey(other, testTask, copyBlob); !errors.Is(err, ErrDecrypt) || k != nil {
		t.Errorf("another device unwrapped it: %v", err)
	}
	if k, err := UnwrapContentKey(device, "r7-9", copyBlob); !errors.Is(err, ErrDecrypt) || k != nil {
		t.Errorf("unwrapped for another task: %v", err)
	}
	// A blob for another purpose is not a device copy.
	answer, err := SealTo(device.PublicKey(), Answer, testTask, ck.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if k, err := UnwrapContentKey(device, testTask, answer); !errors.Is(err, ErrDecrypt) || k != nil {
		t.Errorf("an answer unwrapped as a device copy: %v", err)
	}
	// A device copy that holds other than 32 bytes is refused.
	for _, n := range []int{0, 31, 33} {
		short, err := SealTo(device.PublicKey(), DeviceCopy, testTask, make([]byte, n))
		if err != nil {
			t.Fatal(err)
		}
		if k, err := UnwrapContentKey(device, testTask, short); !errors.Is(err, ErrDecrypt) || k != nil {
			t.Errorf("device copy of %d bytes: %v", n, err)
		}
	}
	checkTamper(t, copyBlob, func(b []byte) ([]byte, error) {
		k, err := UnwrapContentKey(device, testTask, b)
		if k != nil {
			return k.Bytes(), err
		}
		return nil, err
	})
}

func TestP256PublicKeyText(t *testing.T) {
	t.Parallel()
	for i := 0; i < 20; i++ {
		pub := newP256(t).PublicKey()
		s := FormatP256PublicKey(pub)
		if len(s) != 92 || !strings.HasPrefix(s, "p256:") {
			t.Fatalf("formatted %q", s)
		}
		got, err := ParseP256PublicKey(s)
		if err != nil || !got.Equal(pub) {
			t.Fatalf("parse of %q: %v", s, err)
		}
	}
	if s := FormatP256PublicKey(nil); s != "" {
		t.Errorf("nil key formatted as %q", s)
	}
	x, _ := ecdh.X25519().GenerateKey(nil)
	if s := FormatP256PublicKey(x.PublicKey()); s != "" {
		t.Errorf("X25519 key formatted as %q", s)
	}
}

func TestParseP256PublicKeyRefusals(t *testing.T) {
	t.Parallel()
	// A key whose text holds '-' or '_', so that it differs in the standard
	// alphabet (about 94% of keys do).
	pub := newP256(t).PublicKey()
	for !strings.ContainsAny(FormatP256PublicKey(pub)[5:], "-_") {
		pub = newP256(t).PublicKey()
	}
	good := FormatP256PublicKey(pub)
	raw := pub.Bytes()
	enc := func(b []byte) string { return "p256:" + base64.RawURLEncoding.EncodeToString(b) }
	with := func(prefix byte, body []byte) []byte { return append([]byte{prefix}, body...) }

	// A last character whose two unused bits are not zero.
	last := good[len(good)-1]
	idx := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", last)
	nonCanonical := good[:len(good)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[idx|1])

	// The compressed form of the same point.
	x, y := raw[1:33], raw[33:]
	compressed := with(0x02|y[31]&1, x)

	// A point off the curve, and coordinates at or above the field prime.
	off := bytes.Clone(raw)
	off[64] ^= 1
	prime := elliptic.P256().Params().P.FillBytes(make([]byte, 32))
	xIsP := append(append([]byte{0x04}, prime...), y...)

	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"prefix only", "p256:"},
		{"no prefix", good[5:]},
		{"prefix in capitals", "P256:" + good[5:]},
		{"other curve name", "p384:" + good[5:]},
		{"ed25519 prefix", "ed25519:" + good[5:]},
		{"space after prefix", "p256: " + good[5:91]},
		{"leading space", " " + good},
		{"trailing newline", good + "\n"},
		{"newline inside, same length", good[:40] + "\n" + good[41:]},
		{"carriage return inside", good[:40] + "\r" + good[41:]},
		{"padding", good + "="},
		{"padding in place of a character", good[:91] + "="},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good)},
		{"standard padded base64", "p256:" + base64.StdEncoding.EncodeToString(raw)},
		{"non-canonical trailing bits", nonCanonical},
		{"one character short", good[:91]},
		{"one character long", good + "A"},
		{"compressed point", enc(compressed)},
		{"compressed point padded to 65", enc(append(compressed, make([]byte, 32)...))},
		{"hybrid point", enc(with(0x06|y[31]&1, raw[1:]))},
		{"no prefix byte", enc(append(bytes.Clone(raw[1:]), 0))},
		{"identity", enc(make([]byte, 65))},
		{"uncompressed identity", enc(with(0x04, make([]byte, 64)))},
		{"point off the curve", enc(off)},
		{"x equal to the prime", enc(xIsP)},
		{"all ones", enc(bytes.Repeat([]byte{0xff}, 65))},
		{"64 raw bytes", enc(raw[1:])},
		{"33 bytes", enc(raw[:33])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in == good {
				t.Fatal("the test case is the good key")
			}
			if got, err := ParseP256PublicKey(tt.in); err == nil {
				t.Fatalf("accepted %q as %x", tt.in, got.Bytes())
			}
		})
	}
}
