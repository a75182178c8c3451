package sealing

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func FuzzParseKeyring(f *testing.F) {
	for _, s := range []string{
		hexA, " " + hexA + "\n", "1:" + hexA, "1:" + hexA + ",2:" + hexB, "3:" + hexC + ", 1:" + hexA,
		"", ",", ":", "0:" + hexA, "01:" + hexA, "4294967295:" + hexA, "4294967296:" + hexA,
		"1:" + hexA + ",1:" + hexB, "1:" + hexA + ",2:" + hexA, "1:" + strings.Repeat("0", 64),
		hexA + ",2:" + hexB, "1:" + hexA[:63] + "g", hexA + ":1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kr, err := ParseKeyring(s)
		if err != nil {
			if kr != nil {
				t.Fatal("a keyring beside an error")
			}
			msg := strings.ToLower(err.Error())
			if strings.Contains(msg, "\n") {
				t.Fatalf("error on more than one line: %q", msg)
			}
			for _, run := range hexRuns(s, 16) {
				for i := 0; i+16 <= len(run); i++ {
					if strings.Contains(msg, strings.ToLower(run[i:i+16])) {
						t.Fatalf("error %q echoes input %q", msg, run[i:i+16])
					}
				}
			}
			return
		}
		ids := kr.IDs()
		if len(ids) == 0 || kr.Current() != ids[len(ids)-1] {
			t.Fatalf("ids %v, current %d", ids, kr.Current())
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("ids not ascending: %v", ids)
			}
		}
		exported := kr.Export()
		again, err := ParseKeyring(exported)
		if err != nil || again.Export() != exported {
			t.Fatalf("export %q does not parse back: %v", exported, err)
		}
		printed := fmt.Sprintf("%v %+v %#v %s %x", kr, kr, kr, kr, kr)
		for _, entry := range strings.Split(exported, ",") {
			_, key, _ := strings.Cut(entry, ":")
			if strings.Contains(strings.ToLower(printed), key[:16]) {
				t.Fatalf("formatting shows key bytes: %s", printed)
			}
		}
	})
}

// hexRuns returns the runs of at least minLen hex characters in s.
func hexRuns(s string, minLen int) []string {
	var runs []string
	start := -1
	for i := 0; i <= len(s); i++ {
		isHex := i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0
		switch {
		case isHex && start < 0:
			start = i
		case !isHex && start >= 0:
			if i-start >= minLen {
				runs = append(runs, s[start:i])
			}
			start = -1
		}
	}
	return runs
}

func FuzzParseP256PublicKey(f *testing.F) {
	v := loadContractVectors(f)
	for _, s := range []string{
		v.Derivation.ReplyPubkey, v.DeviceCopy.DevicePubkey, "", "p256:", "p256:" + strings.Repeat("A", 87),
		"p256:" + strings.Repeat("_", 87), v.DeviceCopy.DevicePubkey + "=", "P256:" + v.Derivation.ReplyPubkey[5:],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pub, err := ParseP256PublicKey(s)
		if err != nil {
			if pub != nil {
				t.Fatal("a key beside an error")
			}
			return
		}
		if got := FormatP256PublicKey(pub); got != s {
			t.Fatalf("accepted %q, which formats as %q", s, got)
		}
	})
}

func FuzzOpenRecord(f *testing.F) {
	v := loadContractVectors(f)
	tk := vectorTaskKeys(f, v)
	outcome, err := tk.Seal(OutcomeRecord, []byte(`{"verdict":"right"}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(v.SealedCopy.Blob), false)
	f.Add(outcome, true)
	f.Add([]byte{0x01}, false)
	f.Add(make([]byte, 41), true)
	f.Fuzz(func(t *testing.T, blob []byte, isOutcome bool) {
		r := TaskRecord
		if isOutcome {
			r = OutcomeRecord
		}
		pt, err := tk.Open(r, blob)
		if err != nil {
			if pt != nil || !errors.Is(err, ErrDecrypt) {
				t.Fatalf("%q, %v", pt, err)
			}
			return
		}
		again, err := tk.sealWithNonce(r, blob[1:25], pt)
		if err != nil || !bytes.Equal(again, blob) {
			t.Fatalf("opened a blob that sealing its plaintext does not make: %v", err)
		}
	})
}

func FuzzOpenContent(f *testing.F) {
	v := loadContractVectors(f)
	ck, err := ContentKeyFromBytes(v.Content.ContentKey)
	if err != nil {
		f.Fatal(err)
	}
	id := v.Derivation.TaskID
	f.Add([]byte(v.Content.Blob), -1)
	f.Add([]byte(v.File.Blob), v.File.N)
	f.Add([]byte{0x01, 0x02}, 3)
	f.Add(make([]byte, 29), -1)
	f.Fuzz(func(t *testing.T, blob []byte, file int) {
		var pt []byte
		var err error
		if file < 0 {
			pt, err = ck.OpenContent(id, blob)
		} else {
			pt, err = ck.OpenFile(id, file, blob)
		}
		if err != nil {
			if pt != nil || !errors.Is(err, ErrDecrypt) {
				t.Fatalf("%q, %v", pt, err)
			}
			return
		}
		var again []byte
		if file < 0 {
			again, err = ck.sealContent(blob[1:13], id, pt)
		} else {
			again, err = ck.sealFile(blob[1:13], id, file, pt)
		}
		if err != nil || !bytes.Equal(again, blob) {
			t.Fatalf("opened a blob that sealing its plaintext does not make: %v", err)
		}
	})
}

func FuzzOpenWith(f *testing.F) {
	v := loadContractVectors(f)
	device := p256Key(f, v.DeviceCopy.DevicePrivateScalar)
	reply := vectorTaskKeys(f, v).ReplyKey()
	id := v.Derivation.TaskID
	purposes := []Purpose{DeviceCopy, Answer, Note, Rejection}
	note, err := SealTo(reply.PublicKey(), Note, id, []byte("note"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(v.DeviceCopy.Blob), uint8(0))
	f.Add([]byte(v.Answer.Blob), uint8(1))
	f.Add(note, uint8(2))
	f.Add(make([]byte, 94), uint8(3))
	f.Fuzz(func(t *testing.T, blob []byte, which uint8) {
		p := purposes[int(which)%len(purposes)]
		key := reply
		if p == DeviceCopy {
			key = device
		}
		pt, err := OpenWith(key, p, id, blob)
		if err != nil {
			if pt != nil || !errors.Is(err, ErrDecrypt) {
				t.Fatalf("%q, %v", pt, err)
			}
		} else if len(pt) != len(blob)-1-65-12-16 {
			t.Fatalf("opened %d bytes from a blob of %d", len(pt), len(blob))
		}
		if p == DeviceCopy {
			ck, err := UnwrapContentKey(device, id, blob)
			if err != nil {
				if ck != nil || !errors.Is(err, ErrDecrypt) {
					t.Fatalf("%v, %v", ck, err)
				}
			} else if !bytes.Equal(ck.Bytes(), pt) {
				t.Fatal("unwrapped key differs from the opened bytes")
			}
		}
	})
}

func FuzzKeyringOpen(f *testing.F) {
	kr := mustKeyring(f, "1:"+hexA+",2:"+hexB)
	id, blob, err := kr.Seal(WebhookSecret, "alice.near", []byte("whsec_x"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(blob, id, string(WebhookSecret), "alice.near")
	f.Add(blob, uint32(1), string(ProjectCredentials), "alice.near")
	f.Add([]byte{0x01}, uint32(3), "", "")
	f.Fuzz(func(t *testing.T, blob []byte, keyID uint32, purpose, row string) {
		pt, err := kr.Open(keyID, SecretPurpose(purpose), row, blob)
		if err != nil {
			if pt != nil {
				t.Fatalf("%q beside %v", pt, err)
			}
			return
		}
		master, _ := kr.key(keyID)
		again := sealX(secretKey(master, SecretPurpose(purpose)), blob[1:25], SecretAAD(SecretPurpose(purpose), row), pt)
		if !bytes.Equal(again, blob) {
			t.Fatal("opened a blob that sealing its plaintext does not make")
		}
	})
}
