package sealing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
)

const (
	hexA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexB = "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	hexC = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
)

func mustKeyring(t testing.TB, s string) *Keyring {
	t.Helper()
	kr, err := ParseKeyring(s)
	if err != nil {
		t.Fatalf("ParseKeyring: %v", err)
	}
	return kr
}

func TestParseKeyring(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		ids     []uint32
		current uint32
		export  string
	}{
		{"bare key is id 1", hexA, []uint32{1}, 1, "1:" + hexA},
		{"bare key with a file's newline", " " + hexA + "\n", []uint32{1}, 1, "1:" + hexA},
		{"bare key in capitals", strings.ToUpper(hexA), []uint32{1}, 1, "1:" + hexA},
		{"one entry", "7:" + hexA, []uint32{7}, 7, "7:" + hexA},
		{"two entries", "1:" + hexA + ",2:" + hexB, []uint32{1, 2}, 2, "1:" + hexA + ",2:" + hexB},
		{"any order, highest seals", "3:" + hexC + ",1:" + hexA + ",2:" + hexB, []uint32{1, 2, 3}, 3,
			"1:" + hexA + ",2:" + hexB + ",3:" + hexC},
		{"gaps between ids", "10:" + hexA + ",4:" + hexB, []uint32{4, 10}, 10, "4:" + hexB + ",10:" + hexA},
		{"spaces around entries", " 1:" + hexA + " ,\t2:" + hexB + "\n", []uint32{1, 2}, 2, "1:" + hexA + ",2:" + hexB},
		{"highest id", "4294967295:" + hexA, []uint32{math.MaxUint32}, math.MaxUint32, "4294967295:" + hexA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := ParseKeyring(tt.in)
			if err != nil {
				t.Fatalf("ParseKeyring: %v", err)
			}
			if got := kr.IDs(); !reflect.DeepEqual(got, tt.ids) {
				t.Errorf("IDs() = %v, want %v", got, tt.ids)
			}
			if kr.Current() != tt.current {
				t.Errorf("Current() = %d, want %d", kr.Current(), tt.current)
			}
			for _, id := range tt.ids {
				if !kr.Has(id) {
					t.Errorf("Has(%d) = false", id)
				}
			}
			for _, id := range []uint32{0, tt.ids[0] - 1, tt.current + 1} {
				if !contains(tt.ids, id) && kr.Has(id) {
					t.Errorf("Has(%d) = true for an id not in the keyring", id)
				}
			}
			if got := kr.Export(); got != tt.export {
				t.Errorf("Export() = %s, want %s", got, tt.export)
			}
			again := mustKeyring(t, kr.Export())
			if again.Export() != kr.Export() {
				t.Error("Export does not parse back to the same keyring")
			}
		})
	}
}

func contains(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestParseKeyringRefusals(t *testing.T) {
	t.Parallel()
	zeros := strings.Repeat("0", 64)
	tests := []struct {
		name string
		in   string
		want string // a part of the error message
	}{
		{"empty", "", "master key is empty"},
		{"whitespace only", " \n\t", "master key is empty"},
		{"bare key too short", hexA[:63], "key is 63 characters, want 64"},
		{"bare key too long", hexA + "0", "key is 65 characters, want 64"},
		{"bare key of 32 raw characters", hexA[:32], "key is 32 characters"},
		{"bare key not hex", hexA[:62] + "zz", "key is not hexadecimal"},
		{"bare key all zeros", zeros, "key is all zeros"},
		{"id 0", "0:" + hexA, "entry 1: key id is not a whole number"},
		{"leading zero", "01:" + hexA, "entry 1: key id is not a whole number"},
		{"negative id", "-1:" + hexA, "entry 1: key id is not a whole number"},
		{"plus sign", "+1:" + hexA, "entry 1: key id is not a whole number"},
		{"id too large", "4294967296:" + hexA, "entry 1: key id is not a whole number"},
		{"id of 11 digits", "10000000000:" + hexA, "entry 1: key id is not a whole number"},
		{"id not a number", "one:" + hexA, "entry 1: key id is not a whole number"},
		{"id empty", ":" + hexA, "entry 1: key id is not a whole number"},
		{"id with a space before the colon", "1 :" + hexA, "entry 1: key id is not a whole number"},
		{"key where the id belongs", hexA + ":1", "entry 1: key id is not a whole number"},
		{"key empty", "1:", "entry 1 (id 1): key is 0 characters"},
		{"short key", "1:" + hexA[:62], "entry 1 (id 1): key is 62 characters, want 64"},
		{"bad hex", "2:" + hexA[:63] + "g", "entry 1 (id 2): key is not hexadecimal"},
		{"space in the key", "1:" + hexA[:31] + " " + hexA[32:], "entry 1 (id 1): key is not hexadecimal"},
		{"all zeros", "1:" + zeros, "entry 1 (id 1): key is all zeros"},
		{"second entry short", "1:" + hexA + ",2:" + hexB[:10], "entry 2 (id 2): key is 10 characters"},
		{"third colon", "1:" + hexA + ":x", "entry 1 (id 1): key is 66 characters"},
		{"duplicate id", "1:" + hexA + ",1:" + hexB, "master key id 1 appears twice"},
		{"duplicate id out of order", "2:" + hexA + ",1:" + hexB + ",2:" + hexC, "master key id 2 appears twice"},
		{"same key twice", "1:" + hexA + ",2:" + strings.ToUpper(hexA), "master key ids 1 and 2 hold the same key"},
		{"empty entry", "1:" + hexA + ",,2:" + hexB, "entry 2 is empty"},
		{"trailing comma", "1:" + hexA + ",", "entry 2 is empty"},
		{"leading comma", "," + hexA, "entry 1 is empty"},
		{"bare key beside entries", hexA + ",2:" + hexB, "entry 1 has no key id"},
		{"bare key after entries", "1:" + hexA + "," + hexB, "entry 2 has no key id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := ParseKeyring(tt.in)
			if err == nil {
				t.Fatalf("ParseKeyring accepted it: %v", kr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not say %q", msg, tt.want)
			}
			if !strings.HasPrefix(msg, "sealing: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line starting with the package name", msg)
			}
			assertNoKeyMaterial(t, msg, hexA, hexB, hexC)
		})
	}
}

// assertNoKeyMaterial fails if s holds any 8 consecutive hex characters of
// the given keys, in either case.
func assertNoKeyMaterial(t *testing.T, s string, keys ...string) {
	t.Helper()
	low := strings.ToLower(s)
	for _, k := range keys {
		for i := 0; i+8 <= len(k); i++ {
			if strings.Contains(low, k[i:i+8]) {
				t.Fatalf("output holds key material %q: %s", k[i:i+8], s)
			}
		}
	}
}

func TestKeyringRedaction(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, "1:"+hexA+",2:"+hexB)
	const want = "keyring{ids:[1 2], current:2}"

	type exported struct{ K *Keyring }
	type byValue struct{ K Keyring }
	type hidden struct {
		k  Keyring
		kp *Keyring
	}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v", "%10.3v", "%-#x"} {
		outputs = append(outputs,
			fmt.Sprintf(verb, kr), fmt.Sprintf(verb, *kr),
			fmt.Sprintf(verb, exported{kr}), fmt.Sprintf(verb, byValue{*kr}),
			fmt.Sprintf(verb, hidden{*kr, kr}), fmt.Sprintf(verb, []*Keyring{kr}),
			fmt.Sprintf(verb, map[string]Keyring{"k": *kr}))
	}
	outputs = append(outputs, fmt.Sprint(kr), fmt.Sprintln(*kr), kr.String(), kr.GoString(),
		fmt.Errorf("loading %v: %w", kr, errors.New("x")).Error())

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("keys", "ring", kr, "value", *kr)
		l.Info("keys", slog.Any("ring", kr))
		l.Info("keys", "group", exported{kr})
	}
	outputs = append(outputs, logs.String())
	js, err := json.Marshal(exported{kr})
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))

	for _, out := range outputs {
		assertNoKeyMaterial(t, out, hexA, hexB)
		for _, k := range []string{hexA, hexB} {
			raw, _ := hex.DecodeString(k)
			if strings.Contains(out, string(raw[4:12])) {
				t.Fatalf("output holds raw key bytes: %q", out)
			}
		}
	}
	for _, got := range []string{fmt.Sprint(kr), fmt.Sprintf("%#v", kr), fmt.Sprintf("%x", *kr), kr.String()} {
		if got != want {
			t.Errorf("formatted keyring = %q, want %q", got, want)
		}
	}
	if !strings.Contains(logs.String(), `ring.ids="[1 2]" ring.current=2`) ||
		!strings.Contains(logs.String(), `"ring":{"ids":[1,2],"current":2}`) {
		t.Errorf("slog output does not show ids and current:\n%s", logs.String())
	}
	var nilRing *Keyring
	if got := fmt.Sprint(nilRing); got != "<nil>" {
		t.Errorf("nil keyring prints %q", got)
	}
}

func TestGenerateKeyringAndAddKey(t *testing.T) {
	t.Parallel()
	kr := GenerateKeyring()
	if !reflect.DeepEqual(kr.IDs(), []uint32{1}) || kr.Current() != 1 {
		t.Fatalf("GenerateKeyring: ids %v current %d", kr.IDs(), kr.Current())
	}
	before := kr.Export()
	kr2, err := kr.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	if kr.Export() != before {
		t.Error("AddKey changed the keyring it was called on")
	}
	if !reflect.DeepEqual(kr2.IDs(), []uint32{1, 2}) || kr2.Current() != 2 {
		t.Fatalf("after AddKey: ids %v current %d", kr2.IDs(), kr2.Current())
	}
	if !strings.HasPrefix(kr2.Export(), before+",2:") {
		t.Errorf("AddKey did not keep key 1: %v", kr2)
	}
	// Parsing the export refuses equal keys, so this also shows the new key
	// differs from the old one.
	again := mustKeyring(t, kr2.Export())
	if again.Export() != kr2.Export() {
		t.Error("export does not round-trip")
	}
	other := GenerateKeyring()
	if other.Export() == kr.Export() {
		t.Error("two generated keyrings hold the same key")
	}

	// New ids follow the highest, not the count.
	gap := mustKeyring(t, "3:"+hexA+",9:"+hexB)
	next, err := gap.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(next.IDs(), []uint32{3, 9, 10}) {
		t.Errorf("AddKey after 9 gave ids %v", next.IDs())
	}
	var empty Keyring
	first, err := empty.AddKey()
	if err != nil || !reflect.DeepEqual(first.IDs(), []uint32{1}) {
		t.Errorf("AddKey on an empty keyring: %v, %v", first, err)
	}
}

func TestAddKeyRefusesOverflow(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, "4294967295:"+hexA)
	if next, err := kr.AddKey(); err == nil {
		t.Fatalf("AddKey after id 4294967295 gave %v", next)
	}
}

func TestSecretRoundTripAndRotation(t *testing.T) {
	t.Parallel()
	kr1 := mustKeyring(t, hexA)
	secret := []byte("ghp_exampleCredentialValue")
	id, blob, err := kr1.Seal(ProjectCredentials, "alice.near/github", secret)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 {
		t.Fatalf("sealed under %d, want 1", id)
	}
	if bytes.Contains(blob, secret) {
		t.Fatal("blob holds the plaintext")
	}
	if len(blob) != 1+24+len(secret)+16 || blob[0] != Version {
		t.Fatalf("blob layout: %d bytes, version %#x", len(blob), blob[0])
	}

	kr2, err := kr1.AddKey()
	if err != nil {
		t.Fatal(err)
	}
	// Old data still opens after rotation.
	pt, err := kr2.Open(1, ProjectCredentials, "alice.near/github", blob)
	if err != nil || !bytes.Equal(pt, secret) {
		t.Fatalf("old secret after rotation: %q, %v", pt, err)
	}
	// New data seals under the new key.
	id2, blob2, err := kr2.Seal(WebhookSecret, "alice.near", secret)
	if err != nil || id2 != 2 {
		t.Fatalf("Seal after rotation: id %d, %v", id2, err)
	}
	if _, err := kr1.Open(id2, WebhookSecret, "alice.near", blob2); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("the old keyring opened a blob of key 2: %v", err)
	}

	// Rewrap moves the old blob to key 2.
	newID, newBlob, err := kr2.Rewrap(1, ProjectCredentials, "alice.near/github", blob)
	if err != nil {
		t.Fatal(err)
	}
	if newID != 2 || bytes.Equal(newBlob, blob) {
		t.Fatalf("Rewrap gave id %d (same blob: %v)", newID, bytes.Equal(newBlob, blob))
	}
	if pt, err := kr2.Open(2, ProjectCredentials, "alice.near/github", newBlob); err != nil || !bytes.Equal(pt, secret) {
		t.Fatalf("rewrapped secret: %q, %v", pt, err)
	}
	if _, err := kr2.Open(1, ProjectCredentials, "alice.near/github", newBlob); !errors.Is(err, ErrDecrypt) {
		t.Errorf("rewrapped blob opened under the old id: %v", err)
	}
	// Rewrap seals afresh each time.
	if _, again, err := kr2.Rewrap(1, ProjectCredentials, "alice.near/github", blob); err != nil || bytes.Equal(again, newBlob) {
		t.Errorf("two rewraps made the same blob (%v)", err)
	}
	// Rewrap of a damaged blob refuses and gives nothing.
	bad := bytes.Clone(blob)
	bad[len(bad)-1] ^= 1
	if id, b, err := kr2.Rewrap(1, ProjectCredentials, "alice.near/github", bad); err == nil || id != 0 || b != nil {
		t.Errorf("Rewrap of a damaged blob: %d, %x, %v", id, b, err)
	}
	// Two seals of the same secret differ (fresh nonces).
	_, again, _ := kr2.Seal(WebhookSecret, "alice.near", secret)
	if bytes.Equal(again, blob2) {
		t.Error("two seals made the same blob")
	}
}

func TestSecretRefusals(t *testing.T) {
	t.Parallel()
	kr := mustKeyring(t, "1:"+hexA+",2:"+hexB)
	const row = "project-7"
	id, blob, err := kr.Seal(ProjectCredentials, row, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	opens := []struct {
		name    string
		id      uint32
		purpose SecretPurpose
		row     string
		blob    []byte
		is      error
	}{
		{"other purpose", id, WebhookSecret, row, blob, ErrDecrypt},
		{"other row", id, ProjectCredentials, "project-8", blob, ErrDecrypt},
		{"row id with a suffix", id, ProjectCredentials, row + ":x", blob, ErrDecrypt},
		{"other key id in the keyring", 1, ProjectCredentials, row, blob, ErrDecrypt},
		{"key id not in the keyring", 3, ProjectCredentials, row, blob, ErrUnknownKey},
		{"key id 0", 0, ProjectCredentials, row, blob, ErrUnknownKey},
		{"empty blob", id, ProjectCredentials, row, nil, ErrDecrypt},
		{"purpose empty", id, "", row, blob, nil},
		{"purpose in capitals", id, "Project-Credentials", row, blob, nil},
		{"purpose with a colon", id, "project:credentials", row, blob, nil},
		{"purpose too long", id, SecretPurpose(strings.Repeat("a", 65)), row, blob, nil},
		{"row id empty", id, ProjectCredentials, "", blob, nil},
	}
	for _, tt := range opens {
		t.Run("open/"+tt.name, func(t *testing.T) {
			pt, err := kr.Open(tt.id, tt.purpose, tt.row, tt.blob)
			if err == nil || pt != nil {
				t.Fatalf("Open: %q, %v", pt, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
	seals := []struct {
		name    string
		kr      *Keyring
		purpose SecretPurpose
		row     string
	}{
		{"empty keyring", &Keyring{}, ProjectCredentials, row},
		{"nil keyring", nil, ProjectCredentials, row},
		{"purpose empty", kr, "", row},
		{"purpose with a space", kr, "webhook secret", row},
		{"row id empty", kr, WebhookSecret, ""},
	}
	for _, tt := range seals {
		t.Run("seal/"+tt.name, func(t *testing.T) {
			if id, b, err := tt.kr.Seal(tt.purpose, tt.row, []byte("x")); err == nil || id != 0 || b != nil {
				t.Fatalf("Seal: %d, %x, %v", id, b, err)
			}
		})
	}
	if !SecretPurpose(strings.Repeat("a", 64)).valid() {
		t.Error("a 64-character purpose is refused")
	}
	checkTamper(t, blob, func(b []byte) ([]byte, error) { return kr.Open(id, ProjectCredentials, row, b) })
}

func TestRunKey(t *testing.T) {
	t.Parallel()
	k, err := ParseKeyring("1:" + strings.Repeat("11", 32) + ",2:" + strings.Repeat("22", 32))
	if err != nil {
		t.Fatal(err)
	}
	a, err := k.RunKey(1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.RunKey(2)
	again, _ := k.RunKey(1)
	if a.Equal(b) || !a.Equal(again) {
		t.Fatal("run keys are not one per key id and stable")
	}
	// An independent computation of the seed.
	mac := hmac.New(sha256.New, bytes.Repeat([]byte{0x11}, 32))
	mac.Write([]byte("run-key:v1"))
	if !a.Equal(ed25519.NewKeyFromSeed(mac.Sum(nil))) {
		t.Fatal("run key 1 is not derived as documented")
	}
	if _, err := k.RunKey(3); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("a missing key id: %v", err)
	}
	// Run keys are derived when a keyring is made, whichever way: a bare
	// key, a generated keyring and one with a key added hold the same run
	// keys as the keyring their export parses to.
	bare, err := ParseKeyring(strings.Repeat("11", 32))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := bare.RunKey(1); err != nil || !r.Equal(a) {
		t.Fatalf("a bare key's run key differs from the same key's under id 1: %v", err)
	}
	added, err := GenerateKeyring().AddKey()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseKeyring(added.Export())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{1, 2} {
		r, err := added.RunKey(id)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := parsed.RunKey(id); !r.Equal(p) {
			t.Errorf("run key %d of a generated keyring differs from its export's", id)
		}
	}
}
