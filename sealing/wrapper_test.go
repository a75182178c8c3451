package sealing

import (
	"bytes"
	"crypto/ecdh"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A clock tests move by hand.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *testClock) add(d time.Duration) { c.ns.Add(int64(d)) }
func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func ephemeralOf(blob []byte) []byte { return blob[1 : 1+p256PointSize] }
func nonceOf(blob []byte) []byte     { return blob[1+p256PointSize : 1+p256PointSize+gcmNonceSize] }
func sameEphemeral(a, b []byte) bool { return bytes.Equal(ephemeralOf(a), ephemeralOf(b)) }
func entryKeyFor(t testing.TB, id string) *EntryKey {
	t.Helper()
	ek, err := GenerateKeyring().EntryKey(1, "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", "alice.near", id)
	if err != nil {
		t.Fatal(err)
	}
	return ek
}

func TestWrapperBlobsOpenAsSealTosDo(t *testing.T) {
	t.Parallel()
	w := NewWrapper(nil)
	device := newP256(t)
	ck := NewContentKey()
	const other = "r7k2m9q4x1z8c3v6b5n0p2w4s6-2"

	first, err := w.WrapContentKey(device.PublicKey(), testTask, ck)
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.WrapContentKey(device.PublicKey(), other, ck)
	if err != nil {
		t.Fatal(err)
	}
	ek := entryKeyFor(t, "r7k2m9q4x1z8c3v6b5n0p2w4s6-1")
	entry, err := w.WrapEntryKey(device.PublicKey(), ek)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{first, second, entry} {
		if len(b) != 1+65+12+KeySize+16 || b[0] != Version || b[1] != 0x04 {
			t.Fatalf("blob: %d bytes, starts %x", len(b), b[:2])
		}
	}
	if got, err := UnwrapContentKey(device, testTask, first); err != nil || !bytes.Equal(got.Bytes(), ck.Bytes()) {
		t.Fatalf("first device copy: %v", err)
	}
	if got, err := UnwrapContentKey(device, other, second); err != nil || !bytes.Equal(got.Bytes(), ck.Bytes()) {
		t.Fatalf("second device copy: %v", err)
	}
	if got, err := UnwrapEntryKey(device, ek.id, entry); err != nil || !bytes.Equal(got.key[:], ek.key[:]) {
		t.Fatalf("entry's copy: %v", err)
	}
	// One ephemeral key for the device, a nonce of each blob's own.
	if !sameEphemeral(first, second) || !sameEphemeral(first, entry) {
		t.Error("wraps to one device within a lifetime do not share their ephemeral key")
	}
	if bytes.Equal(nonceOf(first), nonceOf(second)) || bytes.Equal(nonceOf(first), nonceOf(entry)) {
		t.Error("two wraps share a nonce")
	}
	// Bound to its task and purpose as any blob: a copy does not open as
	// another task's, nor as an entry's, nor for another device.
	if _, err := UnwrapContentKey(device, other, first); err == nil {
		t.Error("a device copy opened as another task's")
	}
	if _, err := UnwrapEntryKey(device, testTask, first); err == nil {
		t.Error("a device copy opened as a history entry's key")
	}
	if _, err := UnwrapContentKey(newP256(t), testTask, first); err == nil {
		t.Error("a device copy opened with another device's key")
	}
	checkTamper(t, first, func(b []byte) ([]byte, error) { return OpenWith(device, DeviceCopy, testTask, b) })
}

func TestWrapperKeysAreTheirDevicesAndTheirTimes(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	w := newWrapper(clock.now, time.Minute, 3)
	ck := NewContentKey()
	a, b := newP256(t), newP256(t)
	wrap := func(d *ecdh.PrivateKey) []byte {
		t.Helper()
		blob, err := w.WrapContentKey(d.PublicKey(), testTask, ck)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnwrapContentKey(d, testTask, blob); err != nil {
			t.Fatal(err)
		}
		return blob
	}
	a1, b1 := wrap(a), wrap(b)
	if sameEphemeral(a1, b1) {
		t.Fatal("two devices share an ephemeral key")
	}
	clock.add(time.Minute - time.Second)
	if a2 := wrap(a); !sameEphemeral(a1, a2) {
		t.Error("a device's key was replaced within its lifetime")
	}
	clock.add(time.Second)
	a3 := wrap(a)
	if sameEphemeral(a1, a3) {
		t.Error("a device's key served past its lifetime")
	}
	if a4 := wrap(a); !sameEphemeral(a3, a4) {
		t.Error("the device's new key was not kept")
	}

	// Bounded: at the bound, expired keys go first, then any one.
	c, d := newP256(t), newP256(t)
	wrap(c) // a (new), b (expired), c
	if n := w.devices(); n != 3 {
		t.Fatalf("%d devices remembered, want 3", n)
	}
	wrap(d) // b dropped, as expired
	if n := w.devices(); n != 3 {
		t.Fatalf("%d devices remembered past the bound of 3", n)
	}
	if b2 := wrap(b); sameEphemeral(b1, b2) {
		t.Error("an expired device's key was kept past the bound")
	}
	if n := w.devices(); n != 3 {
		t.Fatalf("%d devices remembered past the bound of 3", n)
	}
}

func TestWrapperRefusals(t *testing.T) {
	t.Parallel()
	w := NewWrapper(nil)
	device := newP256(t).PublicKey()
	p384, err := ecdh.P384().GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		wrap func() ([]byte, error)
	}{
		{"no device", func() ([]byte, error) { return w.WrapContentKey(nil, testTask, NewContentKey()) }},
		{"a P-384 device", func() ([]byte, error) { return w.WrapContentKey(p384.PublicKey(), testTask, NewContentKey()) }},
		{"an X25519 device", func() ([]byte, error) {
			x, _ := ecdh.X25519().GenerateKey(nil)
			return w.WrapContentKey(x.PublicKey(), testTask, NewContentKey())
		}},
		{"an empty task id", func() ([]byte, error) { return w.WrapContentKey(device, "", NewContentKey()) }},
		{"a task id with a colon", func() ([]byte, error) { return w.WrapContentKey(device, "a:b", NewContentKey()) }},
		{"no content key", func() ([]byte, error) { return w.WrapContentKey(device, testTask, nil) }},
		{"no entry key", func() ([]byte, error) { return w.WrapEntryKey(device, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob, err := tt.wrap()
			if err == nil || blob != nil {
				t.Fatalf("wrapped %d bytes, err %v; want a refusal", len(blob), err)
			}
		})
	}
	if n := w.devices(); n != 0 {
		t.Errorf("refused wraps left %d devices remembered", n)
	}
}

// Wraps racing on devices whose keys are new or expiring all open.
func TestWrapperConcurrentWraps(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	w := newWrapper(clock.now, time.Millisecond, 4)
	devices := make([]*ecdh.PrivateKey, 6)
	for i := range devices {
		devices[i] = newP256(t)
	}
	ck := NewContentKey()
	var wg sync.WaitGroup
	errs := make(chan error, 8*50)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				d := devices[(g+i)%len(devices)]
				id := fmt.Sprintf("task-%d-%d", g, i)
				blob, err := w.WrapContentKey(d.PublicKey(), id, ck)
				if err == nil {
					_, err = UnwrapContentKey(d, id, blob)
				}
				if err != nil {
					errs <- err
				}
				clock.add(100 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := w.devices(); n > 4 {
		t.Errorf("%d devices remembered past the bound of 4", n)
	}
}
