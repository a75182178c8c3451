package sealing

import (
	"bytes"
	"testing"
)

// BenchmarkSealTask4KiB seals a task whose content is 4 KiB: a fresh
// content key, the content blob, and the sealed copy holding the key, the
// envelope and the state.
func BenchmarkSealTask4KiB(b *testing.B) {
	tk := testTaskKeys(b, mustKeyring(b, hexA), 1, testUUID, testOwner, testTask)
	content := bytes.Repeat([]byte("x"), 4096)
	sealedCopy := bytes.Repeat([]byte("y"), 4096+64+256)
	b.SetBytes(int64(len(content) + len(sealedCopy)))
	for b.Loop() {
		ck := NewContentKey()
		if _, err := ck.SealContent(testTask, content); err != nil {
			b.Fatal(err)
		}
		if _, err := tk.Seal(TaskRecord, sealedCopy); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaskKeys derives one task's keys: project, task, seal and reply
// keys (the reply key's public point included).
func BenchmarkTaskKeys(b *testing.B) {
	kr := mustKeyring(b, hexA)
	for b.Loop() {
		if _, err := kr.TaskKeys(1, testUUID, testOwner, testTask); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSealFile1MiB(b *testing.B) {
	ck := NewContentKey()
	file := bytes.Repeat([]byte{0x5a}, 1<<20)
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if _, err := ck.SealFile(testTask, 0, file); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenFile1MiB(b *testing.B) {
	ck := NewContentKey()
	blob, err := ck.SealFile(testTask, 0, bytes.Repeat([]byte{0x5a}, 1<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1 << 20)
	for b.Loop() {
		if _, err := ck.OpenFile(testTask, 0, blob); err != nil {
			b.Fatal(err)
		}
	}
}

// A device copy with an ephemeral key of its own (fresh), and from a
// Wrapper whose key for the device is made (wrapper).
func BenchmarkWrapContentKey(b *testing.B) {
	device := newP256(b).PublicKey()
	ck := NewContentKey()
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := WrapContentKey(device, testTask, ck); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wrapper", func(b *testing.B) {
		w := NewWrapper(nil)
		for b.Loop() {
			if _, err := w.WrapContentKey(device, testTask, ck); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnwrapContentKey(b *testing.B) {
	device := newP256(b)
	blob, err := WrapContentKey(device.PublicKey(), testTask, NewContentKey())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := UnwrapContentKey(device, testTask, blob); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKeyringSealSecret(b *testing.B) {
	kr := mustKeyring(b, hexA)
	secret := []byte("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	for b.Loop() {
		if _, _, err := kr.Seal(WebhookSecret, "alice.near", secret); err != nil {
			b.Fatal(err)
		}
	}
}
